//! Running a call again after the server rolled it back as a deadlock victim or on a
//! lock timeout: a bounded number of times, with jittered exponential backoff.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use outbox_core::{OutboxError, Result};
use rand::Rng;

/// How often, and how patiently, a call the server rolled back is run again.
///
/// Only deadlock victims (error 1205) and lock timeouts (error 1222) are retried: the
/// server has rolled the whole batch back, so running it again cannot apply it twice.
/// Every other error is returned at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    attempts: u32,
    base: Duration,
    max: Duration,
}

impl Default for RetryPolicy {
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

impl RetryPolicy {
    /// At most `attempts` tries in all (1 ..= 20), the first wait up to `base`, doubling,
    /// never more than `max`.
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

    /// The wait before try `next` (2, 3, …): up to `base * 2^(next - 2)`, capped.
    pub(crate) fn delay_before(&self, next: u32) -> Duration {
        let doubling = 2u32.saturating_pow(next.saturating_sub(2).min(16));
        let bound = self.base.saturating_mul(doubling).min(self.max);
        let micros = u64::try_from(bound.as_micros()).unwrap_or(u64::MAX).max(1);
        Duration::from_micros(rand::rng().random_range(1..=micros))
    }

    /// Runs `call` until it succeeds, fails with an error that is not transient, or has
    /// used every attempt.
    pub(crate) async fn run<T, F, Fut>(&self, retried: &AtomicU64, mut call: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = std::result::Result<T, CallError>>,
    {
        let mut tried = 1;
        loop {
            match call().await {
                Ok(value) => return Ok(value),
                Err(CallError::Transient(e)) if tried < self.attempts => {
                    tried += 1;
                    retried.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(error = %e, attempt = tried, "retrying a call the server rolled back");
                    tokio::time::sleep(self.delay_before(tried)).await;
                }
                Err(CallError::Transient(e)) | Err(CallError::Final(e)) => {
                    return Err(crate::error::map_err(e))
                }
                Err(CallError::Mapped(e)) => return Err(e),
            }
        }
    }
}

/// A failed try, as [`RetryPolicy::run`] judges it.
#[derive(Debug)]
pub(crate) enum CallError {
    /// Rolled back by the server; may be run again.
    Transient(tiberius::error::Error),
    /// Any other driver error.
    Final(tiberius::error::Error),
    /// Already in the core's terms (no connection, bad row, …).
    Mapped(OutboxError),
}

impl From<tiberius::error::Error> for CallError {
    fn from(e: tiberius::error::Error) -> Self {
        if crate::error::is_transient(&e) {
            Self::Transient(e)
        } else {
            Self::Final(e)
        }
    }
}

impl From<OutboxError> for CallError {
    fn from(e: OutboxError) -> Self {
        Self::Mapped(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_validated() {
        assert!(RetryPolicy::new(0, Duration::from_millis(1), Duration::from_millis(1)).is_err());
        assert!(RetryPolicy::new(21, Duration::from_millis(1), Duration::from_millis(1)).is_err());
        assert!(RetryPolicy::new(3, Duration::ZERO, Duration::from_millis(1)).is_err());
        assert!(RetryPolicy::new(3, Duration::from_millis(5), Duration::from_millis(1)).is_err());
        assert!(RetryPolicy::new(3, Duration::from_millis(1), Duration::from_secs(31)).is_err());
        assert_eq!(
            RetryPolicy::new(3, Duration::from_millis(1), Duration::from_millis(8))
                .unwrap()
                .attempts(),
            3
        );
    }

    #[test]
    fn waits_are_jittered_below_a_doubling_cap() {
        let p = RetryPolicy::new(10, Duration::from_millis(4), Duration::from_millis(20)).unwrap();
        for _ in 0..200 {
            assert!(p.delay_before(2) <= Duration::from_millis(4));
            assert!(p.delay_before(3) <= Duration::from_millis(8));
            assert!(p.delay_before(9) <= Duration::from_millis(20));
            assert!(p.delay_before(2) > Duration::ZERO);
        }
        let spread: std::collections::HashSet<_> = (0..50).map(|_| p.delay_before(4)).collect();
        assert!(spread.len() > 10, "waits are not jittered: {spread:?}");
    }

    #[tokio::test]
    async fn only_rolled_back_calls_are_tried_again_and_only_so_often() {
        let p = RetryPolicy::new(3, Duration::from_micros(10), Duration::from_micros(50)).unwrap();
        let mut tries = 0;
        let result: Result<()> = p
            .run(&AtomicU64::new(0), || {
                tries += 1;
                async {
                    Err(CallError::Mapped(OutboxError::Conflict {
                        message: "x".into(),
                        source: None,
                    }))
                }
            })
            .await;
        assert!(result.is_err());
        assert_eq!(tries, 1, "a mapped error is final");

        let mut tries = 0;
        let io = || tiberius::error::Error::Io {
            kind: std::io::ErrorKind::BrokenPipe,
            message: "gone".into(),
        };
        let result: Result<()> = p
            .run(&AtomicU64::new(0), || {
                tries += 1;
                let e = io();
                async move { Err(CallError::from(e)) }
            })
            .await;
        assert!(matches!(result, Err(OutboxError::Connection { .. })));
        assert_eq!(tries, 1, "an I/O error is not retried");

        // A rolled-back call (what `CallError::from` makes of errors 1205 and 1222) is
        // tried again until the attempts run out, then reported.
        let mut tries = 0;
        let result: Result<()> = p
            .run(&AtomicU64::new(0), || {
                tries += 1;
                let e = io();
                async move { Err(CallError::Transient(e)) }
            })
            .await;
        assert!(result.is_err());
        assert_eq!(tries, 3);

        let mut tries = 0;
        let retried = AtomicU64::new(0);
        let result = p
            .run(&retried, || {
                tries += 1;
                let outcome = if tries < 3 {
                    Err(CallError::Transient(io()))
                } else {
                    Ok(tries)
                };
                async move { outcome }
            })
            .await;
        assert_eq!(result.unwrap(), 3, "the third try succeeded");
        assert_eq!(retried.load(Ordering::Relaxed), 2);
    }
}
