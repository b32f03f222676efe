//! The claim-capable operations of [`SqliteClaimStore`].

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use outbox_core::{
    normalize_time, Claim, ClaimRequest, ClaimStore, CompletionRequest, OutboxEntry, OutboxError,
    RenewOutcome, RenewRequest, Result, TransitionOutcome, TransitionResult,
};
use sqlx::SqliteConnection;
use uuid::Uuid;

use crate::error::map_err;
use crate::row::{decode, micros};
use crate::store::bind_outcome;
use crate::SqliteClaimStore;

impl SqliteClaimStore {
    async fn claim(&self, retry_ready: bool, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.config.limits.check_claim(req)?;
        let req = req.clone();
        self.detached(move |store| async move { store.claim_now(retry_ready, &req).await })
            .await
    }

    async fn claim_now(&self, retry_ready: bool, req: &ClaimRequest) -> Result<Vec<Claim>> {
        let sql = if retry_ready {
            &self.sql.claim_retry_ready
        } else {
            &self.sql.claim_pending
        };
        let now = self.now(req.now);
        let expires = normalize_time(now + req.lease);
        let mut tx = self.write_tx().await?;
        let rows = sqlx::query(sql)
            .bind(req.owner.clone())
            .bind(micros(now))
            .bind(micros(expires))
            .bind(req.topic.clone())
            .bind(i64::from(req.batch_size))
            .fetch_all(&mut *tx)
            .await
            .map_err(map_err)?;
        tx.commit().await.map_err(map_err)?;
        let mut entries = rows.iter().map(decode).collect::<Result<Vec<_>>>()?;
        // RETURNING gives no order; hand the claims back in claim order.
        entries.sort_by_key(|e| (claim_order_time(e), e.id));
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

    async fn complete_in(
        &self,
        conn: &mut SqliteConnection,
        req: &CompletionRequest,
        now: DateTime<Utc>,
    ) -> Result<TransitionResult> {
        let mut target = req.claim.entry.clone();
        req.completion
            .target(&req.claim.entry)
            .apply_to(&mut target, now, req.stamp);
        let written = bind_outcome(sqlx::query(&self.sql.complete_claimed), &target)
            .bind(req.claim.id().as_uuid().as_bytes().to_vec())
            .bind(req.claim.owner.clone())
            .bind(req.claim.token.as_bytes().to_vec())
            .fetch_optional(&mut *conn)
            .await
            .map_err(map_err)?;
        if let Some(row) = written {
            return Ok(TransitionResult::new(
                TransitionOutcome::Applied,
                decode(&row)?,
            ));
        }
        let current = self.fetch_one_entry(conn, req.claim.id()).await?;
        let outcome = TransitionOutcome::precheck_completion(current.as_ref(), req);
        Ok(not_applied(outcome, current, &req.claim))
    }
}

/// Classifies a guarded write that matched no row. Inside the write transaction nothing
/// can change between the write and this read, so the precheck always has an answer; a
/// missing one would mean the row changed anyway, which is what `ConcurrencyLost` reports.
/// `judged` is the precheck's answer on `current`.
fn not_applied(
    judged: Option<TransitionOutcome>,
    current: Option<OutboxEntry>,
    claim: &Claim,
) -> TransitionResult {
    let outcome = judged.unwrap_or(TransitionOutcome::ConcurrencyLost);
    TransitionResult::new(outcome, current.unwrap_or_else(|| claim.entry.clone()))
}

/// Pending rows sort by creation time; retry rows by retry time (or last update).
fn claim_order_time(e: &OutboxEntry) -> DateTime<Utc> {
    if e.status.is_retry_wait() {
        e.retry_order_time()
    } else {
        e.created_at
    }
}

#[async_trait]
impl ClaimStore for SqliteClaimStore {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(false, req).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(true, req).await
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        self.config.limits.check_completions(&reqs)?;
        self.detached(move |store| async move {
            let mut tx = store.write_tx().await?;
            let mut results = Vec::with_capacity(reqs.len());
            for req in &reqs {
                let now = store.now(req.now);
                results.push(store.complete_in(&mut tx, req, now).await?);
            }
            tx.commit().await.map_err(map_err)?;
            Ok(results)
        })
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
        let now = self.now(req.now);
        let expires = normalize_time(now + req.lease);
        let mut tx = self.write_tx().await?;
        let mut outcomes = Vec::with_capacity(claims.len());
        for claim in claims {
            let renewed = sqlx::query(&self.sql.renew)
                .bind(micros(expires))
                .bind(Uuid::new_v4().as_bytes().to_vec())
                .bind(claim.id().as_uuid().as_bytes().to_vec())
                .bind(claim.owner.clone())
                .bind(claim.token.as_bytes().to_vec())
                .fetch_optional(&mut *tx)
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
                    let current = self.fetch_one_entry(&mut tx, claim.id()).await?;
                    let judged = TransitionOutcome::precheck(current.as_ref(), claim);
                    RenewOutcome::Lost(not_applied(judged, current, claim))
                }
            };
            outcomes.push(outcome);
        }
        tx.commit().await.map_err(map_err)?;
        Ok(outcomes)
    }
}
