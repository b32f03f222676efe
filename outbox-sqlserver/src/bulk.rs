//! Bulk enqueue: large batches go through tiberius's bulk copy (the TDS bulk load that
//! `SqlBulkCopy` uses) inside one transaction, instead of multi-row inserts.

use chrono::{DateTime, Utc};
use outbox_core::{EntryId, NewEntry, OutboxEntry, OutboxError, Result};
use tiberius::{ColumnData, IntoSql, SqlBulkCopyOption, SqlBulkCopyOptions, TokenRow};

use crate::enqueue::Bound;
use crate::pool::Checkout;
use crate::retry::CallError;
use crate::row::naive;
use crate::SqlServerClaimStore;

/// The columns a bulk copy writes, in the order of [`row`]'s values. `seq` is the
/// identity column: the server numbers the rows.
const COLUMNS: [&str; 14] = [
    "id",
    "topic",
    "partition_key",
    "payload",
    "headers",
    "status",
    "created_at",
    "updated_at",
    "retry_due_at",
    "not_before",
    "attempt_count",
    "claim_attempt_count",
    "stamp",
    "slice_hash",
];

/// The longest value tiberius's bulk copy sends into a `(max)` column: it takes the
/// column's declared length (0xFFFF for `max`) as a limit, in bytes.
const BULK_MAX_BYTES: usize = 0xFFFF;

/// Whether the bulk copy can carry `entry`: its payload, and its text as UTF-16, within
/// [`BULK_MAX_BYTES`]. A batch with an entry that does not fit is inserted row-wise.
pub(crate) fn fits(entry: &NewEntry) -> bool {
    let utf16 = |s: &str| s.encode_utf16().count() * 2;
    let headers: usize = entry
        .headers
        .iter()
        .map(|(k, v)| utf16(k) + utf16(v) + 12)
        .sum();
    entry.payload.len() <= BULK_MAX_BYTES
        && headers + 4 <= BULK_MAX_BYTES
        && entry
            .partition_key
            .as_deref()
            .is_none_or(|k| utf16(k) <= BULK_MAX_BYTES)
}

/// One entry as a bulk row, created at `now` unless it names its own time.
fn row(
    entry: &NewEntry,
    stamp: uuid::Uuid,
    headers: &str,
    now: DateTime<Utc>,
) -> TokenRow<'static> {
    let created = naive(entry.created_at.unwrap_or(now));
    let mut row = TokenRow::with_capacity(COLUMNS.len());
    row.push(ColumnData::Binary(Some(
        crate::row::id_bytes(entry.id).into(),
    )));
    row.push(ColumnData::String(Some(entry.topic.clone().into())));
    row.push(ColumnData::String(
        entry.partition_key.clone().map(Into::into),
    ));
    row.push(ColumnData::Binary(Some(entry.payload.clone().into())));
    row.push(ColumnData::String(Some(headers.to_owned().into())));
    row.push(ColumnData::U8(Some(0)));
    row.push(created.into_sql());
    row.push(created.into_sql());
    row.push(created.into_sql());
    row.push(entry.not_before.map(naive).into_sql());
    row.push(ColumnData::I32(Some(0)));
    row.push(ColumnData::I32(Some(0)));
    row.push(ColumnData::Guid(Some(stamp)));
    row.push(ColumnData::I64(Some(i64::from(outbox_core::slice_hash(
        entry.partition_key.as_deref(),
        entry.id,
    )))));
    row
}

