//! The store's SQL, rendered once for its table when the store is built.

use outbox_core::store_kit::admin::ListStatements;
use outbox_core::store_kit::sql::{without_lines_naming, FilterForms};
use outbox_core::{Quotes, TableName};

/// Every statement the store runs, with the table name substituted (backtick-quoted).
#[derive(Debug, Clone)]
pub(crate) struct Statements {
    pub(crate) claim_pending: FilterForms,
    pub(crate) claim_retry: FilterForms,
    pub(crate) heads_pending: FilterForms,
    pub(crate) heads_retry: FilterForms,
    pub(crate) run_rows: String,
    pub(crate) lock_candidates: String,
    pub(crate) lease_rows: String,
    pub(crate) complete_batch: String,
    pub(crate) renew: String,
    pub(crate) get_many: String,
    pub(crate) save: String,
    pub(crate) get: String,
    pub(crate) find_pending: FilterForms,
    pub(crate) find_retry_ready: FilterForms,
    pub(crate) prune_delivered: String,
    pub(crate) enqueue: String,
    pub(crate) stats: String,
    pub(crate) live_stats: String,
    pub(crate) dead_letters: String,
    pub(crate) requeue: String,
    pub(crate) list_entries: ListStatements,
    pub(crate) topic_stats: String,
    pub(crate) count_delivered_before: String,
    pub(crate) purge: String,
}

/// Renders a template for `table` as these engines quote names.
pub(crate) fn render(table: &TableName, template: &str) -> String {
    table.render_in(template, Quotes::BACKTICKS)
}

/// A claim statement without its locking line: the choice of a claim in key order, which
/// lock_candidates.sql locks.
fn choice(template: &str) -> String {
    without_lines_naming(template, "FOR UPDATE SKIP LOCKED")
}

/// The table's schema as a string literal, or the connection's database: names are
/// validated (lowercase letters, digits, underscores), so quoting never needs escaping.
fn schema_literal(table: &TableName) -> String {
    table
        .schema()
        .map_or_else(|| "DATABASE()".to_owned(), |s| format!("'{s}'"))
}

impl Statements {
    pub(crate) fn render(table: &TableName) -> Self {
        let r = |template: &str| render(table, template);
        let forms = |template: &str| {
            FilterForms::render(
                template,
                include_str!("../sql/slice_filter.sql"),
                include_str!("../sql/key_order_filter.sql"),
                r,
            )
        };
        Self {
            claim_pending: forms(include_str!("../sql/claim_pending.sql")),
            claim_retry: forms(include_str!("../sql/claim_retry.sql")),
            heads_pending: forms(&choice(include_str!("../sql/claim_pending.sql"))),
            heads_retry: forms(&choice(include_str!("../sql/claim_retry.sql"))),
            run_rows: r(include_str!("../sql/run_rows.sql")),
            lock_candidates: r(include_str!("../sql/lock_candidates.sql")),
            lease_rows: r(include_str!("../sql/lease_rows.sql")),
            complete_batch: r(include_str!("../sql/complete_batch.sql")),
            renew: r(include_str!("../sql/renew.sql")),
            get_many: r(include_str!("../sql/get_many.sql")),
            save: r(include_str!("../sql/save.sql")),
            get: r(include_str!("../sql/get.sql")),
            find_pending: forms(include_str!("../sql/find_pending.sql")),
            find_retry_ready: forms(include_str!("../sql/find_retry_ready.sql")),
            prune_delivered: r(include_str!("../sql/prune_delivered.sql")),
            enqueue: r(include_str!("../sql/enqueue.sql")),
            stats: r(include_str!("../sql/admin/stats.sql")),
            live_stats: r(&include_str!("../sql/admin/live_stats.sql")
                .replace("{schema_literal}", &schema_literal(table))),
            dead_letters: r(include_str!("../sql/admin/dead_letters.sql")),
            requeue: r(include_str!("../sql/admin/requeue.sql")),
            list_entries: ListStatements::render(
                include_str!("../sql/admin/list_entries.sql"),
                include_str!("../sql/admin/list_delivered.sql"),
                r,
            ),
            topic_stats: r(include_str!("../sql/admin/topic_stats.sql")),
            count_delivered_before: r(include_str!("../sql/admin/count_delivered_before.sql")),
            purge: r(include_str!("../sql/admin/purge.sql")),
        }
    }

    /// The insert of `rows` entries: `enqueue_row.sql` once per entry.
    pub(crate) fn insert_of(&self, rows: usize) -> String {
        let row = include_str!("../sql/enqueue_row.sql").trim();
        let values = vec![row; rows].join(",\n");
        self.enqueue.replace("{rows}", &values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_statement_names_the_table_in_backticks_and_leaves_no_marker() {
        let table = TableName::in_schema("app", "events").unwrap();
        let s = Statements::render(&table);
        let forms = [
            &s.claim_pending,
            &s.claim_retry,
            &s.find_pending,
            &s.find_retry_ready,
        ];
        let mut all: Vec<&str> = forms
            .iter()
            .flat_map(|f| [f.pick(false, false), f.pick(true, true)])
            .collect();
        let insert = s.insert_of(3);
        all.extend([
            s.lease_rows.as_str(),
            &s.complete_batch,
            &s.renew,
            &s.get_many,
            &s.save,
            &s.get,
            &s.prune_delivered,
            &insert,
            &s.stats,
            &s.live_stats,
            &s.dead_letters,
            &s.requeue,
            s.list_entries.get(outbox_core::EmissionStatus::Pending),
            s.list_entries.get(outbox_core::EmissionStatus::Delivered),
            &s.topic_stats,
            &s.count_delivered_before,
            &s.purge,
        ]);
        for sql in all {
            assert!(sql.contains("`app`.`events`"), "{sql}");
            assert!(!sql.contains('{'), "{sql}");
            assert!(!sql.contains('"'), "{sql}");
        }
        assert_eq!(insert.matches("(?, ?").count(), 3, "{insert}");
        let plain = s.claim_pending.pick(false, false);
        assert!(!plain.contains("slice_hash") && !plain.contains("events_key"));
        let both = s.claim_pending.pick(true, true);
        assert!(both.contains("slice_hash") && both.contains("events_key"));
    }
}
