//! The claim half of the store ([`ClaimStore`]): claim, complete, renew.

use chrono::{DateTime, Utc};
use outbox_core::{
    async_trait, normalize_time, Claim, ClaimRequest, ClaimStore, CompletionRequest, EntryId,
    OutboxEntry, OutboxError, RenewOutcome, RenewRequest, Result, TransitionResult,
};

use crate::arrays::{lease_micros, Completions, Holders};
use crate::connection::query;
use crate::{outcomes, row, PgClaimStore};

/// The key a claim's rows are returned in: the order its statement selected them.
type ClaimOrder = fn(&OutboxEntry) -> (DateTime<Utc>, EntryId);

#[async_trait]
impl ClaimStore for PgClaimStore {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(&self.inner.sql.claim_pending, req, |e| (e.created_at, e.id))
            .await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        // A claim changes neither the retry time nor `updated_at`, so the returned rows
        // still carry the key they were selected by.
        self.claim(&self.inner.sql.claim_retry_ready, req, |e| {
            (e.retry_order_time(), e.id)
        })
        .await
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        self.inner.limits.check_completions(&reqs)?;
        let columns = Completions::new(&reqs)?;
        let rows = query(
            &self.inner.pool,
            &self.inner.sql.complete_batch,
            &columns.params(),
        )
        .await?;
        outcomes::transitions(reqs.iter().map(|r| &r.claim), &rows)
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.inner.limits.check_renew(claims, req)?;
        let holders = Holders::new(claims);
        let now = req.now.map(normalize_time);
        let lease = lease_micros(req.lease)?;
        let rows = query(
            &self.inner.pool,
            &self.inner.sql.renew,
            &[&holders.ids, &holders.owners, &holders.tokens, &now, &lease],
        )
        .await?;
        outcomes::renewals(claims, &rows)
    }
}

impl PgClaimStore {
    /// Runs one claim statement and returns its claims in claim order.
    async fn claim(&self, sql: &str, req: &ClaimRequest, order: ClaimOrder) -> Result<Vec<Claim>> {
        self.inner.limits.check_claim(req)?;
        let now = req.now.map(normalize_time);
        let limit = i64::from(req.batch_size);
        let lease = lease_micros(req.lease)?;
        let rows = query(
            &self.inner.pool,
            sql,
            &[&now, &req.topic, &limit, &req.owner, &lease],
        )
        .await?;
        let mut entries = rows.iter().map(row::entry).collect::<Result<Vec<_>>>()?;
        entries.sort_by_key(order);
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
}
