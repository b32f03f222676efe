//! The JSON documents the batch statements walk with `json_each`, serialized straight from
//! the entries (no intermediate `serde_json::Value`): bytes as lower-case hex, which the
//! statements turn back into blobs with `unhex`.

use std::fmt;

use outbox_core::{OutboxEntry, OutboxError, Result};
use serde::{Serialize, Serializer};

use crate::row::{micros, opt_micros};

/// Bytes written as lower-case hex.
pub(crate) struct Hex<'a>(pub(crate) &'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut buf = [0u8; 128];
        for chunk in self.0.chunks(buf.len() / 2) {
            for (i, b) in chunk.iter().enumerate() {
                buf[2 * i] = DIGITS[usize::from(b >> 4)];
                buf[2 * i + 1] = DIGITS[usize::from(b & 0x0f)];
            }
            let digits = std::str::from_utf8(&buf[..chunk.len() * 2]).map_err(|_| fmt::Error)?;
            f.write_str(digits)?;
        }
        Ok(())
    }
}

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A UUID's 16 bytes written as lower-case hex.
pub(crate) struct HexUuid([u8; 16]);

impl HexUuid {
    fn new(id: uuid::Uuid) -> Self {
        Self(id.into_bytes())
    }
}

impl Serialize for HexUuid {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(&Hex(&self.0))
    }
}

/// One element of `complete_batch.sql`'s array: the claim that must still hold, and the
/// row as the completion writes it.
#[derive(Serialize)]
pub(crate) struct CompletionRow<'a> {
    id: HexUuid,
    owner: &'a str,
    token: HexUuid,
    status: i16,
    next_retry_at: Option<i64>,
    attempt_count: u32,
    last_error: Option<&'a str>,
    dead_letter_reason: Option<&'a str>,
    delivered_at: Option<i64>,
    provider_message_id: Option<&'a str>,
    updated_at: i64,
    stamp: HexUuid,
}

impl<'a> CompletionRow<'a> {
    /// `written`, the entry as the completion leaves it, guarded by `claim`'s owner and token.
    pub(crate) fn new(claim: &'a outbox_core::Claim, written: &'a OutboxEntry) -> Self {
        Self {
            id: HexUuid::new(written.id.as_uuid()),
            owner: &claim.owner,
            token: HexUuid::new(claim.token),
            status: written.status.code(),
            next_retry_at: opt_micros(written.next_retry_at),
            attempt_count: written.attempt_count,
            last_error: written.last_error.as_deref(),
            dead_letter_reason: written.dead_letter_reason.as_deref(),
            delivered_at: opt_micros(written.delivered_at),
            provider_message_id: written.provider_message_id.as_deref(),
            updated_at: micros(written.updated_at),
            stamp: HexUuid::new(written.stamp),
        }
    }
}

/// One element of `enqueue.sql`'s array: a new entry.
#[derive(Serialize)]
pub(crate) struct NewRow<'a> {
    id: HexUuid,
    topic: &'a str,
    partition_key: Option<&'a str>,
    payload: Hex<'a>,
    headers: String,
    created_at: i64,
    not_before: Option<i64>,
    stamp: HexUuid,
    slice_hash: u32,
}

impl<'a> NewRow<'a> {
    /// `e` as the insert writes it (headers as JSON text, the column's form).
    pub(crate) fn new(e: &'a OutboxEntry) -> Result<Self> {
        let headers = serde_json::to_string(&e.headers)
            .map_err(|err| OutboxError::invalid("headers", err.to_string()))?;
        Ok(Self {
            id: HexUuid::new(e.id.as_uuid()),
            topic: &e.topic,
            partition_key: e.partition_key.as_deref(),
            payload: Hex(&e.payload),
            headers,
            created_at: micros(e.created_at),
            not_before: opt_micros(e.not_before),
            stamp: HexUuid::new(e.stamp),
            slice_hash: e.slice_hash(),
        })
    }
}

/// `rows` as one JSON array.
pub(crate) fn array<T: Serialize>(rows: &[T]) -> Result<String> {
    serde_json::to_string(rows).map_err(|e| OutboxError::invalid("batch", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::Hex;

    #[test]
    fn hex_is_lower_case_and_spans_chunks() {
        assert_eq!(Hex(&[]).to_string(), "");
        assert_eq!(Hex(&[0x00, 0x0f, 0xa5, 0xff]).to_string(), "000fa5ff");
        let long: Vec<u8> = (0..=255u8).cycle().take(300).collect();
        let expected: String = long.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(Hex(&long).to_string(), expected);
    }
}
