//! Reading outbox rows from tiberius rows, by column name.

use chrono::{DateTime, NaiveDateTime, Utc};
use outbox_core::store_kit::outcomes::GuardedRows;
use outbox_core::{EmissionStatus, EntryId, Headers, OutboxEntry, OutboxError, Result};
use tiberius::{FromSql, Row};
use uuid::Uuid;

/// An id as the table stores it: 16 bytes in RFC 4122 order.
pub(crate) fn id_bytes(id: EntryId) -> Vec<u8> {
    id.as_uuid().as_bytes().to_vec()
}

/// An id as the JSON inputs carry it: `0x` and 32 hex digits, read with CONVERT style 1.
pub(crate) fn id_hex(id: EntryId) -> String {
    format!("0x{}", id.as_uuid().simple())
}

/// A time as a datetime2 parameter (UTC, no offset).
pub(crate) fn naive(at: DateTime<Utc>) -> NaiveDateTime {
    outbox_core::store_kit::sql::normalize_time(at).naive_utc()
}

/// A whole row (`t.*`).
pub(crate) fn entry(row: &Row) -> Result<OutboxEntry> {
    let id = id(row)?;
    let shown = id.to_string();
    let s = shown.as_str();
    let headers_text: &str = required(row, "headers", s)?;
    let headers: Headers = serde_json::from_str(headers_text)
        .map_err(|e| corrupt(s, format!("headers are not a JSON map of strings: {e}")))?;
    Ok(OutboxEntry {
        id,
        topic: required::<&str>(row, "topic", s)?.to_owned(),
        partition_key: text(row, "partition_key", s)?,
        payload: required::<&[u8]>(row, "payload", s)?.to_vec(),
        headers,
        status: status(row, s)?,
        created_at: required_time(row, "created_at", s)?,
        updated_at: required_time(row, "updated_at", s)?,
        not_before: time(row, "not_before", s)?,
        next_retry_at: time(row, "next_retry_at", s)?,
        attempt_count: count(row, "attempt_count", s)?,
        last_error: text(row, "last_error", s)?,
        dead_letter_reason: text(row, "dead_letter_reason", s)?,
        delivered_at: time(row, "delivered_at", s)?,
        provider_message_id: text(row, "provider_message_id", s)?,
        claim_owner: text(row, "claim_owner", s)?,
        claim_token: optional::<Uuid>(row, "claim_token", s)?,
        claimed_at: time(row, "claimed_at", s)?,
        claim_expires_at: time(row, "claim_expires_at", s)?,
        claim_attempt_count: count(row, "claim_attempt_count", s)?,
        stamp: required(row, "stamp", s)?,
    })
}

