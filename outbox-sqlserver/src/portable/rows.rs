//! The commands of the portable path in T-SQL, with tiberius values: candidates, a
//! re-read, and the guarded claim, completion and renewal writes, one round trip each.
//! The per-row algorithm that runs on them is core's.

use chrono::{DateTime, Utc};
use outbox_core::store_kit::per_row::{ClaimKind, CompletionWrite, PortableRows};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{
    async_trait, Claim, ClaimRequest, EntryId, OutboxEntry, OutboxError, Result, TargetState,
};
use tiberius::{ColumnData, Row};
use uuid::Uuid;

use super::commands::Commands;
use crate::binds::{id, int, status, text, time};
use crate::row;

/// The portable statements, rendered for one table.
#[derive(Debug)]
pub(crate) struct PortableSql {
    pub(crate) claim_pending_candidates: String,
    pub(crate) claim_retry_candidates: String,
    pub(crate) read_entry: String,
    pub(crate) claim_row: String,
    pub(crate) complete_row: String,
    pub(crate) renew_row: String,
    pub(crate) store_slice_hash: String,
    pub(crate) clock: String,
}

impl PortableSql {
    pub(crate) fn render(table: &outbox_core::TableName) -> Self {
        let r = |t: &str| crate::table::render(table, t);
        Self {
            claim_pending_candidates: r(include_str!(
                "../../sql/portable/claim_pending_candidates.sql"
            )),
            claim_retry_candidates: r(include_str!(
                "../../sql/portable/claim_retry_candidates.sql"
            )),
            read_entry: r(include_str!("../../sql/portable/read_entry.sql")),
            claim_row: r(include_str!("../../sql/portable/claim_row.sql")),
            complete_row: r(include_str!("../../sql/portable/complete_row.sql")),
            renew_row: r(include_str!("../../sql/portable/renew_row.sql")),
            store_slice_hash: r(include_str!("../../sql/portable/store_slice_hash.sql")),
            clock: include_str!("../../sql/clock.sql").to_owned(),
        }
    }
}

/// The portable commands in T-SQL on one connection: the per-row algorithm of
/// `outbox_core::store_kit::per_row` runs on them.
pub(crate) struct Rows<'a, C: Commands> {
    pub(crate) conn: &'a mut C,
    pub(crate) sql: &'a PortableSql,
}

/// The instant in the `clock_now` (or `now`) column of a result's first row.
fn first_time(rows: &[Row], col: &'static str) -> Result<Option<DateTime<Utc>>> {
    rows.first()
        .map(|r| row::required_time(r, col, "?").map(normalize_time))
        .transpose()
}

#[async_trait]
impl<C: Commands> PortableRows for Rows<'_, C> {
    async fn candidates(
        &mut self,
        req: &ClaimRequest,
        kind: ClaimKind,
    ) -> Result<Vec<(DateTime<Utc>, EntryId)>> {
        let sql = match kind {
            ClaimKind::Pending => &self.sql.claim_pending_candidates,
            ClaimKind::RetryReady => &self.sql.claim_retry_candidates,
        };
        let params = vec![
            time(req.now.map(normalize_time)),
            text(req.topic.as_deref()),
            int("batch size", req.batch_size)?,
        ];
        let rows = self.conn.rows(sql, params).await?;
        let Some(now) = first_time(&rows, "clock_now")? else {
            return Ok(Vec::new());
        };
        rows.iter().map(|r| Ok((now, row::id(r)?))).collect()
    }

    async fn read(
        &mut self,
        entry: EntryId,
        now: Option<DateTime<Utc>>,
    ) -> Result<Option<(DateTime<Utc>, OutboxEntry)>> {
        let params = vec![time(now.map(normalize_time)), id(entry)];
        let rows = self.conn.rows(&self.sql.read_entry, params).await?;
        let at = first_time(&rows, "clock_now")?;
        rows.first()
            .zip(at)
            .map(|(r, at)| Ok((at, row::entry(r)?)))
            .transpose()
    }

    async fn clock(&mut self) -> Result<DateTime<Utc>> {
        let rows = self.conn.rows(&self.sql.clock, Vec::new()).await?;
        first_time(&rows, "now")?.ok_or_else(|| OutboxError::Database {
            message: "the clock query returned no row".into(),
            source: None,
        })
    }

    async fn claim_row(&mut self, claimed: &OutboxEntry, read_stamp: Uuid) -> Result<bool> {
        let params = vec![
            text(claimed.claim_owner.as_deref()),
            ColumnData::Guid(claimed.claim_token),
            time(claimed.claimed_at),
            time(claimed.claim_expires_at),
            int("claim attempt count", claimed.claim_attempt_count)?,
            ColumnData::Guid(Some(claimed.stamp)),
            id(claimed.id),
            ColumnData::Guid(Some(read_stamp)),
        ];
        Ok(self.conn.execute(&self.sql.claim_row, params).await? == 1)
    }

    async fn store_slice_hash(&mut self, entry: EntryId, hash: u32) -> Result<()> {
        let params = vec![ColumnData::I64(Some(i64::from(hash))), id(entry)];
        self.conn
            .execute(&self.sql.store_slice_hash, params)
            .await
            .map(drop)
    }

    async fn complete_row(&mut self, write: CompletionWrite<'_>) -> Result<bool> {
        let mut params = target_params(write.target, write.now)?;
        params.extend([
            ColumnData::Guid(Some(write.stamp)),
            id(write.claim.id()),
            text(Some(&write.claim.owner)),
            ColumnData::Guid(Some(write.claim.token)),
            ColumnData::Guid(Some(write.read_stamp)),
        ]);
        Ok(self.conn.execute(&self.sql.complete_row, params).await? == 1)
    }

    async fn renew_row(
        &mut self,
        claim: &Claim,
        expires: DateTime<Utc>,
        stamp: Uuid,
    ) -> Result<bool> {
        let params = vec![
            time(Some(expires)),
            ColumnData::Guid(Some(stamp)),
            id(claim.id()),
            text(Some(&claim.owner)),
            ColumnData::Guid(Some(claim.token)),
        ];
        Ok(self.conn.execute(&self.sql.renew_row, params).await? == 1)
    }
}

/// The outcome fields of a completion (parameters 1 to 8 of `complete_row.sql`).
fn target_params(t: &TargetState, now: DateTime<Utc>) -> Result<Vec<ColumnData<'static>>> {
    let delivered_at = if t.stamp_delivered_now {
        Some(now)
    } else {
        t.delivered_at
    };
    Ok(vec![
        status(t.status),
        time(t.next_retry_at),
        int("attempt count", t.attempt_count)?,
        text(t.last_error.as_deref()),
        text(t.dead_letter_reason.as_deref()),
        time(delivered_at),
        text(t.provider_message_id.as_deref()),
        time(Some(now)),
    ])
}
