//! Claims: one ordered candidate query, then per candidate a re-read and a stamp-checked
//! update (1 + 2N commands for N winners). Only rows this call won are returned.
//!
//! In key order the candidate query keeps only each key's head with no live lease on its
//! key, so a key offers one candidate at a time, and the stamp check lets one claimer of
//! it win. A slice is filtered by the stored slice hash in the query and judged again on
//! the re-read row by hashing its key, which also places rows stored without a hash.

use uuid::Uuid;

use crate::clock::normalize;
use crate::{Claim, ClaimRequest, OutboxEntry, Result};

use super::backend::{PortableBackend, SqlParam};
use super::PortableStore;

/// Which claimable set a claim draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ClaimKind {
    /// Pending rows, by created time then id.
    Pending,
    /// Deferred and retryable rows, by retry time (or last update) then id.
    RetryReady,
}

impl ClaimKind {
    fn eligible(
        self,
        row: &OutboxEntry,
        req: &ClaimRequest,
        now: chrono::DateTime<chrono::Utc>,
    ) -> bool {
        let claimable = match self {
            Self::Pending => row.is_pending_claimable(now),
            Self::RetryReady => row.is_retry_claimable(now),
        };
        claimable
            && req.topic.as_deref().is_none_or(|t| row.topic == t)
            && req
                .slice
                .is_none_or(|s| s.contains(row.partition_key.as_deref(), row.id))
    }
}

/// The slice filter's parameters (`slice_filter.sql`): the count and the index; none for
/// the forms without the filter.
pub(super) fn slice_params(slice: Option<crate::Slice>) -> Vec<SqlParam> {
    slice.map_or_else(Vec::new, |s| {
        vec![SqlParam::Count(s.count()), SqlParam::Count(s.index())]
    })
}

impl<B: PortableBackend> PortableStore<B> {
    /// Claims up to `req.batch_size` rows of `kind` for `req.owner`.
    pub(super) async fn claim(&self, req: &ClaimRequest, kind: ClaimKind) -> Result<Vec<Claim>> {
        self.limits.check_claim(req)?;
        Self::capabilities_of().check_claim(req)?;
        let mut conn = self.connection().await?;
        let won = self.claim_on(&mut conn, req, kind).await;
        conn.finish(won)
    }

    async fn claim_on(
        &self,
        conn: &mut <B::Db as sqlx::Database>::Connection,
        req: &ClaimRequest,
        kind: ClaimKind,
    ) -> Result<Vec<Claim>> {
        let candidates = match kind {
            ClaimKind::Pending => &self.sql.claim_pending_candidates,
            ClaimKind::RetryReady => &self.sql.claim_retry_candidates,
        };
        let candidates_sql = candidates.pick(req.ordered, req.slice.is_some());
        let mut params = vec![
            SqlParam::Time(req.now.map(normalize)),
            SqlParam::Text(req.topic.clone()),
            SqlParam::Text(req.topic.clone()),
        ];
        params.extend(slice_params(req.slice));
        params.push(req.batch_size.into());
        let candidates = B::fetch_ids(conn, candidates_sql, params).await?;
        // Every row carries the same instant: the request's, or the database's clock as the
        // candidate query saw it. The re-checks and the writes all use it.
        let Some(now) = candidates.first().map(|(at, _)| normalize(*at)) else {
            return Ok(Vec::new());
        };
        let expires = normalize(now + req.lease);
        let mut won = Vec::with_capacity(candidates.len());
        for (_, id) in candidates {
            let Some((_, row)) = self.read(conn, id, Some(now)).await? else {
                continue; // deleted since the candidate query
            };
            if !kind.eligible(&row, req, now) {
                continue; // taken or changed since the candidate query
            }
            let mut entry = row;
            let read_stamp = entry.stamp;
            entry.claim_owner = Some(req.owner.clone());
            entry.claim_token = Some(Uuid::new_v4());
            entry.claimed_at = Some(now);
            entry.claim_expires_at = Some(expires);
            entry.claim_attempt_count = entry.claim_attempt_count.saturating_add(1);
            entry.stamp = Uuid::new_v4();
            self.run_interleaved().await;
            let params = vec![
                SqlParam::Text(entry.claim_owner.clone()),
                SqlParam::Uuid(entry.claim_token),
                now.into(),
                expires.into(),
                entry.claim_attempt_count.into(),
                entry.stamp.into(),
                id.into(),
                read_stamp.into(),
            ];
            if B::execute(conn, &self.sql.claim_row, params).await? == 1 {
                won.extend(Claim::from_claimed_entry(entry));
            }
        }
        Ok(won)
    }
}
