//! What keeps an engine from reclaiming the rows the outbox has finished with.
//!
//! Engines that keep old row versions (PostgreSQL) remove a dead version only once no
//! transaction still open could see it. One session left idle in a transaction, a long
//! report or a forgotten prepared transaction holds every dead version made since it
//! began, in every table: the outbox's indexes fill with entries each claim must step
//! over, and claims slow down until the holder lets go. [`CleanupStats`] is the picture an
//! operator needs to see that happening, and [`CleanupThresholds`] says when to warn.

use std::time::Duration;

use serde::Serialize;

/// The outbox table's dead row versions and the oldest snapshot that keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CleanupStats {
    /// Dead row versions in the outbox table, as the server's statistics last counted
    /// them (the count lags by up to a second or so).
    pub dead_rows: u64,
    /// Live rows in the outbox table, by the same count.
    pub live_rows: u64,
    /// Index entries a claim walking the pending index from its beginning steps over
    /// before the first pending row, sampled by this call: entries of rows delivered (or
    /// otherwise no longer pending) that a held snapshot keeps. Claims start past them
    /// (see the store's docs), but the walks from the beginning that catch late rows pay
    /// for every one, and so would every claim of a store without that start.
    pub dead_index_entries: u64,
    /// The oldest snapshot held elsewhere (another session, a prepared transaction, a
    /// replication slot), if any.
    pub oldest_snapshot: Option<HeldSnapshot>,
}

/// A snapshot held open, keeping dead row versions from being removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldSnapshot {
    /// How many transactions have started since it was taken (PostgreSQL's
    /// `age(backend_xmin)`).
    pub xmin_age: u64,
    /// How long its transaction has been open, when the server knows (it does not for a
    /// replication slot).
    pub open_for: Option<Duration>,
    /// Who holds it: a session (with its process id, state and application name), a
    /// prepared transaction or a replication slot.
    pub holder: String,
}

/// When [`CleanupStats`] deserve a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CleanupThresholds {
    /// A snapshot open at least this long.
    pub snapshot_open_for: Duration,
    /// At least this many dead row versions in the outbox table.
    pub dead_rows: u64,
    /// At least this many dead entries at the start of the pending index.
    pub dead_index_entries: u64,
}

impl Default for CleanupThresholds {
    /// Five minutes, 100,000 dead rows and 100,000 dead index entries: a drain of a few
    /// hundred entries a second leaves about that many dead versions in five minutes,
    /// which is where a walk from the beginning of the pending index starts to cost tens
    /// of milliseconds.
    fn default() -> Self {
        Self {
            snapshot_open_for: Duration::from_secs(300),
            dead_rows: 100_000,
            dead_index_entries: 100_000,
        }
    }
}

impl CleanupStats {
    /// One sentence per threshold crossed, naming what crossed it; empty when none is.
    pub fn warnings(&self, limits: &CleanupThresholds) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(held) = &self.oldest_snapshot {
            if held.open_for.is_some_and(|d| d >= limits.snapshot_open_for) {
                let secs = held.open_for.unwrap_or_default().as_secs();
                out.push(format!(
                    "a snapshot has been held for {secs} s (at least {} s warns) by {}: \
                     dead rows cannot be removed until it ends, and claims slow down as \
                     they pile up",
                    limits.snapshot_open_for.as_secs(),
                    held.holder
                ));
            }
        }
        if self.dead_rows >= limits.dead_rows {
            out.push(format!(
                "the outbox table holds {} dead row versions (at least {} warns) beside {} \
                 live rows: vacuum has not caught up, or a held snapshot keeps them",
                self.dead_rows, limits.dead_rows, self.live_rows
            ));
        }
        if self.dead_index_entries >= limits.dead_index_entries {
            out.push(format!(
                "a claim walking the pending index from its beginning steps over {} entries \
                 of rows no longer pending (at least {} warns) before the first pending one",
                self.dead_index_entries, limits.dead_index_entries
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(open_secs: Option<u64>) -> CleanupStats {
        CleanupStats {
            dead_rows: 10,
            live_rows: 5,
            dead_index_entries: 3,
            oldest_snapshot: Some(HeldSnapshot {
                xmin_age: 42,
                open_for: open_secs.map(Duration::from_secs),
                holder: "session 7 (idle in transaction, report)".into(),
            }),
        }
    }

    #[test]
    fn warns_only_past_a_threshold_and_names_the_holder() {
        let limits = CleanupThresholds {
            snapshot_open_for: Duration::from_secs(60),
            dead_rows: 100,
            dead_index_entries: 200,
        };
        assert!(held(Some(59)).warnings(&limits).is_empty());
        assert!(held(None).warnings(&limits).is_empty());
        let w = held(Some(60)).warnings(&limits);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("held for 60 s"), "{w:?}");
        assert!(
            w[0].contains("session 7 (idle in transaction, report)"),
            "{w:?}"
        );

        let mut dead = held(None);
        dead.dead_rows = 100;
        let w = dead.warnings(&limits);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("100 dead row versions"), "{w:?}");
        assert!(w[0].contains("beside 5 live rows"), "{w:?}");

        let mut walk = held(None);
        walk.dead_index_entries = 200;
        let w = walk.warnings(&limits);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("steps over 200 entries"), "{w:?}");
    }
}
