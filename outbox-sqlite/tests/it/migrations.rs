//! Migrations apply, repeat, revert, and are checked.

use outbox_core::{OutboxError, TableName};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

async fn pool(dir: &tempfile::TempDir) -> sqlx::SqlitePool {
    let opts = SqliteConnectOptions::new()
        .filename(dir.path().join("outbox.db"))
        .create_if_missing(true);
    SqlitePoolOptions::new()
        .max_connections(2)
        .connect_with(opts)
        .await
        .unwrap()
}

#[tokio::test]
async fn migrate_is_idempotent_checked_and_reversible() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(&dir).await;
    let table = TableName::default();
    let err = outbox_sqlite::check_schema(&pool, &table)
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err}"
    );
    let latest = outbox_sqlite::required_version();
    assert_eq!(outbox_sqlite::migrate(&pool, &table).await.unwrap(), latest);
    assert_eq!(outbox_sqlite::migrate(&pool, &table).await.unwrap(), latest);
    outbox_sqlite::check_schema(&pool, &table).await.unwrap();
    outbox_sqlite::migrate_down(&pool, &table).await.unwrap();
    assert!(outbox_sqlite::check_schema(&pool, &table).await.is_err());
}

#[tokio::test]
async fn printed_script_creates_the_same_schema() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(&dir).await;
    let table = TableName::new("events_outbox").unwrap();
    let script = outbox_sqlite::migration_script(&table);
    sqlx::raw_sql(&script).execute(&pool).await.unwrap();
    outbox_sqlite::check_schema(&pool, &table).await.unwrap();
}

/// Every column of every row, as SQL literals, in id order.
async fn rows(pool: &sqlx::SqlitePool) -> Vec<String> {
    let columns = "id, topic, partition_key, payload, headers, status, created_at, updated_at, \
                   not_before, next_retry_at, attempt_count, last_error, dead_letter_reason, \
                   delivered_at, provider_message_id, claim_owner, claim_token, claimed_at, \
                   claim_expires_at, claim_attempt_count, stamp";
    let quoted: Vec<String> = columns
        .split(", ")
        .map(|c| format!("quote({})", c.trim()))
        .collect();
    let sql = format!(
        "SELECT {} FROM outbox ORDER BY id",
        quoted.join(" || ',' || ")
    );
    sqlx::query_scalar(&sql).fetch_all(pool).await.unwrap()
}

async fn table_sql(pool: &sqlx::SqlitePool) -> String {
    sqlx::query_scalar("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'outbox'")
        .fetch_one(pool)
        .await
        .unwrap()
}

/// The table's own indexes (not the one SQLite keeps for a rowid table's primary key).
async fn index_names(pool: &sqlx::SqlitePool) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'outbox' \
         AND name NOT LIKE 'sqlite_autoindex_%' ORDER BY name",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

