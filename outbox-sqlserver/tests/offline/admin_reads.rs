//! The operator's reads: the stats readers' columns, the live reads through the filtered
//! indexes only, and the listings written per status.

use super::*;

/// Each read of the table in `sql`: the text from its `FROM {table}` on.
fn reads_of_the_table(sql: &str) -> Vec<&str> {
    sql.match_indices("FROM {table}")
        .map(|(i, _)| &sql[i..])
        .collect()
}

/// The stats reader takes its columns by name (`admin.rs`): both statements name each,
/// the full one with the claims made summed as `bigint` so a large table cannot overflow
/// `int`, the live one with none.
#[test]
fn stats_name_every_column_the_reader_takes() {
    let statuses = EmissionStatus::ALL.map(EmissionStatus::as_str);
    let others = [
        "oldest_pending",
        "retry_ready",
        "in_flight",
        "expired",
        "claims_made",
        "delivered_estimated",
    ];
    for spec in [statements::STATS, statements::LIVE_STATS] {
        let sql = spec.template;
        for column in statuses.iter().chain(&others) {
            assert!(
                sql.contains(&format!("AS {column}")),
                "{} names no {column}",
                spec.file
            );
        }
        assert!(sql.contains("SELECT @now AS at"), "{sql}");
    }
    assert!(
        statements::STATS
            .template
            .contains("THEN CAST(claim_attempt_count AS bigint) END"),
        "the full count sums the claims as bigint"
    );
    assert!(statements::LIVE_STATS
        .template
        .contains("CAST(NULL AS bigint) AS claims_made"));
}

/// The live stats never read the history: each of its reads of the table names a filtered
/// index whose filter leaves delivered rows out, and the delivered count comes from the
/// server's row count.
#[test]
fn live_stats_read_only_the_filtered_indexes() {
    let sql = statements::LIVE_STATS.template;
    let reads = reads_of_the_table(sql);
    assert_eq!(reads.len(), 2, "{sql}");
    for read in reads {
        let line = read.lines().next().unwrap_or("");
        assert!(
            line.contains("WITH (INDEX([{name}_pending_ix]))")
                || line.contains("WITH (INDEX([{name}_parked_ix]))"),
            "a read of the table without a filtered index: {line}"
        );
    }
    assert!(sql.contains("FROM sys.partitions"), "{sql}");
    let migration = include_str!("../../migrations/0004_operator_reads.up.sql");
    assert!(
        migration.contains("WHERE status IN (2, 3, 4, 5)"),
        "{migration}"
    );
    assert!(
        migration.contains("INCLUDE (next_retry_at, claim_expires_at)"),
        "the parked index carries what the live stats judge: {migration}"
    );
}

#[test]
fn topic_stats_read_only_the_filtered_indexes() {
    let sql = statements::TOPIC_STATS.template;
    let reads = reads_of_the_table(sql);
    assert_eq!(reads.len(), 2, "{sql}");
    assert!(reads[0]
        .starts_with("FROM {table} WITH (INDEX([{name}_pending_ix]))\n      WHERE status = 0\n"));
    assert!(reads[1].starts_with(
        "FROM {table} WITH (INDEX([{name}_parked_ix]))\n      WHERE status IN (2, 3, 4, 5))"
    ));
    for column in ["topic", "status", "n", "oldest"] {
        assert!(
            sql.contains(&format!(" AS {column}")) || sql.contains(&format!("live.{column},")),
            "the reader takes {column}: {sql}"
        );
    }
}

#[test]
fn listings_name_their_status_and_start_at_the_cursor() {
    let table = TableName::default();
    let listings = Statements::render(&table).list;
    for status in EmissionStatus::ALL {
        let sql = listings.get(status);
        assert!(sql.contains("OPTION (RECOMPILE);"), "{status}: {sql}");
        assert!(sql.contains("SELECT TOP (@P3) t.*"), "{status}: {sql}");
        if status == EmissionStatus::Delivered {
            assert!(sql.contains("WHERE t.status = 1\n"), "{sql}");
            assert!(
                sql.contains("ORDER BY t.delivered_at DESC, t.seq DESC"),
                "{sql}"
            );
        } else {
            let code = status.code();
            assert!(sql.contains(&format!("WHERE t.status = {code}\n")), "{sql}");
            assert!(sql.contains("ORDER BY t.created_at, t.id"), "{sql}");
        }
    }
    // The groups written in are the filtered indexes' own predicates.
    let created = include_str!("../../migrations/0001_create_outbox.up.sql");
    let parked = include_str!("../../migrations/0004_operator_reads.up.sql");
    assert!(created.contains("    WHERE status = 0;"), "{created}");
    assert!(
        created.contains("[{name}_delivered_ix] ON {table} (delivered_at)\n    WHERE status = 1;")
    );
    assert!(listings
        .get(EmissionStatus::Pending)
        .contains("t.status IN (0)"));
    assert!(parked.contains("WHERE status IN (2, 3, 4, 5);"), "{parked}");
    assert!(listings
        .get(EmissionStatus::DeadLettered)
        .contains("t.status IN (2, 3, 4, 5)"));
}
