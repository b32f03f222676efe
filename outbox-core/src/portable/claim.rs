//! Claims, completions and renewals: the per-row algorithm of
//! [`crate::store_kit::per_row`] on one pooled connection, through [`Rows`], its
//! commands in this store's SQL.
//!
//! In key order the candidate query keeps only each key's head with no live lease on its
//! key, so a key offers one candidate at a time, and the stamp check lets one claimer of
//! it win. A slice is filtered by the stored slice hash in the query and judged again on
//! the re-read row by hashing its key, which also places rows stored without a hash.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::clock::normalize;
use crate::store_kit::per_row::{self, ClaimKind, CompletionWrite, PortableRows};
use crate::{
    Claim, ClaimRequest, CompletionRequest, EntryId, OutboxEntry, RenewOutcome, RenewRequest,
    Result, TransitionResult,
};

use super::backend::{PortableBackend, SqlParam};
use super::save::target_params;
use super::PortableStore;

/// The slice filter's parameters (`slice_filter.sql`): the count and the index; none for
/// the forms without the filter.
pub(super) fn slice_params(slice: Option<crate::Slice>) -> Vec<SqlParam> {
    slice.map_or_else(Vec::new, |s| {
        vec![SqlParam::Count(s.count()), SqlParam::Count(s.index())]
    })
}

/// The portable commands of `store` on one of its connections.
struct Rows<'a, B: PortableBackend> {
    store: &'a PortableStore<B>,
    conn: &'a mut B::Connection,
}

#[async_trait]
impl<B: PortableBackend> PortableRows for Rows<'_, B> {
    async fn candidates(
        &mut self,
        req: &ClaimRequest,
        kind: ClaimKind,
    ) -> Result<Vec<(DateTime<Utc>, EntryId)>> {
        let candidates = match kind {
            ClaimKind::Pending => &self.store.sql.claim_pending_candidates,
            ClaimKind::RetryReady => &self.store.sql.claim_retry_candidates,
        };
        let mut params = vec![
            SqlParam::Time(req.now.map(normalize)),
            SqlParam::Text(req.topic.clone()),
            SqlParam::Text(req.topic.clone()),
        ];
        params.extend(slice_params(req.slice));
        params.push(req.batch_size.into());
        let sql = candidates.pick(req.ordered, req.slice.is_some());
        B::fetch_ids(self.conn, sql, params).await
    }

    async fn read(
        &mut self,
        id: EntryId,
        now: Option<DateTime<Utc>>,
    ) -> Result<Option<(DateTime<Utc>, OutboxEntry)>> {
        self.store.read(self.conn, id, now).await
    }

    async fn clock(&mut self) -> Result<DateTime<Utc>> {
        self.store.clock(self.conn, None).await
    }

    async fn claim_row(&mut self, claimed: &OutboxEntry, read_stamp: Uuid) -> Result<bool> {
        let params = vec![
            SqlParam::Text(claimed.claim_owner.clone()),
            SqlParam::Uuid(claimed.claim_token),
            claimed.claimed_at.into(),
            claimed.claim_expires_at.into(),
            claimed.claim_attempt_count.into(),
            claimed.stamp.into(),
            claimed.id.into(),
            read_stamp.into(),
        ];
        Ok(B::execute(self.conn, &self.store.sql.claim_row, params).await? == 1)
    }

    async fn store_slice_hash(&mut self, id: EntryId, hash: u32) -> Result<()> {
        let params = vec![SqlParam::Count(hash), id.into()];
        B::execute(self.conn, &self.store.sql.store_slice_hash, params)
            .await
            .map(drop)
    }

    async fn complete_row(&mut self, write: CompletionWrite<'_>) -> Result<bool> {
        let mut params = target_params(write.target, write.now);
        params.extend([
            write.stamp.into(),
            write.claim.id().into(),
            write.claim.owner.as_str().into(),
            write.claim.token.into(),
            write.read_stamp.into(),
        ]);
        Ok(B::execute(self.conn, &self.store.sql.complete_row, params).await? == 1)
    }

    async fn renew_row(
        &mut self,
        claim: &Claim,
        expires: DateTime<Utc>,
        stamp: Uuid,
    ) -> Result<bool> {
        let params = vec![
            expires.into(),
            stamp.into(),
            claim.id().into(),
            claim.owner.as_str().into(),
            claim.token.into(),
        ];
        Ok(B::execute(self.conn, &self.store.sql.renew_row, params).await? == 1)
    }
}

impl<B: PortableBackend> PortableStore<B> {
    /// Claims up to `req.batch_size` rows of `kind` for `req.owner`.
    pub(super) async fn claim(&self, req: &ClaimRequest, kind: ClaimKind) -> Result<Vec<Claim>> {
        self.limits.check_claim(req)?;
        Self::capabilities_of().check_claim(req)?;
        let mut conn = self.connection().await?;
        let mut rows = Rows {
            store: self,
            conn: &mut conn,
        };
        let won = per_row::claim(&mut rows, req, kind, &self.interleave).await;
        conn.finish(won)
    }

    /// Completes every request in order on one connection.
    pub(super) async fn complete_all(
        &self,
        reqs: &[CompletionRequest],
    ) -> Result<Vec<TransitionResult>> {
        self.limits.check_completions(reqs)?;
        let mut conn = self.connection().await?;
        let mut rows = Rows {
            store: self,
            conn: &mut conn,
        };
        let results = per_row::complete_all(&mut rows, reqs, &self.interleave).await;
        conn.finish(results)
    }

    /// Extends every lease still held; the others come back lost, in input order.
    pub(super) async fn renew_all(
        &self,
        claims: &[Claim],
        req: &RenewRequest,
    ) -> Result<Vec<RenewOutcome>> {
        self.limits.check_renew(claims, req)?;
        let mut conn = self.connection().await?;
        let mut rows = Rows {
            store: self,
            conn: &mut conn,
        };
        let outcomes = per_row::renew(&mut rows, claims, req).await;
        conn.finish(outcomes)
    }
}
