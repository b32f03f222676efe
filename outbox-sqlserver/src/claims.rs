//! The claim half of the store ([`ClaimStore`]): claim, complete, renew.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use outbox_core::{
    async_trait, Claim, ClaimRequest, ClaimStore, CompletionRequest, EmissionStatus, EntryId,
    OutboxEntry, OutboxError, RenewOutcome, RenewRequest, Result, TransitionOutcome,
    TransitionResult,
};
use tiberius::Row;

use crate::{params, row, SqlServerClaimStore};

/// The order a claim's rows are returned in: retry-ready rows by (retry time, id), then
/// pending rows by (created, id). A claim changes neither key.
fn claim_order(e: &OutboxEntry) -> (bool, DateTime<Utc>, EntryId) {
    match e.status {
        EmissionStatus::Pending => (true, e.created_at, e.id),
        _ => (false, e.retry_order_time(), e.id),
    }
}

#[async_trait]
impl ClaimStore for SqlServerClaimStore {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, false, true).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, true, false).await
    }

    /// Both groups in one batch and one round trip.
    async fn claim_next(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, true, true).await
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        self.inner.limits.check_completions(&reqs)?;
        let rows = self
            .query(&self.inner.sql.complete_batch, &params::complete(&reqs)?)
            .await?;
        transitions(&reqs, &rows)
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.inner.limits.check_renew(claims, req)?;
        let rows = self
            .query(&self.inner.sql.renew, &params::renew(claims, req)?)
            .await?;
        renewals(claims, &rows)
    }
}

impl SqlServerClaimStore {
    /// Runs one claim batch and returns its claims in claim order.
    async fn claim(&self, req: &ClaimRequest, retry: bool, pending: bool) -> Result<Vec<Claim>> {
        self.inner.limits.check_claim(req)?;
        let rows = self
            .query(&self.inner.sql.claim, &params::claim(req, retry, pending)?)
            .await?;
        claims(&rows)
    }
}

/// The claimed rows as claims, in claim order.
pub(crate) fn claims(rows: &[Row]) -> Result<Vec<Claim>> {
    let mut entries = rows.iter().map(row::entry).collect::<Result<Vec<_>>>()?;
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

/// One outcome per completion from the rows of `complete_batch.sql`: no row means the
/// entry does not exist; `applied` means this call wrote it; otherwise the row is the
/// durable state that refused the write.
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

/// One outcome per claim from the rows of `renew.sql`.
pub(crate) fn renewals(claims: &[Claim], rows: &[Row]) -> Result<Vec<RenewOutcome>> {
    let mut rows = rows
        .iter()
        .map(|r| Ok((row::id(r)?, (row::entry(r)?, row::applied(r)?))))
        .collect::<Result<HashMap<EntryId, (OutboxEntry, bool)>>>()?;
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
            Some((entry, false)) => {
                let outcome = TransitionOutcome::precheck(Some(&entry), claim)
                    .unwrap_or(TransitionOutcome::ConcurrencyLost);
                Ok(RenewOutcome::Lost(TransitionResult::new(outcome, entry)))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;
    use outbox_core::{Completion, EmissionResult};
    use uuid::Uuid;

    use super::*;
    use crate::row::tests::{recorded, recorded_row, sample};

    #[test]
    fn claims_come_back_in_claim_order_whatever_order_the_server_used() {
        let mut pending_old = sample();
        let mut pending_new = sample();
        pending_new.created_at += TimeDelta::seconds(1);
        let mut retry = sample();
        retry.status = EmissionStatus::RetryableFailure;
        retry.next_retry_at = Some(pending_new.created_at + TimeDelta::seconds(5));
        pending_old.id = EntryId::new();
        let rows = [
            recorded(&pending_new, None),
            recorded(&retry, None),
            recorded(&pending_old, None),
        ];
        let got: Vec<EntryId> = claims(&rows).unwrap().iter().map(Claim::id).collect();
        assert_eq!(got, vec![retry.id, pending_old.id, pending_new.id]);
    }

    #[test]
    fn outcomes_are_read_from_the_rows_of_a_guarded_write() {
        let claimed = sample();
        let claim = Claim::from_claimed_entry(claimed.clone()).unwrap();
        let req =
            CompletionRequest::new(claim.clone(), Completion::Delivered(EmissionResult::new()));

        // No row: the entry is gone.
        let got = transitions(std::slice::from_ref(&req), &[]).unwrap();
        assert_eq!(got[0].outcome, TransitionOutcome::Missing);

        // Written by this call.
        let mut written = claimed.clone();
        written.status = EmissionStatus::Delivered;
        written.claim_owner = None;
        written.claim_token = None;
        written.stamp = req.stamp;
        let got = transitions(
            std::slice::from_ref(&req),
            &[recorded(&written, Some(true))],
        )
        .unwrap();
        assert_eq!(got[0].outcome, TransitionOutcome::Applied);
        assert_eq!(
            got[0].entry.payload, claimed.payload,
            "the payload comes from the claim"
        );

        // Refused: reclaimed by another worker, already terminal, or our own earlier write.
        let mut reclaimed = claimed.clone();
        reclaimed.claim_token = Some(Uuid::new_v4());
        let mut terminal = claimed.clone();
        terminal.status = EmissionStatus::Delivered;
        let mut ours = written.clone();
        ours.stamp = req.stamp;
        for (durable, expected) in [
            (reclaimed, TransitionOutcome::StaleClaim),
            (terminal, TransitionOutcome::Terminal),
            (ours, TransitionOutcome::Applied),
        ] {
            let got = transitions(
                std::slice::from_ref(&req),
                &[recorded(&durable, Some(false))],
            )
            .unwrap();
            assert_eq!(got[0].outcome, expected, "{durable:?}");
        }
    }

    #[test]
    fn renewals_tell_held_from_lost() {
        let claimed = sample();
        let claim = Claim::from_claimed_entry(claimed.clone()).unwrap();
        let got = renewals(
            std::slice::from_ref(&claim),
            &[recorded_row(&claimed, Some(true), true)],
        )
        .unwrap();
        assert!(got[0].renewed().is_some());
        let mut taken = claimed.clone();
        taken.claim_owner = Some("worker-2".into());
        let got = renewals(
            std::slice::from_ref(&claim),
            &[recorded(&taken, Some(false))],
        )
        .unwrap();
        assert!(
            matches!(&got[0], RenewOutcome::Lost(r) if r.outcome == TransitionOutcome::StaleClaim)
        );
        let got = renewals(std::slice::from_ref(&claim), &[]).unwrap();
        assert!(
            matches!(&got[0], RenewOutcome::Lost(r) if r.outcome == TransitionOutcome::Missing)
        );
    }
}
