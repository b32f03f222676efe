//! An operator's listing reads its page, not the history: each status's first page and the
//! page after it, behind 1,000,000 delivered rows, judged by the buffers
//! `EXPLAIN (ANALYZE, BUFFERS)` reports and by the table's own counters (no sequential
//! scan, about a page of rows fetched), whatever the statistics say and whether the server
//! plans the statement for its values or once for any (a named statement's generic plan).

use tokio_postgres::Client;
use uuid::Uuid;

use crate::plan_bounds::{analyze, assert_stats, explained, load, reading, table, Stats};
use crate::support;
use outbox_core::store_kit::admin::ListStatements;
use outbox_core::EmissionStatus;
use outbox_testkit::postgres::PgTestDb;

const PAGE: i64 = 40;

/// Live rows of each status. Many pages' worth, so that a plan reading a whole status (or
/// the deferred and retryable rows the retry index holds together) and sorting them costs
/// the planner clearly more than walking a page: with 100 rows a status the choice
/// turned on which rows `ANALYZE`'s sample happened to hold, and a generic plan once
/// read the 200 rows of the retry index for a page of deferred rows.
const LIVE: i64 = 1_000;

/// Buffers one page may touch: its index walk and its rows' heap pages, the cursor's
/// lookups. A walk of the history touches tens of thousands.
const PAGE_BUFFERS: i64 = 400;

fn listings(db: &PgTestDb) -> ListStatements {
    let table = support::table(db);
    ListStatements::render(
        include_str!("../../sql/admin/list_entries.sql"),
        include_str!("../../sql/admin/list_delivered.sql"),
        |sql| table.render(sql),
    )
}

/// The first page of `status` and the page after it: their ids, each page's buffers and
/// what each read of the table.
async fn pages(
    db: &PgTestDb,
    client: &mut Client,
    status: EmissionStatus,
) -> Vec<(Vec<Uuid>, i64, crate::plan_bounds::Read)> {
    let sql = listings(db).get(status).to_owned();
    let topic: Option<String> = None;
    let mut after: Option<Uuid> = None;
    let mut out = Vec::new();
    for _ in 0..2 {
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
            [&topic, &after, &PAGE, &topic];
        explained(client, &sql, &params).await;
        let (buffers, _) = explained(client, &sql, &params).await;
        let (rows, read) = reading(db, client, &sql, &params).await;
        let ids: Vec<Uuid> = rows.iter().map(|r| r.get("id")).collect();
        after = ids.last().copied();
        out.push((ids, buffers, read));
    }
    out
}

#[tokio::test]
async fn every_listing_reads_its_page_behind_a_million_delivered() {
    let Some((db, mut client)) = table().await else {
        return;
    };
    load(&db, &client, 1_000_000, 1).await;
    for status in [0, 2, 3, 4, 5] {
        load(&db, &client, LIVE, status).await;
    }
    for (stats, generic) in [
        (Stats::Never, false),
        (Stats::Analyzed, false),
        (Stats::Analyzed, true),
    ] {
        if stats == Stats::Analyzed {
            analyze(&db, &client).await;
        }
        assert_stats(&db, &client, stats).await;
        let mode = if generic {
            "force_generic_plan"
        } else {
            "auto"
        };
        client
            .batch_execute(&format!("SET plan_cache_mode = {mode}"))
            .await
            .unwrap();
        for status in EmissionStatus::ALL {
            let pages = pages(&db, &mut client, status).await;
            for (i, (ids, buffers, read)) in pages.iter().enumerate() {
                eprintln!("{stats:?} {mode} {status} page {i}: {buffers} buffers, {read:?}");
                assert_eq!(ids.len() as i64, PAGE, "{status} page {i}: a full page");
                assert!(
                    *buffers < PAGE_BUFFERS,
                    "{stats:?} {mode}: {status} page {i} touched {buffers} buffers"
                );
                assert!(
                    read.seq_scans == 0 && read.rows_fetched <= 3 * PAGE,
                    "{stats:?} {mode}: {status} page {i} read {read:?}"
                );
            }
            let (first, second) = (&pages[0].0, &pages[1].0);
            assert!(
                first.iter().all(|id| !second.contains(id)),
                "{status}: the second page follows the first"
            );
        }
        // The by-topic picture reads the live rows (five statuses of LIVE), not the
        // history.
        let topics = support::table(&db).render(include_str!("../../sql/admin/topic_stats.sql"));
        let (groups, read) = reading(&db, &mut client, &topics, &[]).await;
        eprintln!("{stats:?} {mode} topic stats: {read:?}");
        assert_eq!(groups.len(), 5, "one topic, five live statuses");
        assert!(
            read.seq_scans == 0 && read.rows_fetched <= 6 * LIVE,
            "{stats:?} {mode}: the topic stats read {read:?}"
        );
    }
}
