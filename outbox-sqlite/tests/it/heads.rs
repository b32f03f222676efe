//! The head flags that ordered claims walk, kept by the triggers of a prepared table
//! under every kind of write a host or an operator can make, whoever makes it, and by
//! the store's own batch completion, which moves the heads of a batch itself.

use chrono::TimeDelta;
use outbox_core::{
    ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionError, EmissionResult,
};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};
use sqlx::SqliteConnection;

use crate::support::fresh_ordered_store;

const KEYS: [&str; 4] = ["a", "b", "c", "d"];

/// A small deterministic generator (64-bit LCG), so a failing sequence replays.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// The keys whose flags are wrong: not exactly one row not yet terminal flagged, or the
/// flagged one not the oldest such row (by created_at, then id).
async fn wrong_heads(conn: &mut SqliteConnection) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT k.partition_key FROM (SELECT DISTINCT partition_key FROM outbox \
           WHERE partition_key IS NOT NULL AND status NOT IN (1, 5)) AS k \
         WHERE (SELECT count(*) FROM outbox AS f WHERE f.partition_key = k.partition_key \
                  AND f.is_head = 1 AND f.status NOT IN (1, 5)) != 1 \
            OR (SELECT o.is_head FROM outbox AS o WHERE o.partition_key = k.partition_key \
                  AND o.status NOT IN (1, 5) ORDER BY o.created_at, o.id LIMIT 1) != 1 \
         ORDER BY 1",
    )
    .fetch_all(conn)
    .await
    .unwrap()
}

/// One random row id of the rows `filter` selects, if there is one.
async fn pick(conn: &mut SqliteConnection, filter: &str, draw: &mut Draw) -> Option<Vec<u8>> {
    let ids: Vec<Vec<u8>> = sqlx::query_scalar(&format!(
        "SELECT id FROM outbox WHERE partition_key IS NOT NULL AND {filter} ORDER BY id"
    ))
    .fetch_all(&mut *conn)
    .await
    .unwrap();
    let len = u64::try_from(ids.len()).unwrap();
    (len > 0).then(|| ids[usize::try_from(draw.below(len)).unwrap()].clone())
}

/// The rows not yet delivered or dead-lettered.
const LIVE: &str = "status NOT IN (1, 5)";

/// Sets the status of one random row of those `filter` selects; whether there was one.
async fn restatus(conn: &mut SqliteConnection, filter: &str, status: i64, draw: &mut Draw) -> bool {
    let Some(id) = pick(conn, filter, draw).await else {
        return false;
    };
    sqlx::query("UPDATE outbox SET status = ?2 WHERE id = ?1")
        .bind(id)
        .bind(status)
        .execute(conn)
        .await
        .unwrap();
    true
}

/// The store claims in key runs and completes in one batch what it claimed, each claim
/// delivered, dead-lettered or failed for a retry at random (its own completion clears
/// the flags of the rows it finishes and moves their keys' heads, without the trigger);
/// whether it claimed anything.
async fn claim_and_complete(store: &SqliteClaimStore, draw: &mut Draw) -> bool {
    let run = 1 + u32::try_from(draw.below(4)).unwrap();
    let req = ClaimRequest::new("heads", 6, TimeDelta::minutes(5)).in_key_runs(run);
    let claims = store.claim_next(&req).await.unwrap();
    if claims.is_empty() {
        return false;
    }
    let reqs = claims
        .into_iter()
        .map(|claim| {
            let completion = match draw.below(4) {
                0 => Completion::DeadLettered {
                    error: EmissionError::new("given up"),
                    reason: None,
                },
                1 => Completion::Failed {
                    error: EmissionError::new("try again"),
                    next_retry: None,
                },
                _ => Completion::Delivered(EmissionResult::new()),
            };
            CompletionRequest::new(claim, completion)
        })
        .collect();
    store.complete_batch(reqs).await.unwrap();
    true
}

/// Inserts (older and newer than the head, some already terminal), deliveries and dead
/// letters of heads and of rows behind them, failures that keep a row's place, requeues
/// and deletes, in a seeded random mix through plain SQL, and the store's own claims in
/// key runs and batch completions between them: after every write, each key with rows
/// not yet terminal has exactly one flagged, its oldest.
#[tokio::test]
async fn heads_stay_exact_under_any_mix_of_writes() {
    let (store, _dir) = fresh_ordered_store(SqliteStoreConfig::new()).await;
    mix_of_writes(&store).await;
}

/// The status trigger of tables prepared by an earlier release: it runs for every row
/// whose status crosses between terminal and not, whoever writes it.
const EARLIER_STATUS_TRIGGER: &str = "\
    CREATE TRIGGER outbox_head_after_status AFTER UPDATE OF status ON outbox \
    WHEN NEW.partition_key IS NOT NULL AND (OLD.status IN (1, 5)) IS NOT (NEW.status IN (1, 5)) \
    BEGIN \
        UPDATE outbox SET is_head = 0 \
        WHERE partition_key = NEW.partition_key AND is_head = 1 AND status NOT IN (1, 5) \
          AND rowid IS NOT (SELECT h.rowid FROM outbox AS h \
                            WHERE h.partition_key = NEW.partition_key AND h.status NOT IN (1, 5) \
                            ORDER BY h.created_at, h.id LIMIT 1); \
        UPDATE outbox SET is_head = 1 \
        WHERE is_head = 0 \
          AND rowid = (SELECT h.rowid FROM outbox AS h \
                       WHERE h.partition_key = NEW.partition_key AND h.status NOT IN (1, 5) \
                       ORDER BY h.created_at, h.id LIMIT 1); \
    END";

