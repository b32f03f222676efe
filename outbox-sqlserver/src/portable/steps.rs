//! The per-row algorithm: a claim is one ordered candidate query, then per candidate a
//! re-read and a stamp-checked update (1 + 2N commands for N rows); a completion is a
//! re-read and a guarded update per claim. No lock hints: optimistic concurrency only.

#[cfg(feature = "test-hooks")]
use std::future::Future;
#[cfg(feature = "test-hooks")]
use std::pin::Pin;
#[cfg(feature = "test-hooks")]
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use outbox_core::store_kit::normalize_time;
use outbox_core::{
    Claim, ClaimRequest, CompletionRequest, EntryId, OutboxEntry, RenewOutcome, RenewRequest,
    Result, TargetState, TransitionOutcome, TransitionResult,
};
use tiberius::{ColumnData, IntoSql};
use uuid::Uuid;

use super::commands::Commands;
use crate::row::{self, id_bytes, naive};

/// A writer a test runs once between a check and its write (feature `test-hooks`).
#[cfg(feature = "test-hooks")]
pub(crate) type Interleaved = Arc<Mutex<Option<Pin<Box<dyn Future<Output = ()> + Send>>>>>;

/// Without the `test-hooks` feature there is nothing to run between a check and its
/// write.
#[cfg(not(feature = "test-hooks"))]
#[derive(Debug, Clone, Default)]
pub(crate) struct Interleaved {}

/// How often a guarded write whose stamp moved (a renewal in between) is tried again.
const MAX_WRITE_ATTEMPTS: usize = 3;

/// The portable statements, rendered for one table.
#[derive(Debug)]
pub(crate) struct PortableSql {
    pub(crate) candidates_pending: String,
    pub(crate) candidates_retry: String,
    pub(crate) read_entry: String,
    pub(crate) claim_row: String,
    pub(crate) complete_row: String,
    pub(crate) renew_row: String,
    pub(crate) clock: String,
}

impl PortableSql {
    pub(crate) fn render(table: &outbox_core::TableName) -> Self {
        let r = |t: &str| crate::table::render(table, t);
        Self {
            candidates_pending: r(include_str!("../../sql/portable/candidates_pending.sql")),
            candidates_retry: r(include_str!("../../sql/portable/candidates_retry.sql")),
            read_entry: r(include_str!("../../sql/portable/read_entry.sql")),
            claim_row: r(include_str!("../../sql/portable/claim_row.sql")),
            complete_row: r(include_str!("../../sql/portable/complete_row.sql")),
            renew_row: r(include_str!("../../sql/portable/renew_row.sql")),
            clock: include_str!("../../sql/clock.sql").to_owned(),
        }
    }
}

fn time(at: Option<DateTime<Utc>>) -> ColumnData<'static> {
    at.map(naive).into_sql()
}

fn text(s: Option<&str>) -> ColumnData<'static> {
    ColumnData::String(s.map(|s| s.to_owned().into()))
}

fn id(id: EntryId) -> ColumnData<'static> {
    ColumnData::Binary(Some(id_bytes(id).into()))
}

fn int(n: u32) -> ColumnData<'static> {
    ColumnData::I32(Some(i32::try_from(n).unwrap_or(i32::MAX)))
}

#[cfg(not(feature = "test-hooks"))]
async fn run_interleaved(_: &Interleaved) {}

#[cfg(feature = "test-hooks")]
async fn run_interleaved(interleave: &Interleaved) {
    let writer = interleave.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(writer) = writer {
        writer.await;
    }
}

/// One row with the instant the caller works at.
async fn read<C: Commands>(
    conn: &mut C,
    sql: &PortableSql,
    entry: EntryId,
    now: Option<DateTime<Utc>>,
) -> Result<Option<(DateTime<Utc>, OutboxEntry)>> {
    let rows = conn
        .rows(
            &sql.read_entry,
            vec![time(now.map(normalize_time)), id(entry)],
        )
        .await?;
    rows.first()
        .map(|r| {
            let now = normalize_time(row::required_time(r, "clock_now", "?")?);
            Ok((now, row::entry(r)?))
        })
        .transpose()
}

/// A portable claim of pending (`retry == false`) or retry-ready rows.
pub(crate) async fn claim<C: Commands>(
    conn: &mut C,
    sql: &PortableSql,
    interleave: &Interleaved,
    req: &ClaimRequest,
    retry: bool,
) -> Result<Vec<Claim>> {
    let candidates = conn
        .rows(
            if retry {
                &sql.candidates_retry
            } else {
                &sql.candidates_pending
            },
            vec![
                time(req.now.map(normalize_time)),
                text(req.topic.as_deref()),
                int(req.batch_size),
            ],
        )
        .await?;
    let Some(first) = candidates.first() else {
        return Ok(Vec::new());
    };
    let now = normalize_time(row::required_time(first, "clock_now", "?")?);
    let expires = normalize_time(now + req.lease);
    let mut won = Vec::with_capacity(candidates.len());
    for candidate in &candidates {
        let entry_id = row::id(candidate)?;
        let Some((_, current)) = read(conn, sql, entry_id, Some(now)).await? else {
            continue; // deleted since the candidate query
        };
        let claimable = if retry {
            current.is_retry_claimable(now)
        } else {
            current.is_pending_claimable(now)
        };
        if !claimable || req.topic.as_deref().is_some_and(|t| current.topic != t) {
            continue; // taken or changed since the candidate query
        }
        let read_stamp = current.stamp;
        let mut entry = current;
        entry.claim_owner = Some(req.owner.clone());
        entry.claim_token = Some(Uuid::new_v4());
        entry.claimed_at = Some(now);
        entry.claim_expires_at = Some(expires);
        entry.claim_attempt_count = entry.claim_attempt_count.saturating_add(1);
        entry.stamp = Uuid::new_v4();
        run_interleaved(interleave).await;
        let params = vec![
            text(Some(&req.owner)),
            ColumnData::Guid(entry.claim_token),
            time(Some(now)),
            time(Some(expires)),
            int(entry.claim_attempt_count),
            ColumnData::Guid(Some(entry.stamp)),
            id(entry_id),
            ColumnData::Guid(Some(read_stamp)),
        ];
        if conn.execute(&sql.claim_row, params).await? == 1 {
            won.extend(Claim::from_claimed_entry(entry));
        }
    }
    Ok(won)
}

