//! Running a call again after the database rolled it back as a deadlock victim or on a
//! lock timeout ([`OutboxError::Conflict`]): a bounded number of times, with jittered
//! exponential backoff. Every store that retries such calls does it this way.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rand::Rng;

use crate::{OutboxError, Result};

/// How often, and how patiently, a call the database rolled back is run again.
///
/// Only [`OutboxError::Conflict`] is retried (a deadlock victim, a lock wait that timed
/// out): the database rolled the whole call back, so running it again cannot apply it
/// twice. Every other error is returned at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConflictRetry {
    attempts: u32,
    base: Duration,
    max: Duration,
}

impl Default for ConflictRetry {
    /// Up to 5 attempts, waiting about 5 ms, 10 ms, 20 ms, 40 ms between them (each wait
    /// drawn at random up to that bound, so retrying workers do not collide again).
    fn default() -> Self {
        Self {
            attempts: 5,
            base: Duration::from_millis(5),
            max: Duration::from_millis(250),
        }
    }
}

impl ConflictRetry {
    /// At most `attempts` tries in all (1 ..= 20), the first wait up to `base`, doubling,
    /// never more than `max` (0 < `base` <= `max` <= 30 s); otherwise
    /// [`OutboxError::InvalidInput`].
    pub fn new(attempts: u32, base: Duration, max: Duration) -> Result<Self> {
        if !(1..=20).contains(&attempts) {
            return Err(OutboxError::invalid(
                "retry attempts",
                format!("must be between 1 and 20, got {attempts}"),
            ));
        }
        if base.is_zero() || max < base || max > Duration::from_secs(30) {
            return Err(OutboxError::invalid(
                "retry delays",
                format!("need 0 < base <= max <= 30s, got base {base:?}, max {max:?}"),
            ));
        }
        Ok(Self {
            attempts,
            base,
            max,
        })
    }

    /// No retries: every error is returned at once.
    pub fn none() -> Self {
        Self {
            attempts: 1,
            ..Self::default()
        }
    }

    /// The most tries a call gets.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The longest wait before the next try: up to `base * 2^(next - 2)` before try
    /// `next` (2, 3, …), capped at `max`.
    fn bound_before(&self, next: u32) -> Duration {
        let doubling = 2u32.saturating_pow(next.saturating_sub(2).min(16));
        self.base.saturating_mul(doubling).min(self.max)
    }

    /// The wait before try `next`: drawn at random up to [`Self::bound_before`].
    fn delay_before(&self, next: u32) -> Duration {
        let bound = self.bound_before(next);
        let micros = u64::try_from(bound.as_micros()).unwrap_or(u64::MAX).max(1);
        Duration::from_micros(rand::rng().random_range(1..=micros))
    }

    /// Runs `call` until it succeeds, fails with an error that is not a conflict, or has
    /// used every attempt; counts each retry in `retried`.
    pub async fn run<T, F, Fut>(&self, retried: &AtomicU64, mut call: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let mut tried = 1;
        loop {
            match call().await {
                Err(OutboxError::Conflict { message, .. }) if tried < self.attempts => {
                    tried += 1;
                    retried.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(%message, attempt = tried, "retrying a call the database rolled back");
                    tokio::time::sleep(self.delay_before(tried)).await;
                }
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict() -> OutboxError {
        OutboxError::Conflict {
            message: "deadlock".into(),
            source: None,
        }
    }

    #[test]
    fn bad_policies_are_refused() {
        let ms = Duration::from_millis;
        assert!(ConflictRetry::new(0, ms(1), ms(1)).is_err());
        assert!(ConflictRetry::new(21, ms(1), ms(1)).is_err());
        assert!(ConflictRetry::new(3, Duration::ZERO, ms(1)).is_err());
        assert!(ConflictRetry::new(3, ms(5), ms(1)).is_err());
        assert!(ConflictRetry::new(3, ms(1), Duration::from_secs(31)).is_err());
        assert_eq!(ConflictRetry::new(3, ms(1), ms(8)).unwrap().attempts(), 3);
    }

    #[test]
    fn waits_double_up_to_the_cap() {
        let p =
            ConflictRetry::new(10, Duration::from_millis(5), Duration::from_millis(30)).unwrap();
        let bounds: Vec<u128> = (2..7).map(|n| p.bound_before(n).as_millis()).collect();
        assert_eq!(bounds, [5, 10, 20, 30, 30]);
        for next in 2..7 {
            assert!(p.delay_before(next) <= p.bound_before(next));
        }
    }

    #[tokio::test]
    async fn conflicts_are_retried_and_other_errors_returned_at_once() {
        let p =
            ConflictRetry::new(3, Duration::from_micros(10), Duration::from_micros(10)).unwrap();
        let retried = AtomicU64::new(0);
        let mut calls = 0;
        let got: Result<u32> = p
            .run(&retried, || {
                calls += 1;
                let n = calls;
                async move {
                    if n < 3 {
                        Err(conflict())
                    } else {
                        Ok(n)
                    }
                }
            })
            .await;
        assert_eq!(got.unwrap(), 3);
        assert_eq!(retried.load(Ordering::Relaxed), 2);
        let mut calls = 0;
        let got: Result<u32> = p
            .run(&retried, || {
                calls += 1;
                async { Err(conflict()) }
            })
            .await;
        assert!(matches!(got, Err(OutboxError::Conflict { .. })));
        assert_eq!(calls, 3, "every attempt used, then the conflict returned");
        let mut calls = 0;
        let got: Result<u32> = p
            .run(&retried, || {
                calls += 1;
                async { Err(OutboxError::invalid("x", "bad")) }
            })
            .await;
        assert!(got.unwrap_err().is_invalid_input());
        assert_eq!(calls, 1);
        assert!(ConflictRetry::none().attempts() == 1);
    }
}
