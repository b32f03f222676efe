//! Writes after a read: completions (read, check, guarded update), renewals and saves.
//! A guarded write that matches no row is followed by a re-read that says who won.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::clock::normalize;
use crate::{
    Claim, CompletionRequest, OutboxEntry, RenewOutcome, RenewRequest, Result, TargetState,
    TransitionOutcome, TransitionResult,
};

use super::backend::{PortableBackend, SqlParam};
use super::PortableStore;

/// How often a write is retried when only the stamp moved under a claim that is still
/// held (a renewal of that same claim between the check and the write).
const MAX_WRITE_ATTEMPTS: usize = 3;

/// The bound values of the outcome fields (`?` 1 to 8 of `complete_row.sql` and
/// `save_row.sql`) for `target` written at `now`.
fn target_params(target: &TargetState, now: DateTime<Utc>) -> Vec<SqlParam> {
    let delivered_at = if target.stamp_delivered_now {
        Some(now)
    } else {
        target.delivered_at
    };
    vec![
        SqlParam::Status(target.status),
        target.next_retry_at.into(),
        target.attempt_count.into(),
        SqlParam::Text(target.last_error.clone()),
        SqlParam::Text(target.dead_letter_reason.clone()),
        delivered_at.into(),
        SqlParam::Text(target.provider_message_id.clone()),
        now.into(),
    ]
}

/// `target` with its times at the precision every store keeps.
fn normalized(mut target: TargetState) -> TargetState {
    target.next_retry_at = target.next_retry_at.map(normalize);
    target.delivered_at = target.delivered_at.map(normalize);
    target
}

impl<B: PortableBackend> PortableStore<B> {
    /// Completes every request in order on one connection.
    pub(super) async fn complete_all(
        &self,
        reqs: &[CompletionRequest],
    ) -> Result<Vec<TransitionResult>> {
        self.limits.check_completions(reqs)?;
        let mut conn = self.connection().await?;
        let mut results = Vec::with_capacity(reqs.len());
        for req in reqs {
            match self.complete_one(&mut conn, req).await {
                Ok(result) => results.push(result),
                Err(e) => return conn.finish(Err(e)),
            }
        }
        conn.finish(Ok(results))
    }

    async fn complete_one(
        &self,
        conn: &mut <B::Db as sqlx::Database>::Connection,
        req: &CompletionRequest,
    ) -> Result<TransitionResult> {
        let claim = &req.claim;
        let Some((now, mut row)) = self.read(conn, claim.id(), req.now).await? else {
            return Ok(TransitionResult::new(
                TransitionOutcome::Missing,
                (*claim.entry).clone(),
            ));
        };
        if let Some(outcome) = TransitionOutcome::precheck_completion(Some(&row), req) {
            return Ok(TransitionResult::new(outcome, row));
        }
        let target = normalized(req.completion.target(&claim.entry));
        self.run_interleaved().await;
        for _ in 0..MAX_WRITE_ATTEMPTS {
            let stamp = req.stamp;
            let mut params = target_params(&target, now);
            params.extend([
                stamp.into(),
                claim.id().into(),
                claim.owner.as_str().into(),
                claim.token.into(),
                row.stamp.into(),
            ]);
            if B::execute(conn, &self.sql.complete_row, params).await? == 1 {
                target.apply_to(&mut row, now, stamp);
                return Ok(TransitionResult::new(TransitionOutcome::Applied, row));
            }
            match self.read(conn, claim.id(), Some(now)).await? {
                None => {
                    return Ok(TransitionResult::new(
                        TransitionOutcome::Missing,
                        (*claim.entry).clone(),
                    ))
                }
                // Still this claim's, only the stamp moved: write again over the new stamp.
                Some((_, durable))
                    if TransitionOutcome::precheck(Some(&durable), claim).is_none() =>
                {
                    row = durable;
                }
                Some((_, durable)) => {
                    return Ok(TransitionResult::new(
                        TransitionOutcome::ConcurrencyLost,
                        durable,
                    ))
                }
            }
        }
        Ok(TransitionResult::new(
            TransitionOutcome::ConcurrencyLost,
            row,
        ))
    }

