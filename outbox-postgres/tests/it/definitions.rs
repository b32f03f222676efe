//! The stored functions live in definitions/, one file each, applied by `migrate` after the
//! migrations and again when a file changes.

use std::collections::BTreeMap;

use outbox_core::store_kit::{Definition, Definitions, Migrator};
use outbox_core::TableName;
use outbox_testkit::postgres::PgTestDb;

/// Every function of `schema`, by signature, as the server prints its definition (the
/// schema's name taken out, so two schemas compare).
async fn functions(client: &tokio_postgres::Client, schema: &str) -> BTreeMap<String, String> {
    let rows = client
        .query(
            "SELECT p.oid::regprocedure::text, pg_get_functiondef(p.oid)
             FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = $1",
            &[&schema],
        )
        .await
        .unwrap();
    rows.iter()
        .map(|r| {
            let strip = |s: String| s.replace(schema, "SCHEMA");
            (strip(r.get(0)), strip(r.get(1)))
        })
        .collect()
}

/// `ours` without its definitions: the schema as the migrations alone leave it, which is
/// what the releases before definitions made.
fn migrations_only(ours: &Migrator) -> Migrator {
    Migrator {
        definitions: Definitions::NONE,
        ..*ours
    }
}

async fn migrate_with(client: &mut tokio_postgres::Client, migrator: &Migrator, table: &TableName) {
    let mut conn = outbox_postgres::migration_connection(client).await.unwrap();
    migrator.migrate(&mut conn, table).await.unwrap();
}

/// The definitions hold the functions the newest migrations left, as the previous
/// release made them: a schema migrated by this release, one migrated by the migrations
/// alone, and one from the printed script have the same functions, body for body.
#[tokio::test]
async fn the_definitions_are_the_functions_the_migrations_left() {
    let (Some(a), Some(b), Some(c)) = (
        PgTestDb::create().await,
        PgTestDb::create().await,
        PgTestDb::create().await,
    ) else {
        return;
    };
    let mut client = a.connect().await;
    let ours = outbox_postgres::migrator();
    let table = |db: &PgTestDb| TableName::in_schema(&db.schema, "outbox").unwrap();
    migrate_with(&mut client, ours, &table(&a)).await;
    migrate_with(&mut client, &migrations_only(ours), &table(&b)).await;
    client
        .batch_execute(&outbox_postgres::migration_script(&table(&c)))
        .await
        .unwrap();
    let (with, without, script) = (
        functions(&client, &a.schema).await,
        functions(&client, &b.schema).await,
        functions(&client, &c.schema).await,
    );
    assert!(with.len() >= ours.definitions.list.len(), "{with:?}");
    assert_eq!(with, without);
    assert_eq!(with, script);
    // Each definition's function is there under its name.
    for d in ours.definitions.list {
        let name = format!("SCHEMA.outbox_{}(", d.name);
        assert!(
            with.keys().any(|k| k.starts_with(&name)),
            "{name} in {with:?}"
        );
    }
}

/// Each recorded definition's checksum and when it was applied.
async fn applied(
    client: &tokio_postgres::Client,
    table: &TableName,
) -> BTreeMap<String, (String, String)> {
    let sql = table.render(
        "SELECT name, checksum, applied_at::text FROM {schema_prefix}\"{name}_definitions\"",
    );
    let rows = client.query(&sql, &[]).await.unwrap();
    rows.iter()
        .map(|r| (r.get(0), (r.get(1), r.get(2))))
        .collect()
}

/// An edited definition is applied again by the next `migrate` and its checksum recorded;
/// the unchanged ones are left as they are.
#[tokio::test]
async fn an_edited_definition_is_applied_again_and_the_others_are_left() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let mut client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    let ours = outbox_postgres::migrator();
    migrate_with(&mut client, ours, &table).await;
    let before = applied(&client, &table).await;
    assert_eq!(before.len(), ours.definitions.list.len());
    // Nothing changed: a second run applies nothing.
    migrate_with(&mut client, ours, &table).await;
    assert_eq!(applied(&client, &table).await, before);

    let mut edited: Vec<Definition> = ours.definitions.list.to_vec();
    let target = edited
        .iter_mut()
        .find(|d| d.name == "dead_index_entries")
        .expect("the definition");
    target.sql = Box::leak(
        target
            .sql
            .replacen("$entries$\n", "$entries$\n-- edited\n", 1)
            .into_boxed_str(),
    );
    assert!(target.sql.contains("-- edited"), "{}", target.sql);
    let edited = Migrator {
        definitions: Definitions {
            list: Box::leak(edited.into_boxed_slice()),
            ..ours.definitions
        },
        ..*ours
    };
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    migrate_with(&mut client, &edited, &table).await;
    let after = applied(&client, &table).await;
    for (name, (checksum, at)) in &after {
        if name == "dead_index_entries" {
            assert_ne!(*checksum, before[name].0);
            assert_ne!(*at, before[name].1, "applied again");
        } else {
            assert_eq!((checksum, at), (&before[name].0, &before[name].1), "{name}");
        }
    }
    let body = functions(&client, &db.schema).await;
    assert!(
        body.iter()
            .any(|(k, v)| k.contains("outbox_dead_index_entries") && v.contains("-- edited")),
        "the edit is in the function"
    );
}
