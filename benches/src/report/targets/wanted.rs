//! Every threshold the report judges a figure against, as data: one constant each, with
//! where it comes from. A target with no threshold is reported without a verdict.

use super::Rule::{self, AtLeast, Below};

/// Optimized ÷ portable claims/s on PostgreSQL through added latency. The design record
/// asked for 2×; one round trip against 1 + 2N reaches far more, so the report holds the
/// optimized store to 50×.
pub(super) const PG_CLAIMS_OPTIMIZED_OVER_PORTABLE: Rule = AtLeast(50.0);

/// The PostgreSQL drain ÷ the raw two-statement cycle on the same backlog.
pub(super) const PG_DRAIN_OVER_CEILING: Rule = AtLeast(0.90);

/// The PostgreSQL server's CPU time per entry under the drain ÷ under the raw cycle: on a
/// production server the drain runs elsewhere, and this is what the outbox costs the
/// database everyone shares.
pub(super) const PG_SERVER_CPU_OVER_CEILING: Rule = Below(1.1);

/// The PostgreSQL drain process's own CPU time per entry, microseconds.
pub(super) const PG_DRAIN_CPU_US: Rule = Below(5.0);

/// The PostgreSQL drain as the table grows: each scale case ÷ the clean one.
pub(super) const PG_SCALE: [(&str, &str, Rule); 5] = [
    ("pending-1m", "1M pending ÷ 10k pending", AtLeast(0.85)),
    ("history-1m", "1M delivered history ÷ clean", AtLeast(0.90)),
    ("parked-100k", "100k parked retries ÷ clean", AtLeast(0.90)),
    (
        "pending-1m-analyzed",
        "1M pending ÷ 10k pending, both analyzed",
        AtLeast(0.85),
    ),
    (
        "history-1m-analyzed",
        "1M delivered history ÷ clean, both analyzed",
        AtLeast(0.90),
    ),
];

/// A 200k backlog analyzed ÷ never analyzed, PostgreSQL drain.
pub(super) const PG_ANALYZED_OVER_NEVER: Rule = AtLeast(0.95);

/// Through added latency a one-worker drain of batch 100 reaches this share of a batch
/// per round trip.
pub(super) const LATENCY_DRAIN_SHARE: f64 = 0.8;

/// The drain's peak resident memory, MiB, over a 1M backlog of 1 KiB payloads.
pub(super) const PG_DRAIN_PEAK_RSS_MIB: Rule = Below(64.0);

/// Bulk enqueue on PostgreSQL, entries/s, 64 B entries in calls of 1,000.
pub(super) const PG_BULK_ENQUEUE: Rule = AtLeast(110_000.0);

/// Bulk enqueue on PostgreSQL ÷ `psql \copy` loading the same rows.
pub(super) const PG_BULK_ENQUEUE_OVER_COPY: Rule = AtLeast(0.8);

/// A drain into each broker ÷ into the noop emitter.
pub(super) const BROKER_OVER_NOOP: Rule = AtLeast(0.80);

/// A drain against a slow emitter ÷ concurrency over the mean emission time.
pub(super) const FLOW_OVER_IDEAL: Rule = AtLeast(0.8);

/// `outbox stats` (live) behind a delivered history ÷ without it.
pub(super) const LIVE_STATS_BEHIND_HISTORY: Rule = Below(3.0);

/// The SQLite drain ÷ a raw loop of the same statements.
pub(super) const SQLITE_DRAIN_OVER_RAW: Rule = AtLeast(0.90);

/// The SQLite drain, entries/s, 1 worker, batch 100, noop.
pub(super) const SQLITE_DRAIN_RATE: Rule = AtLeast(25_000.0);

/// The SQLite drain behind a delivered history or parked retries ÷ clean.
pub(super) const SQLITE_SCALE: Rule = AtLeast(0.90);

/// Bulk enqueue on SQLite, entries/s, 64 B entries in calls of 1,000.
pub(super) const SQLITE_BULK_ENQUEUE: Rule = AtLeast(100_000.0);

/// The MariaDB drain, optimized ÷ portable.
pub(super) const MARIADB_DRAIN_OPTIMIZED_OVER_PORTABLE: Rule = AtLeast(5.0);

/// The MariaDB drain ÷ a raw loop of the store's statements.
pub(super) const MARIADB_DRAIN_OVER_RAW: Rule = AtLeast(0.80);

/// The MariaDB drain, largest pending backlog ÷ smallest.
pub(super) const MARIADB_BACKLOG_GROWTH: Rule = AtLeast(0.85);

/// A drain in per-key order ÷ unordered, by the number of keys.
pub(super) const ORDERED_OVER_UNORDERED: [(u64, Rule); 3] = [
    (10, AtLeast(0.5)),
    (1_000, AtLeast(0.8)),
    (100_000, AtLeast(0.9)),
];

/// With a snapshot held for the whole run: the last tenth of rounds ÷ the first tenth.
pub(super) const HELD_LAST_OVER_FIRST: Rule = AtLeast(0.8);

/// The last tenth of rounds with a snapshot held ÷ with nothing held.
pub(super) const HELD_OVER_NOTHING: Rule = AtLeast(0.5);

/// Entries lost, left undelivered or emitted twice unexplained in the soak: none.
pub(super) const SOAK_BROKEN: Rule = Below(1.0);

/// The soak drain's resident memory, last tenth ÷ second tenth.
pub(super) const SOAK_RSS_GROWTH: Rule = Below(1.1);
