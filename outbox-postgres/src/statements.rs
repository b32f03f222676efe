//! The SQL of every operation, loaded from `sql/` and rendered once for one table.

use outbox_core::TableName;

/// Every statement the store runs, with the table name substituted.
#[derive(Debug)]
pub(crate) struct Statements {
    pub(crate) claim_pending: String,
    pub(crate) claim_retry_ready: String,
    pub(crate) complete_batch: String,
    pub(crate) renew: String,
    pub(crate) enqueue: String,
    pub(crate) get: String,
    pub(crate) find_pending: String,
    pub(crate) find_retry_ready: String,
    pub(crate) save: String,
    pub(crate) prune_delivered: String,
}

impl Statements {
    /// Renders every template for `table`. Identifiers were validated by [`TableName`];
    /// values are never substituted, only bound.
    pub(crate) fn render(table: &TableName) -> Self {
        Self {
            claim_pending: table.render(include_str!("../sql/claim_pending.sql")),
            claim_retry_ready: table.render(include_str!("../sql/claim_retry_ready.sql")),
            complete_batch: table.render(include_str!("../sql/complete_batch.sql")),
            renew: table.render(include_str!("../sql/renew.sql")),
            enqueue: table.render(include_str!("../sql/enqueue.sql")),
            get: table.render(include_str!("../sql/get.sql")),
            find_pending: table.render(include_str!("../sql/find_pending.sql")),
            find_retry_ready: table.render(include_str!("../sql/find_retry_ready.sql")),
            save: table.render(include_str!("../sql/save.sql")),
            prune_delivered: table.render(include_str!("../sql/prune_delivered.sql")),
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
        for sql in [
            &s.claim_pending,
            &s.claim_retry_ready,
            &s.complete_batch,
            &s.renew,
            &s.enqueue,
            &s.get,
            &s.find_pending,
            &s.find_retry_ready,
            &s.save,
            &s.prune_delivered,
        ] {
            assert!(!sql.contains('{'), "unrendered placeholder in {sql}");
            assert!(sql.contains("\"app\".\"events\""), "{sql}");
        }
    }

    #[test]
    fn claims_use_the_locked_cte_form_never_in_subquery() {
        let s = Statements::render(&TableName::default());
        for sql in [&s.claim_pending, &s.claim_retry_ready] {
            assert!(sql.contains("AS MATERIALIZED"), "{sql}");
            assert!(sql.contains("FOR UPDATE SKIP LOCKED"), "{sql}");
            assert!(!sql.contains("IN (SELECT"), "{sql}");
        }
    }
}
