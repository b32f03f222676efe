//! Batch completion: one statement writes every completion whose claim still holds; the
//! refused ones (the exception) are read back and judged in the same write transaction,
//! on the store's own connection ([`crate::direct`]).

use std::collections::{BTreeSet, HashSet};

use outbox_core::store_kit::outcomes::{completion_result, Guarded};
use outbox_core::{
    CompletionRequest, EntryId, OutboxEntry, Result, TransitionOutcome, TransitionResult,
};
use rusqlite::Connection;

use crate::batch_params::{self, CompletionRow};
use crate::direct::row::fetch;
use crate::error::map_direct;
use crate::statements::Statements;
use crate::SqliteClaimStore;

impl SqliteClaimStore {
    /// Records `reqs` in one immediate transaction: one `UPDATE … FROM json_each` for the
    /// batch, then one read per refused completion. Results follow the requests' order.
    pub(crate) async fn complete_now(
        &self,
        reqs: Vec<CompletionRequest>,
    ) -> Result<Vec<TransitionResult>> {
        let written = outbox_core::store_kit::writes::completion_targets(&reqs, |at| self.now(at));
        let rows: Vec<CompletionRow<'_>> = reqs
            .iter()
            .zip(&written)
            .map(|(req, entry)| CompletionRow::new(&req.claim, entry))
            .collect();
        let batch = batch_params::array(&rows)?;
        drop(rows);
        let sql = std::sync::Arc::clone(&self.sql);
        let moves_heads = self.ordered;
        self.direct
            .run(move |session| {
                session.write(|conn| complete_in(conn, &sql, moves_heads, &batch, &reqs, written))
            })
            .await
    }
}

/// The batch statement (and on a table prepared for per-key order, the heads it moved),
/// then the judgement of each completion it refused.
fn complete_in(
    conn: &Connection,
    sql: &Statements,
    moves_heads: bool,
    batch: &str,
    reqs: &[CompletionRequest],
    written: Vec<OutboxEntry>,
) -> Result<Vec<TransitionResult>> {
    let complete = if moves_heads {
        &sql.complete_moving_heads
    } else {
        &sql.complete_batch
    };
    let mut statement = crate::direct::statement(conn, complete)?;
    let mut rows = statement.query([batch]).map_err(map_direct)?;
    let mut applied = HashSet::with_capacity(reqs.len());
    while let Some(row) = rows.next().map_err(map_direct)? {
        let id = row
            .get_ref(0)
            .and_then(|v| {
                v.as_blob().map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(0, v.data_type(), Box::new(e))
                })
            })
            .map_err(map_direct)?;
        applied.insert(crate::row::entry_id(id)?);
    }
    drop(rows);
    if moves_heads {
        move_heads(conn, sql, reqs, &written, &applied)?;
    }
    let mut results = Vec::with_capacity(reqs.len());
    for (req, entry) in reqs.iter().zip(written) {
        if applied.contains(&req.claim.id()) {
            results.push(TransitionResult::new(TransitionOutcome::Applied, entry));
            continue;
        }
        let current: Option<OutboxEntry> = fetch(conn, &sql.get, req.claim.id())?;
        results.push(completion_result(req, Guarded::of(current, false)));
    }
    Ok(results)
}

/// Moves the heads of the keys whose rows the batch statement finished: one statement for
/// every key of a written row that is now delivered or dead-lettered (their flags were
/// cleared as they finished, so the table's status trigger left their keys alone).
fn move_heads(
    conn: &Connection,
    sql: &Statements,
    reqs: &[CompletionRequest],
    written: &[OutboxEntry],
    applied: &HashSet<EntryId>,
) -> Result<()> {
    let keys: BTreeSet<&str> = reqs
        .iter()
        .zip(written)
        .filter(|(req, entry)| entry.status.is_terminal() && applied.contains(&req.claim.id()))
        .filter_map(|(_, entry)| entry.partition_key.as_deref())
        .collect();
    if keys.is_empty() {
        return Ok(());
    }
    let keys = crate::batch_params::array(&keys.into_iter().collect::<Vec<_>>())?;
    crate::direct::statement(conn, &sql.move_heads)?
        .execute([keys])
        .map(drop)
        .map_err(map_direct)
}
