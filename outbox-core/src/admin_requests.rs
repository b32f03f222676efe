//! What an operator's calls take: one request each, like the claims, so a call can grow
//! an option without breaking its callers.

use chrono::{DateTime, Utc};

use crate::{EmissionStatus, EntryId, Result};

/// A picture of the outbox ([`crate::OutboxAdmin::stats`],
/// [`crate::OutboxAdmin::live_stats`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StatsRequest {
    /// The instant leases and retry times are judged at; `None` takes the store's clock.
    pub now: Option<DateTime<Utc>>,
}

impl StatsRequest {
    /// A picture judged at the store's clock.
    pub fn new() -> Self {
        Self::default()
    }

    /// Judges leases and retry times at `now` instead of the store's clock.
    pub fn at(mut self, now: DateTime<Utc>) -> Self {
        self.now = Some(now);
        self
    }
}

/// The most recently dead-lettered entries ([`crate::OutboxAdmin::dead_letters`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeadLettersRequest {
    /// At most this many (1 up to the store's batch maximum).
    pub limit: u32,
}

impl DeadLettersRequest {
    /// Up to `limit` entries.
    pub fn new(limit: u32) -> Self {
        Self { limit }
    }
}

/// Entries an operator sends back to the drains ([`crate::OutboxAdmin::requeue`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequeueRequest {
    /// The status they are in: failed or dead-lettered (any other is refused).
    pub from: EmissionStatus,
    /// One entry (only if it is in `from`), a topic's, or all of them.
    pub which: DeadLetterSelection,
    /// The instant written as their update time; `None` takes the store's clock.
    pub now: Option<DateTime<Utc>>,
}

impl RequeueRequest {
    /// Requeues `which` of the entries in `from`.
    pub fn new(from: EmissionStatus, which: DeadLetterSelection) -> Self {
        Self {
            from,
            which,
            now: None,
        }
    }

    /// Requeues `which` of the dead-lettered entries.
    pub fn dead_letters(which: DeadLetterSelection) -> Self {
        Self::new(EmissionStatus::DeadLettered, which)
    }

    /// Writes `now` as the update time instead of the store's clock.
    pub fn at(mut self, now: DateTime<Utc>) -> Self {
        self.now = Some(now);
        self
    }

    /// Checks the request: only entries waiting for an operator, and a topic an entry
    /// could have.
    pub fn check(&self) -> Result<()> {
        check_requeue(self.from)?;
        self.which.check()
    }
}

/// Entries an operator deletes ([`crate::OutboxAdmin::purge`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PurgeRequest {
    /// The status they are in: failed or dead-lettered (any other is refused, so nothing
    /// a drain may still deliver is deleted).
    pub from: EmissionStatus,
    /// One entry (only if it is in `from`), a topic's, or all of them.
    pub which: DeadLetterSelection,
}

impl PurgeRequest {
    /// Deletes `which` of the entries in `from`.
    pub fn new(from: EmissionStatus, which: DeadLetterSelection) -> Self {
        Self { from, which }
    }

    /// Deletes `which` of the dead-lettered entries.
    pub fn dead_letters(which: DeadLetterSelection) -> Self {
        Self::new(EmissionStatus::DeadLettered, which)
    }

    /// Checks the request: only entries waiting for an operator, and a topic an entry
    /// could have.
    pub fn check(&self) -> Result<()> {
        check_purge(self.from)?;
        self.which.check()
    }
}

/// Which entries of a status (failed, or dead-lettered) an operator's requeue or purge is
/// about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeadLetterSelection {
    /// One entry (only if it is in the status).
    One(EntryId),
    /// Every entry in the status.
    All,
    /// Every entry in the status with this topic (what a list filtered by topic shows).
    Topic(String),
}

impl DeadLetterSelection {
    /// The one entry selected, if the selection is of one.
    pub fn id(&self) -> Option<EntryId> {
        match self {
            Self::One(id) => Some(*id),
            Self::All | Self::Topic(_) => None,
        }
    }

    /// The topic selected, if the selection is of one topic.
    pub fn topic(&self) -> Option<&str> {
        match self {
            Self::Topic(topic) => Some(topic),
            Self::All | Self::One(_) => None,
        }
    }

    /// Checks the selection: a topic must be one an entry could have.
    pub fn check(&self) -> Result<()> {
        match self {
            Self::Topic(topic) => crate::limits::check_name("topic", topic),
            Self::All | Self::One(_) => Ok(()),
        }
    }
}

/// Checks that entries in `from` may be requeued: only the statuses that wait for an
/// operator (failed, dead-lettered).
pub fn check_requeue(from: EmissionStatus) -> Result<()> {
    waiting_for_operator(from, "requeue status")
}

/// Checks that entries in `from` may be purged: the same statuses as
/// [`check_requeue`], so nothing a drain may still deliver is ever deleted.
pub fn check_purge(from: EmissionStatus) -> Result<()> {
    waiting_for_operator(from, "purge status")
}

/// `Ok` for the statuses that wait for an operator; `field` names the refused input.
fn waiting_for_operator(from: EmissionStatus, field: &'static str) -> Result<()> {
    match from {
        EmissionStatus::Failed | EmissionStatus::DeadLettered => Ok(()),
        other => Err(crate::OutboxError::invalid(
            field,
            format!(
                "{} entries are not waiting for an operator (only failed and dead_lettered are)",
                other.as_str()
            ),
        )),
    }
}
