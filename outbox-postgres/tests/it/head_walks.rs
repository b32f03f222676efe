//! Claims start their walk of the pending index at the oldest pending key the store's
//! previous claim took, and still take every row that becomes claimable behind it: at
//! once when the queue is not backlogged (the claim walks behind its start when it comes
//! up short), within the store's full-walk interval under a backlog. And what the start
//! buys: with a snapshot held open elsewhere, a claim from the start reads its batch, one
//! from the beginning every delivered row's index entry.

use std::time::{Duration, Instant};

use outbox_core::{
    ClaimStore, Completion, CompletionRequest, DeadLetterSelection, EntryId, NewEntry, OutboxAdmin,
    OutboxStore,
};
use outbox_postgres::{PgClaimStore, PgStoreConfig};
use outbox_testkit::fixtures::{at, boom, claim_ids, claim_req, new_entry, t0};
use outbox_testkit::postgres::PgTestDb;
use tokio_postgres::types::ToSql;

use crate::support;

/// The interval between walks from the beginning the backlog cases use.
const EVERY: Duration = Duration::from_secs(3);

/// A store on `db` that walks from the beginning every `every` while batches are full.
async fn store(db: &PgTestDb, every: Duration) -> PgClaimStore {
    let config = PgStoreConfig::default().full_walk_every(every).unwrap();
    support::store_with(
        db,
        support::pool(support::pg_config(&db.url, &db.schema), 4),
        config,
    )
    .await
}

/// Enqueues `n` entries created one second apart from `at(0)`.
async fn backlog(store: &PgClaimStore, n: i64) -> Vec<EntryId> {
    let entries = (0..n).map(new_entry).collect();
    let written = store.enqueue_batch(entries).await.unwrap();
    written.iter().map(|e| e.id).collect()
}

