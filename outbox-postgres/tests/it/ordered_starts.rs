//! Claims in per-key order start their walk of the heads at the oldest pending key the
//! store's previous ordered claim took (migration 13), as the plain claim does: a head
//! that appears behind the start (a key's next entry, once the one before it is
//! delivered) is taken by the next claim that comes up short, the start is shared under
//! its own kind, and with a snapshot held open elsewhere a claim from the start reads its
//! batch where one from the beginning reads every delivered head's index entry.

use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use outbox_core::{
    Claim, ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult, EntryId,
    NewEntry, OutboxStore,
};
use outbox_postgres::{PgClaimStore, PgStoreConfig};

use crate::support;

/// A store on `db` that walks from the beginning only every hour while batches are full.
async fn store(db: &outbox_testkit::postgres::PgTestDb) -> PgClaimStore {
    let config = PgStoreConfig::default()
        .full_walk_every(Duration::from_secs(3600))
        .unwrap();
    support::store_with(
        db,
        support::pool(support::pg_config(&db.url, &db.schema), 2),
        config,
    )
    .await
}

/// One ordered claim of `n` by `owner`, one entry per key (no runs).
async fn claim(store: &PgClaimStore, owner: &str, n: u32) -> Vec<Claim> {
    let req = ClaimRequest::new(owner, n, TimeDelta::seconds(30)).in_key_order();
    store.claim_pending(&req).await.unwrap()
}

fn ids(claims: &[Claim]) -> Vec<EntryId> {
    claims.iter().map(|c| c.entry.id).collect()
}

