//! Time: an injectable clock and the precision every store keeps.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{DateTime, SubsecRound, TimeDelta, Utc};

/// A source of the current UTC time.
///
/// The in-memory store and the drain read time from a clock; SQL stores use the
/// database's clock instead so that workers with drifting clocks still agree on leases.
/// A `now` carried by a request always wins over both.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current time, already at [`normalize`]d precision.
    fn now(&self) -> DateTime<Utc>;
}

/// The operating system's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        normalize(Utc::now())
    }
}

/// A clock that only moves when told to; for tests and simulations.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    /// A clock frozen at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Mutex::new(normalize(start)),
        }
    }

    /// Moves the clock forward (or backward, for a negative delta).
    pub fn advance(&self, by: TimeDelta) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        *now = normalize(*now + by);
    }

    /// Sets the clock to `at`.
    pub fn set(&self, at: DateTime<Utc>) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = normalize(at);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A source of monotonic time, for the decisions a store times in the process (how long
/// a walk took, when the next may run): injected so tests move it instead of sleeping.
pub trait Timer: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The operating system's monotonic clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemTimer;

impl Timer for SystemTimer {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A monotonic clock that only moves when told to; for tests.
#[derive(Debug)]
pub struct ManualTimer {
    now: Mutex<Instant>,
}

impl ManualTimer {
    /// A frozen timer. It starts a day after the current instant, so that a test may
    /// place events up to a day in its past whenever the machine started.
    pub fn new() -> Self {
        let now = Instant::now();
        Self {
            now: Mutex::new(now.checked_add(Duration::from_secs(86_400)).unwrap_or(now)),
        }
    }

    /// Moves the timer forward.
    pub fn advance(&self, by: Duration) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) += by;
    }
}

impl Default for ManualTimer {
    fn default() -> Self {
        Self::new()
    }
}

impl Timer for ManualTimer {
    fn now(&self) -> Instant {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Truncates a timestamp to whole microseconds, the finest precision every supported
/// database keeps. Stores normalize every time they write, so a value read back equals
/// the value returned when it was written.
pub fn normalize(at: DateTime<Utc>) -> DateTime<Utc> {
    at.trunc_subsecs(6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_drops_nanoseconds() {
        let t = DateTime::from_timestamp(1_700_000_000, 123_456_789).unwrap();
        assert_eq!(normalize(t).timestamp_subsec_nanos(), 123_456_000);
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let start = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let clock = ManualClock::new(start);
        assert_eq!(clock.now(), start);
        clock.advance(TimeDelta::seconds(5));
        assert_eq!(clock.now(), start + TimeDelta::seconds(5));
    }
}
