//! The JSON documents the batch statements read with `JSON_TABLE`: one object per row,
//! uuids as hex, times as UTC text with microseconds. Absent keys read as NULL.

use outbox_core::{Claim, OutboxEntry, OutboxError, Result};
use serde::Serialize;
use uuid::Uuid;

use crate::row::{hex, json_time};

/// One row of a claim's lease write (`lease_rows.sql`).
#[derive(Serialize)]
pub(crate) struct LeaseRow {
    seq: i64,
    token: String,
    stamp: String,
}

impl LeaseRow {
    pub(crate) fn new(seq: i64, claimed: &OutboxEntry) -> Result<Self> {
        let token = claimed.claim_token.ok_or_else(|| OutboxError::Database {
            message: "a claimed entry has no token".into(),
            source: None,
        })?;
        Ok(Self {
            seq,
            token: hex(token),
            stamp: hex(claimed.stamp),
        })
    }
}

/// One completion of `complete_batch.sql`: the claim and the row as it is to be written.
#[derive(Serialize)]
pub(crate) struct CompletionRow<'a> {
    id: String,
    owner: &'a str,
    token: String,
    status: i16,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_retry_at: Option<String>,
    attempt_count: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dead_letter_reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delivered_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    provider_message_id: Option<&'a str>,
    updated_at: String,
    stamp: String,
}

impl<'a> CompletionRow<'a> {
    pub(crate) fn new(claim: &'a Claim, written: &'a OutboxEntry) -> Self {
        Self {
            id: hex(claim.id().as_uuid()),
            owner: &claim.owner,
            token: hex(claim.token),
            status: written.status.code(),
            next_retry_at: json_time(written.next_retry_at),
            attempt_count: written.attempt_count,
            last_error: written.last_error.as_deref(),
            dead_letter_reason: written.dead_letter_reason.as_deref(),
            delivered_at: json_time(written.delivered_at),
            provider_message_id: written.provider_message_id.as_deref(),
            updated_at: json_time(Some(written.updated_at)).unwrap_or_default(),
            stamp: hex(written.stamp),
        }
    }
}

/// One renewal of `renew.sql`: the claim and the stamp the renewed row takes.
#[derive(Serialize)]
pub(crate) struct RenewalRow<'a> {
    id: String,
    owner: &'a str,
    token: String,
    stamp: String,
}

impl<'a> RenewalRow<'a> {
    pub(crate) fn new(claim: &'a Claim, stamp: Uuid) -> Self {
        Self {
            id: hex(claim.id().as_uuid()),
            owner: &claim.owner,
            token: hex(claim.token),
            stamp: hex(stamp),
        }
    }
}

/// `rows` as one JSON array.
pub(crate) fn array<T: Serialize>(rows: &[T]) -> Result<String> {
    serde_json::to_string(rows).map_err(|e| OutboxError::Database {
        message: format!("cannot write a batch as JSON: {e}"),
        source: None,
    })
}
