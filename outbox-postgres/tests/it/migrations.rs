//! Migrations apply, repeat, revert, and are checked.

use outbox_core::{NewEntry, OutboxEntry, OutboxError, TableName};
use outbox_testkit::postgres::PgTestDb;

/// Writes `entries` as releases before migration 5 did: without a slice hash (today's
/// writers need the column).
pub(crate) async fn write_as_before_slices(
    client: &tokio_postgres::Client,
    table: &TableName,
    entries: Vec<NewEntry>,
) {
    let insert = table.render(
        "INSERT INTO {table} (id, topic, partition_key, payload, headers, status, created_at, \
         updated_at, stamp) VALUES ($1, $2, $3, $4, jsonb_build_object(), 0, $5, $5, $6)",
    );
    for new in entries {
        let e = OutboxEntry::from_new(new, outbox_core::chrono::Utc::now());
        client
            .execute(
                &insert,
                &[
                    &e.id.as_uuid(),
                    &e.topic,
                    &e.partition_key,
                    &e.payload,
                    &e.created_at,
                    &e.stamp,
                ],
            )
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn migrate_is_idempotent_checked_and_reversible() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let mut client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    let err = outbox_postgres::check_schema(&client, &table)
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaNotMigrated { .. }),
        "{err}"
    );
    let latest = outbox_postgres::required_version();
    assert_eq!(latest, 13);
    assert_eq!(
        outbox_postgres::migrate(&mut client, &table).await.unwrap(),
        latest
    );
    assert_eq!(
        outbox_postgres::migrate(&mut client, &table).await.unwrap(),
        latest
    );
    outbox_postgres::check_schema(&client, &table)
        .await
        .unwrap();
    outbox_postgres::migrate_down(&mut client, &table)
        .await
        .unwrap();
    assert!(outbox_postgres::check_schema(&client, &table)
        .await
        .is_err());
}

/// A schema a newer release migrated is refused with both versions named, and left as it
/// is.
#[tokio::test]
async fn a_schema_newer_than_this_build_is_refused_and_left_as_it_is() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let mut client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    let latest = outbox_postgres::migrate(&mut client, &table).await.unwrap();
    let bookkeeping = table.render("{schema_prefix}\"{name}_migrations\"");
    client
        .execute(
            &format!("INSERT INTO {bookkeeping} (version, name) VALUES ($1, 'next')"),
            &[&(latest + 1)],
        )
        .await
        .unwrap();
    let err = outbox_postgres::migrate(&mut client, &table)
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaPastWindow { store, found, .. }
            if store == latest && found == latest + 1),
        "{err}"
    );
    let recorded: i64 = client
        .query_one(&format!("SELECT count(*) FROM {bookkeeping}"), &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(recorded, latest + 1);
}

#[tokio::test]
async fn printed_script_creates_the_same_schema() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "events_outbox").unwrap();
    client
        .batch_execute(&outbox_postgres::migration_script(&table))
        .await
        .unwrap();
    outbox_postgres::check_schema(&client, &table)
        .await
        .unwrap();
}

/// A table at version 2 (the claim function without the planner settings of version 3)
/// upgrades in place: its rows stay, and a store built after the upgrade claims them,
/// renews and completes them through the new functions.
#[tokio::test]
async fn a_version_2_schema_upgrades_in_place() {
    use outbox_core::chrono::TimeDelta;
    use outbox_core::{ClaimRequest, ClaimStore, EmissionResult, OutboxStore, RenewRequest};
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let mut client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    let script = outbox_postgres::migration_script(&table);
    let version_2 = &script[..script.find("\n-- migration 3:").expect("migration 3")];
    client
        .batch_execute(&format!("{version_2}\nCOMMIT;"))
        .await
        .unwrap();
    let err = outbox_postgres::check_schema(&client, &table)
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::SchemaVersionMismatch { found: 2, .. }),
        "{err}"
    );
    // Rows written by the previous release.
    let entries = (0..5u8).map(|n| NewEntry::new("t", vec![n])).collect();
    write_as_before_slices(&client, &table, entries).await;
    assert_eq!(
        outbox_postgres::migrate(&mut client, &table).await.unwrap(),
        outbox_postgres::required_version()
    );
    let store = crate::support::store(&db, 2).await;
    let claims = store
        .claim_pending(&ClaimRequest::new("w", 10, TimeDelta::seconds(30)))
        .await
        .unwrap();
    assert_eq!(claims.len(), 5);
    let renewed = store
        .renew(&claims, &RenewRequest::new(TimeDelta::seconds(60)))
        .await
        .unwrap();
    assert!(
        renewed
            .iter()
            .all(|r| matches!(r, outbox_core::RenewOutcome::Renewed(_))),
        "{renewed:?}"
    );
    for claim in &claims {
        let done = store
            .mark_delivered(claim, EmissionResult::new())
            .await
            .unwrap();
        assert!(done.is_applied(), "{done:?}");
    }
    assert!(store
        .find_pending(&outbox_core::FindRequest::new(10))
        .await
        .unwrap()
        .is_empty());
}

