//! What a soak run reports.

use serde::{Deserialize, Serialize};

use super::Engine;

/// One soak run: entries enqueued at a fixed rate for a fixed time while drain processes
/// are killed and the server restarted; what was delivered, how late, and how the
/// memory of the one drain process never killed moved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SoakRow {
    /// Engine.
    pub engine: Engine,
    /// Seconds entries were enqueued.
    pub seconds: f64,
    /// The enqueue rate aimed at, entries per second.
    pub rate_per_s: u32,
    /// Drain processes running at any time.
    pub workers: usize,
    /// Claim batch size of each drain.
    pub batch: u32,
    /// Lease length, milliseconds.
    pub lease_ms: u64,
    /// Drain processes killed (SIGKILL) and replaced.
    pub kills: u32,
    /// Server restarts.
    pub restarts: u32,
    /// Enqueue calls that returned an entry.
    pub enqueued: u64,
    /// Enqueue calls that failed (the server restarting, say).
    pub enqueue_failures: u64,
    /// Seconds from the last enqueue until nothing was left to deliver.
    pub drained_after_s: f64,
    /// Rows in the table at the end.
    pub rows: u64,
    /// Rows not delivered at the end.
    pub undelivered: u64,
    /// Entries whose enqueue returned but which are not in the table.
    pub lost: u64,
    /// Rows never emitted.
    pub never_emitted: u64,
    /// Emissions beyond each entry's first.
    pub duplicates: u64,
    /// Of those, the ones a killed process explains (it made every earlier emission).
    pub duplicates_from_kills: u64,
    /// Commit to first emission, milliseconds: median.
    pub pickup_p50_ms: f64,
    /// Commit to first emission, milliseconds: 99th percentile.
    pub pickup_p99_ms: f64,
    /// Commit to first emission, milliseconds: the worst.
    pub pickup_max_ms: f64,
    /// The never-killed drain process's resident memory over the run: (seconds since
    /// the start, KiB), sampled at a fixed interval.
    pub rss_kib: Vec<(f64, u64)>,
}

impl SoakRow {
    /// Duplicates no kill explains: every one is a broken promise.
    pub fn unexplained_duplicates(&self) -> u64 {
        self.duplicates - self.duplicates_from_kills
    }

    /// The median resident memory of the run's last tenth ÷ its second tenth (the first
    /// is warm-up: pools filling, buffers growing to their working size).
    pub fn rss_growth(&self) -> Option<f64> {
        let n = self.rss_kib.len();
        if n < 10 {
            return None;
        }
        let tenth = n / 10;
        let median = |xs: &[(f64, u64)]| {
            let mut v: Vec<u64> = xs.iter().map(|(_, kib)| *kib).collect();
            v.sort_unstable();
            v[v.len() / 2]
        };
        let early = median(&self.rss_kib[tenth..2 * tenth]);
        let late = median(&self.rss_kib[n - tenth..]);
        #[allow(clippy::cast_precision_loss)] // KiB counts far below 2^52.
        (early > 0).then(|| late as f64 / early as f64)
    }

    /// The resident memory at each tenth of the run, MiB.
    pub fn rss_by_tenth_mib(&self) -> Vec<f64> {
        let n = self.rss_kib.len();
        #[allow(clippy::cast_precision_loss)] // KiB counts far below 2^52.
        (0..10.min(n))
            .map(|i| self.rss_kib[i * n / 10.min(n)].1 as f64 / 1024.0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_growth_compares_the_last_tenth_with_the_second() {
        let mut row = SoakRow {
            engine: Engine::Postgres,
            seconds: 1.0,
            rate_per_s: 1,
            workers: 1,
            batch: 1,
            lease_ms: 1,
            kills: 0,
            restarts: 0,
            enqueued: 0,
            enqueue_failures: 0,
            drained_after_s: 0.0,
            rows: 0,
            undelivered: 0,
            lost: 0,
            never_emitted: 0,
            duplicates: 3,
            duplicates_from_kills: 2,
            pickup_p50_ms: 0.0,
            pickup_p99_ms: 0.0,
            pickup_max_ms: 0.0,
            rss_kib: (0..20).map(|i| (f64::from(i), 1_000)).collect(),
        };
        assert_eq!(row.unexplained_duplicates(), 1);
        // Warm-up in the first tenth does not count.
        row.rss_kib[0].1 = 10;
        row.rss_kib[19].1 = 1_500;
        row.rss_kib[18].1 = 1_500;
        assert_eq!(row.rss_growth(), Some(1.5));
        assert_eq!(row.rss_by_tenth_mib().len(), 10);
        row.rss_kib.truncate(5);
        assert_eq!(row.rss_growth(), None);
    }
}
