//! The ordered claim costs its batch, not the backlog, the number of keys or one key's
//! backlog, whatever the statistics say, from the beginning and from a start: EXPLAIN
//! buffers and rows of one claim of 100 in key runs of up to 10, at 10,000 and 500,000
//! pending across 100,000 keys, at 10 and 1,000 keys (where the runs fill the batch), and
//! behind one hot key with half a million entries.

use tokio_postgres::Client;

use crate::plan_bounds::{analyze, assert_stats, explained, table, Stats, BUFFERS};

/// Buffers one ordered claim of 100 may touch: an unordered claim's, and for each
/// candidate head a walk of its key's first rows (their lease check). An O(backlog) or
/// O(keys) plan touches tens of thousands.
const ORDERED_BUFFERS: i64 = 2 * BUFFERS;
use crate::support;
use outbox_testkit::postgres::PgTestDb;

/// Loads `n` due pending rows spread round robin over `keys` keys named `prefix-0` …, each
/// key's first row flagged as its head, as the trigger would leave them. The trigger is
/// off for the load (it would serialize half a million rows).
async fn load_keyed(db: &PgTestDb, client: &Client, n: i64, keys: i64, prefix: &str) {
    let sql = support::table(db).render(
        "INSERT INTO {table} (id, topic, partition_key, payload, status, created_at, \
         updated_at, stamp, is_head) \
         SELECT gen_random_uuid(), 't', $3::text || '-' || (i % $2::bigint), '\\x00'::bytea, 0, \
                now() - interval '1 hour' + i * interval '1 microsecond', \
                now() - interval '1 hour', gen_random_uuid(), i <= $2::bigint \
         FROM generate_series(1, $1::bigint) AS i",
    );
    client
        .batch_execute("SET session_replication_role = replica")
        .await
        .unwrap();
    client.execute(&sql, &[&n, &keys, &prefix]).await.unwrap();
    client
        .batch_execute("SET session_replication_role = DEFAULT")
        .await
        .unwrap();
}

/// Buffers and rows of one ordered claim of 100 in runs of up to 10, rolled back: through
/// the previous release's form (its walk from the beginning), or from the table's oldest
/// pending head, allowed to walk behind it.
async fn ordered_claim_buffers(db: &PgTestDb, client: &mut Client, from: bool) -> (i64, usize) {
    let claim = support::table(db).render(if from {
        "SELECT * FROM {schema_prefix}\"{name}_claim_runs\"(NULL, NULL, 100, 'w', \
         30000000, true, true, \
         (SELECT created_at FROM {table} WHERE status = 0 AND is_head \
          ORDER BY created_at, id LIMIT 1), \
         (SELECT id FROM {table} WHERE status = 0 AND is_head \
          ORDER BY created_at, id LIMIT 1), \
         true, NULL, NULL, 10)"
    } else {
        "SELECT * FROM {schema_prefix}\"{name}_claim_runs\"(NULL, NULL, 100, 'w', \
         30000000, true, true, NULL, NULL, 10)"
    });
    explained(client, &claim, &[]).await
}

/// One case: the loads, the statistics, then the judged claim (after one that warms the
/// caches).
async fn case(loads: &[(i64, i64)], stats: Stats) -> Option<i64> {
    let (db, mut client) = table().await?;
    outbox_postgres::enable_ordered_claims(&mut client, &support::table(&db))
        .await
        .unwrap();
    for (group, &(n, keys)) in loads.iter().enumerate() {
        load_keyed(&db, &client, n, keys, &format!("group{group}")).await;
    }
    if stats == Stats::Analyzed {
        analyze(&db, &client).await;
    }
    assert_stats(&db, &client, stats).await;
    ordered_claim_buffers(&db, &mut client, false).await;
    let (buffers, rows) = ordered_claim_buffers(&db, &mut client, false).await;
    let (from_start, from_rows) = ordered_claim_buffers(&db, &mut client, true).await;
    eprintln!(
        "{loads:?} (rows, keys), {stats:?}: an ordered claim of 100 touched {buffers} buffers \
         from the beginning, {from_start} from the oldest head"
    );
    assert_eq!(
        (rows, from_rows),
        (100, 100),
        "{loads:?}: the batch is filled"
    );
    for (walk, touched) in [
        ("from the beginning", buffers),
        ("from a start", from_start),
    ] {
        assert!(
            touched < ORDERED_BUFFERS,
            "{loads:?}, {stats:?}: an ordered claim of 100 {walk} touched {touched} buffers"
        );
    }
    Some(buffers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordered_claim_cost_does_not_grow_with_the_backlog_or_the_keys() {
    for stats in [Stats::Never, Stats::Analyzed] {
        let Some(small) = case(&[(10_000, 10_000)], stats).await else {
            return;
        };
        let Some(large) = case(&[(500_000, 100_000)], stats).await else {
            return;
        };
        assert!(
            large < small * 2,
            "{stats:?}: an ordered claim at 500k pending over 100k keys touched {large} \
             buffers, at 10k {small}"
        );
    }
}

/// A batch of runs of ten costs what its rows cost whatever the key count: at 1,000 keys
/// the claim reads and locks the ten heads it uses, as at 10 keys, not a batch of heads
/// each with its run (which cost twice the buffers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn few_keys_fill_the_batch_in_runs_at_the_cost_of_the_batch() {
    for stats in [Stats::Never, Stats::Analyzed] {
        let Some(ten) = case(&[(24_000, 10)], stats).await else {
            return;
        };
        let Some(thousand) = case(&[(24_000, 1_000)], stats).await else {
            return;
        };
        assert!(
            thousand * 4 < ten * 5,
            "{stats:?}: a claim in runs at 1,000 keys touched {thousand} buffers, at 10 keys {ten}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_hot_key_costs_the_ordered_claim_one_entry() {
    for stats in [Stats::Never, Stats::Analyzed] {
        // Half a million entries of one key first, then 1,000 keys with work.
        if case(&[(500_000, 1), (10_000, 1_000)], stats)
            .await
            .is_none()
        {
            return;
        }
    }
}
