//! What a batch costs on the wire: the statements a claim, a completion and a renewal
//! send are the same for a batch of 10 as for a batch of 500, counted by the server
//! (`Questions` of the session the pool's one connection runs).

use chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, NewEntry, OutboxStore,
    RenewRequest,
};
use outbox_mysql::{MySqlClaimStore, MySqlStoreConfig};

use crate::common::fresh_store;

/// Statements the server counted on the pool's only connection so far (the reading
/// statement itself included).
async fn questions(store: &MySqlClaimStore) -> i64 {
    let (_, n): (String, String) = sqlx::query_as("SHOW SESSION STATUS LIKE 'Questions'")
        .fetch_one(store.pool())
        .await
        .unwrap();
    n.parse().unwrap()
}

/// The statements `work` sends, net of the counting.
async fn counted<F: std::future::Future<Output = ()>>(store: &MySqlClaimStore, work: F) -> i64 {
    let before = questions(store).await;
    work.await;
    questions(store).await - before - 1
}

#[tokio::test]
async fn claims_completions_and_renewals_cost_the_same_whatever_the_batch() {
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new().max_connections(1)).await else {
        return;
    };
    let mut costs = Vec::new();
    for n in [10u32, 500] {
        let entries = (0..n)
            .map(|i| NewEntry::new("t", i.to_le_bytes().to_vec()))
            .collect();
        store.enqueue_batch(entries).await.unwrap();
        let req = ClaimRequest::new("w", n, TimeDelta::minutes(5));
        let mut claims = Vec::new();
        let claim = counted(&store, async {
            claims = store.claim_pending(&req).await.unwrap();
        })
        .await;
        assert_eq!(claims.len(), n as usize);
        let mut renewed = Vec::new();
        let renew = counted(&store, async {
            renewed = store
                .renew(&claims, &RenewRequest::new(TimeDelta::minutes(5)))
                .await
                .unwrap();
        })
        .await;
        assert!(renewed.iter().all(|r| r.renewed().is_some()), "{renewed:?}");
        let reqs = claims
            .iter()
            .map(|c| {
                CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new()))
            })
            .collect::<Vec<_>>();
        let complete = counted(&store, async {
            let results = store.complete_batch(reqs).await.unwrap();
            assert!(results.iter().all(|r| r.is_applied()));
        })
        .await;
        println!("batch of {n}: claim {claim}, renew {renew}, complete {complete} statements");
        costs.push((claim, renew, complete));
    }
    assert_eq!(costs[0], costs[1], "a statement count grew with the batch");
    // BEGIN, the locking read, the lease write, COMMIT; BEGIN, the write, the read back,
    // COMMIT; BEGIN, the write, COMMIT.
    assert_eq!(costs[0], (4, 4, 3));
}
