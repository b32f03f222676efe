//! The head flags that ordered claims walk, kept by the triggers of a prepared table
//! under every kind of write a host or an operator can make, whoever makes it.

use outbox_sqlite::SqliteStoreConfig;
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

/// Inserts (older and newer than the head, some already terminal), deliveries and dead
/// letters of heads and of rows behind them, failures that keep a row's place, requeues
/// and deletes, in a seeded random mix through plain SQL: after every write, each key
/// with rows not yet terminal has exactly one flagged, its oldest.
#[tokio::test]
async fn heads_stay_exact_under_any_mix_of_writes() {
    let (store, _dir) = fresh_ordered_store(SqliteStoreConfig::new()).await;
    let mut conn = store.pool().acquire().await.unwrap();
    let mut draw = Draw(0x5eed_0f4e_ad50);
    let mut kinds = [0_u32; 6];
    for step in 0..600 {
        let kind = draw.below(6);
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
