//! Rows as the server returns them, built by hand for the unit tests that read them
//! (claims, shared starts, batch parameters, the portable store).

use chrono::{DateTime, TimeZone, Utc};
use outbox_core::{EntryId, OutboxEntry};
use tiberius::{ColumnData, ColumnType, Row};
use uuid::Uuid;

use crate::row::id_bytes;

/// A whole row as the server returns it for `t.*` (payload left out when `applied`).
pub(crate) fn recorded(entry: &OutboxEntry, applied: Option<bool>) -> Row {
    recorded_row(entry, applied, applied != Some(true))
}

/// A whole row, with or without its payload.
pub(crate) fn recorded_row(entry: &OutboxEntry, applied: Option<bool>, with_payload: bool) -> Row {
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
