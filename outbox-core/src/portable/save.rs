//! Saves (read, check, stamp-guarded update), and the outcome fields every guarded write
//! of this store binds. A save that matches no row is followed by a re-read that says who
//! won.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::store_kit::per_row;
use crate::{OutboxEntry, Result, TargetState, TransitionOutcome, TransitionResult};

use super::backend::{PortableBackend, SqlParam};
use super::PortableStore;

/// The bound values of the outcome fields (`?` 1 to 8 of `complete_row.sql` and
/// `save_row.sql`) for `target` written at `now`.
pub(super) fn target_params(target: &TargetState, now: DateTime<Utc>) -> Vec<SqlParam> {
    let delivered_at = if target.stamp_delivered_now {
        Some(now)
    } else {
        target.delivered_at
    };
    vec![
        SqlParam::Status(target.status),
        target.next_retry_at.into(),
        target.attempt_count.into(),
        SqlParam::Text(target.last_error.clone()),
        SqlParam::Text(target.dead_letter_reason.clone()),
        delivered_at.into(),
        SqlParam::Text(target.provider_message_id.clone()),
        now.into(),
    ]
}

impl<B: PortableBackend> PortableStore<B> {
    /// Writes the outcome fields of `entry` over the row if its stamp is still current.
    pub(super) async fn save_entry(
        &self,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        let mut conn = self.connection().await?;
        let saved = self.save_on(&mut conn, entry, now).await;
        conn.finish(saved)
    }

    async fn save_on(
        &self,
        conn: &mut B::Connection,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        let Some((now, current)) = self.read(conn, entry.id, now).await? else {
            return Ok(TransitionResult::new(
                TransitionOutcome::Missing,
                entry.clone(),
            ));
        };
        if current.status.is_terminal() {
            return Ok(TransitionResult::new(TransitionOutcome::Terminal, current));
        }
        if current.stamp != entry.stamp {
            return Ok(TransitionResult::new(
                TransitionOutcome::ConcurrencyLost,
                current,
            ));
        }
        let target = per_row::normalized(TargetState::from_entry(entry));
        let stamp = Uuid::new_v4();
        let mut params = target_params(&target, now);
        params.extend([stamp.into(), entry.id.into(), entry.stamp.into()]);
        if B::execute(conn, &self.sql.save_row, params).await? == 1 {
            let mut updated = current;
            target.apply_to(&mut updated, now, stamp);
            return Ok(TransitionResult::new(TransitionOutcome::Applied, updated));
        }
        Ok(match self.read(conn, entry.id, Some(now)).await? {
            None => TransitionResult::new(TransitionOutcome::Missing, entry.clone()),
            Some((_, durable)) => {
                TransitionResult::new(TransitionOutcome::ConcurrencyLost, durable)
            }
        })
    }
}
