//! A claim in key order at 10, 1,000 and 100,000 keys, with fresh statistics: the choice
//! of heads reads a bounded part of the backlog (the session's handler counters around
//! the statement), also when every key's head is leased and nothing can be taken, and a
//! claim in key runs fills its batch whatever the number of keys. At 10 keys, a store
//! whose last claim took full runs asks for only the heads that fill its batch, so its
//! whole claim reads far less than the choice's bound.

use chrono::TimeDelta;
use outbox_core::store_kit::sql::{without_lines_naming, FilterForms};
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, Quotes, TableName,
};
use outbox_mysql::{MySqlClaimStore, MySqlStoreConfig};
use sqlx::MySqlPool;

use crate::common::fresh_store;
use crate::plans::{analyze, fill_keyed, handler_reads};

const BATCH: u32 = 100;

/// The rows a bounded choice may examine for a batch of 100 (walks.rs).
const EXAMINED: i64 = 5_000;

/// Handler reads a bounded choice may make: no more than the rows it may examine.
const READS: i64 = EXAMINED;

/// The choice of heads of pending rows, as the store renders it (claim_pending.sql in its
/// key order form, without its locking line).
fn choice() -> String {
    let table = TableName::default();
    FilterForms::render(
        &without_lines_naming(
            include_str!("../../sql/claim_pending.sql"),
            "FOR UPDATE SKIP LOCKED",
        ),
        include_str!("../../sql/slice_filter.sql"),
        include_str!("../../sql/key_order_filter.sql"),
        |t| table.render_in(t, Quotes::BACKTICKS),
    )
    .pick(true, false)
    .to_owned()
}

/// The heads one bounded choice returns, and the handler reads it made.
async fn choose(pool: &MySqlPool) -> (usize, i64) {
    let mut conn = pool.acquire().await.unwrap();
    let (before, _) = handler_reads(&mut conn).await;
    let heads = sqlx::query(&choice())
        .bind(Option::<chrono::DateTime<chrono::Utc>>::None)
        .bind(Option::<String>::None)
        .bind(i64::from(BATCH))
        .bind(EXAMINED)
        .fetch_all(&mut *conn)
        .await
        .unwrap()
        .len();
    let (after, _) = handler_reads(&mut conn).await;
    // The counters' own statement reads a handful of rows.
    (heads, after - before)
}

async fn case(keys: u32, rows: u32) {
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new()).await else {
        return;
    };
    let pool = store.pool();
    fill_keyed(pool, rows, 0, 0, keys).await;
    analyze(pool).await;
    let (heads, reads) = choose(pool).await;
    println!("mariadb choice at {keys} keys: {heads} heads, {reads} handler reads");
    assert_eq!(heads, keys.min(BATCH) as usize, "at {keys} keys");
    assert!(reads <= READS, "{reads} handler reads at {keys} keys");

    let lease = TimeDelta::seconds(60);
    let first = store
        .claim_next(&ClaimRequest::new("w1", BATCH, lease).in_key_runs(10))
        .await
        .unwrap();
    assert_eq!(
        first.len(),
        BATCH as usize,
        "runs fill the batch at {keys} keys"
    );
    if keys <= BATCH {
        // Every key's head is leased: the next choice finds nothing, within its bound.
        let (heads, reads) = choose(pool).await;
        println!("mariadb choice at {keys} keys, all held: {reads} handler reads");
        assert_eq!(heads, 0);
        assert!(reads <= READS, "{reads} handler reads with every key held");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_keys() {
    case(10, 24_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_keys() {
    case(1_000, 24_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_keys() {
    case(100_000, 100_000).await;
}

/// A claim of a batch in key runs of 10.
fn runs_of_ten() -> ClaimRequest {
    ClaimRequest::new("w1", BATCH, TimeDelta::seconds(60)).in_key_runs(10)
}

/// Claims a full batch with `req` and delivers it: the store has seen its runs.
async fn claim_and_deliver_a_batch(store: &MySqlClaimStore, req: &ClaimRequest) {
    let first = store.claim_next(req).await.unwrap();
    assert_eq!(first.len(), BATCH as usize);
    let done = first
        .into_iter()
        .map(|c| CompletionRequest::new(c, Completion::Delivered(EmissionResult::new())))
        .collect();
    store.complete_batch(done).await.unwrap();
}

/// A whole claim in key runs of 10 at 10 keys, on a store whose last claim took full runs:
/// the handler reads of its one connection around the claim.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_in_runs_at_ten_keys_asks_for_the_heads_it_needs() {
    // One connection: the claim and the counters read around it share a session.
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new().max_connections(1)).await else {
        return;
    };
    let pool = store.pool();
    fill_keyed(pool, 24_000, 0, 0, 10).await;
    analyze(pool).await;
    let req = runs_of_ten();
    claim_and_deliver_a_batch(&store, &req).await;

    let mut conn = pool.acquire().await.unwrap();
    let (before, _) = handler_reads(&mut conn).await;
    drop(conn);
    let second = store.claim_next(&req).await.unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let (after, _) = handler_reads(&mut conn).await;
    let reads = after - before;
    println!("mariadb claim in runs at 10 keys, runs known: {reads} handler reads");
    assert_eq!(second.len(), BATCH as usize, "the runs fill the batch");
    // Asking for a head per row walks to the choice's bound (5,000 rows examined)
    // before the runs, the lock and the lease are read at all.
    assert!(
        reads <= READS / 2,
        "{reads} handler reads for a claim of 10 full runs"
    );
}

/// A store whose last claim took runs of 10 meets keys with two rows each: the heads it
/// first asks for bring a fifth of its batch, and it asks again for the rest, so the
/// batch still fills, each key's rows in key order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_whose_runs_come_up_short_asks_for_more_heads() {
    let Some((store, _db)) = fresh_store(MySqlStoreConfig::new()).await else {
        return;
    };
    let pool = store.pool();
    // Runs of 10 first (10 keys of 10 rows), then 100 keys of 2 rows.
    fill_keyed(pool, 100, 0, 0, 10).await;
    fill_keyed(pool, 200, 0, 100, 100).await;
    analyze(pool).await;
    let req = runs_of_ten();
    claim_and_deliver_a_batch(&store, &req).await;

    let second = store.claim_next(&req).await.unwrap();
    assert_eq!(second.len(), BATCH as usize, "the batch fills");
    let mut last_of_key = std::collections::HashMap::new();
    for claim in &second {
        let entry = &claim.entry;
        let key = entry.partition_key.clone().expect("keyed rows");
        let at = (entry.created_at, entry.id);
        if let Some(before) = last_of_key.insert(key.clone(), at) {
            assert!(before < at, "key {key} out of order in the claim");
        }
    }
    assert_eq!(last_of_key.len(), BATCH as usize / 2, "runs of two");
}
