//! Writing new entries: multi-row inserts of at most 230 entries each, on the store's
//! pool or on a host's own client inside its transaction.

use chrono::{DateTime, NaiveDateTime, Utc};
use futures_util::io::{AsyncRead, AsyncWrite};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{EntryId, NewEntry, OutboxEntry, OutboxError, Result};
use tiberius::{Client, ColumnData, IntoSql, ToSql};
use uuid::Uuid;

use crate::row::{id_bytes, naive};
#[cfg(test)]
use crate::statements::ENQUEUE_ROW;
use crate::statements::{Statements, ENQUEUE_PARAMS_PER_ROW, ENQUEUE_ROWS_PER_STATEMENT};

/// One entry as its insert binds it.
pub(crate) struct Bound {
    new: NewEntry,
    id: Vec<u8>,
    headers: String,
    created_at: Option<NaiveDateTime>,
    not_before: Option<NaiveDateTime>,
    stamp: Uuid,
}

impl Bound {
    /// The entries with their values prepared for binding (validated by the caller).
    pub(crate) fn all(entries: Vec<NewEntry>) -> Result<Vec<Self>> {
        entries
            .into_iter()
            .map(|new| {
                let headers = serde_json::to_string(&new.headers).map_err(|e| {
                    OutboxError::invalid("headers", format!("cannot be written as JSON: {e}"))
                })?;
                Ok(Self {
                    id: id_bytes(new.id),
                    headers,
                    created_at: new.created_at.map(naive),
                    not_before: new.not_before.map(naive),
                    stamp: Uuid::new_v4(),
                    new,
                })
            })
            .collect()
    }

    /// The parameters of this entry's row, in the order of
    /// [`ENQUEUE_ROW`](crate::statements::ENQUEUE_ROW).
    pub(crate) fn params(&self) -> [ColumnData<'_>; ENQUEUE_PARAMS_PER_ROW] {
        [
            ColumnData::Binary(Some(self.id.as_slice().into())),
            ColumnData::String(Some(self.new.topic.as_str().into())),
            ColumnData::String(self.new.partition_key.as_deref().map(Into::into)),
            ColumnData::Binary(Some(self.new.payload.as_slice().into())),
            ColumnData::String(Some(self.headers.as_str().into())),
            self.created_at.into_sql(),
            self.not_before.into_sql(),
            ColumnData::Guid(Some(self.stamp)),
            ColumnData::I64(Some(i64::from(outbox_core::slice_hash(
                self.new.partition_key.as_deref(),
                self.new.id,
            )))),
        ]
    }

    /// The entry as written, given the server's clock reading for the insert.
    pub(crate) fn written(self, now: DateTime<Utc>) -> OutboxEntry {
        let stamp = self.stamp;
        let mut entry = OutboxEntry::from_new(self.new, normalize_time(now));
        entry.stamp = stamp;
        entry
    }

    /// The id.
    pub(crate) fn id(&self) -> EntryId {
        self.new.id
    }

    /// The entry.
    pub(crate) fn entry(&self) -> &NewEntry {
        &self.new
    }

    /// The stamp the row is written with.
    pub(crate) fn stamp(&self) -> Uuid {
        self.stamp
    }

    /// The headers as JSON text.
    pub(crate) fn headers(&self) -> &str {
        &self.headers
    }
}

/// Inserts `bound` on `client` in chunks of at most 230 rows, one round trip each,
/// and returns the entries as written. Atomic only inside a transaction the caller holds
/// (or when there is one chunk). The error is the driver's, for the caller to map.
pub(crate) async fn insert<S>(
    client: &mut Client<S>,
    sql: &Statements,
    bound: Vec<Bound>,
) -> std::result::Result<Vec<OutboxEntry>, InsertError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let mut nows = Vec::new();
    for chunk in bound.chunks(ENQUEUE_ROWS_PER_STATEMENT) {
        let statement = sql.enqueue(chunk.len());
        let values: Vec<ColumnData<'_>> = chunk.iter().flat_map(Bound::params).collect();
        let params: Vec<&dyn ToSql> = values.iter().map(|v| v as &dyn ToSql).collect();
        let row = client
            .query(statement, &params)
            .await?
            .into_row()
            .await?
            .ok_or(InsertError::NoClock)?;
        let now = crate::row::required_time(&row, "now", "?").map_err(InsertError::Row)?;
        nows.push((chunk.len(), now));
    }
    let mut written = Vec::with_capacity(bound.len());
    let mut entries = bound.into_iter();
    for (n, now) in nows {
        written.extend(entries.by_ref().take(n).map(|b| b.written(now)));
    }
    Ok(written)
}

/// Why an insert failed.
#[derive(Debug)]
pub(crate) enum InsertError {
    /// The driver or the server failed.
    Driver(tiberius::error::Error),
    /// The insert returned no clock reading.
    NoClock,
    /// The clock reading was unreadable.
    Row(OutboxError),
}

impl From<tiberius::error::Error> for InsertError {
    fn from(e: tiberius::error::Error) -> Self {
        Self::Driver(e)
    }
}

impl InsertError {
    /// In the core's terms; a key violation names the duplicate entry among `ids`.
    pub(crate) fn into_outbox(self, ids: &[EntryId]) -> OutboxError {
        match self {
            Self::Driver(e) => crate::error::map_insert_err(e, ids),
            Self::NoClock => OutboxError::Database {
                message: "the insert returned no clock reading".into(),
                source: None,
            },
            Self::Row(e) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rows_values_have_the_kinds_the_row_template_declares() {
        let bound = Bound::all(vec![NewEntry::new("t", b"x".to_vec()).partition_key("k")]).unwrap();
        let kinds: Vec<_> = bound[0]
            .params()
            .iter()
            .map(|v| crate::params::Kind::of(v).unwrap())
            .collect();
        let declared: Vec<_> = ENQUEUE_ROW.iter().map(|(_, k)| *k).collect();
        assert_eq!(kinds, declared);
        // The row template first names each parameter in the declared order.
        let row = include_str!("../sql/enqueue_row.sql");
        let mut last = 0;
        for (name, _) in ENQUEUE_ROW {
            let at = row
                .find(&format!("{name},"))
                .or_else(|| row.find(&format!("{name})")))
                .unwrap_or_else(|| panic!("{name} is not used"));
            assert!(at >= last, "{name} is out of order");
            last = at;
        }
        assert_eq!(bound[0].params()[2], ColumnData::String(Some("k".into())));
    }

    #[test]
    fn statements_number_every_rows_parameters_in_turn() {
        let sql = Statements::render(&outbox_core::TableName::default());
        let two = sql.enqueue(2);
        assert!(
            two.contains("(@P1, @P2, @P3, @P4, @P5, 0, COALESCE(@P6, @now)"),
            "{two}"
        );
        assert!(
            two.contains("(@P10, @P11, @P12, @P13, @P14, 0, COALESCE(@P15, @now)"),
            "{two}"
        );
        assert!(two.contains("@P18)"), "{two}");
        assert!(!two.contains("@P19"), "{two}");
        assert!(!two.contains("@id") && !two.contains("{rows}"), "{two}");
        let full = sql.enqueue(ENQUEUE_ROWS_PER_STATEMENT);
        assert!(full.contains("@P2070)"));
        assert!(!full.contains("@P2071"), "over the 2,100 parameter limit");
    }
}
