//! Retry timing: exponential backoff with jitter and a cap.

use std::time::Duration;

use chrono::TimeDelta;
use rand::Rng;

use crate::{OutboxError, Result};

/// How long to wait before the next attempt after a retryable failure.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// The delay after the first failure.
    pub initial: Duration,
    /// Each further failure multiplies the delay by this (at least 1).
    pub multiplier: f64,
    /// No delay is longer than this.
    pub max: Duration,
    /// Each delay is spread by up to this fraction either way (0 to 1), so entries that
    /// failed together do not all retry in the same instant.
    pub jitter: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            initial: Duration::from_secs(1),
            multiplier: 2.0,
            max: Duration::from_secs(300),
            jitter: 0.2,
        }
    }
}

impl RetryPolicy {
    /// Checks the policy's numbers.
    pub fn validate(&self) -> Result<()> {
        if self.initial.is_zero() {
            return Err(OutboxError::invalid(
                "retry initial delay",
                "must be positive",
            ));
        }
        if !self.multiplier.is_finite() || self.multiplier < 1.0 {
            return Err(OutboxError::invalid(
                "retry multiplier",
                "must be a number of at least 1",
            ));
        }
        if self.max < self.initial {
            return Err(OutboxError::invalid(
                "retry max delay",
                "must not be below the initial delay",
            ));
        }
        if !(0.0..=1.0).contains(&self.jitter) {
            return Err(OutboxError::invalid(
                "retry jitter",
                "must be between 0 and 1",
            ));
        }
        Ok(())
    }

    /// The delay before attempt `failures + 1`, after `failures` failures (at least 1).
    pub fn delay(&self, failures: u32) -> TimeDelta {
        let exponent = i32::try_from(failures.saturating_sub(1)).unwrap_or(i32::MAX);
        let base = self.initial.as_secs_f64() * self.multiplier.powi(exponent);
        let capped = base.min(self.max.as_secs_f64());
        let spread = if self.jitter > 0.0 {
            rand::rng().random_range(-self.jitter..=self.jitter)
        } else {
            0.0
        };
        let secs = (capped * (1.0 + spread)).clamp(0.001, self.max.as_secs_f64());
        TimeDelta::from_std(Duration::from_secs_f64(secs)).unwrap_or(TimeDelta::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_exponentially_up_to_the_cap() {
        let p = RetryPolicy {
            jitter: 0.0,
            ..RetryPolicy::default()
        };
        let secs: Vec<i64> = (1..=12).map(|n| p.delay(n).num_seconds()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300]);
    }

    #[test]
    fn jitter_stays_within_its_fraction() {
        let p = RetryPolicy::default();
        for _ in 0..200 {
            let ms = p.delay(3).num_milliseconds();
            assert!((3200..=4800).contains(&ms), "{ms}");
        }
    }

    #[test]
    fn nonsense_policies_are_refused() {
        let bad = [
            RetryPolicy {
                initial: Duration::ZERO,
                ..RetryPolicy::default()
            },
            RetryPolicy {
                multiplier: 0.5,
                ..RetryPolicy::default()
            },
            RetryPolicy {
                multiplier: f64::NAN,
                ..RetryPolicy::default()
            },
            RetryPolicy {
                max: Duration::from_millis(1),
                ..RetryPolicy::default()
            },
            RetryPolicy {
                jitter: 1.5,
                ..RetryPolicy::default()
            },
        ];
        for p in bad {
            assert!(p.validate().is_err(), "{p:?}");
        }
        RetryPolicy::default().validate().unwrap();
    }
}
