//! Reading outbox rows from tiberius rows, by column name.

use chrono::{DateTime, NaiveDateTime, Utc};
use outbox_core::store_kit::outcomes::GuardedRows;
use outbox_core::store_kit::rows::{self, ColumnRead, EntryColumns};
use outbox_core::{EntryId, OutboxEntry, OutboxError, Result};
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
    rows::entry(&Columns(row))
}

/// The entry a completion wrote: the written columns of `row` over the claimed entry
/// (see [`rows::written`]).
pub(crate) fn written(row: &Row, claimed: &OutboxEntry) -> Result<OutboxEntry> {
    rows::written(&Columns(row), claimed)
}

/// How the SQL Server schema stores each kind of column: the id as `binary(16)`, the
/// stamp and token as `uniqueidentifier`, `datetime2` in UTC, headers as JSON text, a
/// `tinyint` status and `int` counts.
struct Columns<'r>(&'r Row);

impl Columns<'_> {
    fn read<'a, T: FromSql<'a>>(&'a self, column: &str) -> ColumnRead<T> {
        self.0.try_get::<T, _>(column).map_err(|e| e.to_string())
    }
}

impl EntryColumns for Columns<'_> {
    fn text(&self, column: &'static str) -> ColumnRead<String> {
        Ok(self.read::<&str>(column)?.map(str::to_owned))
    }
    fn bytes(&self, column: &'static str) -> ColumnRead<Vec<u8>> {
        Ok(self.read::<&[u8]>(column)?.map(<[u8]>::to_vec))
    }
    fn time(&self, column: &'static str) -> ColumnRead<DateTime<Utc>> {
        Ok(self.read::<NaiveDateTime>(column)?.map(|t| t.and_utc()))
    }
    fn code(&self, column: &'static str) -> ColumnRead<i64> {
        Ok(self.read::<u8>(column)?.map(i64::from))
    }
    fn count(&self, column: &'static str) -> ColumnRead<i64> {
        Ok(self.read::<i32>(column)?.map(i64::from))
    }
    fn uuid(&self, column: &'static str) -> ColumnRead<Uuid> {
        self.read(column)
    }
    fn id(&self) -> ColumnRead<Uuid> {
        self.read::<&[u8]>("id")?.map(rows::uuid_of).transpose()
    }
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
    rows::entry_id(&Columns(row))
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
mod tests {
    use outbox_core::EmissionStatus;
    use tiberius::{ColumnData, ColumnType};

    use super::*;
    use crate::fixtures::{recorded, sample};

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
