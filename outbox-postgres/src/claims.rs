//! The claim half of the store ([`ClaimStore`]): claim, complete, renew.

use chrono::{DateTime, Utc};
use outbox_core::{
    async_trait, normalize_time, Claim, ClaimRequest, ClaimStore, CompletionRequest,
    EmissionStatus, EntryId, OutboxEntry, OutboxError, RenewOutcome, RenewRequest, Result,
    TransitionResult,
};

use crate::arrays::{lease_micros, Completions, Holders};
use crate::connection::query;
use crate::{outcomes, row, PgClaimStore};

/// Which groups a claim takes: retry-ready rows, pending rows, or both (retry-ready first).
#[derive(Debug, Clone, Copy)]
struct Groups {
    retry: bool,
    pending: bool,
}

/// The order a claim's rows are returned in: retry-ready rows by (retry time, id), then
/// pending rows by (created, id). A claim changes neither key, so the returned rows still
/// carry the keys they were selected by.
fn claim_order(e: &OutboxEntry) -> (bool, DateTime<Utc>, EntryId) {
    match e.status {
        EmissionStatus::Pending => (true, e.created_at, e.id),
        _ => (false, e.retry_order_time(), e.id),
    }
}

#[async_trait]
impl ClaimStore for PgClaimStore {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        let groups = Groups {
            retry: false,
            pending: true,
        };
        self.claim(req, groups).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        let groups = Groups {
            retry: true,
            pending: false,
        };
        self.claim(req, groups).await
    }

    /// Both groups in one statement and one round trip.
    async fn claim_next(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        let groups = Groups {
            retry: true,
            pending: true,
        };
        self.claim(req, groups).await
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
        outcomes::transitions(&reqs, &rows)
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.inner.limits.check_renew(claims, req)?;
        let holders = Holders::new(claims);
        let now = req.now.map(normalize_time);
        let lease = lease_micros(req.lease)?;
        let rows = query(
            &self.inner.db,
            &self.inner.sql.renew,
            &[&holders.ids, &holders.owners, &holders.tokens, &now, &lease],
        )
        .await?;
        outcomes::renewals(claims, &rows)
    }
}

impl PgClaimStore {
    /// Runs one claim statement and returns its claims in claim order.
    async fn claim(&self, req: &ClaimRequest, groups: Groups) -> Result<Vec<Claim>> {
        self.inner.limits.check_claim(req)?;
        let now = req.now.map(normalize_time);
        let limit = i64::from(req.batch_size);
        let lease = lease_micros(req.lease)?;
        let rows = query(
            &self.inner.db,
            &self.inner.sql.claim,
            &[
                &now,
                &req.topic,
                &limit,
                &req.owner,
                &lease,
                &groups.retry,
                &groups.pending,
            ],
        )
        .await?;
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
}
