//! The parameter arrays of the batch statements: one array per column, one element per
//! item, unnested by the server into rows, so a whole batch is one statement.

use chrono::{DateTime, Utc};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{CompletionRequest, EntryId, NewEntry, OutboxError, Result};
use tokio_postgres::types::{ToSql, Type};

use crate::typed::{typed, Param};
use uuid::Uuid;

/// The columns of a batch of new entries (see `sql/enqueue.sql`).
#[derive(Debug)]
pub(crate) struct NewEntries {
    pub(crate) ids: Vec<EntryId>,
    uuids: Vec<Uuid>,
    topics: Vec<String>,
    partition_keys: Vec<Option<String>>,
    payloads: Vec<Vec<u8>>,
    headers: Vec<serde_json::Value>,
    created_at: Vec<Option<DateTime<Utc>>>,
    not_before: Vec<Option<DateTime<Utc>>>,
    slice_hashes: Vec<i64>,
}

impl NewEntries {
    pub(crate) fn new(entries: Vec<NewEntry>) -> Result<Self> {
        let n = entries.len();
        let mut columns = Self {
            ids: Vec::with_capacity(n),
            uuids: Vec::with_capacity(n),
            topics: Vec::with_capacity(n),
            partition_keys: Vec::with_capacity(n),
            payloads: Vec::with_capacity(n),
            headers: Vec::with_capacity(n),
            created_at: Vec::with_capacity(n),
            not_before: Vec::with_capacity(n),
            slice_hashes: Vec::with_capacity(n),
        };
        for e in entries {
            columns.slice_hashes.push(i64::from(outbox_core::slice_hash(
                e.partition_key.as_deref(),
                e.id,
            )));
            columns.ids.push(e.id);
            columns.uuids.push(e.id.as_uuid());
            columns.topics.push(e.topic);
            columns.partition_keys.push(e.partition_key);
            columns.payloads.push(e.payload);
            columns.headers.push(
                serde_json::to_value(&e.headers)
                    .map_err(|err| OutboxError::invalid("headers", err.to_string()))?,
            );
            columns.created_at.push(e.created_at.map(normalize_time));
            columns.not_before.push(e.not_before.map(normalize_time));
        }
        Ok(columns)
    }

    /// The statement's parameters, with their types (for one-round-trip typed queries),
    /// in statement order (`channel` is `$8`).
    pub(crate) fn typed_params<'a>(
        &'a self,
        channel: &'a String,
    ) -> [(&'a (dyn ToSql + Sync), Type); 9] {
        [
            (&self.uuids, Type::UUID_ARRAY),
            (&self.topics, Type::TEXT_ARRAY),
            (&self.partition_keys, Type::TEXT_ARRAY),
            (&self.payloads, Type::BYTEA_ARRAY),
            (&self.headers, Type::JSONB_ARRAY),
            (&self.created_at, Type::TIMESTAMPTZ_ARRAY),
            (&self.not_before, Type::TIMESTAMPTZ_ARRAY),
            (channel, Type::TEXT),
            (&self.slice_hashes, Type::INT8_ARRAY),
        ]
    }
}

/// The columns of a batch of claimed transitions (see `sql/complete_batch.sql`): who
/// claims, and the outcome fields each completion writes.
#[cfg(feature = "sqlx")]
impl NewEntries {
    /// Binds the columns to `query` (`sql/enqueue.sql`) for sqlx, in statement order.
    pub(crate) fn bind_sqlx<'q>(
        &'q self,
        query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
        channel: &'q str,
    ) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
        query
            .bind(&self.uuids)
            .bind(&self.topics)
            .bind(&self.partition_keys)
            .bind(&self.payloads)
            .bind(&self.headers)
            .bind(&self.created_at)
            .bind(&self.not_before)
            .bind(channel)
            .bind(&self.slice_hashes)
    }
}

