//! Turning what a guarded write found into the outcome the contract reports, and claimed
//! rows into claims in claim order: the same for every store.

use std::collections::HashMap;

use crate::{
    Claim, CompletionRequest, EmissionStatus, EntryId, OutboxEntry, OutboxError, RenewOutcome,
    Result, TransitionOutcome, TransitionResult,
};

/// What a guarded write (a completion, renewal or save judged and written on a locked
/// row) found for one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guarded {
    /// No such row.
    Missing,
    /// This call wrote it: the row as written.
    Applied(OutboxEntry),
    /// The row refused the write: its durable state.
    Refused(OutboxEntry),
}

impl Guarded {
    /// `Applied` or `Refused` as `applied` says, `Missing` without a row.
    pub fn of(row: Option<OutboxEntry>, applied: bool) -> Self {
        match (row, applied) {
            (None, _) => Self::Missing,
            (Some(e), true) => Self::Applied(e),
            (Some(e), false) => Self::Refused(e),
        }
    }
}

/// How a store reads the rows a guarded batch statement returns: every existing target
/// row once, with an `applied` flag; a written row may carry only the columns the write
/// set (the rest is in the claim). A store fills it with its row decoders, once, as a
/// constant: `GuardedRows { id: row::id, applied: row::applied, … }`.
pub struct GuardedRows<R> {
    /// The row's entry id.
    pub id: fn(&R) -> Result<EntryId>,
    /// Whether this statement wrote the row.
    pub applied: fn(&R) -> Result<bool>,
    /// The whole row (a refused one: the durable state).
    pub entry: fn(&R) -> Result<OutboxEntry>,
    /// A written row, completed from the claimed entry it was written for.
    pub written: fn(&R, &OutboxEntry) -> Result<OutboxEntry>,
}

/// One result per completion, in request order, from the rows of a guarded batch
/// completion: no row means the entry does not exist.
pub fn completion_results<R>(
    reqs: &[CompletionRequest],
    rows: &[R],
    read: &GuardedRows<R>,
) -> Result<Vec<TransitionResult>> {
    let mut by_id = rows
        .iter()
        .map(|r| Ok(((read.id)(r)?, r)))
        .collect::<Result<HashMap<EntryId, &R>>>()?;
    reqs.iter()
        .map(|req| {
            let found = match by_id.remove(&req.claim.id()) {
                None => Guarded::Missing,
                Some(r) if (read.applied)(r)? => {
                    Guarded::Applied((read.written)(r, &req.claim.entry)?)
                }
                Some(r) => Guarded::Refused((read.entry)(r)?),
            };
            Ok(completion_result(req, found))
        })
        .collect()
}

/// One outcome per claim, in claim order, from the rows of a guarded batch renewal
/// (whole rows, written or not).
pub fn renewal_results<R>(
    claims: &[Claim],
    rows: &[R],
    read: &GuardedRows<R>,
) -> Result<Vec<RenewOutcome>> {
    let mut by_id = rows
        .iter()
        .map(|r| Ok(((read.id)(r)?, r)))
        .collect::<Result<HashMap<EntryId, &R>>>()?;
    claims
        .iter()
        .map(|claim| {
            let found = match by_id.remove(&claim.id()) {
                None => Guarded::Missing,
                Some(r) => Guarded::of(Some((read.entry)(r)?), (read.applied)(r)?),
            };
            renewal_result(claim, found)
        })
        .collect()
}

/// A completion's result. A refused row is judged as the contract says: terminal,
/// another holder (stale), or this request's own earlier write (its stamp: applied).
pub fn completion_result(req: &CompletionRequest, found: Guarded) -> TransitionResult {
    match found {
        Guarded::Missing => {
            TransitionResult::new(TransitionOutcome::Missing, (*req.claim.entry).clone())
        }
        Guarded::Applied(written) => TransitionResult::new(TransitionOutcome::Applied, written),
        Guarded::Refused(durable) => {
            let outcome = TransitionOutcome::precheck_completion(Some(&durable), req)
                .unwrap_or(TransitionOutcome::ConcurrencyLost);
            TransitionResult::new(outcome, durable)
        }
    }
}

