//! Named statements through a transaction-mode pooler: calls fail, each with an error
//! that names the setting that fixes it, and the failed calls consume nothing.

use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::{ClaimRequest, ClaimStore, NewEntry, OutboxStore};
use outbox_postgres::PgStoreConfig;

use crate::support;

const ENTRIES: u32 = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn named_statements_through_the_pooler_fail_with_the_setting_that_fixes_them() {
    let Some((db, bouncer)) = super::pooled_db().await else {
        return;
    };
    let direct = support::store(&db, 2).await;
    direct
        .enqueue_batch(
            (0..ENTRIES)
                .map(|i| NewEntry::new("t", i.to_be_bytes().to_vec()))
                .collect(),
        )
        .await
        .unwrap();
    let named = Arc::new(
        support::store_with(
            &db,
            super::pool_through(&db, bouncer, 4),
            PgStoreConfig::new(),
        )
        .await,
    );
    // Four clients share two server connections: a statement prepared on one is soon
    // asked for on the other.
    let mut errors = Vec::new();
    let mut claimed = 0;
    for _ in 0..50 {
        let calls: Vec<_> = (0..4)
            .map(|w| {
                let named = named.clone();
                tokio::spawn(async move {
                    let req = ClaimRequest::new(format!("named-{w}"), 1, TimeDelta::seconds(1));
                    named.claim_next(&req).await.map(|c| c.len())
                })
            })
            .collect();
        for call in calls {
            match call.await.unwrap() {
                Ok(n) => claimed += n,
                Err(e) => errors.push(e.to_string()),
            }
        }
        if errors.len() >= 4 {
            break;
        }
    }
    assert!(
        !errors.is_empty(),
        "named statements all worked through the pooler"
    );
    for e in &errors {
        assert!(
            e.contains("statement_mode=unnamed") && e.contains("transaction-mode pooler"),
            "an error without the fix: {e}"
        );
        assert!(e.contains("prepared statement \""), "{e}");
    }
    eprintln!(
        "named mode through the pooler: {} failed calls, {claimed} entries claimed",
        errors.len()
    );

    // What the failed calls left is whole: the leases of the claims that did work run
    // out, and an unnamed store through the same pooler then delivers every entry.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let unnamed: Arc<dyn outbox_core::AdminClaimStore> =
        Arc::new(super::store_through(&db, bouncer, 2).await);
    let emitter = Arc::new(outbox_testkit::emitters::PerEntry::default());
    outbox_testkit::emitters::drain_all(unnamed.clone(), emitter.clone(), Duration::from_secs(60))
        .await;
    let emissions = emitter.emissions();
    assert_eq!(emissions.len(), ENTRIES as usize, "an entry was lost");
    let stats = unnamed
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap();
    assert_eq!(
        stats
            .counts
            .get(&outbox_core::EmissionStatus::Delivered)
            .copied(),
        Some(u64::from(ENTRIES)),
        "{stats:?}"
    );
}