/// Claims batches of `n` until one holds `id` or `deadline` passes; returns the batch that
/// held it and how many batches came before.
async fn claim_until(
    store: &PgClaimStore,
    id: EntryId,
    n: u32,
    deadline: Instant,
) -> (Vec<EntryId>, usize) {
    let mut before = 0;
    loop {
        let ids = claim_ids(&store.claim_pending(&claim_req("w", n, t0())).await.unwrap());
        if ids.contains(&id) {
            return (ids, before);
        }
        assert!(!ids.is_empty(), "the queue ran dry without {id}");
        assert!(Instant::now() < deadline, "{id} was not claimed in time");
        before += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Claims batches of 5 until `late` comes (within four intervals of `started`): first of
/// its batch, and not before the interval passed.
async fn taken_first_after_the_interval(store: &PgClaimStore, late: EntryId, started: Instant) {
    let (batch, _) = claim_until(store, late, 5, started + EVERY * 4).await;
    assert_eq!(batch[0], late, "oldest first within its batch: {batch:?}");
    assert!(
        started.elapsed() >= EVERY,
        "taken before the interval passed"
    );
}

/// A row committed late with an earlier creation time than the claims' start, while a
/// backlog keeps every batch full: the claims right after the commit walk past it, and
/// the first walk from the beginning after the interval takes it, first of its batch.
#[tokio::test]
async fn a_late_commit_behind_the_start_is_taken_within_the_interval() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = store(&db, EVERY).await;
    backlog(&store, 200).await;
    let mut host = db.connect().await;
    let tx = host.transaction().await.unwrap();
    let late = store
        .writer()
        .enqueue_one_in(&tx, new_entry(-10))
        .await
        .unwrap()
        .id;
    let started = Instant::now();
    let first = claim_ids(&store.claim_pending(&claim_req("w", 5, t0())).await.unwrap());
    assert_eq!(first.len(), 5);
    tx.commit().await.unwrap();
    let next = claim_ids(&store.claim_pending(&claim_req("w", 5, t0())).await.unwrap());
    if started.elapsed() < EVERY {
        assert!(!next.contains(&late), "the claim walked from the beginning");
    }
    taken_first_after_the_interval(&store, late, started).await;
}

/// The same late commit on a queue that is not backlogged: a claim after the commit comes
/// up short ahead of its start and walks behind it, so the row is taken long before the
/// store's interval (an hour here) would bring a walk from the beginning. (The first
/// claim after a walk from the beginning that took over 10 ms may not walk behind yet: the
/// loop allows for a loaded machine.)
#[tokio::test]
async fn a_late_commit_is_taken_at_once_without_a_backlog() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = store(&db, Duration::from_secs(3600)).await;
    let written = backlog(&store, 3).await;
    let mut host = db.connect().await;
    let tx = host.transaction().await.unwrap();
    let late = store
        .writer()
        .enqueue_one_in(&tx, new_entry(-10))
        .await
        .unwrap()
        .id;
    let first = claim_ids(
        &store
            .claim_pending(&claim_req("w", 10, t0()))
            .await
            .unwrap(),
    );
    assert_eq!(first, written);
    tx.commit().await.unwrap();
    let more = NewEntry::new("t", b"new".to_vec()).created_at(at(100));
    let newer = store.enqueue(more).await.unwrap().id;
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut taken = Vec::new();
    while !taken.contains(&late) {
        assert!(
            Instant::now() < deadline,
            "{late} was not claimed: {taken:?}"
        );
        let ids = claim_ids(
            &store
                .claim_pending(&claim_req("w", 10, t0()))
                .await
                .unwrap(),
        );
        taken.extend(ids);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(taken.contains(&newer), "{taken:?}");
    assert_eq!(taken.len(), 2, "{taken:?}");
}

/// An operator's requeue of a dead letter created before the claims' start: skipped while
/// the start is fresh and the backlog fills every batch, taken after the interval.
#[tokio::test]
async fn an_operator_requeue_behind_the_start_is_taken() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = store(&db, EVERY).await;
    let written = backlog(&store, 200).await;
    let oldest = store
        .claim_pending(&claim_req("w", 1, t0()))
        .await
        .unwrap()
        .remove(0);
    assert_eq!(oldest.id(), written[0]);
    let dead = Completion::DeadLettered {
        error: boom(),
        reason: None,
    };
    let done = store
        .complete(CompletionRequest::new(oldest.clone(), dead).at(t0()))
        .await
        .unwrap();
    assert!(done.is_applied(), "{done:?}");
    let started = Instant::now();
    let past = claim_ids(&store.claim_pending(&claim_req("w", 5, t0())).await.unwrap());
    assert_eq!(past, written[1..6]);
    let requeued = store
        .requeue(
            &outbox_core::RequeueRequest::dead_letters(DeadLetterSelection::One(oldest.id()))
                .at(t0()),
        )
        .await
        .unwrap();
    assert_eq!(requeued, 1);
    let next = claim_ids(&store.claim_pending(&claim_req("w", 5, t0())).await.unwrap());
    if started.elapsed() < EVERY {
        assert_eq!(next, written[6..11], "the claim walked from the beginning");
    }
    let (batch, _) = claim_until(&store, oldest.id(), 5, started + EVERY * 4).await;
    assert_eq!(batch[0], oldest.id(), "{batch:?}");
}

/// A store that starts while another drains the table takes the start the other shared
/// (migration 0007) instead of walking from the beginning: under a backlog its first
/// claims walk past a row committed late behind that start, exactly as the running store's
/// would, and the row is still taken, first of its batch, once the interval has passed.
#[tokio::test]
async fn a_new_store_starts_where_a_running_one_shared() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let running = store(&db, EVERY).await;
    let written = backlog(&running, 200).await;
    let started = Instant::now();
    for batch in written[..10].chunks(5) {
        let ids = claim_ids(
            &running
                .claim_pending(&claim_req("w", 5, t0()))
                .await
                .unwrap(),
        );
        assert_eq!(ids, batch);
    }
    let mut host = db.connect().await;
    let tx = host.transaction().await.unwrap();
    let late = running
        .writer()
        .enqueue_one_in(&tx, new_entry(-10))
        .await
        .unwrap()
        .id;
    tx.commit().await.unwrap();
    let new = store(&db, EVERY).await;
    let first = claim_ids(&new.claim_pending(&claim_req("n", 5, t0())).await.unwrap());
    if started.elapsed() < EVERY {
        assert_eq!(
            first,
            written[10..15],
            "the new store walked from the beginning"
        );
    }
    taken_first_after_the_interval(&new, late, started).await;
}

