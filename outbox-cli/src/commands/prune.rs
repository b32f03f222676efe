//! `outbox prune`: retention for delivered rows, one bounded batch at a time.

use chrono::{TimeDelta, Utc};
use outbox_core::{OutboxError, PruneRequest, Result};

use crate::backend::Target;

pub(crate) async fn run(
    target: &Target,
    older_than: TimeDelta,
    batch: u32,
    dry_run: bool,
) -> Result<()> {
    let delivered_before = Utc::now().checked_sub_signed(older_than).ok_or_else(|| {
        OutboxError::invalid(
            "--delivered-older-than",
            "reaches before the earliest representable time",
        )
    })?;
    let store = if dry_run {
        target.open_for_reading().await?
    } else {
        target.open().await?
    };
    let cut_off = delivered_before.format("%Y-%m-%dT%H:%M:%SZ");
    if dry_run {
        let n = store.count_delivered_before(delivered_before).await?;
        out!(
            "would prune {} delivered before {cut_off} (dry run: nothing deleted)",
            entries(n)
        );
        return Ok(());
    }
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
    out!("pruned {} delivered before {cut_off}", entries(total));
    Ok(())
}

fn entries(n: u64) -> String {
    if n == 1 {
        "1 entry".to_owned()
    } else {
        format!("{n} entries")
    }
}
