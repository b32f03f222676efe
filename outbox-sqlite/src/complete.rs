//! Batch completion: one statement writes every completion whose claim still holds; the
//! refused ones (the exception) are read back and judged in the same write transaction.

use std::collections::HashSet;

use outbox_core::store_kit::outcomes::{completion_result, Guarded};
use outbox_core::{
    CompletionRequest, EntryId, OutboxEntry, Result, TransitionOutcome, TransitionResult,
};

use sqlx::SqliteConnection;

use crate::batch_params::{self, CompletionRow};
use crate::error::map_err;
use crate::SqliteClaimStore;

impl SqliteClaimStore {
    /// Records `reqs` in one immediate transaction: one `UPDATE … FROM json_each` for the
    /// batch, then one read per refused completion. Results follow the requests' order.
    pub(crate) async fn complete_now(
        &self,
        reqs: &[CompletionRequest],
    ) -> Result<Vec<TransitionResult>> {
        let written = outbox_core::store_kit::writes::completion_targets(reqs, |at| self.now(at));
        let rows: Vec<CompletionRow<'_>> = reqs
            .iter()
            .zip(&written)
            .map(|(req, entry)| CompletionRow::new(&req.claim, entry))
            .collect();
        let batch = batch_params::array(&rows)?;
        drop(rows);
        let mut tx = self.write_tx().await?;
        let results = self.complete_in(&mut tx, batch, reqs, written).await;
        tx.finish(results).await
    }

    /// The batch statement, then the judgement of each completion it refused.
    async fn complete_in(
        &self,
        conn: &mut SqliteConnection,
        batch: String,
        reqs: &[CompletionRequest],
        written: Vec<OutboxEntry>,
    ) -> Result<Vec<TransitionResult>> {
        let applied: HashSet<EntryId> = sqlx::query_scalar::<_, Vec<u8>>(&self.sql.complete_batch)
            .bind(batch)
            .fetch_all(&mut *conn)
            .await
            .map_err(map_err)?
            .iter()
            .map(|id| crate::row::entry_id(id))
            .collect::<Result<_>>()?;
        let mut results = Vec::with_capacity(reqs.len());
        for (req, entry) in reqs.iter().zip(written) {
            if applied.contains(&req.claim.id()) {
                results.push(TransitionResult::new(TransitionOutcome::Applied, entry));
                continue;
            }
            let current = self.fetch_one_entry(conn, req.claim.id()).await?;
            results.push(completion_result(req, Guarded::of(current, false)));
        }
        Ok(results)
    }
}