/// A claim shares its view in its own statement. Shares are rows added, never rows
/// updated, and a share that asks to prunes its kind's older ones: after 1,000 claims
/// that share, every 64th pruning, at most 512 rows of the kind are left, another kind's
/// are untouched, and the newest of each kind is the one a new store reads.
#[tokio::test]
async fn shares_ride_on_claims_are_pruned_and_the_newest_is_read() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let table = support::table(&db);
    let client = db.connect().await;
    // The claim of every slice as the store renders it: its share in place, the slice
    // arguments left out.
    let template = include_str!("../../sql/claim.sql")
        .replace("{claim_share}", include_str!("../../sql/claim_share.sql"));
    let every_slice: Vec<&str> = template
        .lines()
        .filter(|l| !l.contains("{slice_args}"))
        .collect();
    let claim = table.render(&every_slice.join("\n"));
    let read = table.render(include_str!("../../sql/shared_starts.sql"));
    let sharer = uuid::Uuid::now_v7();
    let from_id = uuid::Uuid::now_v7();
    let at = outbox_core::chrono::Utc::now();
    let share = |kind: &'static str, hold_back_us: i64, prune: bool| {
        let (client, claim) = (&client, &claim);
        async move {
            let view: [&(dyn ToSql + Sync); 7] = [
                &kind,
                &sharer,
                &at,
                &from_id,
                &5_000_000_i64,
                &hold_back_us,
                &prune,
            ];
            claim_on_empty(client, claim, view).await;
        }
    };
    share("1/2|t", 0, false).await;
    for n in 0..1000 {
        share("all|", n, n % 64 == 0).await;
    }
    let rows = |kind: &'static str| {
        let client = &client;
        let sql = table
            .render("SELECT count(*) FROM {schema_prefix}\"{name}_claim_starts\" WHERE kind = $1");
        async move {
            client
                .query_one(&sql, &[&kind])
                .await
                .unwrap()
                .get::<_, i64>(0)
        }
    };
    let left = rows("all|").await;
    assert!((256..=512).contains(&left), "{left} shares left");
    assert_eq!(rows("1/2|t").await, 1);
    let newest = client.query(&read, &[]).await.unwrap();
    let by_kind: Vec<(String, i64)> = newest
        .iter()
        .map(|r| (r.get("kind"), r.get("hold_back_us")))
        .collect();
    assert_eq!(by_kind, [("1/2|t".into(), 0), ("all|".into(), 999)]);
    assert_eq!(newest[1].get::<_, uuid::Uuid>("sharer"), sharer);
    let age: i64 = newest[1].get("full_age_us");
    assert!((5_000_000..65_000_000).contains(&age), "{age}");
    // A claim with nothing to share adds nothing.
    let (no_text, no_uuid, no_i64): (Option<String>, Option<uuid::Uuid>, Option<i64>) =
        (None, None, None);
    let no_at: Option<outbox_core::chrono::DateTime<outbox_core::chrono::Utc>> = None;
    let nothing: [&(dyn ToSql + Sync); 7] = [
        &no_text, &no_uuid, &no_at, &no_uuid, &no_i64, &no_i64, &true,
    ];
    claim_on_empty(&client, &claim, nothing).await;
    assert_eq!(rows("all|").await, left);
}

/// Runs `claim` (of every slice) on a table with nothing to claim: one entry from the
/// beginning of the index, with `share` as its parameters $11 to $17.
async fn claim_on_empty(
    client: &tokio_postgres::Client,
    claim: &str,
    share: [&(dyn ToSql + Sync); 7],
) {
    let no_at: Option<outbox_core::chrono::DateTime<outbox_core::chrono::Utc>> = None;
    let (no_topic, no_id): (Option<String>, Option<uuid::Uuid>) = (None, None);
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![
        &no_at,
        &no_topic,
        &1_i64,
        &"w",
        &30_000_000_i64,
        &true,
        &true,
        &no_at,
        &no_id,
        &true,
    ];
    params.extend(share);
    let rows = client.query(claim, &params).await.unwrap();
    assert!(rows.is_empty(), "the table is empty");
}