fn target_params(t: &TargetState, now: DateTime<Utc>) -> Vec<ColumnData<'static>> {
    let delivered_at = if t.stamp_delivered_now {
        Some(now)
    } else {
        t.delivered_at
    };
    vec![
        ColumnData::U8(Some(
            u8::try_from(t.status.code()).expect("status codes are 0 ..= 5"),
        )),
        time(t.next_retry_at.map(normalize_time)),
        int(t.attempt_count),
        text(t.last_error.as_deref()),
        text(t.dead_letter_reason.as_deref()),
        time(delivered_at.map(normalize_time)),
        text(t.provider_message_id.as_deref()),
        time(Some(now)),
    ]
}

/// One portable completion: read, check, guarded write (and a re-read when it missed).
pub(crate) async fn complete<C: Commands>(
    conn: &mut C,
    sql: &PortableSql,
    interleave: &Interleaved,
    req: &CompletionRequest,
) -> Result<TransitionResult> {
    let claim = &req.claim;
    let Some((now, mut current)) = read(conn, sql, claim.id(), req.now).await? else {
        return Ok(TransitionResult::new(
            TransitionOutcome::Missing,
            (*claim.entry).clone(),
        ));
    };
    if let Some(outcome) = TransitionOutcome::precheck_completion(Some(&current), req) {
        return Ok(TransitionResult::new(outcome, current));
    }
    let mut target = req.completion.target(&claim.entry);
    target.next_retry_at = target.next_retry_at.map(normalize_time);
    target.delivered_at = target.delivered_at.map(normalize_time);
    run_interleaved(interleave).await;
    for _ in 0..MAX_WRITE_ATTEMPTS {
        let mut params = target_params(&target, now);
        params.extend([
            ColumnData::Guid(Some(req.stamp)),
            id(claim.id()),
            text(Some(&claim.owner)),
            ColumnData::Guid(Some(claim.token)),
            ColumnData::Guid(Some(current.stamp)),
        ]);
        if conn.execute(&sql.complete_row, params).await? == 1 {
            target.apply_to(&mut current, now, req.stamp);
            return Ok(TransitionResult::new(TransitionOutcome::Applied, current));
        }
        match read(conn, sql, claim.id(), Some(now)).await? {
            None => {
                return Ok(TransitionResult::new(
                    TransitionOutcome::Missing,
                    (*claim.entry).clone(),
                ))
            }
            // Still this claim's, only the stamp moved: write again over the new stamp.
            Some((_, durable)) if TransitionOutcome::precheck(Some(&durable), claim).is_none() => {
                current = durable;
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
        current,
    ))
}

/// Portable renewals: one guarded write per claim (and a re-read when it missed).
pub(crate) async fn renew<C: Commands>(
    conn: &mut C,
    sql: &PortableSql,
    claims: &[Claim],
    req: &RenewRequest,
) -> Result<Vec<RenewOutcome>> {
    let now = match req.now {
        Some(at) => normalize_time(at),
        None => {
            let rows = conn.rows(&sql.clock, Vec::new()).await?;
            let first = rows
                .first()
                .ok_or_else(|| outbox_core::OutboxError::Database {
                    message: "the clock query returned no row".into(),
                    source: None,
                })?;
            row::required_time(first, "now", "?")?
        }
    };
    let expires = normalize_time(now + req.lease);
    let mut outcomes = Vec::with_capacity(claims.len());
    for claim in claims {
        let stamp = Uuid::new_v4();
        let params = vec![
            time(Some(expires)),
            ColumnData::Guid(Some(stamp)),
            id(claim.id()),
            text(Some(&claim.owner)),
            ColumnData::Guid(Some(claim.token)),
        ];
        if conn.execute(&sql.renew_row, params).await? == 1 {
            let mut entry = (*claim.entry).clone();
            entry.claim_expires_at = Some(expires);
            entry.stamp = stamp;
            if let Some(renewed) = Claim::from_claimed_entry(entry) {
                outcomes.push(RenewOutcome::Renewed(renewed));
                continue;
            }
        }
        let current = read(conn, sql, claim.id(), Some(now))
            .await?
            .map(|(_, e)| e);
        let outcome = TransitionOutcome::precheck(current.as_ref(), claim)
            .unwrap_or(TransitionOutcome::StaleClaim);
        let entry = current.unwrap_or_else(|| (*claim.entry).clone());
        outcomes.push(RenewOutcome::Lost(TransitionResult::new(outcome, entry)));
    }
    Ok(outcomes)
}
