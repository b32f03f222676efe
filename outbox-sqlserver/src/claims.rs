//! The claim half of the store ([`ClaimStore`]): claim, complete, renew.

use outbox_core::store_kit::claims::ClaimGroups;
use outbox_core::store_kit::outcomes::{claims_in_order, completion_results, renewal_results};
use outbox_core::{
    async_trait, Claim, ClaimRequest, ClaimStore, CompletionRequest, RenewOutcome, RenewRequest,
    Result, TransitionResult,
};

use crate::{params, row, SqlServerClaimStore};

#[async_trait]
impl ClaimStore for SqlServerClaimStore {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, ClaimGroups::PENDING).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, ClaimGroups::RETRY_READY).await
    }

    /// Both groups in one batch and one round trip.
    async fn claim_next(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, ClaimGroups::NEXT).await
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        self.inner.limits.check_completions(&reqs)?;
        let rows = self
            .query(&self.inner.sql.complete_batch, &params::complete(&reqs)?)
            .await?;
        completion_results(&reqs, &rows, &row::GUARDED)
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.inner.limits.check_renew(claims, req)?;
        let rows = self
            .query(&self.inner.sql.renew, &params::renew(claims, req)?)
            .await?;
        renewal_results(claims, &rows, &row::GUARDED)
    }
}

impl SqlServerClaimStore {
    /// Runs one claim batch and returns its claims in claim order.
    async fn claim(&self, req: &ClaimRequest, groups: ClaimGroups) -> Result<Vec<Claim>> {
        self.inner.limits.check_claim(req)?;
        outbox_core::OutboxStore::capabilities(self).check_claim(req)?;
        let entries = self
            .inner
            .starts
            .walk(req, groups.pending, |start, share| async move {
                let params = params::claim(req, groups, start, share.as_ref())?;
                let rows = self.query(&self.inner.sql.claim, &params).await?;
                rows.iter().map(row::entry).collect::<Result<Vec<_>>>()
            })
            .await?;
        claims_in_order(entries)
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;
    use outbox_core::{Completion, EmissionResult, EmissionStatus, TransitionOutcome};
    use uuid::Uuid;

    use super::*;
    use outbox_core::EntryId;
    use tiberius::Row;

    fn transitions(reqs: &[CompletionRequest], rows: &[Row]) -> Result<Vec<TransitionResult>> {
        completion_results(reqs, rows, &row::GUARDED)
    }

    fn renewals(claims: &[Claim], rows: &[Row]) -> Result<Vec<RenewOutcome>> {
        renewal_results(claims, rows, &row::GUARDED)
    }

    /// The claimed rows as claims, in claim order.
    fn claims(rows: &[Row]) -> Result<Vec<Claim>> {
        claims_in_order(rows.iter().map(row::entry).collect::<Result<Vec<_>>>()?)
    }
    use crate::fixtures::{recorded, recorded_row, sample};

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
