//! The store's batch completion moves its keys' heads itself (migration 12), in one
//! statement after its write: the status trigger does not run for the rows it finishes,
//! and still runs for every other writer. Two recordings of one key's run at once (the
//! drain records sub-batches side by side) never wait on each other, as with the trigger.

use chrono::{TimeDelta, Utc};
use outbox_core::{
    Claim, ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, NewEntry,
    OutboxStore, TransitionOutcome,
};
use outbox_postgres::PgClaimStore;

use crate::support;

const LEASE: TimeDelta = TimeDelta::seconds(30);

/// Enqueues `per_key` entries of each of `keys`, oldest first within each key, topics
/// `KEY/N`.
async fn enqueue_keys(store: &PgClaimStore, keys: &[&str], per_key: usize) {
    let start = Utc::now() - TimeDelta::hours(1);
    let mut entries = Vec::new();
    for (k, key) in keys.iter().enumerate() {
        for n in 0..per_key {
            let at = i64::try_from(n * keys.len() + k).unwrap();
            entries.push(
                NewEntry::new(format!("{key}/{n}"), vec![])
                    .partition_key(*key)
                    .created_at(start + TimeDelta::milliseconds(at)),
            );
        }
    }
    store.enqueue_batch(entries).await.unwrap();
}

/// Delivers `claims` through the store's batch completion; every one must apply.
async fn deliver(store: &PgClaimStore, claims: &[Claim]) -> outbox_core::Result<()> {
    let requests = claims
        .iter()
        .map(|c| CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new())))
        .collect();
    let results = store.complete_batch(requests).await?;
    for result in results {
        assert_eq!(result.outcome, TransitionOutcome::Applied, "{result:?}");
    }
    Ok(())
}

fn topics(claims: &[Claim]) -> Vec<String> {
    let mut t: Vec<String> = claims.iter().map(|c| c.entry.topic.clone()).collect();
    t.sort();
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_batch_completion_moves_heads_without_the_trigger() {
    let Some(db) = support::ordered_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    enqueue_keys(&store, &["a", "b", "c"], 3).await;
    // From here on the trigger fails whatever write runs it.
    let client = db.connect().await;
    client
        .batch_execute(&support::table(&db).render(
            "CREATE OR REPLACE FUNCTION {schema_prefix}\"{name}_keep_heads\"() \
             RETURNS trigger LANGUAGE plpgsql AS $f$ \
             BEGIN RAISE EXCEPTION 'the head trigger ran'; END $f$",
        ))
        .await
        .unwrap();

    let heads = ClaimRequest::new("w", 10, LEASE).in_key_order();
    let first = store.claim_pending(&heads).await.unwrap();
    assert_eq!(topics(&first), ["a/0", "b/0", "c/0"]);
    deliver(&store, &first).await.unwrap();
    assert_eq!(
        support::flagged_topics(&db, true).await,
        ["a/1", "b/1", "c/1"]
    );

    // A run's head and the row behind it, delivered together: the head passes to the row
    // after them.
    let runs = ClaimRequest::new("w", 10, LEASE).in_key_runs(2);
    let second = store.claim_pending(&runs).await.unwrap();
    assert_eq!(
        topics(&second),
        ["a/1", "a/2", "b/1", "b/2", "c/1", "c/2"],
        "each key's remaining run"
    );
    // "a"'s head alone first: the head passes to the row behind it, still under this claim.
    let (a_head, rest): (Vec<Claim>, Vec<Claim>) =
        second.into_iter().partition(|c| c.entry.topic == "a/1");
    deliver(&store, &a_head).await.unwrap();
    assert_eq!(
        support::flagged_topics(&db, true).await,
        ["a/2", "b/1", "c/1"]
    );

    // Any other writer still runs the trigger.
    let err = client
        .execute(
            &support::table(&db).render("UPDATE {table} SET status = 1 WHERE topic = 'b/1'"),
            &[],
        )
        .await
        .unwrap_err();
    assert!(
        format!("{err:?}").contains("the head trigger ran"),
        "{err:?}"
    );

    deliver(&store, &rest).await.unwrap();
    assert!(
        support::flagged_topics(&db, true).await.is_empty(),
        "every key finished"
    );
}

/// A key's run of `RUN`, claimed at once and delivered in two halves by two completions
/// side by side, many times over: the first half holds the head, whose move locks the
/// first row of the second half; the second half holds no head and moves nothing, so
/// neither waits on the other (a deadlock would fail a completion with 40P01), and the
/// key's next row is its head after both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_halves_of_a_run_recorded_at_once_never_wait_on_each_other() {
    const RUN: usize = 20;
    const ROUNDS: usize = 40;
    let Some(db) = support::ordered_db().await else {
        return;
    };
    let store = support::store(&db, 4).await;
    let keys: Vec<String> = (0..ROUNDS).map(|r| format!("k{r}")).collect();
    let names: Vec<&str> = keys.iter().map(String::as_str).collect();
    // One more row per key than the run: where the head goes after both halves.
    enqueue_keys(&store, &names, RUN + 1).await;
    let run = ClaimRequest::new("w", u32::try_from(RUN).unwrap(), LEASE)
        .in_key_runs(u32::try_from(RUN).unwrap());
    for round in 0..ROUNDS {
        let mut claims = store.claim_pending(&run).await.unwrap();
        assert_eq!(claims.len(), RUN, "round {round}: one key's whole run");
        claims.sort_by_key(|c| (c.entry.created_at, c.entry.id));
        let key = claims[0].entry.partition_key.clone().unwrap();
        let behind = claims.split_off(RUN / 2);
        let (a, b) = (store.clone(), store.clone());
        let (first, second) = tokio::join!(
            tokio::spawn(async move { deliver(&a, &claims).await }),
            tokio::spawn(async move { deliver(&b, &behind).await }),
        );
        first
            .unwrap()
            .unwrap_or_else(|e| panic!("round {round}, the head's half: {e}"));
        second
            .unwrap()
            .unwrap_or_else(|e| panic!("round {round}, the half behind: {e}"));
        let heads = support::flagged_topics(&db, true).await;
        assert!(
            heads.contains(&format!("{key}/{RUN}")),
            "round {round}: {key}'s last row is not its head: {heads:?}"
        );
    }
}
