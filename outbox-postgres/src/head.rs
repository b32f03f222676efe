//! Where a claim's walk of the pending index starts.
//!
//! While another session holds an old snapshot, no index entry of a row delivered since
//! can be removed, and a walk from the beginning of the pending index steps over every one
//! of them (see migration 0006). So a claim starts its walk at the oldest pending key the
//! store's previous claim of the same kind took: nothing before it was claimable then. A
//! row can become claimable behind that key (a late commit, an operator's requeue, an
//! expired or released lease, a `not_before` come due): a claim whose walk ahead comes up
//! short walks the part behind the key in the same statement, and while batches come back
//! full the store walks from the beginning at least every [`HeadWalks::new`]'s interval.
//! A walk from the beginning that costs more (many dead entries) is spaced out to twenty
//! times its own duration, so such walks take at most about a twentieth of the claims'
//! time.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use outbox_core::{EmissionStatus, OutboxEntry, Slice};
use uuid::Uuid;

/// A key of the pending index: creation time, then id.
pub(crate) type PendingKey = (DateTime<Utc>, Uuid);

/// A kind of claim: its topic filter and slice.
type Kind = (Option<String>, Option<Slice>);

/// How many times its own duration a walk from the beginning is spaced out by.
const SPACING: u32 = 20;

/// The pending walks one kind of claim (topic filter, slice) makes.
#[derive(Debug, Clone, Copy, Default)]
struct Walks {
    /// The oldest pending key the last claim that took pending rows took.
    from: Option<PendingKey>,
    /// When the last walk from the beginning started, and how long it took.
    last_full: Option<(Instant, Duration)>,
}

/// The start of each kind of claim's next pending walk, shared by every clone of a store.
#[derive(Debug)]
pub(crate) struct HeadWalks {
    every: Duration,
    kinds: Mutex<HashMap<Kind, Walks>>,
}

impl HeadWalks {
    /// Walks from the beginning at least every `every` (zero: every claim does).
    pub(crate) fn new(every: Duration) -> Self {
        Self {
            every,
            kinds: Mutex::new(HashMap::new()),
        }
    }

    /// Where the next claim of this kind starts its pending walk (None: the beginning).
    pub(crate) fn start(&self, topic: Option<&str>, slice: Option<Slice>) -> Option<PendingKey> {
        let kinds = self.kinds.lock().unwrap_or_else(|p| p.into_inner());
        let walks = kinds.get(&(topic.map(str::to_owned), slice))?;
        let from = walks.from?;
        let (started, took) = walks.last_full?;
        let due = took.saturating_mul(SPACING).max(self.every);
        (started.elapsed() < due).then_some(from)
    }