    /// Extends every lease still held; the others come back lost, in input order.
    pub(super) async fn renew_all(
        &self,
        claims: &[Claim],
        req: &RenewRequest,
    ) -> Result<Vec<RenewOutcome>> {
        self.limits.check_renew(claims, req)?;
        let mut conn = self.connection().await?;
        let outcomes = self.renew_on(&mut conn, claims, req).await;
        conn.finish(outcomes)
    }

    async fn renew_on(
        &self,
        conn: &mut <B::Db as sqlx::Database>::Connection,
        claims: &[Claim],
        req: &RenewRequest,
    ) -> Result<Vec<RenewOutcome>> {
        let now = self.clock(conn, req.now).await?;
        let expires = normalize(now + req.lease);
        let mut outcomes = Vec::with_capacity(claims.len());
        'claims: for claim in claims {
            for _ in 0..MAX_WRITE_ATTEMPTS {
                let stamp = Uuid::new_v4();
                let params = vec![
                    expires.into(),
                    stamp.into(),
                    claim.id().into(),
                    claim.owner.as_str().into(),
                    claim.token.into(),
                ];
                if B::execute(conn, &self.sql.renew_row, params).await? == 1 {
                    // Owner and token matched, so nothing but renewals wrote the row since
                    // the claim: the snapshot with the new expiry and stamp is the row.
                    let mut entry = (*claim.entry).clone();
                    entry.claim_owner = Some(claim.owner.clone());
                    entry.claim_token = Some(claim.token);
                    entry.claimed_at = Some(claim.claimed_at);
                    entry.claim_expires_at = Some(expires);
                    entry.stamp = stamp;
                    if let Some(renewed) = Claim::from_claimed_entry(entry) {
                        outcomes.push(RenewOutcome::Renewed(renewed));
                        continue 'claims;
                    }
                }
                let current = self.read(conn, claim.id(), Some(now)).await?;
                let current = current.map(|(_, entry)| entry);
                if let Some(outcome) = TransitionOutcome::precheck(current.as_ref(), claim) {
                    let entry = current.unwrap_or_else(|| (*claim.entry).clone());
                    outcomes.push(RenewOutcome::Lost(TransitionResult::new(outcome, entry)));
                    continue 'claims;
                }
            }
            let entry = self.read(conn, claim.id(), Some(now)).await?;
            let entry = entry.map_or_else(|| (*claim.entry).clone(), |(_, e)| e);
            outcomes.push(RenewOutcome::Lost(TransitionResult::new(
                TransitionOutcome::StaleClaim,
                entry,
            )));
        }
        Ok(outcomes)
    }

    /// Writes the outcome fields of `entry` over the row if its stamp is still current.
    pub(super) async fn save_entry(
        &self,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        let mut conn = self.connection().await?;
        let saved = self.save_on(&mut conn, entry, now).await;
        conn.finish(saved)
    }

    async fn save_on(
        &self,
        conn: &mut <B::Db as sqlx::Database>::Connection,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        let Some((now, current)) = self.read(conn, entry.id, now).await? else {
            return Ok(TransitionResult::new(
                TransitionOutcome::Missing,
                entry.clone(),
            ));
        };
        if current.status.is_terminal() {
            return Ok(TransitionResult::new(TransitionOutcome::Terminal, current));
        }
        if current.stamp != entry.stamp {
            return Ok(TransitionResult::new(
                TransitionOutcome::ConcurrencyLost,
                current,
            ));
        }
        let target = normalized(TargetState::from_entry(entry));
        let stamp = Uuid::new_v4();
        let mut params = target_params(&target, now);
        params.extend([stamp.into(), entry.id.into(), entry.stamp.into()]);
        if B::execute(conn, &self.sql.save_row, params).await? == 1 {
            let mut updated = current;
            target.apply_to(&mut updated, now, stamp);
            return Ok(TransitionResult::new(TransitionOutcome::Applied, updated));
        }
        Ok(match self.read(conn, entry.id, Some(now)).await? {
            None => TransitionResult::new(TransitionOutcome::Missing, entry.clone()),
            Some((_, durable)) => {
                TransitionResult::new(TransitionOutcome::ConcurrencyLost, durable)
            }
        })
    }
}
