//! Turns at the file's write lock, between the store's own connection and every other
//! writer (the host's transactions on the pool, an operator, another process's drain).
//!
//! SQLite has no queue for its write lock: a writer that finds it taken sleeps in its busy
//! handler (1, 2, 5 … up to 100 ms between tries) and gets it only if it is free at the
//! moment it tries again. The store's thread, fed one call after another (a claim ahead
//! queued behind the current batch's completion, several workers), would otherwise go
//! from write to write with gaps of microseconds, and such a writer would seldom find the
//! lock free. So the thread leaves the lock free for at least [`FREE_SHARE`] of the time
//! it held it: once it has held it for [`STRETCH`] with no long enough gap between its
//! transactions, it rests before the next one (one rest per stretch rather than one per
//! transaction: every sleep overshoots by tens of microseconds). And it notes when its
//! own `BEGIN IMMEDIATE` had to wait ([`Beside`]): another writer had the lock, and the
//! drain, told so ([`outbox_core::OutboxStore::writers_beside`]), stops claiming ahead
//! for a while and leaves longer gaps.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The share of the time the thread held the lock that it leaves the lock free: fed
/// calls back to back, it holds it at most nine tenths of the time.
pub(crate) const FREE_SHARE: f64 = 1.0 / 9.0;

/// How long the thread may hold the lock, over transactions with too short gaps between
/// them, before it rests.
pub(crate) const STRETCH: Duration = Duration::from_millis(2);

/// A `BEGIN IMMEDIATE` that took this long waited for another writer (the busy handler's
/// first sleep is a millisecond; an uncontended begin takes microseconds).
pub(crate) const WAITED: Duration = Duration::from_millis(1);

/// How long after the store last waited for the lock a drain still counts other writers
/// as beside it.
pub(crate) const LATELY: Duration = Duration::from_secs(2);

/// When the store's connection last waited for the write lock, shared with the store.
#[derive(Debug)]
pub(crate) struct Beside {
    epoch: Instant,
    /// Nanoseconds from `epoch` to the end of the last wait; 0 before any.
    waited_at: AtomicU64,
}

impl Default for Beside {
    fn default() -> Self {
        Self {
            epoch: Instant::now(),
            waited_at: AtomicU64::new(0),
        }
    }
}

impl Beside {
    /// Notes a wait for the lock that ended now.
    fn note(&self) {
        let at = u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.waited_at.store(at.max(1), Ordering::Relaxed);
    }

    /// Whether the store waited for the lock within [`LATELY`].
    pub(crate) fn lately(&self) -> bool {
        match self.waited_at.load(Ordering::Relaxed) {
            0 => false,
            at => self.epoch.elapsed() < Duration::from_nanos(at) + LATELY,
        }
    }
}

/// The thread's side: when its last write transaction ended, and how long it has held
/// the lock since it last left it free for long enough.
#[derive(Debug, Default)]
pub(crate) struct Turns {
    last: Option<(Instant, Duration)>,
    beside: Arc<Beside>,
}

impl Turns {
    /// The record the store reads.
    pub(crate) fn beside(&self) -> Arc<Beside> {
        Arc::clone(&self.beside)
    }

    /// Before a write transaction: rests, once the lock has been held a whole stretch, until
    /// it has been free for its share of that time.
    pub(crate) fn wait_for_turn(&mut self) {
        let Some((ended, held)) = self.last else {
            return;
        };
        match free_left(ended.elapsed(), held) {
            // Free long enough since: a new stretch starts.
            None => self.last = None,
            Some(rest) if held >= STRETCH => {
                std::thread::sleep(rest);
                self.last = None;
            }
            Some(_) => {}
        }
    }

    /// Notes a `BEGIN IMMEDIATE` that took `took`: a wait for another writer if it took
    /// [`WAITED`] or more.
    pub(crate) fn began(&self, took: Duration) {
        if took >= WAITED {
            self.beside.note();
        }
    }

    /// Notes a write transaction that held the lock from `began` until now.
    pub(crate) fn ended(&mut self, began: Instant) {
        let before = self.last.map_or(Duration::ZERO, |(_, held)| held);
        self.last = Some((Instant::now(), before + began.elapsed()));
    }
}

/// How much longer the lock must stay free, `free_for` after transactions that held it
/// `held`; `None` once it has been free long enough.
fn free_left(free_for: Duration, held: Duration) -> Option<Duration> {
    held.mul_f64(FREE_SHARE)
        .checked_sub(free_for)
        .filter(|rest| !rest.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_stays_free_for_a_ninth_of_the_time_it_was_held() {
        let held = Duration::from_micros(900);
        assert_eq!(
            free_left(Duration::ZERO, held),
            Some(Duration::from_micros(100))
        );
        assert_eq!(
            free_left(Duration::from_micros(40), held),
            Some(Duration::from_micros(60))
        );
        assert_eq!(free_left(Duration::from_micros(100), held), None);
        assert_eq!(free_left(Duration::from_millis(5), held), None);
    }

    #[test]
    fn the_thread_rests_once_it_has_held_the_lock_a_whole_stretch() {
        let mut turns = Turns::default();
        let held = STRETCH + Duration::from_millis(1);
        turns.ended(
            Instant::now()
                .checked_sub(held)
                .expect("the clock runs past boot"),
        );
        let asked = Instant::now();
        turns.wait_for_turn();
        assert!(
            asked.elapsed() >= held.mul_f64(FREE_SHARE).mul_f64(0.9),
            "it did not rest: {:?}",
            asked.elapsed()
        );
        assert!(turns.last.is_none(), "a rest does not start a new stretch");
    }

    #[test]
    fn short_transactions_add_up_to_a_stretch_and_a_long_enough_gap_starts_a_new_one() {
        let mut turns = Turns::default();
        let short = Duration::from_micros(500);
        turns.ended(
            Instant::now()
                .checked_sub(short)
                .expect("the clock runs past boot"),
        );
        turns.wait_for_turn();
        turns.ended(
            Instant::now()
                .checked_sub(short)
                .expect("the clock runs past boot"),
        );
        let held = turns.last.map(|(_, held)| held).expect("held");
        assert!(held >= 2 * short, "the stretch did not add up: {held:?}");
        std::thread::sleep(held.mul_f64(FREE_SHARE) + Duration::from_millis(1));
        turns.wait_for_turn();
        assert!(
            turns.last.is_none(),
            "a long enough gap did not start a new stretch"
        );
    }

    #[test]
    fn a_begin_that_waited_counts_lately_and_one_that_did_not_never_does() {
        let turns = Turns::default();
        let beside = turns.beside();
        assert!(!beside.lately(), "nothing waited yet");
        turns.began(Duration::from_micros(20));
        assert!(!beside.lately(), "an uncontended begin counted as a wait");
        turns.began(WAITED);
        assert!(beside.lately());
    }

    #[test]
    fn a_wait_stops_counting_after_a_while() {
        let beside = Beside {
            epoch: Instant::now()
                .checked_sub(LATELY + Duration::from_secs(1))
                .expect("the clock runs past boot"),
            waited_at: AtomicU64::new(1),
        };
        assert!(!beside.lately(), "a wait long past still counts");
    }
}
