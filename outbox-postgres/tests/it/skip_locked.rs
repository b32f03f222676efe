//! Rows another transaction holds are skipped at once, never waited for.

use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::{ClaimRequest, EntryId};
use outbox_testkit::fixtures::{seed, DynStore};
use uuid::Uuid;

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_locked_elsewhere_are_skipped_without_waiting() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store: DynStore = std::sync::Arc::new(support::store(&db, 2).await);
    let written = seed(&store, 10).await;
    let mut locker = db.connect().await;
    let tx = locker.transaction().await.unwrap();
    let lock_oldest = support::table(&db)
        .render("SELECT id FROM {table} ORDER BY created_at, id LIMIT 5 FOR UPDATE");
    let locked: Vec<EntryId> = tx
        .query(&lock_oldest, &[])
        .await
        .unwrap()
        .iter()
        .map(|r| EntryId::from_uuid(r.get::<_, Uuid>(0)))
        .collect();
    assert_eq!(
        locked,
        written[..5].iter().map(|e| e.id).collect::<Vec<_>>()
    );

    let request = ClaimRequest::new("w", 10, TimeDelta::seconds(30));
    let claims = tokio::time::timeout(Duration::from_secs(2), store.claim_pending(&request))
        .await
        .expect("the claim waited for rows another transaction holds")
        .unwrap();
    let claimed: Vec<EntryId> = claims.iter().map(|c| c.id()).collect();
    assert_eq!(
        claimed,
        written[5..].iter().map(|e| e.id).collect::<Vec<_>>()
    );

    tx.rollback().await.unwrap();
    let rest = store.claim_pending(&request).await.unwrap();
    assert_eq!(rest.iter().map(|c| c.id()).collect::<Vec<_>>(), locked);
}
