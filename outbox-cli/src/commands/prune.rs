//! `outbox prune`: retention for delivered rows, one bounded batch at a time.

use chrono::{TimeDelta, Utc};
use outbox_core::{PruneRequest, Result};

use crate::backend::Target;

pub(crate) async fn run(target: &Target, older_than: TimeDelta, batch: u32) -> Result<()> {
    let store = target.open().await?;
    let req = PruneRequest {
        delivered_before: Utc::now() - older_than,
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
    println!(
        "pruned {total} entries delivered before {}",
        req.delivered_before.format("%Y-%m-%dT%H:%M:%SZ")
    );
    Ok(())
}
