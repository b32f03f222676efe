use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Claim, EmissionError, EmissionResult, EmissionStatus, OutboxEntry};

/// What the holder of a claim wants recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// The provider accepted the entry. Counts one attempt.
    Delivered(EmissionResult),
    /// The provider asked to try again at `until`. Does not count an attempt.
    Deferred {
        /// When the entry becomes claimable again.
        until: DateTime<Utc>,
        /// Why, if the provider said.
        reason: Option<String>,
    },
    /// The emission failed. With `next_retry` the entry becomes a retryable failure,
    /// claimable again then; without it the entry is failed and waits for an operator.
    /// Counts one attempt.
    Failed {
        /// What went wrong.
        error: EmissionError,
        /// When to try again, if at all.
        next_retry: Option<DateTime<Utc>>,
    },
    /// Give up on the entry. Counts one attempt.
    DeadLettered {
        /// The last emission error.
        error: EmissionError,
        /// Why it was given up, if different from the error.
        reason: Option<String>,
    },
    /// Write the outcome fields (status, retry time, attempt count, error, dead-letter
    /// reason, delivery time and provider id) of the given entry, which must be the
    /// claimed entry's id. Topic, payload and headers are never rewritten.
    Save(Box<OutboxEntry>),
    /// Give the lease back without recording an emission: the entry keeps its status and
    /// becomes claimable again at once. Does not count an attempt.
    Release {
        /// Why, for the logs.
        reason: Option<String>,
    },
}

impl Completion {
    /// The name of the transition, for logs and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Delivered(_) => "delivered",
            Self::Deferred { .. } => "deferred",
            Self::Failed { .. } => "failed",
            Self::DeadLettered { .. } => "dead_lettered",
            Self::Save(_) => "save",
            Self::Release { .. } => "release",
        }
    }

    /// The outcome fields this completion writes over `claimed`, the claim's snapshot.
    ///
    /// Deriving them from the snapshot is sound because every write that could change them
    /// also replaces the claim token, which the store's guarded write checks.
    pub fn target(&self, claimed: &OutboxEntry) -> TargetState {
        let mut t = TargetState::from_entry(claimed);
        match self {
            Self::Delivered(result) => {
                t.status = EmissionStatus::Delivered;
                t.next_retry_at = None;
                t.attempt_count = claimed.attempt_count.saturating_add(1);
                t.delivered_at = result.delivered_at.map(crate::clock::normalize);
                t.stamp_delivered_now = result.delivered_at.is_none();
                t.provider_message_id = result.provider_message_id.clone();
            }
            Self::Deferred { until, reason } => {
                t.status = EmissionStatus::Deferred;
                t.next_retry_at = Some(crate::clock::normalize(*until));
                if reason.is_some() {
                    t.last_error = reason.clone();
                }
            }
            Self::Failed { error, next_retry } => {
                t.status = match next_retry {
                    Some(_) => EmissionStatus::RetryableFailure,
                    None => EmissionStatus::Failed,
                };
                t.next_retry_at = next_retry.map(crate::clock::normalize);
                t.attempt_count = claimed.attempt_count.saturating_add(1);
                t.last_error = Some(error.message.clone());
            }
            Self::DeadLettered { error, reason } => {
                t.status = EmissionStatus::DeadLettered;
                t.next_retry_at = None;
                t.attempt_count = claimed.attempt_count.saturating_add(1);
                t.last_error = Some(error.message.clone());
                t.dead_letter_reason =
                    Some(reason.clone().unwrap_or_else(|| error.message.clone()));
            }
            Self::Save(entry) => t = TargetState::from_entry(entry),
            Self::Release { .. } => {}
        }
        t
    }
}

/// The outcome fields of an entry, as one transition writes them.
///
/// Every store writes exactly these fields (plus `updated_at`, a new stamp, and cleared
/// claim fields), so the meaning of each [`Completion`] lives here once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetState {
    /// The new status.
    pub status: EmissionStatus,
    /// The new retry time.
    pub next_retry_at: Option<DateTime<Utc>>,
    /// The new attempt count.
    pub attempt_count: u32,
    /// The new last error.
    pub last_error: Option<String>,
    /// The new dead-letter reason.
    pub dead_letter_reason: Option<String>,
    /// The new delivery time (see `stamp_delivered_now`).
    pub delivered_at: Option<DateTime<Utc>>,
    /// When true the store records its own current time as the delivery time.
    pub stamp_delivered_now: bool,
    /// The new provider message id.
    pub provider_message_id: Option<String>,
}

impl TargetState {
    /// The outcome fields as `entry` holds them, times at stored precision.
    pub fn from_entry(entry: &OutboxEntry) -> Self {
        Self {
            status: entry.status,
            next_retry_at: entry.next_retry_at.map(crate::clock::normalize),
            attempt_count: entry.attempt_count,
            last_error: entry.last_error.clone(),
            dead_letter_reason: entry.dead_letter_reason.clone(),
            delivered_at: entry.delivered_at.map(crate::clock::normalize),
            stamp_delivered_now: false,
            provider_message_id: entry.provider_message_id.clone(),
        }
    }

    /// Writes these fields into `entry` as a transition at `now` with the new `stamp`,
    /// clearing the claim fields (the claim attempt count is kept).
    pub fn apply_to(&self, entry: &mut OutboxEntry, now: DateTime<Utc>, stamp: Uuid) {
        entry.status = self.status;
        entry.next_retry_at = self.next_retry_at;
        entry.attempt_count = self.attempt_count;
        entry.last_error = self.last_error.clone();
        entry.dead_letter_reason = self.dead_letter_reason.clone();
        entry.delivered_at = if self.stamp_delivered_now {
            Some(now)
        } else {
            self.delivered_at
        };
        entry.provider_message_id = self.provider_message_id.clone();
        entry.updated_at = now;
        entry.stamp = stamp;
        entry.claim_owner = None;
        entry.claim_token = None;
        entry.claimed_at = None;
        entry.claim_expires_at = None;
    }
}

/// One claimed transition: the claim, what to record, and when.
///
/// A request is its own idempotency key: it carries the stamp its write leaves on the row,
/// chosen once when the request is made. Sending the same request again (a retry after an
/// error that hid whether the first attempt committed) finds the row carrying that stamp
/// and reports [`crate::TransitionOutcome::Applied`] without writing again: the write is
/// this request's, whichever attempt made it. A new request for the same claim gets a new
/// stamp and is judged afresh.
///
/// Cloning a request (to send it again, to log it) is cheap whatever the payload: the
/// claim shares its entry snapshot rather than copying it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    /// The claim being completed.
    pub claim: Claim,
    /// What to record.
    pub completion: Completion,
    /// The time of the transition; `None` takes the store's clock.
    pub now: Option<DateTime<Utc>>,
    /// The stamp the write leaves on the row, which identifies this request's write.
    pub stamp: Uuid,
}

impl CompletionRequest {
    /// Completes `claim` with `completion` at the store's current time, with a fresh stamp.
    pub fn new(claim: Claim, completion: Completion) -> Self {
        Self {
            claim,
            completion,
            now: None,
            stamp: Uuid::new_v4(),
        }
    }

    /// Records the transition at `now`.
    pub fn at(mut self, now: DateTime<Utc>) -> Self {
        self.now = Some(now);
        self
    }
}
