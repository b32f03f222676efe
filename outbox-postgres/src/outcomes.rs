//! Turning the rows of a guarded write (complete, renew) into one outcome per claim.
//!
//! The statements lock every target row, judge it on that locked (newest) version and
//! write it in the same statement, then return every locked row once with an `applied`
//! flag. So: no row means the entry does not exist; `applied` means this call wrote it;
//! otherwise the returned row is the durable state that refused the write.

use outbox_core::store_kit::{completion_results, renewal_results, GuardedRows};
use outbox_core::{
    Claim, CompletionRequest, EntryId, OutboxEntry, RenewOutcome, Result, TransitionResult,
};
use tokio_postgres::Row;

use crate::row;

/// Reads the returned rows by id, with their `applied` flag.
/// The PostgreSQL rows of a guarded write.
struct PgRows;

impl GuardedRows<Row> for PgRows {
    fn id(&self, r: &Row) -> Result<EntryId> {
        row::id(r)
    }

    fn applied(&self, r: &Row) -> Result<bool> {
        row::applied(r)
    }

    fn entry(&self, r: &Row) -> Result<OutboxEntry> {
        row::entry(r)
    }

    fn written(&self, r: &Row, claimed: &OutboxEntry) -> Result<OutboxEntry> {
        row::written(r, claimed)
    }
}

/// One result per completion, in request order, from the rows of `complete_batch.sql`.
pub(crate) fn transitions(
    reqs: &[CompletionRequest],
    rows: &[Row],
) -> Result<Vec<TransitionResult>> {
    completion_results(reqs, rows, &PgRows)
}

/// One outcome per claim, in claim order, from the rows of `renew.sql`.
pub(crate) fn renewals(claims: &[Claim], rows: &[Row]) -> Result<Vec<RenewOutcome>> {
    renewal_results(claims, rows, &PgRows)
}
