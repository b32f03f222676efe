//! How far a claim in key order walks the pending backlog. Of a long backlog spread over
//! few keys only a few rows are heads, so a walk that has not filled its batch would go on
//! to the backlog's end on every claim. A claim in key order therefore examines a bounded
//! number of rows (`ROWS EXAMINED`, [`examined_bound`]), which finds the heads near the
//! backlog's front, and now and then walks it whole, so that a key whose head lies behind
//! a long run of another key's rows is reached too. A whole walk that took longer than
//! [`COSTLY`] holds the next one back as every store's costly walks are
//! ([`outbox_core::store_kit::claims::hold_back`]: twenty times its duration), so whole walks take
//! at most about a twentieth of the claims' time and such a key waits at most that long.
//! Cheap whole walks (a short backlog) are never held back.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use outbox_core::store_kit::claims::hold_back;

/// A whole walk that took longer than this holds the next one back.
pub(crate) const COSTLY: Duration = Duration::from_millis(5);

/// Rows a bounded walk may examine per row of its batch: the key checks examine about 30
/// rows for a head, a few for a row behind one (measured: tests/it/ordered_plans.rs).
const EXAMINED_PER_ROW: u32 = 50;

/// The fewest rows a bounded walk may examine.
const EXAMINED_AT_LEAST: u32 = 1_000;

/// The most rows a claim in key order of `batch` may examine when it does not walk the
/// whole backlog.
pub(crate) fn examined_bound(batch: u32) -> i64 {
    i64::from(
        batch
            .saturating_mul(EXAMINED_PER_ROW)
            .max(EXAMINED_AT_LEAST),
    )
}

/// No bound: the whole walk, and every claim not in key order.
pub(crate) const UNBOUNDED: i64 = i64::MAX;

/// When the next whole walk may be made.
#[derive(Debug, Default)]
pub(crate) struct WholeWalks {
    not_before: Mutex<Option<Instant>>,
}

impl WholeWalks {
    /// Whether a claim starting at `now` walks the whole backlog.
    pub(crate) fn due(&self, now: Instant) -> bool {
        self.not_before
            .lock()
            .expect("the whole walks' lock")
            .is_none_or(|at| now >= at)
    }

    /// Records a whole walk that started at `started` and took `took`.
    pub(crate) fn walked(&self, started: Instant, took: Duration) {
        let held = hold_back(took, COSTLY);
        let next = (!held.is_zero()).then(|| started + held);
        *self.not_before.lock().expect("the whole walks' lock") = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_costly_whole_walk_holds_the_next_back_twenty_times_its_length() {
        let walks = WholeWalks::default();
        let t = Instant::now();
        assert!(walks.due(t));
        walks.walked(t, Duration::from_millis(100));
        assert!(!walks.due(t + Duration::from_millis(1_999)));
        assert!(walks.due(t + Duration::from_millis(2_000)));
        walks.walked(t, Duration::from_millis(1));
        assert!(walks.due(t), "a cheap walk holds nothing back");
    }

    #[test]
    fn the_bound_grows_with_the_batch() {
        assert_eq!(examined_bound(1), 1_000);
        assert_eq!(examined_bound(100), 5_000);
        assert_eq!(examined_bound(u32::MAX), i64::from(u32::MAX));
    }
}
