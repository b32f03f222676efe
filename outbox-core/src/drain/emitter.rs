//! The host's side of the drain: how an entry reaches the provider.

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};

use super::route::RouteFault;
use crate::OutboxEntry;

/// One emission attempt, as the emitter sees it.
#[derive(Debug, Clone, Copy)]
pub struct Emission<'a> {
    /// The entry; its `id` is the idempotency key to hand the provider.
    pub entry: &'a OutboxEntry,
    /// Which delivery attempt this is, counting from 1: one more than the entry's recorded
    /// attempts (deliveries, failures and dead-letterings count; deferrals and released
    /// claims do not). Not [`crate::Claim::acquisition`], which counts leases.
    pub delivery_attempt: u32,
    /// The worker emitting it.
    pub owner: &'a str,
}

/// What the provider said about one emission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmitOutcome {
    /// Accepted.
    Delivered {
        /// The provider's id for the message, if it has one.
        provider_message_id: Option<String>,
    },
    /// Not now: try again at `until` (a rate limit, say). Not counted as a failed attempt.
    Deferred {
        /// When to try again.
        until: DateTime<Utc>,
        /// Why, if the provider said.
        reason: Option<String>,
    },
    /// Failed in a way that may pass: retried with backoff until the attempt limit.
    Retryable {
        /// What went wrong.
        error: String,
        /// The provider's own hint of when to retry, if any.
        retry_after: Option<TimeDelta>,
    },
    /// Failed for good: the entry is dead-lettered at once.
    Permanent {
        /// What went wrong.
        error: String,
    },
    /// The route failed, not the entry: the destination is missing or refuses every
    /// message (no stream, topic or queue; credentials refused; the broker unreachable).
    /// The entry is held (deferred without counting an attempt, whatever its age) and the
    /// drain backs off, probing with one emission at a time until the route carries again.
    /// Report only what is true for every entry sent the same way: a failure the emitter
    /// cannot place is the entry's ([`EmitOutcome::Retryable`]).
    RouteFailed {
        /// What kind of route failure.
        fault: RouteFault,
        /// The destination, as an operator finds it (`subject "orders.created"`, `topic
        /// "t"`); named in the drain's warning, its metric and the held entries' last error.
        destination: String,
        /// What the provider said.
        error: String,
    },
}

impl EmitOutcome {
    /// A delivery without a provider id.
    pub fn delivered() -> Self {
        Self::Delivered {
            provider_message_id: None,
        }
    }

    /// A retryable failure without a retry hint.
    pub fn retryable(error: impl Into<String>) -> Self {
        Self::Retryable {
            error: error.into(),
            retry_after: None,
        }
    }

    /// A permanent failure.
    pub fn permanent(error: impl Into<String>) -> Self {
        Self::Permanent {
            error: error.into(),
        }
    }

    /// A failure of the route to `destination`.
    pub fn route(
        fault: RouteFault,
        destination: impl Into<String>,
        error: impl Into<String>,
    ) -> Self {
        Self::RouteFailed {
            fault,
            destination: destination.into(),
            error: error.into(),
        }
    }

    /// The tag of the `outbox.emissions` counter.
    pub fn result_tag(&self) -> &'static str {
        match self {
            Self::Delivered { .. } => "delivered",
            Self::Deferred { .. } => "deferred",
            Self::Retryable { .. } => "retryable",
            Self::Permanent { .. } => "permanent",
            Self::RouteFailed { .. } => "route",
        }
    }
}

/// Delivers entries to a provider (a broker, a webhook, a queue).
///
/// Delivery is at-least-once: the same entry may be emitted again after a crash or an
/// expired lease, so providers should collapse duplicates by `entry.id`. An emitter must
/// not hold a database transaction open while it waits on the provider; only the lease
/// protects an emission.
#[async_trait]
pub trait Emitter: Send + Sync {
    /// Emits one entry and reports what the provider said.
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome;

    /// The emitter's kind (`nats`, `kafka`, `rabbitmq`, `webhook`), the `emitter` label of
    /// [`crate::metric_names::ROUTE_FAILURES`]; `custom` unless the emitter says.
    fn name(&self) -> &'static str {
        "custom"
    }
}