/// A table at version 3 with keyed rows upgrades to version 4 in place and refuses ordered
/// claims until it is prepared for them; preparing it (twice, harmlessly) marks the head
/// of every key (a delivered first row skipped, a failed one kept), ordered claims follow
/// the heads, and the previous release's claim function is still there to call, as drains
/// of that release do during a deploy.
#[tokio::test]
async fn version_4_marks_the_heads_and_keeps_the_previous_claim_callable() {
    use outbox_core::chrono::{TimeDelta, Utc};
    use outbox_core::{ClaimRequest, ClaimStore};
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let mut client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    let script = outbox_postgres::migration_script(&table);
    let version_3 = &script[..script.find("\n-- migration 4:").expect("migration 4")];
    client
        .batch_execute(&format!("{version_3}\nCOMMIT;"))
        .await
        .unwrap();
    // (topic as a name, key, status, seconds ago): a's first delivered, b's first failed.
    let rows: [(&str, &str, i16, i64); 5] = [
        ("a1", "a", 1, 50),
        ("a2", "a", 0, 40),
        ("a3", "a", 0, 30),
        ("b1", "b", 3, 50),
        ("b2", "b", 0, 40),
    ];
    let entries = rows
        .iter()
        .map(|(name, key, _, ago)| {
            NewEntry::new(*name, vec![])
                .partition_key(*key)
                .created_at(Utc::now() - TimeDelta::seconds(*ago))
        })
        .collect();
    write_as_before_slices(&client, &table, entries).await;
    for (name, _, status, _) in rows {
        client
            .execute(
                &table.render("UPDATE {table} SET status = $1 WHERE topic = $2"),
                &[&status, &name],
            )
            .await
            .unwrap();
    }
    outbox_postgres::migrate(&mut client, &table).await.unwrap();
    let unprepared = crate::support::store(&db, 2).await;
    let refused = unprepared
        .claim_pending(&ClaimRequest::new("w", 10, TimeDelta::seconds(30)).in_key_order())
        .await
        .unwrap_err();
    assert!(
        matches!(refused, OutboxError::Unsupported(ref m) if m.contains("outbox migrate --ordered")),
        "{refused}"
    );
    outbox_postgres::enable_ordered_claims(&mut client, &table)
        .await
        .unwrap();
    outbox_postgres::enable_ordered_claims(&mut client, &table)
        .await
        .unwrap();
    let heads = crate::support::flagged_topics(&db, false).await;
    assert_eq!(heads, vec!["a2", "b1"]);
    let store = crate::support::store(&db, 2).await;
    let ordered = store
        .claim_pending(&ClaimRequest::new("w", 10, TimeDelta::seconds(30)).in_key_order())
        .await
        .unwrap();
    let topics: Vec<&str> = ordered.iter().map(|c| c.entry.topic.as_str()).collect();
    assert_eq!(topics, vec!["a2"], "b2 waits behind the failed b1");
    // The previous release's claim, unchanged: unordered, it takes the rest.
    let previous = client
        .query(
            &table.render(
                "SELECT topic FROM {schema_prefix}\"{name}_claim\"(NULL, NULL, 10, 'old', \
                 30000000, true, true) ORDER BY topic",
            ),
            &[],
        )
        .await
        .unwrap();
    let topics: Vec<String> = previous.iter().map(|r| r.get(0)).collect();
    assert_eq!(topics, vec!["a3", "b2"]);
}

/// A table at version 5 upgrades in place to the latest version, and both claims of the
/// release before version 6 (of every slice and of one slice) are still there to call, as
/// its drains do during a deploy.
#[tokio::test]
async fn version_6_keeps_the_previous_claims_callable() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let mut client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    let script = outbox_postgres::migration_script(&table);
    let version_5 = &script[..script.find("\n-- migration 6:").expect("migration 6")];
    client
        .batch_execute(&format!("{version_5}\nCOMMIT;"))
        .await
        .unwrap();
    let entries = (0..4u8).map(|n| NewEntry::new("t", vec![n])).collect();
    write_as_before_slices(&client, &table, entries).await;
    assert_eq!(
        outbox_postgres::migrate(&mut client, &table).await.unwrap(),
        outbox_postgres::required_version()
    );
    let claim = |args: &str| {
        table.render(&format!(
            "SELECT count(*) FROM {{schema_prefix}}\"{{name}}_claim\"(NULL, NULL, 1, 'old', \
             30000000, true, true{args})"
        ))
    };
    for args in ["", ", 1::bigint, 0::bigint"] {
        let taken: i64 = client.query_one(&claim(args), &[]).await.unwrap().get(0);
        assert_eq!(taken, 1, "the previous claim{args}");
    }
    // And the new one of every slice, from the beginning.
    let taken: i64 = client
        .query_one(&claim(", NULL::timestamptz, NULL::uuid, false"), &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(taken, 1);
}