#[derive(Debug)]
pub(crate) struct Completions {
    ids: Vec<Uuid>,
    owners: Vec<String>,
    tokens: Vec<Uuid>,
    statuses: Vec<i16>,
    next_retry_at: Vec<Option<DateTime<Utc>>>,
    attempt_counts: Vec<i32>,
    last_errors: Vec<Option<String>>,
    dead_letter_reasons: Vec<Option<String>>,
    delivered_at: Vec<Option<DateTime<Utc>>>,
    stamp_delivered_now: Vec<bool>,
    provider_message_ids: Vec<Option<String>>,
    at: Vec<Option<DateTime<Utc>>>,
    stamps: Vec<Uuid>,
}

impl Completions {
    pub(crate) fn new(reqs: &[CompletionRequest]) -> Result<Self> {
        let n = reqs.len();
        let mut columns = Self {
            ids: Vec::with_capacity(n),
            owners: Vec::with_capacity(n),
            tokens: Vec::with_capacity(n),
            statuses: Vec::with_capacity(n),
            next_retry_at: Vec::with_capacity(n),
            attempt_counts: Vec::with_capacity(n),
            last_errors: Vec::with_capacity(n),
            dead_letter_reasons: Vec::with_capacity(n),
            delivered_at: Vec::with_capacity(n),
            stamp_delivered_now: Vec::with_capacity(n),
            provider_message_ids: Vec::with_capacity(n),
            at: Vec::with_capacity(n),
            stamps: Vec::with_capacity(n),
        };
        for req in reqs {
            let target = req.completion.target(&req.claim.entry);
            columns.ids.push(req.claim.id().as_uuid());
            columns.owners.push(req.claim.owner.clone());
            columns.tokens.push(req.claim.token);
            columns.statuses.push(target.status.code());
            // `target` normalizes what it derives; a saved entry's own times may be finer.
            columns
                .next_retry_at
                .push(target.next_retry_at.map(normalize_time));
            columns
                .attempt_counts
                .push(sql_count(target.attempt_count)?);
            columns.last_errors.push(target.last_error);
            columns.dead_letter_reasons.push(target.dead_letter_reason);
            columns
                .delivered_at
                .push(target.delivered_at.map(normalize_time));
            columns.stamp_delivered_now.push(target.stamp_delivered_now);
            columns
                .provider_message_ids
                .push(target.provider_message_id);
            columns.at.push(req.now.map(normalize_time));
            columns.stamps.push(req.stamp);
        }
        Ok(columns)
    }

    pub(crate) fn params(&self) -> [Param<'_>; 13] {
        [
            typed(&self.ids),
            typed(&self.owners),
            typed(&self.tokens),
            typed(&self.statuses),
            typed(&self.next_retry_at),
            typed(&self.attempt_counts),
            typed(&self.last_errors),
            typed(&self.dead_letter_reasons),
            typed(&self.delivered_at),
            typed(&self.stamp_delivered_now),
            typed(&self.provider_message_ids),
            typed(&self.at),
            typed(&self.stamps),
        ]
    }
}

/// The claims of a renewal (see `sql/renew.sql`).
#[derive(Debug)]
pub(crate) struct Holders {
    pub(crate) ids: Vec<Uuid>,
    pub(crate) owners: Vec<String>,
    pub(crate) tokens: Vec<Uuid>,
}

impl Holders {
    pub(crate) fn new(claims: &[outbox_core::Claim]) -> Self {
        Self {
            ids: claims.iter().map(|c| c.id().as_uuid()).collect(),
            owners: claims.iter().map(|c| c.owner.clone()).collect(),
            tokens: claims.iter().map(|c| c.token).collect(),
        }
    }
}

/// An attempt count as the `integer` column holds it.
pub(crate) fn sql_count(n: u32) -> Result<i32> {
    i32::try_from(n)
        .map_err(|_| OutboxError::invalid("attempt count", format!("{n} does not fit the column")))
}

/// A lease as whole microseconds, the unit the statements add to `now`.
pub(crate) fn lease_micros(lease: chrono::TimeDelta) -> Result<i64> {
    lease
        .num_microseconds()
        .ok_or_else(|| OutboxError::invalid("lease", "too long"))
}
