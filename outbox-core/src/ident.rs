//! Validated SQL identifiers: schema and table names are checked once, quoted once, and
//! substituted once into the SQL templates when a store is built. Values are never
//! interpolated; they are always bound parameters.

use crate::{OutboxError, Result};

/// The longest identifier accepted (PostgreSQL's limit, the smallest of the engines).
pub const MAX_IDENTIFIER_BYTES: usize = 63;

/// Where the outbox table lives: an optional schema and a table name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableName {
    schema: Option<String>,
    table: String,
}

impl TableName {
    /// `table` in the connection's default schema.
    pub fn new(table: &str) -> Result<Self> {
        Ok(Self {
            schema: None,
            table: check("table name", table)?,
        })
    }

    /// `table` in `schema`.
    pub fn in_schema(schema: &str, table: &str) -> Result<Self> {
        Ok(Self {
            schema: Some(check("schema name", schema)?),
            table: check("table name", table)?,
        })
    }

    /// The schema, if one was given.
    pub fn schema(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    /// The bare table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The quoted, schema-qualified name to put in SQL (standard double quotes).
    pub fn qualified(&self) -> String {
        self.qualified_in(Quotes::DOUBLE)
    }

    /// The schema-qualified name quoted the way an engine quotes identifiers.
    pub fn qualified_in(&self, quotes: Quotes) -> String {
        match &self.schema {
            Some(s) => format!("{}.{}", quotes.quote(s), quotes.quote(&self.table)),
            None => quotes.quote(&self.table),
        }
    }

    /// Substitutes `{table}` (quoted, qualified), `{schema}` (quoted, or empty),
    /// `{schema_prefix}` (quoted schema plus a dot, or empty) and `{name}` (the bare table
    /// name, for deriving index and channel names) into a SQL template, with standard
    /// double quotes.
    pub fn render(&self, template: &str) -> String {
        self.render_in(template, Quotes::DOUBLE)
    }

    /// [`TableName::render`] with the identifiers quoted the way an engine quotes them.
    pub fn render_in(&self, template: &str, quotes: Quotes) -> String {
        let schema = self
            .schema
            .as_deref()
            .map(|s| quotes.quote(s))
            .unwrap_or_default();
        let prefix = self
            .schema
            .as_deref()
            .map(|s| format!("{}.", quotes.quote(s)))
            .unwrap_or_default();
        template
            .replace("{table}", &self.qualified_in(quotes))
            .replace("{schema_prefix}", &prefix)
            .replace("{schema}", &schema)
            .replace("{name}", &self.table)
    }
}

/// How an engine quotes identifiers: the one difference in how each spells a table's
/// name. The names were validated (lowercase letters, digits, underscores), so quoting
/// never needs escaping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotes {
    open: char,
    close: char,
}

impl Quotes {
    /// `"name"`: standard SQL (PostgreSQL, SQLite).
    pub const DOUBLE: Self = Self {
        open: '"',
        close: '"',
    };
    /// `[name]`: SQL Server.
    pub const BRACKETS: Self = Self {
        open: '[',
        close: ']',
    };
    /// `` `name` ``: MySQL and MariaDB (double quotes are string literals there unless the
    /// session runs with `ANSI_QUOTES`).
    pub const BACKTICKS: Self = Self {
        open: '`',
        close: '`',
    };

    /// `name` quoted.
    pub fn quote(&self, name: &str) -> String {
        format!("{}{name}{}", self.open, self.close)
    }
}

