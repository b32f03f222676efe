//! A claim whose future is dropped while the server is still working on it: its
//! connection never goes back to the pool, and its transaction is rolled back.

use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::{ClaimRequest, ClaimStore, NewEntry, OutboxStore};

use crate::support::{blocked_session, lock_table, run, spawn_claim, SqlServerTestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_claim_leaves_no_open_transaction_behind() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let store = db.store(1).await;
    let entries: Vec<_> = (0..3).map(|i| NewEntry::new("t", vec![i])).collect();
    store.enqueue_batch(entries).await.unwrap();

    let mut blocker = lock_table(&db).await;
    let claiming = spawn_claim(&store, 3);
    let mut observer = db.client().await;
    let session = blocked_session(&mut observer, &db.schema, Duration::from_secs(10)).await;
    claiming.abort();
    assert!(claiming.await.unwrap_err().is_cancelled());
    run(&mut blocker, "ROLLBACK TRANSACTION").await;

    // The dropped call's session is gone (closed, not pooled): the server rolled back.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let alive = observer
            .query(
                "SELECT COUNT(*) FROM sys.dm_exec_sessions WHERE session_id = @P1 AND program_name = @P2",
                &[&session, &db.schema.as_str()],
            )
            .await
            .unwrap()
            .into_row()
            .await
            .unwrap()
            .and_then(|r| r.get::<i32, _>(0))
            .unwrap_or(0);
        if alive == 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cancelled call's session lives on"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The one-connection pool hands out a fresh connection that works.
    let claims = store
        .claim_pending(&ClaimRequest::new("w", 3, TimeDelta::minutes(5)))
        .await
        .unwrap();
    assert_eq!(claims.len(), 3, "rows stayed claimed by the dropped call");
}
