//! The claim-capable operations of [`SqliteClaimStore`].

use async_trait::async_trait;
use outbox_core::store_kit::claims::ClaimGroups;
use outbox_core::store_kit::outcomes::{claims_in_order, renewal_result, Guarded};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{
    Claim, ClaimRequest, ClaimStore, CompletionRequest, RenewOutcome, RenewRequest, Result,
    TransitionResult,
};
use uuid::Uuid;

use crate::error::map_err;
use crate::row::{decode, micros};
use crate::SqliteClaimStore;

impl SqliteClaimStore {
    async fn claim(&self, groups: ClaimGroups, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.config.basics.limits.check_claim(req)?;
        outbox_core::OutboxStore::capabilities(self).check_claim(req)?;
        let req = req.clone();
        self.detached(move |store| async move { store.claim_now(groups, &req).await })
            .await
    }

    async fn claim_now(&self, groups: ClaimGroups, req: &ClaimRequest) -> Result<Vec<Claim>> {
        let now = self.now(req.now);
        let expires = normalize_time(now + req.lease);
        let mut tx = self.write_tx().await?;
        let statement = if req.ordered {
            self.sql.claim_ordered.pick(req.slice.is_some())
        } else {
            self.sql.claim.pick(req.slice.is_some())
        };
        let mut query = sqlx::query(statement)
            .bind(req.owner.clone())
            .bind(micros(now))
            .bind(micros(expires))
            .bind(req.topic.clone())
            .bind(i64::from(req.batch_size))
            .bind(groups.retry)
            .bind(groups.pending)
            .bind(req.slice.map(|s| i64::from(s.count())))
            .bind(req.slice.map(|s| i64::from(s.index())));
        if req.ordered {
            query = query.bind(i64::from(req.key_run));
        }
        let rows = query.fetch_all(&mut *tx).await.map_err(map_err);
        let rows = tx.finish(rows).await?;
        // RETURNING gives no order; hand the claims back in claim order.
        claims_in_order(rows.iter().map(decode).collect::<Result<Vec<_>>>()?)
    }
}

#[async_trait]
impl ClaimStore for SqliteClaimStore {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(ClaimGroups::PENDING, req).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(ClaimGroups::RETRY_READY, req).await
    }

    async fn claim_next(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(ClaimGroups::NEXT, req).await
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        self.config.basics.limits.check_completions(&reqs)?;
        self.detached(move |store| async move { store.complete_now(&reqs).await })
            .await
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.config.basics.limits.check_renew(claims, req)?;
        let (claims, req) = (claims.to_vec(), req.clone());
        self.detached(move |store| async move { store.renew_now(&claims, &req).await })
            .await
    }
}

impl SqliteClaimStore {
    async fn renew_now(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        let mut tx = self.write_tx().await?;
        let outcomes = self.renew_in(&mut tx, claims, req).await;
        tx.finish(outcomes).await
    }

    /// Extends each claim's lease that still holds, and judges the ones that do not.
    async fn renew_in(
        &self,
        conn: &mut sqlx::SqliteConnection,
        claims: &[Claim],
        req: &RenewRequest,
    ) -> Result<Vec<RenewOutcome>> {
        let now = self.now(req.now);
        let expires = normalize_time(now + req.lease);
        let mut outcomes = Vec::with_capacity(claims.len());
        for claim in claims {
            let renewed = sqlx::query(&self.sql.renew)
                .bind(micros(expires))
                .bind(Uuid::new_v4().as_bytes().to_vec())
                .bind(claim.id().as_uuid().as_bytes().to_vec())
                .bind(claim.owner.clone())
                .bind(claim.token.as_bytes().to_vec())
                .fetch_optional(&mut *conn)
                .await
                .map_err(map_err)?;
            let found = match renewed {
                Some(row) => Guarded::Applied(decode(&row)?),
                None => Guarded::of(self.fetch_one_entry(conn, claim.id()).await?, false),
            };
            let outcome = renewal_result(claim, found)?;
            outcomes.push(outcome);
        }
        Ok(outcomes)
    }
}
