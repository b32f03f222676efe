//! A completion that meets a row another transaction is writing waits for that writer and
//! judges the row as the writer left it: a claim taken over while the completion waited
//! is reported stale, with the new holder's row, never applied and never missing; the
//! rest of the batch is written. Two batches that cross (each with a row whose claim the
//! other holds now) never wait on each other in a circle.

use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::{
    Claim, ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, EmissionStatus,
    NewEntry, OutboxStore, TransitionOutcome,
};
use uuid::Uuid;

use crate::support;

const WITHIN: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_taken_over_while_its_completion_waits_is_reported_stale() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 1).await;
    store
        .enqueue_batch((0..3u8).map(|i| NewEntry::new("t", vec![i])).collect())
        .await
        .unwrap();
    let claims = store
        .claim_pending(&ClaimRequest::new("a", 10, TimeDelta::seconds(30)))
        .await
        .unwrap();
    assert_eq!(claims.len(), 3);
    let taken = claims[1].id();

    // Another worker takes the middle row over (as a reclaim after the lease ran out
    // would), and has not committed yet when the completion reaches the row.
    let observer = db.connect().await;
    let mut other = db.connect().await;
    let tx = other.transaction().await.unwrap();
    let new_token = Uuid::new_v4();
    tx.execute(
        &support::table(&db).render(
            "UPDATE {table} SET claim_owner = 'b', claim_token = $2, stamp = gen_random_uuid() \
             WHERE id = $1",
        ),
        &[&taken.as_uuid(), &new_token],
    )
    .await
    .unwrap();

    let reqs: Vec<_> = claims
        .iter()
        .map(|c| CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new())))
        .collect();
    let completing = tokio::spawn({
        let store = store.clone();
        async move { store.complete_batch(reqs).await }
    });
    support::blocked_backend(&observer, &db.schema, WITHIN).await;
    tx.commit().await.unwrap();
    let results = completing.await.unwrap().unwrap();

    for (claim, result) in claims.iter().zip(&results) {
        if claim.id() == taken {
            assert_eq!(result.outcome, TransitionOutcome::StaleClaim, "{result:?}");
            assert_eq!(result.entry.claim_owner.as_deref(), Some("b"), "{result:?}");
            assert_eq!(result.entry.claim_token, Some(new_token), "{result:?}");
            assert_eq!(result.entry.status, EmissionStatus::Pending);
        } else {
            assert_eq!(result.outcome, TransitionOutcome::Applied, "{result:?}");
            assert_eq!(result.entry.status, EmissionStatus::Delivered);
        }
    }
    let row = store.get(taken).await.unwrap().unwrap();
    assert_eq!(
        row.status,
        EmissionStatus::Pending,
        "the stale holder wrote"
    );
    assert_eq!(row.claim_owner.as_deref(), Some("b"));
}

/// The claim `claim` as `owner` would hold it with `token`.
fn held_by(claim: &Claim, owner: &str, token: Uuid) -> Claim {
    let mut held = claim.clone();
    held.owner = owner.to_owned();
    held.token = token;
    held
}

fn delivered(claims: &[Claim]) -> Vec<CompletionRequest> {
    claims
        .iter()
        .map(|c| CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new())))
        .collect()
}

/// Waits (polling, up to [`WITHIN`]) until `n` backends tagged `application_name` wait on
/// a lock.
async fn until_waiting(observer: &tokio_postgres::Client, application_name: &str, n: i64) {
    let deadline = tokio::time::Instant::now() + WITHIN;
    loop {
        let waiting: i64 = observer
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE application_name = $1 AND wait_event_type = 'Lock'",
                &[&application_name],
            )
            .await
            .unwrap()
            .get(0);
        if waiting >= n {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{waiting} of {n} backends waiting on a lock after {WITHIN:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Worker a holds y and lost x to worker b; b holds x and lost y to a. Both complete both
/// rows at once, and a third transaction holds both rows until both completions wait on
/// it, so each then writes its own row while the other's is written beside it. Each
/// reports its own row applied and the other not. A completion that locked the rows it
/// wrote, then the rows it refused, would take the two rows in opposite orders in the two
/// batches, and the server would break the circle by failing one of them ("deadlock
/// detected").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crossing_batches_complete_side_by_side_without_waiting_in_a_circle() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let observer = db.connect().await;
    let mut holder = db.connect().await;
    let table = support::table(&db);
    let take_over = table.render(
        "UPDATE {table} SET claim_owner = $2, claim_token = $3, stamp = gen_random_uuid() \
         WHERE id = $1",
    );
    let hold = table.render("SELECT 1 FROM {table} WHERE id = ANY($1) FOR UPDATE");
    for round in 0..5 {
        store
            .enqueue_batch((0..2u8).map(|i| NewEntry::new("t", vec![i])).collect())
            .await
            .unwrap();
        let mut claims = store
            .claim_pending(&ClaimRequest::new("a", 2, TimeDelta::seconds(30)))
            .await
            .unwrap();
        claims.sort_by_key(Claim::id);
        let [x, y] = [&claims[0], &claims[1]];
        let b_token = Uuid::new_v4();
        observer
            .execute(&take_over, &[&x.id().as_uuid(), &"b", &b_token])
            .await
            .unwrap();
        let tx = holder.transaction().await.unwrap();
        tx.execute(&hold, &[&vec![x.id().as_uuid(), y.id().as_uuid()]])
            .await
            .unwrap();
        let a = delivered(&[x.clone(), y.clone()]);
        let b = delivered(&[held_by(x, "b", b_token), held_by(y, "b", Uuid::new_v4())]);
        let a = tokio::spawn({
            let store = store.clone();
            async move { store.complete_batch(a).await }
        });
        let b = tokio::spawn({
            let store = store.clone();
            async move { store.complete_batch(b).await }
        });
        until_waiting(&observer, &db.schema, 2).await;
        tx.commit().await.unwrap();
        let (a, b) = (a.await.unwrap(), b.await.unwrap());
        let (a, b) = (
            a.unwrap_or_else(|e| panic!("round {round}: a: {e}")),
            b.unwrap_or_else(|e| panic!("round {round}: b: {e}")),
        );
        let outcomes =
            |r: &[outbox_core::TransitionResult]| r.iter().map(|r| r.outcome).collect::<Vec<_>>();
        // Each writes the row it holds; the other is stale, or terminal once the other
        // worker's write was seen.
        let (a, b) = (outcomes(&a), outcomes(&b));
        assert!(
            a[0] != TransitionOutcome::Applied && a[1] == TransitionOutcome::Applied,
            "round {round}: a {a:?}"
        );
        assert!(
            b[0] == TransitionOutcome::Applied && b[1] != TransitionOutcome::Applied,
            "round {round}: b {b:?}"
        );
    }
}
