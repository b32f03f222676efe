//! The names of every metric the outbox records, through the `metrics` facade: install any
//! recorder (the `outbox` command serves them in Prometheus text with `--metrics-addr`,
//! where each `.` becomes `_`).

/// Counter, one per claimed transition (completion) a store was asked for; labels
/// `outcome` (`applied`, `stale_claim`, `terminal`, `concurrency_lost`, `missing`) and
/// `durable_status` (the row's status after the call).
pub const TRANSITIONS: &str = "outbox.claim_transition_attempts";

/// Counter, one per emission the drain ran; label `result` (`delivered`, `deferred`,
/// `retryable`, `permanent`, `route`).
pub const EMISSIONS: &str = "outbox.emissions";

/// Histogram, seconds per claim call of the drain.
pub const CLAIM_LATENCY: &str = "outbox.claim_latency_seconds";

/// Histogram, seconds per emission.
pub const EMIT_LATENCY: &str = "outbox.emit_latency_seconds";

/// Histogram, seconds per batch completion call (the record of finished emissions).
pub const COMPLETE_LATENCY: &str = "outbox.complete_latency_seconds";

/// Histogram, entries per claimed batch.
pub const BATCH_SIZE: &str = "outbox.batch_size";

/// Counter, leases the drain found lost when it renewed them (another worker took the
/// entry after the lease ran out, or an operator requeued it).
pub const LOST_RENEWALS: &str = "outbox.lost_renewals";

/// Counter, one per lease renewal the drain asked for that failed with a store error
/// (a write lock held elsewhere, a full disk, a lost connection); label `kind` (the error's
/// [`crate::OutboxError::kind`]). The drain tries again at the next renewal; leases it
/// could not renew in time may be taken over, which [`LOST_RENEWALS`] then counts.
pub const FAILED_RENEWALS: &str = "outbox.failed_renewals";

/// Counter, one per drain cycle that failed with a store error (the drain backs off and
/// tries again); labels `step` (`claim`, `complete`) and `kind` (the error's
/// [`crate::OutboxError::kind`], such as `database` for a full disk or `connection`).
pub const FAILED_CYCLES: &str = "outbox.failed_cycles";

/// Gauge, rows per status (label `status`), sampled from the store's stats.
pub const BACKLOG: &str = "outbox.entries";

/// Gauge, seconds since the oldest pending row was created (0 when none), sampled.
pub const OLDEST_PENDING_AGE: &str = "outbox.oldest_pending_age_seconds";

/// Gauge, rows under a lease that has not run out, sampled.
pub const LIVE_LEASES: &str = "outbox.live_leases";

/// Gauge, rows whose lease ran out without a completion, sampled.
pub const EXPIRED_LEASES: &str = "outbox.expired_leases";

/// Gauge, deferred and retryable rows whose retry time has come, sampled.
pub const RETRY_READY: &str = "outbox.retry_ready";

/// Gauge, dead row versions in the outbox table, sampled (PostgreSQL only).
pub const DEAD_ROWS: &str = "outbox.dead_rows";

/// Gauge, seconds the oldest snapshot held elsewhere has been open (0 when none), sampled
/// (PostgreSQL only): while it is open, dead rows cannot be removed.
pub const OLDEST_SNAPSHOT_AGE: &str = "outbox.oldest_snapshot_age_seconds";

/// Gauge: index entries of rows no longer pending that a walk from the beginning of the
/// pending index steps over, sampled with the stats (PostgreSQL only): the cost a held
/// snapshot adds to claims, rising before their rate falls.
pub const DEAD_INDEX_ENTRIES: &str = "outbox.dead_index_entries";

/// Gauge, 1 while the store's listener holds a session it has proven to hear its channel
/// (a probe notification sent from another connection arrived), 0 while it connects or
/// when the proof failed (a transaction-mode pooler between it and the server, a standby):
/// drains then poll instead of being woken (PostgreSQL only).
pub const LISTENER_UP: &str = "outbox.listener_up";

/// Counter, one per emission that met a failing route (a missing stream, topic or queue,
/// refused credentials, an unreachable broker): its entry was held, no attempt counted,
/// and the drain backed off; labels `emitter` (`nats`, `kafka`, `rabbitmq`, `webhook`,
/// `custom`) and `kind` (`missing`, `refused`, `unreachable`, `unavailable`).
pub const ROUTE_FAILURES: &str = "outbox.route_failures";

/// Every name above, for listing and checking.
pub const ALL: [&str; 19] = [
    TRANSITIONS,
    EMISSIONS,
    CLAIM_LATENCY,
    EMIT_LATENCY,
    COMPLETE_LATENCY,
    BATCH_SIZE,
    LOST_RENEWALS,
    FAILED_RENEWALS,
    FAILED_CYCLES,
    BACKLOG,
    OLDEST_PENDING_AGE,
    LIVE_LEASES,
    EXPIRED_LEASES,
    RETRY_READY,
    DEAD_ROWS,
    OLDEST_SNAPSHOT_AGE,
    DEAD_INDEX_ENTRIES,
    LISTENER_UP,
    ROUTE_FAILURES,
];

/// Sets the sampled gauges from one picture of the outbox.
pub fn record_stats(stats: &crate::OutboxStats) {
    for (status, n) in &stats.counts {
        #[allow(clippy::cast_precision_loss)] // Row counts far below 2^52.
        metrics::gauge!(BACKLOG, "status" => status.as_str()).set(*n as f64);
    }
    let age = stats.oldest_pending_created_at.map_or(0.0, |t| {
        (stats.at - t).num_milliseconds().max(0) as f64 / 1_000.0
    });
    metrics::gauge!(OLDEST_PENDING_AGE).set(age);
    #[allow(clippy::cast_precision_loss)]
    {
        metrics::gauge!(LIVE_LEASES).set(stats.claims_in_flight as f64);
        metrics::gauge!(EXPIRED_LEASES).set(stats.expired_leases as f64);
        metrics::gauge!(RETRY_READY).set(stats.retry_ready as f64);
    }
    if let Some(cleanup) = &stats.cleanup {
        #[allow(clippy::cast_precision_loss)]
        metrics::gauge!(DEAD_ROWS).set(cleanup.dead_rows as f64);
        #[allow(clippy::cast_precision_loss)]
        metrics::gauge!(DEAD_INDEX_ENTRIES).set(cleanup.dead_index_entries as f64);
        let held = cleanup
            .oldest_snapshot
            .as_ref()
            .and_then(|h| h.open_for)
            .map_or(0.0, |d| d.as_secs_f64());
        metrics::gauge!(OLDEST_SNAPSHOT_AGE).set(held);
    }
}
