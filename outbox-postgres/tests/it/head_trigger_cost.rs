//! The head trigger's cost does not grow with a key's backlog, on a table never analyzed
//! (as a table is right after a bulk load): moving a key's flag reads the few flagged
//! rows, never the key's rows behind its head.

use chrono::{TimeDelta, Utc};
use outbox_core::{NewEntry, OutboxStore};

use crate::support;

const KEYS: usize = 10;
const PER_KEY: usize = 300;
/// Heads delivered per key (past five, PL/pgSQL plans the trigger's statements generically).
const ROUNDS: usize = 7;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moving_a_head_reads_no_rows_behind_it_on_a_never_analyzed_table() {
    let Some(db) = support::ordered_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let start = Utc::now() - TimeDelta::hours(1);
    let entries: Vec<NewEntry> = (0..KEYS * PER_KEY)
        .map(|i| {
            NewEntry::new("orders", vec![])
                .partition_key(format!("key-{}", i % KEYS))
                .created_at(start + TimeDelta::milliseconds(i64::try_from(i).unwrap()))
        })
        .collect();
    for chunk in entries.chunks(1_000) {
        store.enqueue_batch(chunk.to_vec()).await.unwrap();
    }
    let table = support::table(&db);
    let client = db.connect().await;
    // Each key's first rows, oldest first: the heads to deliver, one after the other.
    let rows = client
        .query(
            &table.render("SELECT id, partition_key FROM {table} ORDER BY created_at, id"),
            &[],
        )
        .await
        .unwrap();
    let mut heads: Vec<Vec<uuid::Uuid>> = vec![Vec::new(); KEYS];
    for row in &rows {
        let key: String = row.get(1);
        let k: usize = key.trim_start_matches("key-").parse().unwrap();
        if heads[k].len() < ROUNDS {
            heads[k].push(row.get(0));
        }
    }
    let read = || async {
        client
            .query_one("SELECT pg_stat_force_next_flush()", &[])
            .await
            .unwrap();
        client
            .query_one(
                "SELECT coalesce(sum(idx_tup_read), 0)::bigint FROM pg_stat_user_indexes \
                 WHERE schemaname = $1 AND indexrelname = 'outbox_key_order_idx'",
                &[&db.schema],
            )
            .await
            .unwrap()
            .get::<_, i64>(0)
    };
    let before = read().await;
    let deliver = table.render("UPDATE {table} SET status = 1 WHERE id = $1");
    for round in 0..ROUNDS {
        for key in &heads {
            client.execute(&deliver, &[&key[round]]).await.unwrap();
        }
    }
    let tuples = read().await - before;
    let moves = i64::try_from(KEYS * ROUNDS).unwrap();
    // Each head read also passes the index entries earlier deliveries of its key left (up
    // to ROUNDS a key, until a vacuum; not marked dead while other sessions hold
    // snapshots): at most a few dozen a move. Reading the rows behind the head costs about
    // PER_KEY a move.
    assert!(
        tuples <= 20 * moves,
        "moving {moves} heads read {tuples} entries of the key order index: the trigger \
         reads the rows behind each head ({PER_KEY} a key)"
    );
    // And the flags moved: each key's head is now its row number ROUNDS.
    let flagged: i64 = client
        .query_one(
            &table.render("SELECT count(*) FROM {table} WHERE is_head AND status NOT IN (1, 5)"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(flagged, i64::try_from(KEYS).unwrap(), "one head per key");
}
