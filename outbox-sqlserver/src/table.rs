//! The outbox table's name as SQL Server spells it, and the SQL templates rendered for it.

use outbox_core::{Quotes, TableName};

/// Renders a template for `table`: `{table}` becomes the bracket-quoted, optionally
/// schema-qualified table, `{schema_prefix}` the bracket-quoted schema and a dot (empty
/// without a schema, for the table's functions), `{name}` its bare name (for constraint,
/// index and function names),
/// `{migrations}` the table recording applied migrations, and `{migrations_object}` that
/// table's name as `OBJECT_ID` takes it.
///
/// The parts were validated by [`TableName`] (letters, digits and underscores), so no
/// escaping is needed; values are never substituted, only bound.
pub fn render(table: &TableName, template: &str) -> String {
    let template = template
        .replace("{migrations_object}", "{migrations}")
        .replace("{migrations}", "{schema_prefix}[{name}_migrations]");
    table.render_in(&template, Quotes::BRACKETS)
}

/// The table as tiberius's bulk insert names it.
pub(crate) fn bulk_target(table: &TableName) -> String {
    render(table, "{table}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_bracket_quoted_and_qualified_only_when_asked() {
        let plain = TableName::new("events").unwrap();
        assert_eq!(
            render(&plain, "{table} {name} {migrations}"),
            "[events] events [events_migrations]"
        );
        let qualified = TableName::in_schema("app", "events").unwrap();
        assert_eq!(
            render(
                &qualified,
                "{table} [{name}_pk] {migrations_object} {schema_prefix}[{name}_f]"
            ),
            "[app].[events] [events_pk] [app].[events_migrations] [app].[events_f]"
        );
    }

    #[test]
    fn names_that_are_not_identifiers_are_refused_before_any_sql() {
        for bad in ["x]; DROP TABLE y; --", "a b", "", "名前"] {
            assert!(TableName::new(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