/// Entries `a/0`, `a/1` of key `a`, then `b/0` of key `b`, in that creation order: `a/1`
/// becomes a head only once `a/0` is delivered, behind a start at `b/0`. A claim that
/// comes up short ahead of that start walks behind it and takes `a/1`, long before the
/// store's hour would bring a walk from the beginning. (A walk over 10 ms longer than a
/// claim that walked only ahead holds walks behind the start back for twenty times its
/// duration: the loop allows for a loaded machine.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_behind_the_start_is_taken_by_a_claim_that_comes_up_short() {
    let Some(db) = support::ordered_db().await else {
        return;
    };
    let store = store(&db).await;
    let start = Utc::now() - TimeDelta::hours(1);
    let entry = |topic: &str, key: &str, ms: i64| {
        NewEntry::new(topic, vec![])
            .partition_key(key)
            .created_at(start + TimeDelta::milliseconds(ms))
    };
    let written = store
        .enqueue_batch(vec![
            entry("a/0", "a", 0),
            entry("a/1", "a", 1),
            entry("b/0", "b", 2),
        ])
        .await
        .unwrap();
    let [a0, a1, b0] = [0, 1, 2].map(|i| written[i].id);
    let first = claim(&store, "w", 1).await;
    assert_eq!(ids(&first), [a0]);
    // The walk starts at a/0: a/0 is leased, a/1 is no head, so b/0 comes next.
    assert_eq!(ids(&claim(&store, "w", 1).await), [b0]);
    let delivered = CompletionRequest::new(
        first[0].clone(),
        Completion::Delivered(EmissionResult::new()),
    );
    store.complete_batch(vec![delivered]).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let next = ids(&claim(&store, "w", 1).await);
        if next == [a1] {
            break;
        }
        assert!(next.is_empty(), "only a/1 is claimable: {next:?}");
        assert!(
            Instant::now() < deadline,
            "a/1, behind the start, was never taken"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The ordered claims shared their start under their own kind.
    let client = db.connect().await;
    let kinds: Vec<String> = client
        .query(
            &support::table(&db).render(
                "SELECT DISTINCT kind FROM {schema_prefix}\"{name}_claim_starts\" ORDER BY kind",
            ),
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(kinds, ["ordered/all|"]);
}

/// Loads `n` due pending rows, one key each, every one its key's head (the trigger is off
/// for the load, as it would serialize the rows).
async fn load_heads(db: &outbox_testkit::postgres::PgTestDb, n: i64) {
    let client = db.connect().await;
    client
        .batch_execute("SET session_replication_role = replica")
        .await
        .unwrap();
    client
        .execute(
            &support::table(db).render(
                "INSERT INTO {table} (id, topic, partition_key, payload, status, created_at, \
                 updated_at, stamp, is_head) \
                 SELECT gen_random_uuid(), 't', 'k-' || i, '\\x00'::bytea, 0, \
                        now() - interval '1 hour' + i * interval '1 millisecond', now(), \
                        gen_random_uuid(), true \
                 FROM generate_series(1, $1::bigint) AS i",
            ),
            &[&n],
        )
        .await
        .unwrap();
}

/// With a repeatable-read snapshot held open on another connection, 20,000 delivered heads
/// keep their entries in the heads' index. An ordered claim of 100 from the beginning reads
/// all of them; the same claim from the oldest pending key reads about its batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ordered_claim_from_the_start_reads_its_batch_while_a_snapshot_is_held() {
    let Some(db) = support::ordered_db().await else {
        return;
    };
    load_heads(&db, 30_000).await;
    let table = support::table(&db);
    let mut client = db.connect().await;
    let holder = db.connect().await;
    holder
        .batch_execute(
            &table.render("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM {table}"),
        )
        .await
        .unwrap();
    client
        .batch_execute(&table.render(
            "SET session_replication_role = replica; \
             UPDATE {table} SET status = 1, delivered_at = now() WHERE id IN \
             (SELECT id FROM {table} ORDER BY created_at, id LIMIT 20000); \
             SET session_replication_role = DEFAULT",
        ))
        .await
        .unwrap();
    client
        .batch_execute(&table.render("VACUUM {table}"))
        .await
        .unwrap();
    let head = client
        .query_one(
            &table.render(
                "SELECT created_at, id FROM {table} WHERE status = 0 \
                 ORDER BY created_at, id LIMIT 1",
            ),
            &[],
        )
        .await
        .unwrap();
    let from: (DateTime<Utc>, uuid::Uuid) = (head.get(0), head.get(1));
    let claim = table.render(
        "SELECT * FROM {schema_prefix}\"{name}_claim_runs\"(NULL, NULL, 100, 'w', 30000000, \
         false, true, $1::timestamptz, $2::uuid, false, NULL, NULL, 1)",
    );
    let index = table.render("{schema_prefix}\"{name}_ordered_pending_idx\"");
    let from_beginning = entries_read(&mut client, &index, &claim, None).await;
    let from_start = entries_read(&mut client, &index, &claim, Some(from)).await;
    // The snapshot goes before any assertion: a failed one must not leave it held.
    holder.batch_execute("ROLLBACK").await.unwrap();
    eprintln!(
        "an ordered claim of 100 read {from_beginning:?} heads' index entries from the \
         beginning, {from_start:?} from the start"
    );
    assert_eq!((from_beginning.1, from_start.1), (100, 100));
    assert!(
        from_beginning.0 >= 20_000,
        "the held snapshot kept no dead entries: {from_beginning:?}"
    );
    assert!(
        from_start.0 <= 200,
        "an ordered claim from the start read {from_start:?}"
    );
}

/// Index entries `index` returned to `claim` (started at `from`), and the rows it claimed,
/// in a transaction that is rolled back: the server's counters of the running
/// transaction, read before and after.
async fn entries_read(
    client: &mut tokio_postgres::Client,
    index: &str,
    claim: &str,
    from: Option<(DateTime<Utc>, uuid::Uuid)>,
) -> (i64, usize) {
    let (from_created, from_id) = from.unzip();
    let counter = "SELECT pg_stat_get_xact_tuples_returned($1::text::regclass)";
    let tx = client.transaction().await.unwrap();
    let before: i64 = tx.query_one(counter, &[&index]).await.unwrap().get(0);
    let rows = tx.query(claim, &[&from_created, &from_id]).await.unwrap();
    let after: i64 = tx.query_one(counter, &[&index]).await.unwrap().get(0);
    tx.rollback().await.unwrap();
    (after - before, rows.len())
}
