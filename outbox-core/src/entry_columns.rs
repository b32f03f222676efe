//! One outbox row read into an [`OutboxEntry`], whatever the driver: the engine says how
//! it reads each kind of column ([`EntryColumns`]); the columns an entry has, which of
//! them may be NULL, and how a value that does not fit is reported are written here once.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{EmissionStatus, EntryId, Headers, OutboxEntry, OutboxError, Result};

/// What a driver's read of one column gives: its value, `None` for SQL NULL, or why the
/// value could not be read (the column's name is added by the caller).
pub type ColumnRead<T> = std::result::Result<Option<T>, String>;

/// How one engine reads the kinds of column an outbox row has, by column name. Implement
/// it on a thin wrapper around the driver's row; [`entry`] and [`written`] do the rest.
pub trait EntryColumns {
    /// A text column.
    fn text(&self, column: &'static str) -> ColumnRead<String>;
    /// A binary column (the payload).
    fn bytes(&self, column: &'static str) -> ColumnRead<Vec<u8>>;
    /// A time column, in UTC.
    fn time(&self, column: &'static str) -> ColumnRead<DateTime<Utc>>;
    /// The status column's integer code.
    fn code(&self, column: &'static str) -> ColumnRead<i64>;
    /// An attempt-count column.
    fn count(&self, column: &'static str) -> ColumnRead<i64>;

    /// A uuid column (the stamp, the claim token). By default, 16 bytes in RFC 4122 order.
    fn uuid(&self, column: &'static str) -> ColumnRead<Uuid> {
        self.bytes(column)?.map(|b| uuid_of(&b)).transpose()
    }

    /// The id column. By default read as [`EntryColumns::uuid`] reads one.
    fn id(&self) -> ColumnRead<Uuid> {
        self.uuid("id")
    }

    /// The headers column. By default, text holding a JSON object of strings.
    fn headers(&self, column: &'static str) -> ColumnRead<Headers> {
        self.text(column)?
            .map(|json| {
                serde_json::from_str(&json)
                    .map_err(|e| format!("not a JSON object of strings: {e}"))
            })
            .transpose()
    }
}

/// A uuid from 16 bytes in RFC 4122 order, or why not.
pub fn uuid_of(bytes: &[u8]) -> std::result::Result<Uuid, String> {
    Uuid::from_slice(bytes).map_err(|_| format!("{} bytes, not 16", bytes.len()))
}

/// The row's id; a row without a readable one is reported as `?`.
pub fn entry_id<R: EntryColumns + ?Sized>(row: &R) -> Result<EntryId> {
    Reader {
        row,
        shown: Shown::Label("?"),
    }
    .required("id", row.id())
    .map(EntryId::from_uuid)
}

/// The `clock_now` column of a statement that reads the server's clock.
pub fn clock<R: EntryColumns + ?Sized>(row: &R) -> Result<DateTime<Utc>> {
    Reader {
        row,
        shown: Shown::Label("clock"),
    }
    .required("clock_now", row.time("clock_now"))
}

/// Reads a whole outbox row (`t.*`). Every failure is a [`OutboxError::CorruptRow`] that
/// names the row's id and the column.
pub fn entry<R: EntryColumns + ?Sized>(row: &R) -> Result<OutboxEntry> {
    let id = entry_id(row)?;
    let r = Reader {
        row,
        shown: Shown::Id(id),
    };
    let created_at = r.required("created_at", row.time("created_at"))?;
    let mut entry = OutboxEntry {
        id,
        topic: r.required("topic", row.text("topic"))?,
        partition_key: r.optional("partition_key", row.text("partition_key"))?,
        payload: r.required("payload", row.bytes("payload"))?,
        headers: r.required("headers", row.headers("headers"))?,
        created_at,
        not_before: r.optional("not_before", row.time("not_before"))?,
        claim_owner: r.optional("claim_owner", row.text("claim_owner"))?,
        claim_token: r.optional("claim_token", row.uuid("claim_token"))?,
        claimed_at: r.optional("claimed_at", row.time("claimed_at"))?,
        claim_expires_at: r.optional("claim_expires_at", row.time("claim_expires_at"))?,
        claim_attempt_count: r.count("claim_attempt_count")?,
        // The outcome columns, read next.
        status: EmissionStatus::Pending,
        updated_at: created_at,
        next_retry_at: None,
        attempt_count: 0,
        last_error: None,
        dead_letter_reason: None,
        delivered_at: None,
        provider_message_id: None,
        stamp: Uuid::nil(),
    };
    r.outcome(&mut entry)?;
    Ok(entry)
}

/// Reads a row a completion wrote, which carries only the columns the write sets. The
/// others come from `claimed`, the entry as the claim took it: they never change after
/// enqueue (topic, key, payload, headers, creation and not-before times, the claim count,
/// which only a claim moves) or every completion clears them (the lease fields).
pub fn written<R: EntryColumns + ?Sized>(row: &R, claimed: &OutboxEntry) -> Result<OutboxEntry> {
    let r = Reader {
        row,
        shown: Shown::Id(claimed.id),
    };
    let mut entry = claimed.clone();
    r.outcome(&mut entry)?;
    entry.claim_owner = None;
    entry.claim_token = None;
    entry.claimed_at = None;
    entry.claim_expires_at = None;
    Ok(entry)
}

/// How a row is named in errors: its id, or a label where the id is not known. The id
/// is written out only when an error names it, not for every row read.
#[derive(Clone, Copy)]
enum Shown<'a> {
    Id(EntryId),
    Label(&'a str),
}

/// One row's reads, naming the row as `shown` in errors.
struct Reader<'r, R: ?Sized> {
    row: &'r R,
    shown: Shown<'r>,
}

impl<R: EntryColumns + ?Sized> Reader<'_, R> {
    /// Reads the columns every write of an outcome sets into `entry`.
    fn outcome(&self, entry: &mut OutboxEntry) -> Result<()> {
        let row = self.row;
        let code = self.required("status", row.code("status"))?;
        entry.status = EmissionStatus::from_code(code)
            .ok_or_else(|| self.corrupt(format!("status: unknown code {code}")))?;
        entry.updated_at = self.required("updated_at", row.time("updated_at"))?;
        entry.next_retry_at = self.optional("next_retry_at", row.time("next_retry_at"))?;
        entry.attempt_count = self.count("attempt_count")?;
        entry.last_error = self.optional("last_error", row.text("last_error"))?;
        entry.dead_letter_reason =
            self.optional("dead_letter_reason", row.text("dead_letter_reason"))?;
        entry.delivered_at = self.optional("delivered_at", row.time("delivered_at"))?;
        entry.provider_message_id =
            self.optional("provider_message_id", row.text("provider_message_id"))?;
        entry.stamp = self.required("stamp", row.uuid("stamp"))?;
        Ok(())
    }

    fn optional<T>(&self, column: &str, read: ColumnRead<T>) -> Result<Option<T>> {
        read.map_err(|reason| self.corrupt(format!("{column}: {reason}")))
    }

    fn required<T>(&self, column: &str, read: ColumnRead<T>) -> Result<T> {
        self.optional(column, read)?
            .ok_or_else(|| self.corrupt(format!("{column} is NULL")))
    }

    fn count(&self, column: &'static str) -> Result<u32> {
        let n = self.required(column, self.row.count(column))?;
        u32::try_from(n).map_err(|_| self.corrupt(format!("{column}: {n} is out of range")))
    }

    fn corrupt(&self, reason: String) -> OutboxError {
        OutboxError::CorruptRow {
            id: match self.shown {
                Shown::Id(id) => id.to_string(),
                Shown::Label(label) => label.to_owned(),
            },
            reason,
        }
    }
}

#[cfg(test)]
mod tests;
