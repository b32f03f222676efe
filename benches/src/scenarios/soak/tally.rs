//! What a soak run's log and table say: every entry delivered, which duplicates the
//! kills explain, and how long entries waited from commit to emission.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use uuid::Uuid;

use super::child::Emitted;
use crate::stats::percentile_ms;

/// The checks and latencies of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Tally {
    /// Rows the table holds at the end.
    pub rows: u64,
    /// Rows not delivered at the end.
    pub undelivered: u64,
    /// Entries whose enqueue returned that are not in the table.
    pub lost: u64,
    /// Rows never emitted (in the table, absent from the log).
    pub never_emitted: u64,
    /// Emissions beyond each entry's first.
    pub duplicates: u64,
    /// Duplicates that a kill explains: every emission but the last came from a killed
    /// process.
    pub duplicates_from_kills: u64,
    /// Commit to first emission, milliseconds: median, 99th percentile, worst.
    pub pickup_ms: [f64; 3],
}

/// Tallies `log` against the table's `rows` (id, delivered), the entries whose enqueue
/// returned (`committed`: id, microseconds since the epoch) and the owners killed.
pub(super) fn tally(
    log: &[Emitted],
    rows: &[(Uuid, bool)],
    committed: &[(Uuid, i64)],
    killed: &HashSet<String>,
) -> Tally {
    let mut by_id: HashMap<Uuid, Vec<&Emitted>> = HashMap::new();
    for e in log {
        by_id.entry(e.id).or_default().push(e);
    }
    let in_table: HashSet<Uuid> = rows.iter().map(|(id, _)| *id).collect();
    let mut t = Tally {
        rows: rows.len() as u64,
        undelivered: rows.iter().filter(|(_, delivered)| !delivered).count() as u64,
        lost: committed
            .iter()
            .filter(|(id, _)| !in_table.contains(id))
            .count() as u64,
        never_emitted: rows
            .iter()
            .filter(|(id, _)| !by_id.contains_key(id))
            .count() as u64,
        ..Tally::default()
    };
    for emissions in by_id.values_mut() {
        emissions.sort_by_key(|e| e.at_us);
        let (_, earlier) = emissions.split_last().expect("at least one emission");
        t.duplicates += earlier.len() as u64;
        if earlier.iter().all(|e| killed.contains(&e.owner)) {
            t.duplicates_from_kills += earlier.len() as u64;
        }
    }
    let mut pickups: Vec<Duration> = committed
        .iter()
        .filter_map(|(id, at)| {
            let first = by_id.get(id)?.first()?.at_us;
            Some(Duration::from_micros(
                u64::try_from(first - at).unwrap_or(0),
            ))
        })
        .collect();
    t.pickup_ms = [0.5, 0.99, 1.0].map(|q| percentile_ms(&mut pickups, q));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emitted(id: Uuid, owner: &str, at_us: i64) -> Emitted {
        Emitted {
            id,
            owner: owner.into(),
            at_us,
        }
    }

    #[test]
    fn a_duplicate_counts_as_explained_only_when_a_killed_process_emitted_first() {
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let log = [
            emitted(a, "w1-0", 2_000),
            emitted(b, "w1-0", 3_000),
            emitted(b, "w2-0", 9_000),
            emitted(c, "w0-0", 4_000),
            emitted(c, "w2-0", 8_000),
        ];
        let rows = [(a, true), (b, true), (c, true)];
        let committed = [(a, 1_000), (b, 1_000), (c, 1_000)];
        let killed = HashSet::from(["w1-0".to_owned()]);
        let t = tally(&log, &rows, &committed, &killed);
        assert_eq!((t.duplicates, t.duplicates_from_kills), (2, 1));
        assert_eq!((t.undelivered, t.lost, t.never_emitted), (0, 0, 0));
        assert_eq!(t.pickup_ms, [2.0, 3.0, 3.0]);
    }

    #[test]
    fn entries_missing_from_the_table_or_the_log_are_counted() {
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let log = [emitted(a, "w0-0", 5)];
        let rows = [(a, true), (b, false)];
        let committed = [(a, 10), (c, 1)];
        let t = tally(&log, &rows, &committed, &HashSet::new());
        assert_eq!(
            (t.rows, t.undelivered, t.lost, t.never_emitted),
            (2, 1, 1, 1)
        );
        // An emission seen before the enqueue call returned waited no time.
        assert_eq!(t.pickup_ms, [0.0, 0.0, 0.0]);
    }
}
