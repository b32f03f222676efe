//! Batch completion: one statement writes every completion whose claim still holds; the
//! refused ones (the exception) are read back and judged in the same write transaction.

use std::collections::HashSet;

use outbox_core::{CompletionRequest, EntryId, Result, TransitionOutcome, TransitionResult};

use crate::claims::not_applied;
use crate::error::map_err;
use crate::row::{hex, micros, opt_micros};
use crate::SqliteClaimStore;

impl SqliteClaimStore {
    /// Records `reqs` in one immediate transaction: one `UPDATE … FROM json_each` for the
    /// batch, then one read per refused completion. Results follow the requests' order.
    pub(crate) async fn complete_now(
        &self,
        reqs: &[CompletionRequest],
    ) -> Result<Vec<TransitionResult>> {
        let mut written = Vec::with_capacity(reqs.len());
        let mut rows = Vec::with_capacity(reqs.len());
        for req in reqs {
            let mut entry = (*req.claim.entry).clone();
            req.completion.target(&req.claim.entry).apply_to(
                &mut entry,
                self.now(req.now),
                req.stamp,
            );
            rows.push(serde_json::json!({
                "id": hex(req.claim.id().as_uuid().as_bytes()),
                "owner": req.claim.owner,
                "token": hex(req.claim.token.as_bytes()),
                "status": entry.status.code(),
                "next_retry_at": opt_micros(entry.next_retry_at),
                "attempt_count": entry.attempt_count,
                "last_error": entry.last_error,
                "dead_letter_reason": entry.dead_letter_reason,
                "delivered_at": opt_micros(entry.delivered_at),
                "provider_message_id": entry.provider_message_id,
                "updated_at": micros(entry.updated_at),
                "stamp": hex(entry.stamp.as_bytes()),
            }));
            written.push(entry);
        }
        let batch = serde_json::Value::Array(rows).to_string();
        let mut tx = self.write_tx().await?;
        let applied: HashSet<EntryId> = sqlx::query_scalar::<_, Vec<u8>>(&self.sql.complete_batch)
            .bind(batch)
            .fetch_all(&mut *tx)
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
            let current = self.fetch_one_entry(&mut tx, req.claim.id()).await?;
            let judged = TransitionOutcome::precheck_completion(current.as_ref(), req);
            results.push(not_applied(judged, current, &req.claim));
        }
        tx.commit().await.map_err(map_err)?;
        Ok(results)
    }
}
