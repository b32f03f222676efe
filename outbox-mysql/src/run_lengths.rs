//! How many heads a claim in key runs asks its choice for. A claim of N in runs of up to R
//! needs as few as N / R heads when the keys have rows behind their heads, and N when they
//! do not; a choice asked for more heads than the batch needs goes on walking the backlog
//! for them, and at few keys (few heads, every one found in the first rows) it walks until
//! its bound of examined rows (walks.rs) on every claim. So the store remembers how many
//! rows a head brought in its last claim in key runs and asks for as many heads as that
//! fills the batch with; a claim whose guess fell short asks again for the rest (ordered.rs).

use std::sync::atomic::{AtomicU32, Ordering};

/// The rows per head of the store's last claim in key runs that took any.
#[derive(Debug, Default)]
pub(crate) struct RunLengths {
    /// Rows per head, rounded down; 0 before the first claim in key runs.
    last: AtomicU32,
}

impl RunLengths {
    /// The rows a head is expected to bring in runs of up to `key_run`: the last claim's,
    /// 1 before there was one (so a first claim finds as many heads as today's rows need).
    pub(crate) fn expected(&self, key_run: u32) -> u32 {
        self.last.load(Ordering::Relaxed).clamp(1, key_run.max(1))
    }

    /// How many heads a claim of `room` rows asks for when each is expected to bring
    /// `per_head` rows.
    pub(crate) fn heads_for(room: u32, per_head: u32) -> u32 {
        room.div_ceil(per_head.max(1))
    }

    /// Records a claim that took `rows` rows behind `heads` heads (nothing when it took
    /// none).
    pub(crate) fn saw(&self, rows: usize, heads: usize) {
        if heads == 0 {
            return;
        }
        let per_head = u32::try_from(rows / heads).unwrap_or(u32::MAX).max(1);
        self.last.store(per_head, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_claim_asks_for_a_head_per_row() {
        let lengths = RunLengths::default();
        assert_eq!(lengths.expected(10), 1);
        assert_eq!(RunLengths::heads_for(100, lengths.expected(10)), 100);
    }

    #[test]
    fn full_runs_make_the_next_claim_ask_for_a_tenth() {
        let lengths = RunLengths::default();
        lengths.saw(100, 10);
        assert_eq!(lengths.expected(10), 10);
        assert_eq!(RunLengths::heads_for(100, lengths.expected(10)), 10);
        // A claim asking for runs of 4 never expects more than 4 rows a head.
        assert_eq!(lengths.expected(4), 4);
        assert_eq!(RunLengths::heads_for(100, 3), 34);
    }

    #[test]
    fn short_runs_bring_the_guess_down_and_an_empty_claim_leaves_it() {
        let lengths = RunLengths::default();
        lengths.saw(100, 10);
        lengths.saw(100, 40);
        assert_eq!(lengths.expected(10), 2);
        lengths.saw(0, 0);
        assert_eq!(lengths.expected(10), 2);
        lengths.saw(7, 9);
        assert_eq!(lengths.expected(10), 1, "never below one row a head");
    }
}