/// A SQL template without its lines that name `marker`: the form of a statement that
/// leaves an optional condition or argument out (stores render one template both ways,
/// with and without such lines, rather than keep two copies of it).
pub fn without_lines_naming(template: &str, marker: &str) -> String {
    template
        .lines()
        .filter(|line| !line.contains(marker))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// A statement rendered for `table` in two forms: for every slice (the template's lines
/// naming `marker` left out, so a claim or find of every slice pays nothing for slices)
/// and for one slice (`marker` replaced by `spelled`: the slice condition or arguments).
#[derive(Debug, Clone)]
pub struct SliceForms {
    every: String,
    one: String,
}

impl SliceForms {
    /// Renders `template` both ways.
    pub fn render(table: &TableName, template: &str, marker: &str, spelled: &str) -> Self {
        Self {
            every: table.render(&without_lines_naming(template, marker)),
            one: table.render(&template.replace(marker, spelled)),
        }
    }

    /// The form for a request of one slice (`sliced`), or of every slice.
    pub fn pick(&self, sliced: bool) -> &str {
        if sliced {
            &self.one
        } else {
            &self.every
        }
    }
}

/// A claim's or find's statement in the four forms a request picks: the lines of its
/// template that hold only `{slice_filter}` or `{key_order_filter}` replaced by the
/// engine's condition where the request is of one slice or in per-key order, and left
/// out where it is not, so a plain claim pays for neither.
#[derive(Debug, Clone)]
pub struct FilterForms {
    /// Indexed by `2 * ordered + sliced`.
    forms: [String; 4],
}

impl FilterForms {
    /// Renders `template` in its four forms with the engine's `slice_filter` and
    /// `key_order_filter`, each form finished by `finish` (table name, placeholders).
    pub fn render(
        template: &str,
        slice_filter: &str,
        key_order_filter: &str,
        finish: impl Fn(&str) -> String,
    ) -> Self {
        let form = |ordered: bool, sliced: bool| {
            let text: String = template
                .lines()
                .filter_map(|line| match line.trim() {
                    "{slice_filter}" => sliced.then(|| format!("{slice_filter}\n")),
                    "{key_order_filter}" => ordered.then(|| format!("{key_order_filter}\n")),
                    _ => Some(format!("{line}\n")),
                })
                .collect();
            finish(&text)
        };
        Self {
            forms: [
                form(false, false),
                form(false, true),
                form(true, false),
                form(true, true),
            ],
        }
    }

    /// The form for a request in key order or not, of one slice or of every one.
    pub fn pick(&self, ordered: bool, sliced: bool) -> &str {
        &self.forms[2 * usize::from(ordered) + usize::from(sliced)]
    }
}

impl Default for TableName {
    fn default() -> Self {
        Self {
            schema: None,
            table: "outbox".to_owned(),
        }
    }
}

fn check(field: &'static str, name: &str) -> Result<String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !first_ok || !rest_ok {
        return Err(OutboxError::invalid(
            field,
            format!("{name:?} must start with a lowercase letter or underscore and hold only lowercase letters, digits and underscores"),
        ));
    }
    // Derived names (indexes, channels) append up to 12 bytes.
    if name.len() > MAX_IDENTIFIER_BYTES - 12 {
        return Err(OutboxError::invalid(
            field,
            format!(
                "{name:?} is longer than {} bytes",
                MAX_IDENTIFIER_BYTES - 12
            ),
        ));
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_naming_a_marker_are_left_out_and_the_rest_kept() {
        let template = "SELECT *\nWHERE a\n  AND {x} = 1\nORDER BY b";
        assert_eq!(
            without_lines_naming(template, "{x}"),
            "SELECT *\nWHERE a\nORDER BY b\n"
        );
        assert_eq!(without_lines_naming("a\nb", "{x}"), "a\nb\n");
    }

    #[test]
    fn valid_names_are_quoted_and_substituted() {
        let t = TableName::in_schema("app", "outbox_v2").unwrap();
        assert_eq!(t.qualified(), "\"app\".\"outbox_v2\"");
        assert_eq!(
            t.render("CREATE INDEX {name}_pending ON {table} (x)"),
            "CREATE INDEX outbox_v2_pending ON \"app\".\"outbox_v2\" (x)"
        );
        assert_eq!(TableName::default().qualified(), "\"outbox\"");
    }

    #[test]
    fn hostile_or_odd_names_are_refused() {
        for bad in [
            "",
            "Outbox",
            "out-box",
            "x\"; DROP TABLE y; --",
            "1abc",
            "a b",
            &"a".repeat(60),
        ] {
            let err = TableName::new(bad).unwrap_err();
            assert!(err.is_invalid_input(), "{bad}: {err}");
        }
        assert!(TableName::in_schema("bad schema", "ok").is_err());
    }
}