/// A renewal's result: the renewed claim, or why it is lost.
pub fn renewal_result(claim: &Claim, found: Guarded) -> Result<RenewOutcome> {
    match found {
        Guarded::Missing => Ok(RenewOutcome::Lost(TransitionResult::new(
            TransitionOutcome::Missing,
            (*claim.entry).clone(),
        ))),
        Guarded::Applied(entry) => {
            let id = entry.id;
            Claim::from_claimed_entry(entry)
                .map(RenewOutcome::Renewed)
                .ok_or_else(|| OutboxError::CorruptRow {
                    id: id.to_string(),
                    reason: "a renewed row has no claim fields".into(),
                })
        }
        Guarded::Refused(durable) => {
            let outcome = TransitionOutcome::precheck(Some(&durable), claim)
                .unwrap_or(TransitionOutcome::ConcurrencyLost);
            Ok(RenewOutcome::Lost(TransitionResult::new(outcome, durable)))
        }
    }
}

/// A stamp-checked save's result.
pub fn save_result(entry: &OutboxEntry, found: Guarded) -> TransitionResult {
    match found {
        Guarded::Missing => TransitionResult::new(TransitionOutcome::Missing, entry.clone()),
        Guarded::Applied(written) => TransitionResult::new(TransitionOutcome::Applied, written),
        Guarded::Refused(durable) if durable.status.is_terminal() => {
            TransitionResult::new(TransitionOutcome::Terminal, durable)
        }
        Guarded::Refused(durable) => {
            TransitionResult::new(TransitionOutcome::ConcurrencyLost, durable)
        }
    }
}

/// The order claims are returned in: retry-ready rows by (retry time, id), then pending
/// rows by (created, id). A claim changes neither key.
fn claim_order(e: &OutboxEntry) -> (bool, chrono::DateTime<chrono::Utc>, EntryId) {
    match e.status {
        EmissionStatus::Pending => (true, e.created_at, e.id),
        _ => (false, e.retry_order_time(), e.id),
    }
}

/// Claimed rows, in whatever order a statement returned them, as claims in claim order.
pub fn claims_in_order(mut entries: Vec<OutboxEntry>) -> Result<Vec<Claim>> {
    entries.sort_by_key(claim_order);
    entries
        .into_iter()
        .map(|entry| {
            let id = entry.id;
            Claim::from_claimed_entry(entry).ok_or_else(|| OutboxError::CorruptRow {
                id: id.to_string(),
                reason: "a claimed row has no claim fields".into(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, Utc};
    use uuid::Uuid;

    use super::*;
    use crate::{Completion, EmissionResult, NewEntry};

    fn claimed() -> Claim {
        let now = Utc::now();
        let mut e = OutboxEntry::from_new(NewEntry::new("t", b"x".to_vec()), now);
        e.claim_owner = Some("w".into());
        e.claim_token = Some(Uuid::new_v4());
        e.claimed_at = Some(now);
        e.claim_expires_at = Some(now + TimeDelta::seconds(30));
        Claim::from_claimed_entry(e).unwrap()
    }

    #[test]
    fn completions_are_judged_on_what_refused_them() {
        let claim = claimed();
        let req =
            CompletionRequest::new(claim.clone(), Completion::Delivered(EmissionResult::new()));
        assert_eq!(
            completion_result(&req, Guarded::Missing).outcome,
            TransitionOutcome::Missing
        );
        let mut taken = (*claim.entry).clone();
        taken.claim_token = Some(Uuid::new_v4());
        assert_eq!(
            completion_result(&req, Guarded::Refused(taken)).outcome,
            TransitionOutcome::StaleClaim
        );
        let mut ours = (*claim.entry).clone();
        ours.status = EmissionStatus::Delivered;
        ours.stamp = req.stamp;
        assert_eq!(
            completion_result(&req, Guarded::Refused(ours.clone())).outcome,
            TransitionOutcome::Applied
        );
        let mut done = ours;
        done.stamp = Uuid::new_v4();
        assert_eq!(
            completion_result(&req, Guarded::Refused(done)).outcome,
            TransitionOutcome::Terminal
        );
    }

    #[test]
    fn saves_and_renewals_report_the_durable_state() {
        let claim = claimed();
        let mut terminal = (*claim.entry).clone();
        terminal.status = EmissionStatus::DeadLettered;
        assert_eq!(
            save_result(&claim.entry, Guarded::Refused(terminal)).outcome,
            TransitionOutcome::Terminal
        );
        assert_eq!(
            save_result(&claim.entry, Guarded::Refused((*claim.entry).clone())).outcome,
            TransitionOutcome::ConcurrencyLost
        );
        assert!(
            renewal_result(&claim, Guarded::Applied((*claim.entry).clone()))
                .unwrap()
                .renewed()
                .is_some()
        );
        let mut unclaimed = (*claim.entry).clone();
        unclaimed.claim_owner = None;
        assert!(
            renewal_result(&claim, Guarded::Applied(unclaimed)).is_err(),
            "a renewed row must hold a claim"
        );
    }
}