/// Writes `entries` (validated by the caller) in one transaction with one bulk copy.
pub(crate) async fn enqueue(
    store: &SqlServerClaimStore,
    entries: Vec<NewEntry>,
) -> Result<Vec<OutboxEntry>> {
    let bound = Bound::all(entries)?;
    let ids: Vec<EntryId> = bound.iter().map(Bound::id).collect();
    let target = crate::table::bulk_target(&store.inner.table);
    let inner = &store.inner;
    let now = crate::retry::run(&inner.retry, &inner.retried, || async {
        let mut checkout = Checkout::get(&inner.pool).await?;
        let client = checkout.client();
        client
            .simple_query("BEGIN TRANSACTION")
            .await?
            .into_results()
            .await?;
        let clock = client
            .simple_query(inner.sql.clock.as_str())
            .await?
            .into_row()
            .await?
            .ok_or_else(|| OutboxError::Database {
                message: "the clock query returned no row".into(),
                source: None,
            })?;
        let now = crate::row::required_time(&clock, "now", "?")?;
        let options = SqlBulkCopyOptions::from(SqlBulkCopyOption::CheckConstraints);
        let mut load = client
            .bulk_insert_with_options(&target, &COLUMNS, options, &[])
            .await
            .map_err(|e| CallError::of_insert(e, &ids))?;
        for b in &bound {
            load.send(b.bulk_row(now))
                .await
                .map_err(|e| CallError::of_insert(e, &ids))?;
        }
        load.finalize()
            .await
            .map_err(|e| CallError::of_insert(e, &ids))?;
        client
            .simple_query("COMMIT TRANSACTION")
            .await?
            .into_results()
            .await?;
        checkout.done();
        Ok::<_, CallError>(now)
    })
    .await?;
    Ok(bound.into_iter().map(|b| b.written(now)).collect())
}

impl Bound {
    /// This entry as a bulk row.
    pub(crate) fn bulk_row(&self, now: DateTime<Utc>) -> TokenRow<'static> {
        row(self.entry(), self.stamp(), self.headers(), now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_values_go_row_wise_because_the_bulk_copy_cannot_carry_them() {
        assert!(fits(&NewEntry::new("t", vec![0; BULK_MAX_BYTES])));
        assert!(!fits(&NewEntry::new("t", vec![0; BULK_MAX_BYTES + 1])));
        assert!(!fits(
            &NewEntry::new("t", b"x".to_vec()).header("h", "v".repeat(BULK_MAX_BYTES / 2))
        ));
        assert!(!fits(
            &NewEntry::new("t", b"x".to_vec()).partition_key("k".repeat(BULK_MAX_BYTES))
        ));
        assert!(fits(&NewEntry::new("t", b"x".to_vec()).header("h", "v")));
    }

    #[test]
    fn every_column_but_the_identity_is_written_in_order() {
        let migration = include_str!("../migrations/0001_create_outbox.up.sql");
        let table = &migration
            [migration.find("CREATE TABLE").unwrap()..migration.find("CONSTRAINT").unwrap()];
        let mut declared: Vec<&str> = table
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("--") && !l.starts_with("CREATE") && !l.is_empty())
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        // Columns later migrations add (all nullable or computed).
        for m in crate::migrations() {
            declared.extend(m.up.lines().filter_map(|l| {
                l.strip_prefix("ALTER TABLE {table} ADD ")
                    .and_then(|rest| rest.split_whitespace().next())
            }));
        }
        let mut without_defaults: Vec<&str> = declared
            .iter()
            .copied()
            .filter(|c| *c != "seq")
            .filter(|c| {
                table
                    .lines()
                    .find(|l| l.trim_start().starts_with(&format!("{c} ")))
                    .is_some_and(|line| line.contains("NOT NULL"))
            })
            .collect();
        without_defaults.sort_unstable();
        let mut written: Vec<&str> = COLUMNS.to_vec();
        written.retain(|c| without_defaults.contains(c));
        written.sort_unstable();
        assert_eq!(
            written, without_defaults,
            "a NOT NULL column is not written by the bulk copy"
        );
        let bound = Bound::all(vec![NewEntry::new("t", b"x".to_vec())]).unwrap();
        assert_eq!(bound[0].bulk_row(Utc::now()).len(), COLUMNS.len());
        for c in COLUMNS {
            assert!(declared.contains(&c), "{c} is not a column");
        }
    }
}