/// With a repeatable-read snapshot held open on another connection, 20,000 delivered rows
/// keep their pending-index entries. A claim of 100 from the beginning reads all of them;
/// the same claim from the oldest pending key reads about its batch.
#[tokio::test]
async fn a_claim_from_the_start_reads_its_batch_while_a_snapshot_is_held() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let table = support::table(&db);
    let mut client = db.connect().await;
    client
        .batch_execute(&table.render(
            "INSERT INTO {table} (id, topic, payload, created_at, updated_at, stamp) \
             SELECT gen_random_uuid(), 't', '\\x00'::bytea, \
                    now() - interval '1 hour' + i * interval '1 millisecond', now(), \
                    gen_random_uuid() \
             FROM generate_series(1, 30000) AS i",
        ))
        .await
        .unwrap();
    let store = support::store(&db, 1).await;
    let sampled = |stats: outbox_core::OutboxStats| stats.cleanup.unwrap().dead_index_entries;
    assert_eq!(
        sampled(
            store
                .stats(&outbox_core::StatsRequest::new())
                .await
                .unwrap()
        ),
        0
    );
    let holder = db.connect().await;
    holder
        .batch_execute(
            &table.render("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM {table}"),
        )
        .await
        .unwrap();
    client
        .batch_execute(&table.render(
            "UPDATE {table} SET status = 1, delivered_at = now() WHERE id IN \
             (SELECT id FROM {table} ORDER BY created_at, id LIMIT 20000)",
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
    let from: (
        outbox_core::chrono::DateTime<outbox_core::chrono::Utc>,
        uuid::Uuid,
    ) = (head.get(0), head.get(1));
    let claim = table.render(
        "SELECT * FROM {schema_prefix}\"{name}_claim\"(NULL, NULL, 100, 'w', 30000000, \
         false, true, $1::timestamptz, $2::uuid, false)",
    );
    let none: Option<uuid::Uuid> = None;
    let no_time: Option<outbox_core::chrono::DateTime<outbox_core::chrono::Utc>> = None;
    let index = table.render("{schema_prefix}\"{name}_pending_idx\"");
    let from_beginning = entries_read(&mut client, &index, &claim, &no_time, &none).await;
    let from_start = entries_read(&mut client, &index, &claim, &Some(from.0), &Some(from.1)).await;
    let while_held = sampled(
        store
            .stats(&outbox_core::StatsRequest::new())
            .await
            .unwrap(),
    );
    // The snapshot goes before any assertion: a failed one must not leave it held.
    holder.batch_execute("ROLLBACK").await.unwrap();
    eprintln!(
        "a claim of 100 read {from_beginning:?} pending-index entries from the beginning, \
         {from_start:?} from the start"
    );
    assert_eq!((from_beginning.1, from_start.1), (100, 100));
    assert!(
        from_beginning.0 >= 20_000,
        "the held snapshot kept no dead entries: {from_beginning:?}"
    );
    assert!(
        from_start.0 <= 200,
        "a claim from the start read {from_start:?}"
    );
    // What `stats` samples: the entries a walk from the beginning steps over.
    assert!((20_000..20_100).contains(&while_held), "{while_held}");
}

/// Index entries `index` returned to a claim (`claim` with the start given), and the rows
/// it claimed, in a transaction that is rolled back: the server's counters of the running
/// transaction, read before and after.
async fn entries_read(
    client: &mut tokio_postgres::Client,
    index: &str,
    claim: &str,
    from_created: &Option<outbox_core::chrono::DateTime<outbox_core::chrono::Utc>>,
    from_id: &Option<uuid::Uuid>,
) -> (i64, usize) {
    let counter = "SELECT pg_stat_get_xact_tuples_returned($1::text::regclass)";
    let tx = client.transaction().await.unwrap();
    let before: i64 = tx.query_one(counter, &[&index]).await.unwrap().get(0);
    let rows = tx.query(claim, &[from_created, from_id]).await.unwrap();
    let after: i64 = tx.query_one(counter, &[&index]).await.unwrap().get(0);
    tx.rollback().await.unwrap();
    (after - before, rows.len())
}
