//! The SQL of every operation, loaded from `sql/` with the parameters each one takes,
//! and rendered once for one table.

use outbox_core::store_kit::admin::ListStatements;
use outbox_core::TableName;

use crate::params::Kind::{self, *};
use crate::table::render;

/// Parameters per row of a multi-row insert.
pub const ENQUEUE_PARAMS_PER_ROW: usize = 9;
/// Entries per insert statement: 9 parameters each, under SQL Server's limit of 2,100
/// parameters per request.
pub const ENQUEUE_ROWS_PER_STATEMENT: usize = 230;

/// One statement: its file, its text, and its parameters (`@P1`, `@P2`, … in order).
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(test), allow(dead_code))]
pub struct Spec {
    /// The file under `sql/`.
    pub file: &'static str,
    /// The template.
    pub template: &'static str,
    /// Each parameter's name (as the file's header describes it) and type.
    pub params: &'static [(&'static str, Kind)],
}

macro_rules! spec {
    ($name:ident, $file:literal, [$(($p:literal, $k:expr)),* $(,)?]) => {
        #[doc = concat!("`", $file, "`: its template and declared parameters.")]
        pub const $name: Spec = Spec {
            file: $file,
            template: include_str!(concat!("../sql/", $file)),
            params: &[$(($p, $k)),*],
        };
    };
}

spec!(
    CLAIM,
    "claim.sql",
    [
        ("now", Time),
        ("topic", Text),
        ("batch size", Int),
        ("owner", Text),
        ("lease seconds", Int),
        ("lease microseconds", Int),
        ("retry-ready", Bit),
        ("pending", Bit),
        ("slice count", Int),
        ("slice index", Int),
        ("ordered", Bit),
        ("walk start time", Time),
        ("walk start id", Binary),
        ("walk behind the start", Bit),
        ("shared kind", Text),
        ("store id", Guid),
        ("shared start time", Time),
        ("shared start id", Binary),
        ("walk age seconds", Int),
        ("walk age microseconds", Int),
        ("walk hold-back microseconds", BigInt),
        ("prune old shares", Bit),
        ("key run", Int),
    ]
);
spec!(
    COMPLETE_BATCH,
    "complete_batch.sql",
    [("completions", Text)]
);
spec!(
    RENEW,
    "renew.sql",
    [
        ("claims", Text),
        ("now", Time),
        ("lease seconds", Int),
        ("lease microseconds", Int),
    ]
);
spec!(
    SAVE,
    "save.sql",
    [
        ("id", Binary),
        ("expected stamp", Guid),
        ("status", TinyInt),
        ("next_retry_at", Time),
        ("attempt_count", Int),
        ("last_error", Text),
        ("dead_letter_reason", Text),
        ("delivered_at", Time),
        ("provider_message_id", Text),
        ("now", Time),
    ]
);
spec!(GET, "get.sql", [("id", Binary)]);
spec!(
    FIND_PENDING,
    "find_pending.sql",
    [
        ("now", Time),
        ("topic", Text),
        ("limit", Int),
        ("slice count", Int),
        ("slice index", Int)
    ]
);
spec!(
    FIND_RETRY_READY,
    "find_retry_ready.sql",
    [
        ("now", Time),
        ("topic", Text),
        ("limit", Int),
        ("slice count", Int),
        ("slice index", Int)
    ]
);
spec!(
    PRUNE_DELIVERED,
    "prune_delivered.sql",
    [("cut-off", Time), ("batch", Int)]
);
spec!(CLOCK, "clock.sql", []);
spec!(SHARED_STARTS, "shared_starts.sql", []);
spec!(ENQUEUE, "enqueue.sql", []);
spec!(STATS, "admin/stats.sql", [("now", Time)]);
spec!(LIVE_STATS, "admin/live_stats.sql", [("now", Time)]);
spec!(DEAD_LETTERS, "admin/dead_letters.sql", [("limit", Int)]);
spec!(TOPIC_STATS, "admin/topic_stats.sql", []);
spec!(
    LIST,
    "admin/list_entries.sql",
    [
        ("topic", Text),
        ("after", Binary),
        ("page size", Int),
        ("partition key", Text)
    ]
);
spec!(
    LIST_DELIVERED,
    "admin/list_delivered.sql",
    [
        ("topic", Text),
        ("after", Binary),
        ("page size", Int),
        ("partition key", Text)
    ]
);
spec!(
    PURGE,
    "admin/purge.sql",
    [
        ("id", Binary),
        ("batch", Int),
        ("status", TinyInt),
        ("topic", Text)
    ]
);
spec!(
    REQUEUE,
    "admin/requeue.sql",
    [
        ("now", Time),
        ("id", Binary),
        ("status", TinyInt),
        ("topic", Text)
    ]
);
spec!(
    COUNT_DELIVERED_BEFORE,
    "admin/count_delivered_before.sql",
    [("cut-off", Time)]
);

