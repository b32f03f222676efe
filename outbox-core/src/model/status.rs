use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Where an entry stands with its downstream provider.
///
/// A claim is not a status: it is a lease recorded in separate fields of the entry, so
/// a claimed pending row is still `Pending`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmissionStatus {
    /// Waiting for its first emission; claimable once its not-before time has passed.
    Pending,
    /// Accepted by the provider. Terminal.
    Delivered,
    /// The provider asked to try again later; claimable when its next-retry time passes.
    Deferred,
    /// Failed without a retry time; waits for an operator to requeue or dead-letter it.
    Failed,
    /// Failed with a retry time; claimable when that time passes.
    RetryableFailure,
    /// Given up on. Terminal.
    DeadLettered,
}

impl EmissionStatus {
    /// Every status, in declaration order.
    pub const ALL: [EmissionStatus; 6] = [
        Self::Pending,
        Self::Delivered,
        Self::Deferred,
        Self::Failed,
        Self::RetryableFailure,
        Self::DeadLettered,
    ];

    /// True for the statuses no transition may leave: delivered and dead-lettered.
    pub const fn is_terminal(self) -> bool {
        matches!(self, Self::Delivered | Self::DeadLettered)
    }

    /// True for the statuses the retry-ready claim considers.
    pub const fn is_retry_wait(self) -> bool {
        matches!(self, Self::Deferred | Self::RetryableFailure)
    }

    /// The stable name used in SQL, metrics tags and JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Deferred => "deferred",
            Self::Failed => "failed",
            Self::RetryableFailure => "retryable_failure",
            Self::DeadLettered => "dead_lettered",
        }
    }

    /// The small integer code stored in SQL columns.
    pub const fn code(self) -> i16 {
        match self {
            Self::Pending => 0,
            Self::Delivered => 1,
            Self::Deferred => 2,
            Self::Failed => 3,
            Self::RetryableFailure => 4,
            Self::DeadLettered => 5,
        }
    }

    /// The status stored under `code`, if any.
    pub fn from_code(code: i64) -> Option<Self> {
        Self::ALL.into_iter().find(|s| i64::from(s.code()) == code)
    }
}

impl fmt::Display for EmissionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EmissionStatus {
    type Err = crate::OutboxError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| crate::OutboxError::invalid("status", format!("unknown status {s:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_two_statuses_are_terminal() {
        let terminal: Vec<_> = EmissionStatus::ALL
            .into_iter()
            .filter(|s| s.is_terminal())
            .collect();
        assert_eq!(
            terminal,
            [EmissionStatus::Delivered, EmissionStatus::DeadLettered]
        );
    }

    #[test]
    fn codes_and_names_round_trip() {
        for s in EmissionStatus::ALL {
            assert_eq!(EmissionStatus::from_code(s.code().into()), Some(s));
            assert_eq!(s.as_str().parse::<EmissionStatus>().unwrap(), s);
        }
        assert_eq!(EmissionStatus::from_code(42), None);
    }
}
