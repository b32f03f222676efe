use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{EmissionStatus, EntryId};

/// Message headers handed to the provider with the payload; ordered by name.
pub type Headers = BTreeMap<String, String>;

/// An entry the host wants written to the outbox.
///
/// Build it with [`NewEntry::new`] and the builder methods; the store validates it
/// against its [`crate::StoreLimits`] when it is enqueued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry {
    /// The id; a fresh time-ordered id unless the host chose one.
    pub id: EntryId,
    /// The destination (topic, queue, route) the emitter delivers to.
    pub topic: String,
    /// A key handed to the provider with the entry (a Kafka or JetStream partition key,
    /// say), and the key the outbox's per-key order and slices go by: drains started with
    /// [`DrainOptions::ordered`](crate::drain::DrainOptions::ordered) emit a key's entries
    /// one at a time, in the order they were written, while other drains may emit them in
    /// any order; a slice ([`crate::Slice`]) takes every entry of its keys.
    pub partition_key: Option<String>,
    /// The message body, opaque to the outbox.
    pub payload: Vec<u8>,
    /// Extra metadata handed to the provider.
    pub headers: Headers,
    /// The entry is not claimable before this time.
    pub not_before: Option<DateTime<Utc>>,
    /// Overrides the creation time (imports, tests); `None` takes the store's clock.
    pub created_at: Option<DateTime<Utc>>,
}

impl NewEntry {
    /// A new entry for `topic` carrying `payload`.
    pub fn new(topic: impl Into<String>, payload: impl Into<Vec<u8>>) -> Self {
        Self {
            id: EntryId::new(),
            topic: topic.into(),
            partition_key: None,
            payload: payload.into(),
            headers: Headers::new(),
            not_before: None,
            created_at: None,
        }
    }

    /// Uses `id` instead of a generated one.
    pub fn with_id(mut self, id: EntryId) -> Self {
        self.id = id;
        self
    }

    /// Sets the partition key: handed to the provider, kept in order by ordered drains.
    pub fn partition_key(mut self, key: impl Into<String>) -> Self {
        self.partition_key = Some(key.into());
        self
    }

    /// Adds (or replaces) one header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// Delays the first emission until `at`.
    pub fn not_before(mut self, at: DateTime<Utc>) -> Self {
        self.not_before = Some(at);
        self
    }

    /// Records `at` as the creation time instead of the store's clock.
    pub fn created_at(mut self, at: DateTime<Utc>) -> Self {
        self.created_at = Some(at);
        self
    }
}

/// An outbox entry as the store holds it: every durable field, claim fields included.
///
/// Stores read it from their rows; to build one elsewhere (an emitter's test, say),
/// start from [`OutboxEntry::from_new`] and set the fields you need. It may gain fields,
/// so it cannot be written as a struct literal outside this crate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OutboxEntry {
    /// The id, also the provider's idempotency key.
    pub id: EntryId,
    /// The destination the emitter delivers to.
    pub topic: String,
    /// The provider's key for the entry; not an ordering the outbox keeps (see
    /// [`NewEntry::partition_key`](NewEntry#structfield.partition_key)).
    pub partition_key: Option<String>,
    /// The message body.
    pub payload: Vec<u8>,
    /// Metadata for the provider.
    pub headers: Headers,
    /// Emission state.
    pub status: EmissionStatus,
    /// When the entry was written.
    pub created_at: DateTime<Utc>,
    /// When the entry's status or outcome fields were last written (claims and renewals
    /// do not move it, so retry order stays stable while a row is leased).
    pub updated_at: DateTime<Utc>,
    /// Not claimable as pending before this time.
    pub not_before: Option<DateTime<Utc>>,
    /// For deferred and retryable rows: not claimable before this time.
    pub next_retry_at: Option<DateTime<Utc>>,
    /// How many emissions reached an outcome (delivered, failed, dead-lettered).
    pub attempt_count: u32,
    /// The last emission error, if any.
    pub last_error: Option<String>,
    /// Why the entry was dead-lettered.
    pub dead_letter_reason: Option<String>,
    /// When the provider accepted the entry.
    pub delivered_at: Option<DateTime<Utc>>,
    /// The provider's id for the delivered message.
    pub provider_message_id: Option<String>,
    /// Who holds the current lease, if anyone.
    pub claim_owner: Option<String>,
    /// The token of the current lease; fresh and random for every acquisition.
    pub claim_token: Option<Uuid>,
    /// When the current lease was acquired.
    pub claimed_at: Option<DateTime<Utc>>,
    /// When the current lease runs out and the row may be reclaimed.
    pub claim_expires_at: Option<DateTime<Utc>>,
    /// How many times the row has been claimed (acquisitions and reclaims).
    pub claim_attempt_count: u32,
    /// Changes on every write; the optimistic-concurrency check of [`crate::OutboxStore::save`].
    pub stamp: Uuid,
}

impl OutboxEntry {
    /// Builds the durable form of `new` as first written at `now`.
    pub fn from_new(new: NewEntry, now: DateTime<Utc>) -> Self {
        let created = crate::clock::normalize(new.created_at.unwrap_or(now));
        Self {
            id: new.id,
            topic: new.topic,
            partition_key: new.partition_key,
            payload: new.payload,
            headers: new.headers,
            status: EmissionStatus::Pending,
            created_at: created,
            updated_at: created,
            not_before: new.not_before.map(crate::clock::normalize),
            next_retry_at: None,
            attempt_count: 0,
            last_error: None,
            dead_letter_reason: None,
            delivered_at: None,
            provider_message_id: None,
            claim_owner: None,
            claim_token: None,
            claimed_at: None,
            claim_expires_at: None,
            claim_attempt_count: 0,
            stamp: Uuid::new_v4(),
        }
    }

    /// True when the row has a lease that has not run out at `now`.
    pub fn is_claimed_at(&self, now: DateTime<Utc>) -> bool {
        self.claim_expires_at.is_some_and(|exp| exp > now)
    }

    /// True when a pending claim may take this row at `now`.
    pub fn is_pending_claimable(&self, now: DateTime<Utc>) -> bool {
        self.status == EmissionStatus::Pending
            && self.not_before.is_none_or(|t| t <= now)
            && !self.is_claimed_at(now)
    }

    /// True when a retry-ready claim may take this row at `now`.
    pub fn is_retry_claimable(&self, now: DateTime<Utc>) -> bool {
        self.status.is_retry_wait()
            && self.next_retry_at.is_none_or(|t| t <= now)
            && !self.is_claimed_at(now)
    }

    /// The time retry-ready rows are ordered by: next retry, or last update without one.
    pub fn retry_order_time(&self) -> DateTime<Utc> {
        self.next_retry_at.unwrap_or(self.updated_at)
    }

    /// The entry's slice hash ([`crate::slice_hash`] of its partition key and id): the
    /// value stores keep with the row, so a sliced claim compares it without hashing.
    pub fn slice_hash(&self) -> u32 {
        crate::slice_hash(self.partition_key.as_deref(), self.id)
    }
}