/// The definition of `table`'s status trigger, if it has one.
async fn status_trigger(client: &tokio_postgres::Client, table: &TableName) -> Option<String> {
    let sql = table.render(
        "SELECT pg_get_triggerdef(oid) FROM pg_trigger \
         WHERE tgrelid = '{table}'::regclass AND tgname = '{name}_heads_after_status'",
    );
    client.query_opt(&sql, &[]).await.unwrap().map(|r| r.get(0))
}

/// A table prepared for per-key order at version 10 gets the trigger of version 11 (run
/// only for a finishing head or a row unfinished again), then that of version 12 (not
/// while the store's batch completion writes: it moves heads itself) when it upgrades,
/// and each earlier trigger back when it is migrated down; a table drained unordered gets
/// none.
#[tokio::test]
async fn versions_11_and_12_narrow_the_status_trigger_of_prepared_tables_only() {
    let Some(db) = crate::support::ordered_db().await else {
        return;
    };
    let mut client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    let narrowed_11 = "(old.is_head OR (new.status <> ALL (ARRAY[1, 5])))";
    let narrowed_12 = "current_setting('outbox.completion_moves_heads'";
    let current = status_trigger(&client, &table)
        .await
        .expect("a prepared table has the trigger");
    assert!(current.contains(narrowed_12), "{current}");

    outbox_postgres::migrate_down_to(&mut client, &table, 11)
        .await
        .unwrap();
    let at_11 = status_trigger(&client, &table)
        .await
        .expect("kept at version 11");
    assert!(at_11.contains(narrowed_11), "{at_11}");
    assert!(!at_11.contains("current_setting"), "{at_11}");
    outbox_postgres::migrate_down_to(&mut client, &table, 10)
        .await
        .unwrap();
    let previous = status_trigger(&client, &table)
        .await
        .expect("kept at version 10");
    assert!(!previous.contains("is_head"), "{previous}");
    outbox_postgres::migrate(&mut client, &table).await.unwrap();
    assert_eq!(
        status_trigger(&client, &table).await.as_deref(),
        Some(current.as_str())
    );

    let plain = crate::support::migrated_db().await.unwrap();
    let plain_client = plain.connect().await;
    let plain_table = TableName::in_schema(&plain.schema, "outbox").unwrap();
    let any: i64 = plain_client
        .query_one(
            &plain_table.render(
                "SELECT count(*) FROM pg_trigger WHERE tgrelid = '{table}'::regclass \
                 AND NOT tgisinternal",
            ),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(any, 0, "an unordered table got a trigger");
}

/// Version 13 adds the ordered claim that takes a start; the ten-parameter form the
/// previous release calls claims as before at 13, at 12 after the way down (restored as
/// that release defined it, the form with the start gone) and at 13 again.
#[tokio::test]
async fn version_13_adds_the_ordered_claim_from_a_start_and_keeps_the_previous_one() {
    let Some(db) = crate::support::ordered_db().await else {
        return;
    };
    let mut client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    client
        .batch_execute(&table.render(
            "INSERT INTO {table} (id, topic, partition_key, payload, created_at, updated_at, stamp) \
             SELECT gen_random_uuid(), 't', 'k-' || i, '\\x00'::bytea, \
                    now() - interval '1 hour' + i * interval '1 millisecond', now(), \
                    gen_random_uuid() \
             FROM generate_series(1, 5) AS i",
        ))
        .await
        .unwrap();
    let previous = table.render(
        "SELECT count(*) FROM (SELECT * FROM {schema_prefix}\"{name}_claim_runs\"(NULL, NULL, \
         1, 'w', 30000000, true, true, NULL, NULL, 1)) AS c",
    );
    let from_start = table.render(
        "SELECT count(*) FROM (SELECT * FROM {schema_prefix}\"{name}_claim_runs\"(NULL, NULL, \
         1, 'w', 30000000, true, true, NULL, NULL, false, NULL, NULL, 1)) AS c",
    );
    assert_eq!(claimed(&client, &previous).await.unwrap(), 1);
    assert_eq!(claimed(&client, &from_start).await.unwrap(), 1);
    outbox_postgres::migrate_down_to(&mut client, &table, 12)
        .await
        .unwrap();
    assert_eq!(claimed(&client, &previous).await.unwrap(), 1);
    let gone = claimed(&client, &from_start).await.unwrap_err();
    assert!(format!("{gone:?}").contains("does not exist"), "{gone:?}");
    outbox_postgres::migrate(&mut client, &table).await.unwrap();
    assert_eq!(claimed(&client, &previous).await.unwrap(), 1);
    assert_eq!(claimed(&client, &from_start).await.unwrap(), 1);
}

/// How many rows the claim `sql` (a count of them) took.
async fn claimed(client: &tokio_postgres::Client, sql: &str) -> Result<i64, tokio_postgres::Error> {
    client.query_one(sql, &[]).await.map(|r| r.get(0))
}
