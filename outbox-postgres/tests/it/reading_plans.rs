//! What operators read costs what is live, not the history behind it: `outbox stats` in
//! its live form, judged by the buffers `EXPLAIN (ANALYZE, BUFFERS)` reports, reads about
//! as much behind 1,000,000 delivered rows as the full count reads of the live rows alone,
//! whatever the table's statistics say (never analyzed, or analyzed after the load), and
//! it counts the live rows exactly.

use tokio_postgres::Client;

use crate::plan_bounds::{analyze, assert_stats, explained, load, reading, table, Stats};
use crate::support;
use outbox_testkit::postgres::PgTestDb;

/// Buffers one live picture may touch: the live rows below (a few pages of heap and
/// index), the catalog reads of the held-snapshot part, the walk to the first pending row.
/// The full count of the same table touches every page of a million rows (tens of
/// thousands).
const LIVE_BUFFERS: i64 = 1_500;

/// The stats statement with `counts` (one of the two count files), rendered for the test
/// table, as the store renders it.
fn stats_sql(db: &PgTestDb, counts: &str) -> String {
    support::table(db)
        .render(&include_str!("../../sql/admin/stats.sql").replace("{counts}", counts))
}

async fn buffers(db: &PgTestDb, client: &mut Client, counts: &str) -> (i64, tokio_postgres::Row) {
    let sql = stats_sql(db, counts);
    let name = support::table(db).qualified();
    let now: Option<chrono::DateTime<chrono::Utc>> = None;
    // The first call warms the catalog caches and the function's plan.
    explained(client, &sql, &[&now, &name]).await;
    let (buffers, rows) = explained(client, &sql, &[&now, &name]).await;
    assert_eq!(rows, 1);
    let row = client.query_one(&sql, &[&now, &name]).await.unwrap();
    (buffers, row)
}

#[tokio::test]
async fn live_stats_read_what_is_live_behind_a_million_delivered() {
    let Some((db, mut client)) = table().await else {
        return;
    };
    load(&db, &client, 1_000_000, 1).await;
    load(&db, &client, 100, 0).await;
    load(&db, &client, 50, 4).await;
    load(&db, &client, 50, 5).await;
    for stats in [Stats::Never, Stats::Analyzed] {
        if stats == Stats::Analyzed {
            analyze(&db, &client).await;
        }
        assert_stats(&db, &client, stats).await;
        let live_counts = include_str!("../../sql/admin/live_counts.sql");
        let exact_counts = include_str!("../../sql/admin/exact_counts.sql");
        let (live, row) = buffers(&db, &mut client, live_counts).await;
        let (exact, _) = buffers(&db, &mut client, exact_counts).await;
        eprintln!("{stats:?}: the live stats touched {live} buffers, the full count {exact}");
        assert!(
            live < LIVE_BUFFERS,
            "{stats:?}: the live stats touched {live} buffers behind a million delivered rows"
        );
        assert!(
            exact > 10 * live,
            "{stats:?}: the full count ({exact} buffers) does not read the history: the \
             comparison proves nothing"
        );
        let n = |column: &str| row.get::<_, i64>(column);
        assert_eq!(
            (
                n("pending"),
                n("retryable_failure"),
                n("dead_lettered"),
                n("failed")
            ),
            (100, 50, 50, 0),
            "{stats:?}: the live rows are counted exactly"
        );
        assert!(row.get::<_, bool>("delivered_estimated"));
        // The table's own counters for the transaction: no sequential scan, and only the
        // live rows (and the first pending one again) fetched through indexes.
        let sql = stats_sql(&db, live_counts);
        let name = support::table(&db).qualified();
        let now: Option<chrono::DateTime<chrono::Utc>> = None;
        let (_, read) = reading(&db, &mut client, &sql, &[&now, &name]).await;
        assert!(
            read.seq_scans == 0 && read.rows_fetched <= 300,
            "{stats:?}: the live stats read {read:?} behind a million delivered rows"
        );
        assert_eq!(row.get::<_, Option<i64>>("claims_made"), None);
    }
}
