//! The stored functions live in definitions/, one file each, applied by `migrate` after the
//! migrations and again when a file changes.

use std::collections::BTreeMap;

use outbox_core::store_kit::schema::{Definition, Definitions, Migrator};
use outbox_core::{OutboxError, TableName};
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
    ours.with_definitions(Definitions::NONE)
}

async fn migrate_with(client: &mut tokio_postgres::Client, migrator: &Migrator, table: &TableName) {
    let mut conn = outbox_postgres::migration_connection(client).await.unwrap();
    migrator.migrate(&mut conn, table).await.unwrap();
}

/// The definitions hold the functions the newest migrations left, as the previous
/// release made them: a schema migrated by this release, one migrated by the migrations
/// alone, and one from the printed script have the same functions, with the same
/// signatures, and the same bodies but for the definitions revised since (revision 2 or
/// later), whose bodies the migrations alone do not have.
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
    assert_eq!(with, script);
    assert_eq!(
        with.keys().collect::<Vec<_>>(),
        without.keys().collect::<Vec<_>>()
    );
    // A body differs only where a revised definition wrote it, and each revised definition
    // changed at least one body.
    let prefix = |d: &Definition| format!("SCHEMA.outbox_{}(", d.name);
    let differing: Vec<&String> = with
        .iter()
        .filter(|(signature, body)| without[*signature] != **body)
        .map(|(signature, _)| signature)
        .collect();
    for signature in &differing {
        assert!(
            ours.definitions
                .list
                .iter()
                .any(|d| d.revision > 1 && signature.starts_with(&prefix(d))),
            "{signature} differs from what the migrations left"
        );
    }
    for d in ours.definitions.list.iter().filter(|d| d.revision > 1) {
        assert!(
            differing.iter().any(|s| s.starts_with(&prefix(d))),
            "{} was revised but no function changed",
            d.name
        );
    }
    // Each definition's function is there under its name.
    for d in ours.definitions.list {
        let name = format!("SCHEMA.outbox_{}(", d.name);
        assert!(
            with.keys().any(|k| k.starts_with(&name)),
            "{name} in {with:?}"
        );
    }
}

/// Each recorded definition's revision, checksum and when it was applied.
async fn applied(
    client: &tokio_postgres::Client,
    table: &TableName,
) -> BTreeMap<String, (i64, String, String)> {
    let sql = table.render(
        "SELECT name, revision, checksum, applied_at::text \
         FROM {schema_prefix}\"{name}_definitions\"",
    );
    let rows = client.query(&sql, &[]).await.unwrap();
    rows.iter()
        .map(|r| (r.get(0), (r.get(1), r.get(2), r.get(3))))
        .collect()
}

/// `ours` with the dead-index count's SQL edited (a comment in its body) at `revision`.
fn with_edited_count(ours: &Migrator, revision: i64) -> Migrator {
    let mut list: Vec<Definition> = ours.definitions.list.to_vec();
    let target = list
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
    target.revision = revision;
    ours.with_definitions(Definitions {
        list: Box::leak(list.into_boxed_slice()),
        ..ours.definitions
    })
}

fn edited_in(functions: &BTreeMap<String, String>) -> bool {
    functions
        .iter()
        .any(|(k, v)| k.contains("outbox_dead_index_entries") && v.contains("-- edited"))
}

/// A definition at a higher revision (a later release's edit) is applied by the next
/// `migrate` and recorded; the unchanged ones are left as they are. An older release's
/// `migrate` (a rollback) leaves the newer revision in place, and a file edited without
/// raising its revision is refused.
#[tokio::test]
async fn a_newer_revision_is_applied_and_never_undone_by_an_older_release() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let mut client = db.connect().await;
    let table = TableName::in_schema(&db.schema, "outbox").unwrap();
    let ours = outbox_postgres::migrator();
    migrate_with(&mut client, ours, &table).await;
    let before = applied(&client, &table).await;
    assert_eq!(before.len(), ours.definitions.list.len());
    for d in ours.definitions.list {
        assert_eq!(before[d.name].0, d.revision, "{}", d.name);
    }
    // Nothing changed: a second run applies nothing.
    migrate_with(&mut client, ours, &table).await;
    assert_eq!(applied(&client, &table).await, before);

    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let later = with_edited_count(ours, 2);
    migrate_with(&mut client, &later, &table).await;
    let after = applied(&client, &table).await;
    for (name, (revision, checksum, at)) in &after {
        if name == "dead_index_entries" {
            assert_eq!(*revision, 2);
            assert_ne!(*checksum, before[name].1);
            assert_ne!(*at, before[name].2, "applied again");
        } else {
            let (was_revision, was_checksum, was_at) = &before[name];
            assert_eq!(
                (revision, checksum, at),
                (was_revision, was_checksum, was_at),
                "{name}"
            );
        }
    }
    assert!(edited_in(&functions(&client, &db.schema).await));

    // The older release's migrate, after a rollback, leaves the newer function.
    migrate_with(&mut client, ours, &table).await;
    assert_eq!(applied(&client, &table).await, after);
    assert!(edited_in(&functions(&client, &db.schema).await));

    // The same revision from other SQL: refused, nothing applied.
    let sloppy = with_edited_count(ours, 1);
    let other = ours.with_definitions(Definitions {
        list: sloppy.definitions.list,
        ..ours.definitions
    });
    let fresh = PgTestDb::create().await.expect("a second schema");
    let other_table = TableName::in_schema(&fresh.schema, "outbox").unwrap();
    migrate_with(&mut client, ours, &other_table).await;
    let mut conn = outbox_postgres::migration_connection(&mut client)
        .await
        .unwrap();
    let err = other.migrate(&mut conn, &other_table).await.unwrap_err();
    assert!(
        matches!(&err, OutboxError::DefinitionChecksumMismatch { name, revision: 1, .. }
            if name == "dead_index_entries"),
        "{err}"
    );
}
