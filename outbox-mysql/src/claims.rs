//! The claim half of the store ([`ClaimStore`]): claim and renew; completions are in
//! `complete.rs`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use outbox_core::store_kit::claims::ClaimGroups;
use outbox_core::store_kit::outcomes::{claims_in_order, renewal_result, Guarded};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{
    Claim, ClaimRequest, ClaimStore, CompletionRequest, OutboxEntry, OutboxError, OutboxStore,
    RenewOutcome, RenewRequest, Result, TransitionResult,
};
use sqlx::mysql::MySqlRow;
use sqlx::MySqlConnection;
use uuid::Uuid;

use crate::batch_params::{self, LeaseRow, RenewalRow};
use crate::error::map_err;
use crate::row::{clock, decode, fetch_many, seq};
use crate::{walks, MySqlClaimStore};

#[async_trait]
impl ClaimStore for MySqlClaimStore {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(ClaimGroups::PENDING, req).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(ClaimGroups::RETRY_READY, req).await
    }

    /// Both groups in one transaction.
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
        let lease = req
            .lease
            .num_microseconds()
            .ok_or_else(|| OutboxError::invalid("lease", "too long"))?;
        let (claims, now) = (claims.to_vec(), req.now.map(normalize_time));
        self.detached(move |store| async move {
            store
                .retrying(|| store.renew_now(&claims, now, lease))
                .await
        })
        .await
    }
}

impl MySqlClaimStore {
    async fn claim(&self, groups: ClaimGroups, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.config.basics.limits.check_claim(req)?;
        self.capabilities().check_claim(req)?;
        let req = req.clone();
        self.detached(
            move |store| async move { store.retrying(|| store.claim_now(groups, &req)).await },
        )
        .await
    }

    /// One claim transaction: the locking reads (in key order: the choice, then its
    /// lock, ordered.rs), the lease write, the commit.
    async fn claim_now(&self, groups: ClaimGroups, req: &ClaimRequest) -> Result<Vec<Claim>> {
        let mut tx = self.pool.begin().await.map_err(map_err)?;
        let locked = if req.ordered {
            self.lock_in_key_order(&mut tx, groups, req).await?
        } else {
            self.lock_unordered(&mut tx, groups, req).await?
        };
        let Some(first) = locked.first() else {
            tx.commit().await.map_err(map_err)?;
            return Ok(Vec::new());
        };
        let claimed_at = clock(first)?;
        let expires = normalize_time(claimed_at + req.lease);
        let mut leases = Vec::with_capacity(locked.len());
        let mut entries = Vec::with_capacity(locked.len());
        for row in &locked {
            let entry = leased(decode(row)?, &req.owner, claimed_at, expires)?;
            leases.push(LeaseRow::new(seq(row)?, &entry)?);
            entries.push(entry);
        }
        let written = sqlx::query(&self.sql.lease_rows)
            .bind(batch_params::array(&leases)?)
            .bind(req.owner.as_str())
            .bind(claimed_at)
            .bind(expires)
            .execute(&mut *tx)
            .await
            .map_err(map_err)?
            .rows_affected();
        if written != leases.len() as u64 {
            // The rows are locked by this transaction: nothing else can have changed them.
            return Err(OutboxError::Database {
                message: format!(
                    "a claim leased {written} of the {} rows it locked; rolled back",
                    leases.len()
                ),
                source: None,
            });
        }
        tx.commit().await.map_err(map_err)?;
        claims_in_order(entries)
    }

