//! How big and how long each scenario runs: one value for the smoke run, one for the report.

use std::time::Duration;

/// Sizes and time budgets of a run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// `quick` or `full`.
    pub mode: &'static str,
    /// Claim batch sizes.
    pub batches: Vec<u32>,
    /// Added round-trip latencies (network engines only), milliseconds.
    pub latencies_ms: Vec<u32>,
    /// Drain worker counts.
    pub drain_workers: Vec<usize>,
    /// Time budget of one claim or race cell.
    pub cell_budget: Duration,
    /// Entries loaded for one claim or race cell.
    pub cell_backlog: u64,
    /// Racing workers.
    pub race_workers: usize,
    /// Entries one drain cell delivers before it stops (or its budget ends).
    pub drain_entries: u64,
    /// Time budget of one drain cell.
    pub drain_budget: Duration,
    /// Entries one flow cell delivers (against a 5 ms emitter).
    pub flow_entries: u64,
    /// Time budget of one flow cell.
    pub flow_budget: Duration,
    /// Entries one brokers cell delivers.
    pub broker_entries: u64,
    /// Entries written one per host transaction.
    pub enqueue_single: u64,
    /// Bulk calls of 1,000 entries.
    pub enqueue_bulk_calls: u64,
    /// Entries of the command's default payload size (64 bytes), in bulk calls of 1,000,
    /// on the optimized stores: `outbox enqueue --count N --batch 1000` through the API.
    pub enqueue_small_entries: u64,
    /// Never-analyzed backlog the raw-SQL ceiling and the drain both clear.
    pub ceiling_backlog: u64,
    /// Pending backlogs of the scale cases; the first is the clean baseline.
    pub scale_pending: Vec<u64>,
    /// Delivered rows of history in the history case.
    pub scale_history: u64,
    /// Retryable failures parked an hour ahead in the parked case.
    pub scale_parked: u64,
    /// Rows at the head of the queue under a live lease in the leased-head case.
    pub scale_leased_head: u64,
    /// Entries each scale case delivers (the same work in every case).
    pub scale_entries: u64,
    /// How long the held-snapshot scenario drains round after round, each way.
    pub held_duration: Duration,
    /// Entries loaded and drained per held-snapshot round.
    pub held_round: u64,
    /// Key counts of the ordered drain's backlogs.
    pub ordered_keys: Vec<u64>,
    /// Rounds of each ordered cell, unordered and in key order one after the other in
    /// each: the report keeps the median.
    pub ordered_rounds: usize,
    /// Rounds of each ceiling cell, the raw loop and the drain one after the other in
    /// each, which goes first alternating: the report keeps the round of median ratio.
    pub ceiling_rounds: usize,
    /// How long the soak enqueues (the drains run on until the queue is empty).
    pub soak_duration: Duration,
    /// The soak's enqueue rate, entries per second, one per transaction.
    pub soak_rate: u32,
    /// Drain processes the soak runs at any time (one of them is never killed).
    pub soak_workers: usize,
    /// How often the soak SIGKILLs one drain process and starts another.
    pub soak_kill_every: Duration,
    /// The soak drains' lease: how long a killed process's entries wait.
    pub soak_lease: Duration,
    /// How often the soak samples the never-killed drain's resident memory.
    pub soak_sample_every: Duration,
    /// Payload bytes of every loaded entry.
    pub payload_bytes: u32,
    /// Pending entries of both reading tables (what is live).
    pub reading_live: u64,
    /// Delivered entries behind them in the second reading table.
    pub reading_history: u64,
    /// Timed calls of the live stats per table (the full count: at most 5).
    pub reading_calls: u32,
}

impl Plan {
    /// Seconds, not minutes: every scenario once, at small sizes, for CI.
    pub fn quick() -> Self {
        Self {
            mode: "quick",
            batches: vec![1, 10, 50, 100],
            latencies_ms: vec![0, 1, 5],
            drain_workers: vec![1, 2],
            cell_budget: Duration::from_millis(150),
            cell_backlog: 300,
            race_workers: 8,
            drain_entries: 200,
            drain_budget: Duration::from_millis(500),
            flow_entries: 300,
            flow_budget: Duration::from_secs(2),
            broker_entries: 500,
            enqueue_single: 50,
            enqueue_bulk_calls: 2,
            enqueue_small_entries: 5_000,
            ceiling_backlog: 2_000,
            scale_pending: vec![1_000, 5_000],
            scale_history: 5_000,
            scale_parked: 2_000,
            scale_leased_head: 200,
            scale_entries: 500,
            held_duration: Duration::from_secs(2),
            held_round: 500,
            ordered_keys: vec![10, 1_000],
            ordered_rounds: 1,
            ceiling_rounds: 1,
            soak_duration: Duration::from_secs(45),
            soak_rate: 100,
            soak_workers: 3,
            soak_kill_every: Duration::from_secs(4),
            soak_lease: Duration::from_secs(3),
            soak_sample_every: Duration::from_secs(1),
            payload_bytes: 256,
            reading_live: 3_000,
            reading_history: 20_000,
            reading_calls: 5,
        }
    }

    /// The report: the whole grid at the sizes the targets name.
    pub fn full() -> Self {
        Self {
            mode: "full",
            batches: vec![1, 10, 50, 100],
            latencies_ms: vec![0, 1, 5],
            drain_workers: vec![1, 2, 4],
            cell_budget: Duration::from_secs(2),
            cell_backlog: 20_000,
            race_workers: 8,
            // A run long against its start: at 20,000 entries/s, 5,000 entries took a
            // quarter second, most of it connections and statements prepared through the
            // latency proxy, which a drain running for hours pays once.
            drain_entries: 20_000,
            drain_budget: Duration::from_secs(4),
            flow_entries: 6_000,
            flow_budget: Duration::from_secs(15),
            broker_entries: 20_000,
            enqueue_single: 3_000,
            enqueue_bulk_calls: 100,
            enqueue_small_entries: 1_000_000,
            ceiling_backlog: 200_000,
            scale_pending: vec![10_000, 200_000, 1_000_000],
            scale_history: 1_000_000,
            scale_parked: 100_000,
            scale_leased_head: 2_000,
            scale_entries: 10_000,
            held_duration: Duration::from_secs(300),
            held_round: 10_000,
            ordered_keys: vec![10, 1_000, 100_000],
            ordered_rounds: 3,
            ceiling_rounds: 3,
            soak_duration: Duration::from_secs(3_600),
            soak_rate: 200,
            soak_workers: 3,
            soak_kill_every: Duration::from_secs(5),
            soak_lease: Duration::from_secs(5),
            soak_sample_every: Duration::from_secs(10),
            payload_bytes: 1_024,
            reading_live: 30_000,
            reading_history: 2_000_000,
            reading_calls: 30,
        }
    }
}

/// `10k`, `200k`, `1m`: a row count as a case name.
pub fn size_label(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}m", n / 1_000_000)
    } else if n >= 1_000 && n.is_multiple_of(1_000) {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_as_case_names() {
        assert_eq!(super::size_label(10_000), "10k");
        assert_eq!(super::size_label(1_000_000), "1m");
        assert_eq!(super::size_label(1_500), "1500");
    }
}
