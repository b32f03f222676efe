//! Batch completion: one statement writes every completion whose claim still holds; the
//! refused ones (the exception) are read back and judged in the same transaction.

use outbox_core::store_kit::outcomes::{completion_result, Guarded};
use outbox_core::store_kit::writes::completion_targets;
use outbox_core::{CompletionRequest, OutboxEntry, Result, TransitionOutcome, TransitionResult};

use crate::batch_params::{self, CompletionRow};
use crate::error::map_err;
use crate::row::fetch_many;
use crate::MySqlClaimStore;

impl MySqlClaimStore {
    /// Records `reqs` in one transaction: one `UPDATE … JOIN JSON_TABLE` for the batch,
    /// then, only when it wrote fewer rows than it was given, one read of the batch's
    /// rows, each judged as the contract says. Results follow the requests' order.
    pub(crate) async fn complete_now(
        &self,
        reqs: &[CompletionRequest],
    ) -> Result<Vec<TransitionResult>> {
        let written = completion_targets(reqs, |at| self.now(at));
        let rows: Vec<CompletionRow<'_>> = reqs
            .iter()
            .zip(&written)
            .map(|(req, entry)| CompletionRow::new(&req.claim, entry))
            .collect();
        let batch = batch_params::array(&rows)?;
        drop(rows);
        self.retrying(|| self.complete_in_transaction(&batch, reqs, &written))
            .await
    }

    async fn complete_in_transaction(
        &self,
        batch: &str,
        reqs: &[CompletionRequest],
        written: &[OutboxEntry],
    ) -> Result<Vec<TransitionResult>> {
        let mut tx = self.pool.begin().await.map_err(map_err)?;
        let applied = sqlx::query(&self.sql.complete_batch)
            .bind(batch)
            .execute(&mut *tx)
            .await
            .map_err(map_err)?
            .rows_affected();
        if applied == reqs.len() as u64 {
            tx.commit().await.map_err(map_err)?;
            return Ok(written
                .iter()
                .map(|e| TransitionResult::new(TransitionOutcome::Applied, e.clone()))
                .collect());
        }
        let ids = reqs.iter().map(|r| r.claim.id());
        let mut durable = fetch_many(&mut tx, &self.sql.get_many, ids).await?;
        tx.commit().await.map_err(map_err)?;
        // A row this statement wrote (or an earlier try of the same request) carries the
        // request's stamp, and the judgement reports it applied, with the row as it is.
        Ok(reqs
            .iter()
            .map(|req| {
                let found = match durable.remove(&req.claim.id()) {
                    None => Guarded::Missing,
                    Some(row) => Guarded::Refused(row),
                };
                completion_result(req, found)
            })
            .collect())
    }
}
