//! The claim-capable operations of [`SqliteClaimStore`].

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use outbox_core::store_kit::normalize_time;
use outbox_core::{
    Claim, ClaimRequest, ClaimStore, CompletionRequest, OutboxEntry, OutboxError, RenewOutcome,
    RenewRequest, Result, TransitionOutcome, TransitionResult,
};
use uuid::Uuid;

use crate::error::map_err;
use crate::row::{decode, micros};
use crate::SqliteClaimStore;

/// Which groups a claim takes: retry-ready rows come first when both are taken.
#[derive(Debug, Clone, Copy)]
struct Groups {
    retry: bool,
    pending: bool,
}

impl SqliteClaimStore {
    async fn claim(&self, groups: Groups, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.config.limits.check_claim(req)?;
        outbox_core::OutboxStore::capabilities(self).check_claim(req)?;
        let req = req.clone();
        self.detached(move |store| async move { store.claim_now(groups, &req).await })
            .await
    }

    async fn claim_now(&self, groups: Groups, req: &ClaimRequest) -> Result<Vec<Claim>> {
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
        let mut entries = rows.iter().map(decode).collect::<Result<Vec<_>>>()?;
        // RETURNING gives no order; hand the claims back in claim order.
        entries.sort_by_key(claim_order);
        entries
            .into_iter()
            .map(|e| {
                let id = e.id;
                Claim::from_claimed_entry(e).ok_or_else(|| OutboxError::CorruptRow {
                    id: id.to_string(),
                    reason: "claimed row came back without its claim fields".into(),
                })
            })
            .collect()
    }
}

/// Classifies a guarded write that matched no row. Inside the write transaction nothing
/// can change between the write and this read, so the precheck always has an answer; a
/// missing one would mean the row changed anyway, which is what `ConcurrencyLost` reports.
/// `judged` is the precheck's answer on `current`.
pub(crate) fn not_applied(
    judged: Option<TransitionOutcome>,
    current: Option<OutboxEntry>,
    claim: &Claim,
) -> TransitionResult {
    let outcome = judged.unwrap_or(TransitionOutcome::ConcurrencyLost);
    TransitionResult::new(outcome, current.unwrap_or_else(|| (*claim.entry).clone()))
}

/// Retry-ready rows first, by retry time (or last update); then pending rows by creation
/// time; ties by id.
fn claim_order(e: &OutboxEntry) -> (bool, DateTime<Utc>, outbox_core::EntryId) {
    if e.status.is_retry_wait() {
        (false, e.retry_order_time(), e.id)
    } else {
        (true, e.created_at, e.id)
    }
}

#[async_trait]
impl ClaimStore for SqliteClaimStore {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        let groups = Groups {
            retry: false,
            pending: true,
        };
        self.claim(groups, req).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        let groups = Groups {
            retry: true,
            pending: false,
        };
        self.claim(groups, req).await
    }

    async fn claim_next(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        let groups = Groups {
            retry: true,
            pending: true,
        };
        self.claim(groups, req).await
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        self.config.limits.check_completions(&reqs)?;
        self.detached(move |store| async move { store.complete_now(&reqs).await })
            .await
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.config.limits.check_renew(claims, req)?;
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
            let outcome = match renewed {
                Some(row) => match Claim::from_claimed_entry(decode(&row)?) {
                    Some(c) => RenewOutcome::Renewed(c),
                    None => RenewOutcome::Lost(TransitionResult::new(
                        TransitionOutcome::ConcurrencyLost,
                        decode(&row)?,
                    )),
                },
                None => {
                    let current = self.fetch_one_entry(conn, claim.id()).await?;
                    let judged = TransitionOutcome::precheck(current.as_ref(), claim);
                    RenewOutcome::Lost(not_applied(judged, current, claim))
                }
            };
            outcomes.push(outcome);
        }
        Ok(outcomes)
    }
}
