//! The claim-capable operations of [`SqliteClaimStore`], run on the store's own
//! connection ([`crate::direct`]).

use async_trait::async_trait;
use outbox_core::store_kit::claims::ClaimGroups;
use outbox_core::store_kit::outcomes::{claims_in_order, renewal_result, Guarded};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{
    Claim, ClaimRequest, ClaimStore, CompletionRequest, RenewOutcome, RenewRequest, Result,
    TransitionResult,
};
use rusqlite::types::ToSql;
use rusqlite::{Connection, OptionalExtension};
use uuid::Uuid;

use crate::direct::row::{decode, fetch, ColumnNames};
use crate::error::map_direct;
use crate::row::micros;
use crate::SqliteClaimStore;

impl SqliteClaimStore {
    async fn claim(&self, groups: ClaimGroups, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.config.basics.limits.check_claim(req)?;
        outbox_core::OutboxStore::capabilities(self).check_claim(req)?;
        let now = self.now(req.now);
        let expires = normalize_time(now + req.lease);
        let req = req.clone();
        let sql = std::sync::Arc::clone(&self.sql);
        let entries = self
            .direct
            .run(move |session| {
                let statement = if req.ordered {
                    sql.claim_ordered.pick(req.slice.is_some())
                } else {
                    sql.claim.pick(req.slice.is_some())
                };
                // The statement names ?10 (the run length) only in its ordered form.
                let params: [&dyn ToSql; 10] = [
                    &req.owner,
                    &micros(now),
                    &micros(expires),
                    &req.topic,
                    &i64::from(req.batch_size),
                    &groups.retry,
                    &groups.pending,
                    &req.slice.map(|s| i64::from(s.count())),
                    &req.slice.map(|s| i64::from(s.index())),
                    &i64::from(req.key_run),
                ];
                session.write(|conn| claim_rows(conn, statement, &params))
            })
            .await?;
        // The claim is committed whatever its rows decode to: a row that cannot be read
        // stays leased (and is reported), so the next claim goes past it instead of
        // meeting it again. RETURNING gives no order; hand the claims back in claim order.
        claims_in_order(entries.into_iter().collect::<Result<Vec<_>>>()?)
    }
}

/// Runs a claim statement and reads every row it leased, each row's decoding on its own.
fn claim_rows(
    conn: &Connection,
    statement: &str,
    params: &[&dyn ToSql],
) -> Result<Vec<Result<outbox_core::OutboxEntry>>> {
    let mut statement = crate::direct::statement(conn, statement)?;
    bind_named(&mut statement, params)?;
    let names = ColumnNames::of(&statement);
    let mut rows = statement.raw_query();
    let mut entries = Vec::new();
    while let Some(row) = rows.next().map_err(map_direct)? {
        entries.push(decode(row, &names));
    }
    Ok(entries)
}

/// Binds `params[i - 1]` to `?i` for every parameter the statement names: one slice form
/// of a statement leaves out parameters the other names, which SQLite leaves unbound.
fn bind_named(statement: &mut rusqlite::CachedStatement<'_>, params: &[&dyn ToSql]) -> Result<()> {
    for (index, value) in params.iter().enumerate().take(statement.parameter_count()) {
        statement
            .raw_bind_parameter(index + 1, value)
            .map_err(map_direct)?;
    }
    Ok(())
}

#[async_trait]
impl ClaimStore for SqliteClaimStore {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(ClaimGroups::PENDING, req).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(ClaimGroups::RETRY_READY, req).await
    }

    async fn claim_next(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(ClaimGroups::NEXT, req).await
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        self.config.basics.limits.check_completions(&reqs)?;
        self.complete_now(reqs).await
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.config.basics.limits.check_renew(claims, req)?;
        let now = self.now(req.now);
        let expires = micros(normalize_time(now + req.lease));
        let claims = claims.to_vec();
        let sql = std::sync::Arc::clone(&self.sql);
        self.direct
            .run(move |session| {
                session.write(|conn| {
                    claims
                        .iter()
                        .map(|claim| renew_one(conn, &sql, claim, expires))
                        .collect()
                })
            })
            .await
    }
}

/// Extends `claim`'s lease to `expires` if it still holds, or judges why it does not.
fn renew_one(
    conn: &Connection,
    sql: &crate::statements::Statements,
    claim: &Claim,
    expires: i64,
) -> Result<RenewOutcome> {
    let mut statement = crate::direct::statement(conn, &sql.renew)?;
    let names = ColumnNames::of(&statement);
    let renewed = statement
        .query_row(
            rusqlite::params![
                expires,
                Uuid::new_v4().as_bytes(),
                claim.id().as_uuid().as_bytes(),
                claim.owner,
                claim.token.as_bytes(),
            ],
            |row| Ok(decode(row, &names)),
        )
        .optional()
        .map_err(map_direct)?
        .transpose()?;
    let found = match renewed {
        Some(entry) => Guarded::Applied(entry),
        None => Guarded::of(fetch(conn, &sql.get, claim.id())?, false),
    };
    renewal_result(claim, found)
}