/// A database at version 1 (the WITHOUT ROWID table) with entries in several states is
/// rebuilt by version 2 as a rowid table with every row, column and index intact; the
/// store works on it; version 2's down migration restores version 1's layout, rows kept.
#[tokio::test]
async fn version_2_rebuilds_a_populated_version_1_table_losslessly() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(&dir).await;
    let table = TableName::default();
    let v1 = &outbox_sqlite::migrations()[0];
    let v2 = &outbox_sqlite::migrations()[1];
    sqlx::raw_sql(&table.render(include_str!("../../sql/migrations/create_bookkeeping.sql")))
        .execute(&pool)
        .await
        .unwrap();
    sqlx::raw_sql(&table.render(v1.up))
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(&table.render(include_str!("../../sql/migrations/record.sql")))
        .bind(1_i64)
        .bind(v1.name)
        .bind(1_i64)
        .bind(v1.checksum())
        .bind(0_i64)
        .execute(&pool)
        .await
        .unwrap();
    assert!(table_sql(&pool).await.contains("WITHOUT ROWID"));
    let now = chrono::Utc::now().timestamp_micros();
    sqlx::raw_sql(&format!(
        "INSERT INTO outbox (id, topic, partition_key, payload, headers, status, created_at, \
           updated_at, not_before, next_retry_at, attempt_count, last_error, \
           dead_letter_reason, delivered_at, provider_message_id, claim_owner, claim_token, \
           claimed_at, claim_expires_at, claim_attempt_count, stamp) VALUES \
         (randomblob(16), 'a', 'k1', randomblob(1500), '{{\"h\":\"v\"}}', 0, {now}, {now}, \
           NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, randomblob(16)), \
         (randomblob(16), 'b', NULL, x'', '{{}}', 1, {now}, {now}, NULL, NULL, 1, NULL, NULL, \
           {now}, 'broker-1', NULL, NULL, NULL, NULL, 1, randomblob(16)), \
         (randomblob(16), 'c', NULL, x'01', '{{}}', 4, {now}, {now}, NULL, {now}, 2, 'boom', \
           NULL, NULL, NULL, 'w1', randomblob(16), {now}, {now}, 3, randomblob(16)), \
         (randomblob(16), 'd', NULL, x'02', '{{}}', 5, {now}, {now}, {now}, NULL, 9, 'x', \
           'gave up', NULL, NULL, NULL, NULL, NULL, NULL, 9, randomblob(16))"
    ))
    .execute(&pool)
    .await
    .unwrap();
    let before = rows(&pool).await;
    let indexes = index_names(&pool).await;

    // To the latest version, through version 2.
    let latest = outbox_sqlite::required_version();
    assert_eq!(outbox_sqlite::migrate(&pool, &table).await.unwrap(), latest);
    outbox_sqlite::check_schema(&pool, &table).await.unwrap();
    assert!(!table_sql(&pool).await.contains("WITHOUT ROWID"));
    assert_eq!(rows(&pool).await, before);
    let now_indexes = index_names(&pool).await;
    assert!(
        indexes.iter().all(|i| now_indexes.contains(i)),
        "{indexes:?} not all in {now_indexes:?}"
    );
    let store =
        outbox_sqlite::SqliteClaimStore::new(pool.clone(), outbox_sqlite::SqliteStoreConfig::new())
            .await
            .unwrap();
    let request = outbox_core::ClaimRequest::new("w2", 10, chrono::TimeDelta::seconds(30));
    let claimed = outbox_core::ClaimStore::claim_pending(&store, &request)
        .await
        .unwrap();
    assert_eq!(
        claimed.len(),
        1,
        "the pending row is claimable after the rebuild"
    );
    assert_eq!(claimed[0].entry.payload.len(), 1500);
    let after_claim = rows(&pool).await;

    for later in outbox_sqlite::migrations()[2..].iter().rev() {
        sqlx::raw_sql(&table.render(later.down))
            .execute(&pool)
            .await
            .unwrap();
    }
    sqlx::raw_sql(&table.render(v2.down))
        .execute(&pool)
        .await
        .unwrap();
    assert!(table_sql(&pool).await.contains("WITHOUT ROWID"));
    assert_eq!(rows(&pool).await, after_claim);
    assert_eq!(index_names(&pool).await, indexes);
}

