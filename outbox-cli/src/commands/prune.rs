//! `outbox prune`: retention for delivered rows, one bounded batch at a time.

use chrono::{TimeDelta, Utc};
use outbox_core::{OutboxError, PruneRequest, Result};

use crate::backend::Target;

pub(crate) async fn run(target: &Target, older_than: TimeDelta, batch: u32) -> Result<()> {
    let delivered_before = Utc::now().checked_sub_signed(older_than).ok_or_else(|| {
        OutboxError::invalid(
            "--delivered-older-than",
            "reaches before the earliest representable time",
        )
    })?;
    let store = target.open().await?;
    let req = PruneRequest {
        delivered_before,
        batch_size: batch,
    };
    let mut total = 0;
    loop {
        let deleted = store.prune_delivered(&req).await?;
        total += deleted;
        if deleted == 0 {
            break;
        }
    }
    out!(
        "pruned {total} entries delivered before {}",
        req.delivered_before.format("%Y-%m-%dT%H:%M:%SZ")
    );
    Ok(())
}
