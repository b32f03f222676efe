//! Turning the rows of a guarded write (complete, renew) into one outcome per claim.
//!
//! The statements lock every target row, judge it on that locked (newest) version and
//! write it in the same statement, then return every locked row once with an `applied`
//! flag. So: no row means the entry does not exist; `applied` means this call wrote it;
//! otherwise the returned row is the durable state that refused the write.

use std::collections::HashMap;

use outbox_core::{
    Claim, CompletionRequest, EntryId, OutboxEntry, OutboxError, RenewOutcome, Result,
    TransitionOutcome, TransitionResult,
};
use tokio_postgres::Row;

use crate::row;

/// Reads the returned rows by id, with their `applied` flag.
fn by_id(rows: &[Row]) -> Result<HashMap<EntryId, (OutboxEntry, bool)>> {
    rows.iter()
        .map(|r| {
            let entry = row::entry(r)?;
            Ok((entry.id, (entry, row::applied(r)?)))
        })
        .collect()
}

/// Why the durable row refused a claim's write. The statement locked the row and judged
/// it in the same step, so the row it returns is the one it judged; only a row that
/// still held the claim yet was not written would be a lost race, which the locking rules
/// out (it is reported as `ConcurrencyLost` rather than hidden, should it ever happen).
fn refusal(durable: &OutboxEntry, claim: &Claim) -> TransitionOutcome {
    TransitionOutcome::precheck(Some(durable), claim).unwrap_or(TransitionOutcome::ConcurrencyLost)
}

/// One transition result per request, in the requests' order. Written rows carry only
/// what the write set (see [`row::written`]); refused rows come back whole. A refused row
/// that carries the request's own stamp is an earlier attempt of this request, applied.
pub(crate) fn transitions(
    reqs: &[CompletionRequest],
    rows: &[Row],
) -> Result<Vec<TransitionResult>> {
    let mut rows = rows
        .iter()
        .map(|r| Ok((row::id(r)?, r)))
        .collect::<Result<HashMap<EntryId, &Row>>>()?;
    reqs.iter()
        .map(|req| match rows.remove(&req.claim.id()) {
            None => Ok(TransitionResult::new(
                TransitionOutcome::Missing,
                req.claim.entry.clone(),
            )),
            Some(r) if row::applied(r)? => Ok(TransitionResult::new(
                TransitionOutcome::Applied,
                row::written(r, &req.claim.entry)?,
            )),
            Some(r) => {
                let durable = row::entry(r)?;
                let outcome = TransitionOutcome::precheck_completion(Some(&durable), req)
                    .unwrap_or(TransitionOutcome::ConcurrencyLost);
                Ok(TransitionResult::new(outcome, durable))
            }
        })
        .collect()
}

/// One renewal outcome per claim, in the claims' order.
pub(crate) fn renewals(claims: &[Claim], rows: &[Row]) -> Result<Vec<RenewOutcome>> {
    let mut rows = by_id(rows)?;
    claims
        .iter()
        .map(|claim| match rows.remove(&claim.id()) {
            None => Ok(RenewOutcome::Lost(TransitionResult::new(
                TransitionOutcome::Missing,
                claim.entry.clone(),
            ))),
            Some((entry, true)) => {
                let id = entry.id;
                Claim::from_claimed_entry(entry)
                    .map(RenewOutcome::Renewed)
                    .ok_or_else(|| OutboxError::CorruptRow {
                        id: id.to_string(),
                        reason: "a renewed row has no claim fields".into(),
                    })
            }
            Some((entry, false)) => Ok(RenewOutcome::Lost(TransitionResult::new(
                refusal(&entry, claim),
                entry,
            ))),
        })
        .collect()
}