/// A table upgraded to version 3 refuses ordered claims until it is prepared for them;
/// preparing it (twice, harmlessly) marks the head of every key already there (its oldest
/// row not yet delivered or dead-lettered, a failed one included), and ordered claims
/// follow them.
#[tokio::test]
async fn version_3_marks_the_heads_of_the_keys_already_there() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(&dir).await;
    let table = TableName::default();
    sqlx::raw_sql(&table.render(include_str!("../../sql/migrations/create_bookkeeping.sql")))
        .execute(&pool)
        .await
        .unwrap();
    for m in &outbox_sqlite::migrations()[..2] {
        sqlx::raw_sql(&table.render(m.up))
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query(&table.render(include_str!("../../sql/migrations/record.sql")))
            .bind(m.version)
            .bind(m.name)
            .bind(m.oldest_compatible)
            .bind(m.checksum())
            .bind(0_i64)
            .execute(&pool)
            .await
            .unwrap();
    }
    // (topic as a name, key, status, created): a's first delivered, b's first failed.
    let rows = [
        ("a1", "a", 1, 1),
        ("a2", "a", 0, 2),
        ("a3", "a", 0, 3),
        ("b1", "b", 3, 1),
        ("b2", "b", 0, 2),
        ("c1", "c", 5, 1),
    ];
    for (name, key, status, created) in rows {
        sqlx::query(
            "INSERT INTO outbox (id, topic, partition_key, payload, status, created_at, \
             updated_at, stamp) VALUES (randomblob(16), ?1, ?2, x'', ?3, ?4, ?4, randomblob(16))",
        )
        .bind(name)
        .bind(key)
        .bind(status)
        .bind(created)
        .execute(&pool)
        .await
        .unwrap();
    }
    outbox_sqlite::migrate(&pool, &table).await.unwrap();
    let unprepared =
        outbox_sqlite::SqliteClaimStore::new(pool.clone(), outbox_sqlite::SqliteStoreConfig::new())
            .await
            .unwrap();
    let request =
        outbox_core::ClaimRequest::new("w", 10, chrono::TimeDelta::seconds(30)).in_key_order();
    let refused = outbox_core::ClaimStore::claim_pending(&unprepared, &request)
        .await
        .unwrap_err();
    assert!(
        matches!(refused, OutboxError::Unsupported(ref m) if m.contains("outbox migrate --ordered")),
        "{refused}"
    );
    outbox_sqlite::enable_ordered_claims(&pool, &table)
        .await
        .unwrap();
    outbox_sqlite::enable_ordered_claims(&pool, &table)
        .await
        .unwrap();
    let heads: Vec<String> =
        sqlx::query_scalar("SELECT topic FROM outbox WHERE is_head = 1 ORDER BY topic")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(heads, vec!["a2", "b1"]);
    let store =
        outbox_sqlite::SqliteClaimStore::new(pool.clone(), outbox_sqlite::SqliteStoreConfig::new())
            .await
            .unwrap();
    let claimed = outbox_core::ClaimStore::claim_pending(&store, &request)
        .await
        .unwrap();
    let topics: Vec<&str> = claimed.iter().map(|c| c.entry.topic.as_str()).collect();
    assert_eq!(topics, vec!["a2"], "b2 waits behind the failed b1");
}

/// One run applies every missing migration in one transaction: when a later one fails,
/// the earlier ones of the same run are undone and nothing is recorded.
#[tokio::test]
async fn a_run_that_fails_part_way_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(&dir).await;
    let table = TableName::default();
    // Migration 2 creates this table; a leftover of the same name makes it fail.
    sqlx::raw_sql("CREATE TABLE outbox_rebuild (x INTEGER)")
        .execute(&pool)
        .await
        .unwrap();
    let err = outbox_sqlite::migrate(&pool, &table).await.unwrap_err();
    assert!(err.to_string().contains("outbox_rebuild"), "{err}");
    let tables: Vec<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(tables, ["outbox_rebuild"], "migration 1 was kept");
    sqlx::raw_sql("DROP TABLE outbox_rebuild")
        .execute(&pool)
        .await
        .unwrap();
    let latest = outbox_sqlite::required_version();
    assert_eq!(outbox_sqlite::migrate(&pool, &table).await.unwrap(), latest);
}

/// A schema a newer release migrated, recorded without a window (as a contracting
/// migration is), is refused with both versions named, and left as it is.
#[tokio::test]
async fn a_schema_newer_than_this_build_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(&dir).await;
    let table = TableName::default();
    let latest = outbox_sqlite::migrate(&pool, &table).await.unwrap();
    sqlx::query("INSERT INTO outbox_migrations (version, name, applied_at) VALUES (?, 'next', 0)")
        .bind(latest + 1)
        .execute(&pool)
        .await
        .unwrap();
    let err = outbox_sqlite::migrate(&pool, &table).await.unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaPastWindow { store, found, .. }
            if store == latest && found == latest + 1),
        "{err}"
    );
    let recorded: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM outbox_migrations ORDER BY version")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(recorded, (1..=latest + 1).collect::<Vec<_>>());
}
