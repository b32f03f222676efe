//! The SQL of every operation, loaded from `sql/` and rendered once for one table.

use outbox_core::TableName;

/// Every statement the store runs, with the table name substituted.
#[derive(Debug)]
pub(crate) struct Statements {
    pub(crate) claim: String,
    pub(crate) complete_batch: String,
    pub(crate) renew: String,
    pub(crate) get: String,
    pub(crate) find_pending: String,
    pub(crate) find_retry_ready: String,
    pub(crate) save: String,
    pub(crate) prune_delivered: String,
    pub(crate) clock: String,
    pub(crate) copy_in: String,
    pub(crate) notify: String,
}

impl Statements {
    /// Renders every template for `table`. Identifiers were validated by [`TableName`];
    /// values are never substituted, only bound.
    pub(crate) fn render(table: &TableName) -> Self {
        Self {
            claim: table.render(include_str!("../sql/claim.sql")),
            complete_batch: table.render(include_str!("../sql/complete_batch.sql")),
            renew: table.render(include_str!("../sql/renew.sql")),
            get: table.render(include_str!("../sql/get.sql")),
            find_pending: table.render(include_str!("../sql/find_pending.sql")),
            find_retry_ready: table.render(include_str!("../sql/find_retry_ready.sql")),
            save: table.render(include_str!("../sql/save.sql")),
            prune_delivered: table.render(include_str!("../sql/prune_delivered.sql")),
            clock: include_str!("../sql/clock.sql").to_owned(),
            copy_in: table.render(include_str!("../sql/copy_in.sql")),
            notify: include_str!("../sql/notify.sql").to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_is_substituted() {
        let table = TableName::in_schema("app", "events").unwrap();
        let s = Statements::render(&table);
        assert!(s.claim.contains("\"app\".\"events_claim\"("), "{}", s.claim);
        assert!(!s.claim.contains('{'), "{}", s.claim);
        for sql in [
            &s.complete_batch,
            &s.renew,
            &s.get,
            &s.find_pending,
            &s.find_retry_ready,
            &s.save,
            &s.prune_delivered,
            &s.copy_in,
        ] {
            assert!(!sql.contains('{'), "unrendered placeholder in {sql}");
            assert!(sql.contains("\"app\".\"events\""), "{sql}");
        }
    }

    #[test]
    fn claims_use_the_locked_cte_form_never_in_subquery() {
        let function = include_str!("../migrations/0002_claim_function.up.sql");
        assert_eq!(function.matches("AS MATERIALIZED").count(), 2, "{function}");
        assert_eq!(function.matches("FOR UPDATE SKIP LOCKED").count(), 2);
        assert!(!function.contains("IN (SELECT"), "{function}");
        // The plan must not hang on statistics: no sort, no bitmap, no sequential scan.
        for setting in ["enable_sort", "enable_bitmapscan", "enable_seqscan"] {
            assert!(
                function.contains(&format!("SET {setting} = off")),
                "{setting}"
            );
        }
        let s = Statements::render(&TableName::default());
        assert!(s.claim.contains("\"outbox_claim\"("), "{}", s.claim);
    }
}
