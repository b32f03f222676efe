//! The claim half of the store ([`ClaimStore`]): claim, complete, renew.

use outbox_core::store_kit::claims::ClaimGroups;
use outbox_core::store_kit::outcomes::{claims_in_order, completion_results, renewal_results};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{
    async_trait, Claim, ClaimRequest, ClaimStore, CompletionRequest, RenewOutcome, RenewRequest,
    Result, TransitionResult,
};

use crate::batch_params::{lease_micros, Completions, Holders};
use crate::connection::query;
use crate::starts::ShareParams;
use crate::typed::{typed, Param};
use crate::{row, PgClaimStore};

#[async_trait]
impl ClaimStore for PgClaimStore {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, ClaimGroups::PENDING).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, ClaimGroups::RETRY_READY).await
    }

    /// Both groups in one statement and one round trip.
    async fn claim_next(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, ClaimGroups::NEXT).await
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        self.inner.limits.check_completions(&reqs)?;
        let columns = Completions::new(&reqs)?;
        let rows = query(
            &self.inner.db,
            &self.inner.sql.complete_batch,
            &columns.params(),
        )
        .await?;
        completion_results(&reqs, &rows, &row::GUARDED)
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.inner.limits.check_renew(claims, req)?;
        let holders = Holders::new(claims);
        let now = req.now.map(normalize_time);
        let lease = lease_micros(req.lease)?;
        let rows = query(
            &self.inner.db,
            &self.inner.sql.renew,
            &[
                typed(&holders.ids),
                typed(&holders.owners),
                typed(&holders.tokens),
                typed(&now),
                typed(&lease),
            ],
        )
        .await?;
        renewal_results(claims, &rows, &row::GUARDED)
    }
}

impl PgClaimStore {
    /// Runs one claim statement and returns its claims in claim order.
    async fn claim(&self, req: &ClaimRequest, groups: ClaimGroups) -> Result<Vec<Claim>> {
        self.inner.limits.check_claim(req)?;
        outbox_core::OutboxStore::capabilities(self).check_claim(req)?;
        let now = req.now.map(normalize_time);
        let limit = i64::from(req.batch_size);
        let lease = lease_micros(req.lease)?;
        let slices = req.slice.map(|s| i64::from(s.count()));
        let slice = req.slice.map(|s| i64::from(s.index()));
        let sliced = req.slice.is_some();
        let run = i64::from(req.key_run);
        let entries = self
            .inner
            .starts
            .walk(req, groups.pending, |start, share| async move {
                let (from_created, from_id) = start.from.unzip();
                let share = ShareParams::new(share);
                let mut params: Vec<Param<'_>> = vec![
                    typed(&now),
                    typed(&req.topic),
                    typed(&limit),
                    typed(&req.owner),
                    typed(&lease),
                    typed(&groups.retry),
                    typed(&groups.pending),
                ];
                params.extend([typed(&from_created), typed(&from_id), typed(&start.behind)]);
                params.extend(share.params());
                // The ordered claim always passes the slice (NULL for every slice).
                let statement = if req.ordered {
                    params.extend([typed(&slices), typed(&slice), typed(&run)]);
                    &self.inner.sql.claim_ordered
                } else {
                    if sliced {
                        params.extend([typed(&slices), typed(&slice)]);
                    }
                    self.inner.sql.claim.pick(sliced)
                };
                let rows = query(&self.inner.db, statement, &params).await?;
                rows.iter().map(row::entry).collect::<Result<Vec<_>>>()
            })
            .await?;
        claims_in_order(entries)
    }
}