/// Replaces the table's status trigger with an earlier release's, in one transaction.
async fn put_back_the_earlier_status_trigger(store: &SqliteClaimStore) {
    let mut tx = store.pool().begin().await.unwrap();
    sqlx::query("DROP TRIGGER outbox_head_after_status")
        .execute(&mut *tx)
        .await
        .unwrap();
    sqlx::query(EARLIER_STATUS_TRIGGER)
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

/// Whether the store takes the table's status trigger for this release's (a store built on
/// a table with an earlier one warns that preparing it again makes completions cheaper).
async fn current_status_trigger(store: &SqliteClaimStore) -> bool {
    sqlx::query_scalar(
        &store
            .table()
            .render(include_str!("../../sql/ordered/current_status_trigger.sql")),
    )
    .fetch_one(store.pool())
    .await
    .unwrap()
}

/// The status trigger's definition on the table.
async fn status_trigger(store: &SqliteClaimStore) -> String {
    sqlx::query_scalar(
        "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name = 'outbox_head_after_status'",
    )
    .fetch_one(store.pool())
    .await
    .unwrap()
}

/// A table prepared by an earlier release keeps its status trigger until it is prepared
/// again: this store's completions keep the heads exact beside it (the trigger moves them
/// row by row, and the store's own move finds nothing left to do).
#[tokio::test]
async fn heads_stay_exact_beside_the_status_trigger_of_an_earlier_release() {
    let (store, _dir) = fresh_ordered_store(SqliteStoreConfig::new()).await;
    put_back_the_earlier_status_trigger(&store).await;
    assert!(!status_trigger(&store).await.contains("OLD.is_head"));
    mix_of_writes(&store).await;
}

/// Preparing a table again replaces an earlier release's status trigger with this one's,
/// which leaves the rows this store finishes to the store.
#[tokio::test]
async fn preparing_again_replaces_an_earlier_releases_status_trigger() {
    let (store, _dir) = fresh_ordered_store(SqliteStoreConfig::new()).await;
    put_back_the_earlier_status_trigger(&store).await;
    assert!(
        !current_status_trigger(&store).await,
        "the earlier trigger is not told apart"
    );
    outbox_sqlite::enable_ordered_claims(store.pool(), store.table())
        .await
        .unwrap();
    assert!(current_status_trigger(&store).await);
    let trigger = status_trigger(&store).await;
    assert!(
        trigger.contains("OLD.is_head = 1 AND NEW.is_head = 1"),
        "the earlier trigger stayed: {trigger}"
    );
}

/// The seeded mix of writes, checking every key's head after each.
async fn mix_of_writes(store: &SqliteClaimStore) {
    let mut conn = store.pool().acquire().await.unwrap();
    let mut draw = Draw(0x5eed_0f4e_ad50);
    let mut kinds = [0_u32; 7];
    for step in 0..840 {
        let kind = draw.below(7);
        let write = match kind {
            // An insert: its created_at anywhere in the key's span, so it may be the new
            // head; one in eight is written delivered or dead-lettered already.
            0 => {
                let key = KEYS[usize::try_from(draw.below(4)).unwrap()];
                let status = match draw.below(8) {
                    0 => 1,
                    1 => 5,
                    _ => 0,
                };
                let created = i64::try_from(draw.below(1_000)).unwrap();
                sqlx::query(
                    "INSERT INTO outbox (id, topic, partition_key, payload, status, \
                     created_at, updated_at, stamp) \
                     VALUES (randomblob(16), 't', ?1, x'', ?2, ?3, ?3, randomblob(16))",
                )
                .bind(key)
                .bind(status)
                .bind(created)
                .execute(&mut *conn)
                .await
                .unwrap();
                true
            }
            // A delivery or a dead letter, of a head or of a row behind one.
            1 => restatus(&mut conn, LIVE, 1, &mut draw).await,
            2 => restatus(&mut conn, LIVE, 5, &mut draw).await,
            // A status that keeps the row's place in its key: deferred, failed (waiting
            // for an operator) or a retryable failure.
            3 => {
                let failed = 2 + i64::try_from(draw.below(3)).unwrap();
                restatus(&mut conn, LIVE, failed, &mut draw).await
            }
            // A requeue of a delivered or dead-lettered row: it may be older than the head.
            4 => restatus(&mut conn, "status IN (1, 5)", 0, &mut draw).await,
            // The store's claim in key runs and its batch completion.
            5 => claim_and_complete(store, &mut draw).await,
            // A delete of any row, the head included.
            _ => match pick(&mut conn, "1", &mut draw).await {
                Some(id) => {
                    sqlx::query("DELETE FROM outbox WHERE id = ?1")
                        .bind(id)
                        .execute(&mut *conn)
                        .await
                        .unwrap();
                    true
                }
                None => false,
            },
        };
        if write {
            kinds[usize::try_from(kind).unwrap()] += 1;
        }
        let wrong = wrong_heads(&mut conn).await;
        assert!(
            wrong.is_empty(),
            "step {step} (write of kind {kind}) left the heads of {wrong:?} wrong"
        );
    }
    // Every kind of write happened often enough to matter.
    assert!(kinds.iter().all(|&n| n >= 40), "writes by kind: {kinds:?}");
}
