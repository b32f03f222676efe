//! Three workers drain one in-memory outbox; every entry is delivered once.

use std::sync::Arc;

use outbox_core::chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, EmissionResult, MemoryClaimStore, NewEntry, Observed, OutboxStore,
};

#[tokio::main]
async fn main() -> outbox_core::Result<()> {
    let store = Arc::new(Observed::new(MemoryClaimStore::new()));
    let entries = (0..300)
        .map(|i| NewEntry::new("orders.created", format!("{{\"order\":{i}}}").into_bytes()))
        .collect();
    store.enqueue_batch(entries).await?;

    let mut workers = Vec::new();
    for w in 0..3 {
        let store = store.clone();
        workers.push(tokio::spawn(async move {
            let request = ClaimRequest::new(format!("worker-{w}"), 25, TimeDelta::seconds(30));
            let mut delivered = 0usize;
            loop {
                let claims = store.claim_pending(&request).await?;
                if claims.is_empty() {
                    return Ok::<_, outbox_core::OutboxError>(delivered);
                }
                for claim in &claims {
                    // A real worker emits claim.entry here, keyed by claim.entry.id.
                    tokio::task::yield_now().await;
                    if store
                        .mark_delivered(claim, EmissionResult::new())
                        .await?
                        .is_applied()
                    {
                        delivered += 1;
                    }
                }
            }
        }));
    }
    let mut total = 0;
    for (w, handle) in workers.into_iter().enumerate() {
        let n = handle.await.expect("worker panicked")?;
        println!("worker-{w} delivered {n}");
        total += n;
    }
    println!("delivered {total} of 300 entries, each exactly once");
    Ok(())
}