    /// Learns from a claim that walked the pending index from `from`, started at
    /// `started` and took `took`, asked for `limit` rows and took `claimed`.
    pub(crate) fn learn(
        &self,
        topic: Option<&str>,
        slice: Option<Slice>,
        from: Option<PendingKey>,
        (started, took): (Instant, Duration),
        limit: usize,
        claimed: &[OutboxEntry],
    ) {
        let mut kinds = self.kinds.lock().unwrap_or_else(|p| p.into_inner());
        let walks = kinds.entry((topic.map(str::to_owned), slice)).or_default();
        // A claim that came up short walked the part behind its start too.
        if from.is_none() || claimed.len() < limit {
            walks.last_full = Some((started, took));
        }
        let oldest = claimed
            .iter()
            .filter(|e| e.status == EmissionStatus::Pending)
            .map(|e| (e.created_at, e.id.as_uuid()))
            .min();
        if oldest.is_some() {
            walks.from = oldest;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use outbox_core::{EntryId, NewEntry};

    const HOUR: Duration = Duration::from_secs(3600);

    fn pending(at_s: i64) -> OutboxEntry {
        OutboxEntry::from_new(
            NewEntry::new("t", b"x".to_vec())
                .with_id(EntryId::new())
                .created_at(DateTime::from_timestamp(at_s, 0).unwrap()),
            Utc::now(),
        )
    }

    fn key(e: &OutboxEntry) -> PendingKey {
        (e.created_at, e.id.as_uuid())
    }

    /// A walk that started `ago` and took `took`.
    fn walk(ago: Duration, took: Duration) -> (Instant, Duration) {
        (Instant::now() - ago, took)
    }

    #[test]
    fn a_new_kind_walks_from_the_beginning() {
        let walks = HeadWalks::new(HOUR);
        assert_eq!(walks.start(None, None), None);
    }

    #[test]
    fn a_full_batch_moves_the_start_to_its_oldest_pending_row() {
        let walks = HeadWalks::new(HOUR);
        let rows = [pending(20), pending(10), pending(30)];
        walks.learn(
            None,
            None,
            None,
            walk(Duration::ZERO, Duration::ZERO),
            3,
            &rows,
        );
        assert_eq!(walks.start(None, None), Some(key(&rows[1])));
        // Other kinds of claim keep their own start.
        assert_eq!(walks.start(Some("t"), None), None);
        let slice = Slice::new(0, 2).unwrap();
        assert_eq!(walks.start(None, Some(slice)), None);
    }

    #[test]
    fn a_claim_without_pending_rows_keeps_the_start() {
        let walks = HeadWalks::new(HOUR);
        let rows = [pending(10), pending(11)];
        walks.learn(
            None,
            None,
            None,
            walk(Duration::ZERO, Duration::ZERO),
            2,
            &rows,
        );
        let from = walks.start(None, None);
        assert_eq!(from, Some(key(&rows[0])));
        walks.learn(
            None,
            None,
            from,
            walk(Duration::ZERO, Duration::ZERO),
            2,
            &[],
        );
        assert_eq!(walks.start(None, None), from);
    }

    #[test]
    fn a_short_claim_counts_as_a_walk_from_the_beginning() {
        let every = Duration::from_secs(10);
        let walks = HeadWalks::new(every);
        let rows = [pending(10), pending(11)];
        walks.learn(None, None, None, walk(every * 2, Duration::ZERO), 2, &rows);
        assert_eq!(walks.start(None, None), None);
        // A short claim from a start walked behind it: the interval starts again.
        walks.learn(
            None,
            None,
            Some(key(&rows[0])),
            walk(Duration::ZERO, Duration::ZERO),
            2,
            &rows[1..],
        );
        assert_eq!(walks.start(None, None), Some(key(&rows[1])));
    }

    #[test]
    fn full_batches_walk_from_the_beginning_at_the_interval() {
        let every = Duration::from_secs(10);
        let walks = HeadWalks::new(every);
        walks.learn(
            None,
            None,
            None,
            walk(every / 2, Duration::ZERO),
            1,
            &[pending(10)],
        );
        assert!(walks.start(None, None).is_some());
        walks.learn(
            None,
            None,
            None,
            walk(every, Duration::ZERO),
            1,
            &[pending(10)],
        );
        assert_eq!(walks.start(None, None), None);
    }

    #[test]
    fn an_interval_of_zero_always_walks_from_the_beginning() {
        let walks = HeadWalks::new(Duration::ZERO);
        walks.learn(
            None,
            None,
            None,
            walk(Duration::ZERO, Duration::ZERO),
            1,
            &[pending(10)],
        );
        assert_eq!(walks.start(None, None), None);
    }

    #[test]
    fn a_costly_full_walk_is_spaced_out_by_its_duration() {
        let walks = HeadWalks::new(Duration::ZERO);
        let took = Duration::from_millis(100);
        // A walk that took 100 ms is not repeated for 2 s...
        walks.learn(None, None, None, walk(took * 19, took), 2, &[pending(10)]);
        assert!(walks.start(None, None).is_some());
        // ...and is once they have passed.
        walks.learn(None, None, None, walk(took * 21, took), 2, &[pending(10)]);
        assert_eq!(walks.start(None, None), None);
    }
}