/// The parameters of one row of `enqueue_row.sql`, by the names the row uses.
pub const ENQUEUE_ROW: [(&str, Kind); ENQUEUE_PARAMS_PER_ROW] = [
    ("@id", Binary),
    ("@topic", Text),
    ("@partition_key", Text),
    ("@payload", Binary),
    ("@headers", Text),
    ("@created_at", Time),
    ("@not_before", Time),
    ("@stamp", Guid),
    ("@slice_hash", BigInt),
];

/// Every statement, for the checks.
pub const ALL: [Spec; 20] = [
    CLAIM,
    COMPLETE_BATCH,
    RENEW,
    SAVE,
    GET,
    FIND_PENDING,
    FIND_RETRY_READY,
    PRUNE_DELIVERED,
    CLOCK,
    ENQUEUE,
    STATS,
    LIVE_STATS,
    DEAD_LETTERS,
    TOPIC_STATS,
    LIST,
    LIST_DELIVERED,
    PURGE,
    REQUEUE,
    COUNT_DELIVERED_BEFORE,
    SHARED_STARTS,
];

/// Every statement the store runs, with the table name substituted.
#[derive(Debug)]
pub struct Statements {
    pub(crate) claim: String,
    pub(crate) complete_batch: String,
    pub(crate) renew: String,
    pub(crate) save: String,
    pub(crate) get: String,
    pub(crate) find_pending: String,
    pub(crate) find_retry_ready: String,
    pub(crate) prune_delivered: String,
    pub(crate) clock: String,
    pub(crate) shared_starts: String,
    enqueue: String,
    enqueue_row: String,
    pub(crate) stats: String,
    pub(crate) live_stats: String,
    pub(crate) dead_letters: String,
    pub(crate) topic_stats: String,
    /// The listing statements, one per status.
    pub list: ListStatements,
    pub(crate) purge: String,
    pub(crate) requeue: String,
    pub(crate) count_delivered_before: String,
}

impl Statements {
    /// Renders every template for `table`.
    pub fn render(table: &TableName) -> Self {
        let r = |s: Spec| render(table, s.template);
        Self {
            claim: r(CLAIM),
            complete_batch: r(COMPLETE_BATCH),
            renew: r(RENEW),
            save: r(SAVE),
            get: r(GET),
            find_pending: r(FIND_PENDING),
            find_retry_ready: r(FIND_RETRY_READY),
            prune_delivered: r(PRUNE_DELIVERED),
            clock: r(CLOCK),
            shared_starts: r(SHARED_STARTS),
            enqueue: r(ENQUEUE),
            enqueue_row: include_str!("../sql/enqueue_row.sql").trim().to_owned(),
            stats: r(STATS),
            live_stats: r(LIVE_STATS),
            dead_letters: r(DEAD_LETTERS),
            topic_stats: r(TOPIC_STATS),
            list: ListStatements::render(LIST.template, LIST_DELIVERED.template, |t| {
                render(table, t)
            }),
            purge: r(PURGE),
            requeue: r(REQUEUE),
            count_delivered_before: r(COUNT_DELIVERED_BEFORE),
        }
    }

    /// The insert of `rows` entries (1 ..= [`ENQUEUE_ROWS_PER_STATEMENT`]), each row's
    /// named placeholders numbered in the order [`ENQUEUE_ROW`] lists them.
    pub fn enqueue(&self, rows: usize) -> String {
        let values = (0..rows)
            .map(|row| {
                // No name is a prefix of another, so the order of replacement is free.
                let mut sql = self.enqueue_row.clone();
                for (i, (name, _)) in ENQUEUE_ROW.iter().enumerate() {
                    let n = row * ENQUEUE_PARAMS_PER_ROW + i + 1;
                    sql = sql.replace(name, &format!("@P{n}"));
                }
                sql
            })
            .collect::<Vec<_>>()
            .join(",\n       ");
        self.enqueue.replace("{rows}", &values)
    }
}