    /// The locking reads of a claim not in key order: retry-ready rows, then pending
    /// ones, each walk stopping after what is left of the batch.
    async fn lock_unordered(
        &self,
        tx: &mut MySqlConnection,
        groups: ClaimGroups,
        req: &ClaimRequest,
    ) -> Result<Vec<MySqlRow>> {
        let sliced = req.slice.is_some();
        let mut now = req.now.map(normalize_time);
        let mut locked = Vec::new();
        if groups.retry {
            let form = self.sql.claim_retry.pick(false, sliced);
            locked = read_rows(tx, form, req, now, Walk::whole(req.batch_size)).await?;
        }
        let room = req.batch_size.saturating_sub(count(&locked));
        if groups.pending && room > 0 {
            // Both reads judge at one instant: the first one's, when it has rows.
            if let Some(first) = locked.first() {
                now = Some(clock(first)?);
            }
            let form = self.sql.claim_pending.pick(false, sliced);
            locked.extend(read_rows(tx, form, req, now, Walk::whole(room)).await?);
        }
        Ok(locked)
    }

    /// Extends each claim's lease that still holds, and judges the ones that do not, in
    /// one transaction.
    async fn renew_now(
        &self,
        claims: &[Claim],
        now: Option<DateTime<Utc>>,
        lease_micros: i64,
    ) -> Result<Vec<RenewOutcome>> {
        let stamps: Vec<Uuid> = claims.iter().map(|_| Uuid::new_v4()).collect();
        let rows: Vec<RenewalRow<'_>> = claims
            .iter()
            .zip(&stamps)
            .map(|(c, s)| RenewalRow::new(c, *s))
            .collect();
        let mut tx = self.pool.begin().await.map_err(map_err)?;
        sqlx::query(&self.sql.renew)
            .bind(batch_params::array(&rows)?)
            .bind(now)
            .bind(lease_micros)
            .execute(&mut *tx)
            .await
            .map_err(map_err)?;
        let mut durable =
            fetch_many(&mut tx, &self.sql.get_many, claims.iter().map(Claim::id)).await?;
        tx.commit().await.map_err(map_err)?;
        claims
            .iter()
            .zip(stamps)
            .map(|(claim, stamp)| {
                let row = durable.remove(&claim.id());
                let renewed = row.as_ref().is_some_and(|r| r.stamp == stamp);
                renewal_result(claim, Guarded::of(row, renewed))
            })
            .collect()
    }
}

/// How far one read of a claim goes: the rows it takes, the rows it may examine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Walk {
    pub(crate) limit: u32,
    pub(crate) examined: i64,
}

impl Walk {
    /// A walk that stops only after `limit` rows.
    pub(crate) fn whole(limit: u32) -> Self {
        Self {
            limit,
            examined: walks::UNBOUNDED,
        }
    }
}

/// Runs one read of a claim (`claim_retry.sql` or `claim_pending.sql`, locking or, in key
/// order, not).
pub(crate) async fn read_rows(
    conn: &mut MySqlConnection,
    sql: &str,
    req: &ClaimRequest,
    now: Option<DateTime<Utc>>,
    walk: Walk,
) -> Result<Vec<MySqlRow>> {
    let mut query = sqlx::query(sql).bind(now).bind(req.topic.clone());
    if let Some(slice) = req.slice {
        query = query
            .bind(i64::from(slice.count()))
            .bind(i64::from(slice.index()));
    }
    query
        .bind(i64::from(walk.limit))
        .bind(walk.examined)
        .fetch_all(conn)
        .await
        .map_err(map_err)
}

pub(crate) fn count(rows: &[MySqlRow]) -> u32 {
    u32::try_from(rows.len()).unwrap_or(u32::MAX)
}

/// `row` as the lease write leaves it: held by `owner` with a new token and stamp.
fn leased(
    mut row: OutboxEntry,
    owner: &str,
    claimed_at: DateTime<Utc>,
    expires: DateTime<Utc>,
) -> Result<OutboxEntry> {
    row.claim_attempt_count =
        row.claim_attempt_count
            .checked_add(1)
            .ok_or_else(|| OutboxError::CorruptRow {
                id: row.id.to_string(),
                reason: "claim_attempt_count is at its maximum".into(),
            })?;
    row.claim_owner = Some(owner.to_owned());
    row.claim_token = Some(Uuid::new_v4());
    row.claimed_at = Some(claimed_at);
    row.claim_expires_at = Some(expires);
    row.stamp = Uuid::new_v4();
    Ok(row)
}
