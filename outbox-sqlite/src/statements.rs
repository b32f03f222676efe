//! The store's SQL, rendered once for its table when the store is built.

use outbox_core::store_kit::admin::ListStatements;
use outbox_core::store_kit::sql::{without_lines_naming, SliceForms};
use outbox_core::TableName;

/// Every statement the store runs, with the table name substituted.
#[derive(Debug, Clone)]
pub(crate) struct Statements {
    pub(crate) claim: SliceForms,
    pub(crate) claim_ordered: SliceForms,
    /// The batch completion on a table drained unordered: the head flag's line left out.
    pub(crate) complete_batch: String,
    /// The batch completion on a table prepared for per-key order: finished rows drop
    /// their head flags, and [`Statements::move_heads`] follows it.
    pub(crate) complete_moving_heads: String,
    /// The heads of the keys such a completion finished rows of, moved afterwards.
    pub(crate) move_heads: String,
    pub(crate) save: String,
    pub(crate) renew: String,
    pub(crate) get: String,
    pub(crate) find_pending: SliceForms,
    pub(crate) find_retry_ready: SliceForms,
    pub(crate) prune_delivered: String,
    pub(crate) enqueue: String,
    pub(crate) enqueue_one: String,
    pub(crate) stats: String,
    pub(crate) live_stats: String,
    pub(crate) dead_letters: String,
    pub(crate) requeue: String,
    pub(crate) list_entries: ListStatements,
    pub(crate) list_cursor: ListStatements,
    pub(crate) topic_stats: String,
    pub(crate) count_delivered_before: String,
    pub(crate) purge: String,
}

/// The batch completion's template: its one line naming [`MOVES_HEADS`] is kept only on
/// tables prepared for per-key order.
const COMPLETE_BATCH: &str = include_str!("../sql/complete_batch.sql");

/// The marker of the batch completion's head flag line.
pub(crate) const MOVES_HEADS: &str = "{moves_heads}";

impl Statements {
    pub(crate) fn render(table: &TableName) -> Self {
        Self {
            claim: by_slice(table, include_str!("../sql/claim.sql")),
            claim_ordered: by_slice(table, include_str!("../sql/claim_ordered.sql")),
            complete_batch: table.render(&without_lines_naming(COMPLETE_BATCH, MOVES_HEADS)),
            complete_moving_heads: table.render(&COMPLETE_BATCH.replace(MOVES_HEADS, "")),
            move_heads: table.render(include_str!("../sql/move_heads.sql")),
            save: table.render(include_str!("../sql/save.sql")),
            renew: table.render(include_str!("../sql/renew.sql")),
            get: table.render(include_str!("../sql/get.sql")),
            find_pending: by_slice(table, include_str!("../sql/find_pending.sql")),
            find_retry_ready: by_slice(table, include_str!("../sql/find_retry_ready.sql")),
            prune_delivered: table.render(include_str!("../sql/prune_delivered.sql")),
            enqueue: table.render(include_str!("../sql/enqueue.sql")),
            enqueue_one: table.render(include_str!("../sql/enqueue_one.sql")),
            stats: table.render(include_str!("../sql/admin/stats.sql")),
            live_stats: table.render(include_str!("../sql/admin/live_stats.sql")),
            dead_letters: table.render(include_str!("../sql/admin/dead_letters.sql")),
            requeue: table.render(include_str!("../sql/admin/requeue.sql")),
            list_entries: ListStatements::render(
                include_str!("../sql/admin/list_entries.sql"),
                include_str!("../sql/admin/list_delivered.sql"),
                |sql| table.render(sql),
            ),
            list_cursor: ListStatements::render(
                include_str!("../sql/admin/list_cursor.sql"),
                include_str!("../sql/admin/list_delivered_cursor.sql"),
                |sql| table.render(sql),
            ),
            topic_stats: table.render(include_str!("../sql/admin/topic_stats.sql")),
            count_delivered_before: table
                .render(include_str!("../sql/admin/count_delivered_before.sql")),
            purge: table.render(include_str!("../sql/admin/purge.sql")),
        }
    }
}

/// A statement in two forms (see [`SliceForms`]): the slice hash spelled out
/// (`sql/slice_hash.sql`) where its template names `{slice_hash}`. Both forms take the
/// same parameters; SQLite leaves those a statement does not name unbound.
fn by_slice(table: &TableName, template: &str) -> SliceForms {
    SliceForms::render(
        table,
        template,
        "{slice_hash}",
        include_str!("../sql/slice_hash.sql"),
    )
}
