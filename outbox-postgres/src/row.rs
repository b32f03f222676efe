//! Reading outbox rows, by column name: whole rows (`t.*`), or the columns a completion wrote.

use chrono::{DateTime, Utc};
use outbox_core::store_kit::outcomes::GuardedRows;
use outbox_core::{EmissionStatus, EntryId, Headers, OutboxEntry, OutboxError, Result};
use tokio_postgres::Row;
use uuid::Uuid;

/// Reads one outbox row.
pub(crate) fn entry(row: &Row) -> Result<OutboxEntry> {
    let id: Uuid = get(row, "id", "?")?;
    let shown = id.to_string();
    let at = |col: &'static str| get::<DateTime<Utc>>(row, col, &shown);
    let opt_at = |col: &'static str| get::<Option<DateTime<Utc>>>(row, col, &shown);
    let text = |col: &'static str| get::<Option<String>>(row, col, &shown);
    let status_code: i16 = get(row, "status", &shown)?;
    let status = EmissionStatus::from_code(status_code.into())
        .ok_or_else(|| corrupt(&shown, format!("unknown status code {status_code}")))?;
    let headers_json: serde_json::Value = get(row, "headers", &shown)?;
    let headers: Headers = serde_json::from_value(headers_json)
        .map_err(|e| corrupt(&shown, format!("headers are not a map of strings: {e}")))?;
    Ok(OutboxEntry {
        id: EntryId::from_uuid(id),
        topic: get(row, "topic", &shown)?,
        partition_key: text("partition_key")?,
        payload: get(row, "payload", &shown)?,
        headers,
        status,
        created_at: at("created_at")?,
        updated_at: at("updated_at")?,
        not_before: opt_at("not_before")?,
        next_retry_at: opt_at("next_retry_at")?,
        attempt_count: count(row, "attempt_count", &shown)?,
        last_error: text("last_error")?,
        dead_letter_reason: text("dead_letter_reason")?,
        delivered_at: opt_at("delivered_at")?,
        provider_message_id: text("provider_message_id")?,
        claim_owner: text("claim_owner")?,
        claim_token: get(row, "claim_token", &shown)?,
        claimed_at: opt_at("claimed_at")?,
        claim_expires_at: opt_at("claim_expires_at")?,
        claim_attempt_count: count(row, "claim_attempt_count", &shown)?,
        stamp: get(row, "stamp", &shown)?,
    })
}

/// Reads a row a completion wrote. It carries only the columns the write set; the others
/// come from `claimed`, the entry as the claim took it: they never change after enqueue
/// (topic, partition key, payload, headers, created and not-before times, the claim's
/// attempt count, which only a claim moves) or are cleared by every completion (the claim
/// fields). Read by column name, like [`entry`].
pub(crate) fn written(row: &Row, claimed: &OutboxEntry) -> Result<OutboxEntry> {
    let shown = claimed.id.to_string();
    let opt_at = |col: &'static str| get::<Option<DateTime<Utc>>>(row, col, &shown);
    let text = |col: &'static str| get::<Option<String>>(row, col, &shown);
    let status_code: i16 = get(row, "status", &shown)?;
    let status = EmissionStatus::from_code(status_code.into())
        .ok_or_else(|| corrupt(&shown, format!("unknown status code {status_code}")))?;
    Ok(OutboxEntry {
        status,
        updated_at: get(row, "updated_at", &shown)?,
        next_retry_at: opt_at("next_retry_at")?,
        attempt_count: count(row, "attempt_count", &shown)?,
        last_error: text("last_error")?,
        dead_letter_reason: text("dead_letter_reason")?,
        delivered_at: opt_at("delivered_at")?,
        provider_message_id: text("provider_message_id")?,
        claim_owner: None,
        claim_token: None,
        claimed_at: None,
        claim_expires_at: None,
        stamp: get(row, "stamp", &shown)?,
        ..claimed.clone()
    })
}

/// How the rows of a guarded write (`complete_batch.sql`, `renew.sql`) are read: the
/// statements lock every target row, judge and write it in one statement, and return
/// every locked row once with its `applied` flag.
pub(crate) const GUARDED: GuardedRows<Row> = GuardedRows {
    id,
    applied,
    entry,
    written,
};

/// Reads the id of a returned row.
pub(crate) fn id(row: &Row) -> Result<EntryId> {
    get::<Uuid>(row, "id", "?").map(EntryId::from_uuid)
}

/// Reads the `applied` flag the guarded writes add to each row they return.
pub(crate) fn applied(row: &Row) -> Result<bool> {
    get(row, "applied", "?")
}

/// One group of `admin/topic_stats.sql`: a topic, a status code, a count, the oldest
/// creation time.
pub(crate) fn topic_group(row: &Row) -> Result<outbox_core::store_kit::admin::TopicGroup> {
    let shown = "topic stats";
    outbox_core::store_kit::admin::TopicGroup::read(
        get(row, "topic", shown)?,
        get::<i16>(row, "status", shown)?.into(),
        get(row, "n", shown)?,
        get(row, "oldest", shown)?,
    )
}

fn get<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    col: &'static str,
    id: &str,
) -> Result<T> {
    row.try_get(col)
        .map_err(|e| corrupt(id, format!("column {col}: {e}")))
}

fn count(row: &Row, col: &'static str, id: &str) -> Result<u32> {
    let n: i32 = get(row, col, id)?;
    u32::try_from(n).map_err(|_| corrupt(id, format!("{col} is negative ({n})")))
}

fn corrupt(id: &str, reason: String) -> OutboxError {
    OutboxError::CorruptRow {
        id: id.to_owned(),
        reason,
    }
}