/// The entry a completion wrote: the written columns of `row` over the claimed entry
/// (whose payload, headers and creation fields never change after enqueue).
pub(crate) fn written(row: &Row, claimed: &OutboxEntry) -> Result<OutboxEntry> {
    let shown = claimed.id.to_string();
    let s = shown.as_str();
    Ok(OutboxEntry {
        status: status(row, s)?,
        updated_at: required_time(row, "updated_at", s)?,
        next_retry_at: time(row, "next_retry_at", s)?,
        attempt_count: count(row, "attempt_count", s)?,
        last_error: text(row, "last_error", s)?,
        dead_letter_reason: text(row, "dead_letter_reason", s)?,
        delivered_at: time(row, "delivered_at", s)?,
        provider_message_id: text(row, "provider_message_id", s)?,
        claim_owner: None,
        claim_token: None,
        claimed_at: None,
        claim_expires_at: None,
        stamp: required(row, "stamp", s)?,
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

/// The row's id.
pub(crate) fn id(row: &Row) -> Result<EntryId> {
    let bytes: &[u8] = required(row, "id", "?")?;
    Uuid::from_slice(bytes)
        .map(EntryId::from_uuid)
        .map_err(|_| corrupt("?", format!("id is {} bytes, not 16", bytes.len())))
}

/// The `applied` flag of a guarded write's row.
pub(crate) fn applied(row: &Row) -> Result<bool> {
    required(row, "applied", "?")
}

/// A required datetime2 column.
pub(crate) fn required_time(row: &Row, col: &'static str, shown: &str) -> Result<DateTime<Utc>> {
    required::<NaiveDateTime>(row, col, shown).map(|t| t.and_utc())
}

fn time(row: &Row, col: &'static str, shown: &str) -> Result<Option<DateTime<Utc>>> {
    Ok(optional::<NaiveDateTime>(row, col, shown)?.map(|t| t.and_utc()))
}

fn text(row: &Row, col: &'static str, shown: &str) -> Result<Option<String>> {
    Ok(optional::<&str>(row, col, shown)?.map(str::to_owned))
}

/// One group of `admin/topic_stats.sql`: a topic, a status code, a count, the oldest
/// creation time.
pub(crate) fn topic_group(row: &Row) -> Result<outbox_core::store_kit::admin::TopicGroup> {
    let shown = "topic stats";
    outbox_core::store_kit::admin::TopicGroup::read(
        required::<&str>(row, "topic", shown)?.to_owned(),
        required::<i32>(row, "status", shown)?.into(),
        required::<i64>(row, "n", shown)?,
        time(row, "oldest", shown)?,
    )
}

fn status(row: &Row, shown: &str) -> Result<EmissionStatus> {
    let code: u8 = required(row, "status", shown)?;
    EmissionStatus::from_code(code.into())
        .ok_or_else(|| corrupt(shown, format!("unknown status code {code}")))
}

fn count(row: &Row, col: &'static str, shown: &str) -> Result<u32> {
    let n: i32 = required(row, col, shown)?;
    u32::try_from(n).map_err(|_| corrupt(shown, format!("{col} {n} is negative")))
}

fn optional<'a, T: FromSql<'a>>(row: &'a Row, col: &'static str, shown: &str) -> Result<Option<T>> {
    row.try_get::<T, _>(col)
        .map_err(|e| corrupt(shown, format!("column {col}: {e}")))
}

/// A column that must not be NULL; `shown` names the row in errors.
pub(crate) fn required<'a, T: FromSql<'a>>(
    row: &'a Row,
    col: &'static str,
    shown: &str,
) -> Result<T> {
    optional(row, col, shown)?.ok_or_else(|| corrupt(shown, format!("column {col} is NULL")))
}

fn corrupt(id: &str, reason: String) -> OutboxError {
    OutboxError::CorruptRow {
        id: id.to_owned(),
        reason,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use chrono::TimeZone;
    use tiberius::{ColumnData, ColumnType};

    use super::*;

    /// A whole row as the server returns it for `t.*` (payload left out when `applied`).
    pub(crate) fn recorded(entry: &OutboxEntry, applied: Option<bool>) -> Row {
        recorded_row(entry, applied, applied != Some(true))
    }

    /// A whole row, with or without its payload.
    pub(crate) fn recorded_row(
        entry: &OutboxEntry,
        applied: Option<bool>,
        with_payload: bool,
    ) -> Row {
        recorded_with(entry, applied, with_payload, None)
    }

    /// A whole row led by a `clock_now` column, as the portable reads return it.
    pub(crate) fn recorded_clocked(entry: &OutboxEntry, now: DateTime<Utc>) -> Row {
        recorded_with(entry, None, true, Some(now))
    }

    /// A `(clock_now, id)` candidate row.
    pub(crate) fn recorded_candidate(id: EntryId, now: DateTime<Utc>) -> Row {
        Row::builder()
            .column(
                "clock_now",
                ColumnType::Datetime2,
                ColumnData::DateTime2(Some(datetime2(now))),
            )
            .column(
                "id",
                ColumnType::BigBinary,
                ColumnData::Binary(Some(id_bytes(id).into())),
            )
            .build()
    }

    fn recorded_with(
        entry: &OutboxEntry,
        applied: Option<bool>,
        with_payload: bool,
        clock: Option<DateTime<Utc>>,
    ) -> Row {
        let t = |at: Option<DateTime<Utc>>| ColumnData::DateTime2(at.map(datetime2));
        let s = |v: Option<&str>| ColumnData::String(v.map(|v| v.to_owned().into()));
        let mut b = Row::builder();
        if let Some(now) = clock {
            b = b.column("clock_now", ColumnType::Datetime2, t(Some(now)));
        }
        if let Some(applied) = applied {
            b = b.column("applied", ColumnType::Bit, ColumnData::Bit(Some(applied)));
        }
        let payload = with_payload.then(|| entry.payload.clone().into());
        b.column("seq", ColumnType::Int8, ColumnData::I64(Some(7)))
            .column(
                "id",
                ColumnType::BigBinary,
                ColumnData::Binary(Some(id_bytes(entry.id).into())),
            )
            .column("topic", ColumnType::NVarchar, s(Some(&entry.topic)))
            .column(
                "partition_key",
                ColumnType::NVarchar,
                s(entry.partition_key.as_deref()),
            )
            .column(
                "payload",
                ColumnType::BigVarBin,
                ColumnData::Binary(payload),
            )
            .column(
                "headers",
                ColumnType::NVarchar,
                s(Some(&serde_json::to_string(&entry.headers).unwrap())),
            )
            .column(
                "status",
                ColumnType::Int1,
                ColumnData::U8(Some(u8::try_from(entry.status.code()).unwrap())),
            )
            .column(
                "created_at",
                ColumnType::Datetime2,
                t(Some(entry.created_at)),
            )
            .column(
                "updated_at",
                ColumnType::Datetime2,
                t(Some(entry.updated_at)),
            )
            .column("not_before", ColumnType::Datetime2, t(entry.not_before))
            .column(
                "next_retry_at",
                ColumnType::Datetime2,
                t(entry.next_retry_at),
            )
            .column(
                "retry_due_at",
                ColumnType::Datetime2,
                t(Some(entry.retry_order_time())),
            )
            .column(
                "attempt_count",
                ColumnType::Int4,
                ColumnData::I32(Some(entry.attempt_count as i32)),
            )
            .column(
                "last_error",
                ColumnType::NVarchar,
                s(entry.last_error.as_deref()),
            )
            .column(
                "dead_letter_reason",
                ColumnType::NVarchar,
                s(entry.dead_letter_reason.as_deref()),
            )
            .column("delivered_at", ColumnType::Datetime2, t(entry.delivered_at))
            .column(
                "provider_message_id",
                ColumnType::NVarchar,
                s(entry.provider_message_id.as_deref()),
            )
            .column(
                "claim_owner",
                ColumnType::NVarchar,
                s(entry.claim_owner.as_deref()),
            )
            .column(
                "claim_token",
                ColumnType::Guid,
                ColumnData::Guid(entry.claim_token),
            )
            .column("claimed_at", ColumnType::Datetime2, t(entry.claimed_at))
            .column(
                "claim_expires_at",
                ColumnType::Datetime2,
                t(entry.claim_expires_at),
            )
            .column(
                "claim_attempt_count",
                ColumnType::Int4,
                ColumnData::I32(Some(entry.claim_attempt_count as i32)),
            )
            .column(
                "stamp",
                ColumnType::Guid,
                ColumnData::Guid(Some(entry.stamp)),
            )
            .build()
    }

    /// A datetime2(7) value as the server sends one: days since 0001-01-01 and 100 ns
    /// increments since midnight.
    pub(crate) fn datetime2(at: DateTime<Utc>) -> tiberius::time::DateTime2 {
        use chrono::Timelike;
        let at = at.naive_utc();
        let epoch = chrono::NaiveDate::from_ymd_opt(1, 1, 1).unwrap();
        let days = u32::try_from((at.date() - epoch).num_days()).unwrap();
        let t = at.time();
        let nanos =
            u64::from(t.num_seconds_from_midnight()) * 1_000_000_000 + u64::from(t.nanosecond());
        tiberius::time::DateTime2::new(
            tiberius::time::Date::new(days),
            tiberius::time::Time::new(nanos / 100, 7),
        )
    }

    pub(crate) fn sample() -> OutboxEntry {
        let at = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap()
            + chrono::TimeDelta::microseconds(123_456);
        let mut e = OutboxEntry::from_new(
            outbox_core::NewEntry::new("orders", b"{\"n\":1}".to_vec())
                .partition_key("customer-7")
                .header("trace", "abc"),
            at,
        );
        e.claim_owner = Some("worker-1".into());
        e.claim_token = Some(Uuid::new_v4());
        e.claimed_at = Some(at);
        e.claim_expires_at = Some(at + chrono::TimeDelta::seconds(30));
        e.claim_attempt_count = 1;
        e
    }

    #[test]
    fn a_whole_row_reads_back_every_field() {
        let e = sample();
        assert_eq!(entry(&recorded(&e, None)).unwrap(), e);
    }

    #[test]
    fn ids_keep_their_byte_order() {
        let e = sample();
        assert_eq!(id_bytes(e.id), e.id.as_uuid().as_bytes().to_vec());
        assert_eq!(id_hex(e.id).len(), 34);
        assert!(id_hex(e.id).starts_with("0x"));
    }

    #[test]
    fn a_written_row_takes_payload_and_headers_from_the_claim() {
        let claimed = sample();
        let mut durable = claimed.clone();
        durable.status = EmissionStatus::Delivered;
        durable.claim_owner = None;
        durable.claim_token = None;
        durable.claimed_at = None;
        durable.claim_expires_at = None;
        durable.stamp = Uuid::new_v4();
        let row = recorded(&durable, Some(true));
        assert!(applied(&row).unwrap());
        assert_eq!(written(&row, &claimed).unwrap(), durable);
        assert!(entry(&row).is_err(), "a written row carries no payload");
    }

    #[test]
    fn unreadable_rows_are_reported_as_corrupt() {
        let mut e = sample();
        e.headers.clear();
        let row = Row::builder()
            .column(
                "id",
                ColumnType::BigBinary,
                ColumnData::Binary(Some(vec![1, 2, 3].into())),
            )
            .build();
        assert!(matches!(id(&row), Err(OutboxError::CorruptRow { .. })));
    }
}
