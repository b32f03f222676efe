//! The migration loop's unit tests.

use super::*;

static STEPS: [Migration; 3] = [
    Migration::new(
        1,
        "first",
        "CREATE TABLE {table} (x int);",
        "DROP TABLE {table};",
    ),
    Migration::new(
        2,
        "second",
        "ALTER TABLE {table} ADD y int;",
        "ALTER TABLE {table} DROP y;",
    )
    .compatible_from(1),
    Migration::new(
        3,
        "third",
        "ALTER TABLE {table} DROP x;",
        "-- irreversible: x is gone\n",
    ),
];

fn migrator(migrations: &'static [Migration]) -> Migrator {
    Migrator {
        migrations,
        bookkeeping: Bookkeeping {
            create: "CREATE TABLE IF NOT EXISTS {name}_migrations (version int);",
            columns: "SELECT 2, NULL",
            add_columns: "",
            version: "SELECT max(version), NULL FROM {name}_migrations",
            window: "SELECT max(version), max(oldest_compatible) FROM {name}_migrations",
            applied: "SELECT version, checksum FROM {name}_migrations",
            record: "INSERT INTO {name}_migrations VALUES ($1, $2, $3, $4);\n",
            forget: "DELETE FROM {name}_migrations WHERE version = $1",
            drop: "DROP TABLE {name}_migrations",
        },
        definitions: Definitions::NONE,
        render: TableName::render,
        record_parameters: "$1, $2, $3, $4",
        record_literals: |m| m.record_literals(""),
        script_frame: ("BEGIN;\n", "COMMIT;\n"),
    }
}

fn at(version: i64, oldest_compatible: Option<i64>) -> RecordedSchema {
    RecordedSchema {
        version: Some(version),
        oldest_compatible,
    }
}

#[test]
fn the_script_applies_and_records_every_migration_in_its_frame() {
    let script = migrator(&STEPS).script(&TableName::new("events").unwrap());
    assert!(script.starts_with("BEGIN;\nCREATE TABLE IF NOT EXISTS events_migrations"));
    assert!(script.ends_with("COMMIT;\n"));
    let first = script.find("CREATE TABLE \"events\" (x int);").unwrap();
    let recorded = script
        .find(&format!(
            "INSERT INTO events_migrations VALUES (1, 'first', 1, '{}');\n",
            STEPS[0].checksum()
        ))
        .unwrap();
    let second = script.find("ALTER TABLE \"events\" ADD y int;").unwrap();
    assert!(first < recorded && recorded < second, "{script}");
    assert!(script.contains("VALUES (2, 'second', 1, '"), "{script}");
    assert!(!script.contains('$') && !script.contains('{'), "{script}");
}

#[test]
fn a_store_runs_on_its_own_version_and_on_newer_schemas_inside_its_window() {
    let m = migrator(&STEPS[..2]);
    assert_eq!(m.required_version(), 2);
    m.judge(at(2, Some(1)), "t").unwrap();
    // One expanding migration newer than this build.
    m.judge(at(3, Some(2)), "t").unwrap();
    m.judge(at(5, Some(1)), "t").unwrap();
    // Recorded by a release before windows: only its own version's stores.
    m.judge(at(2, None), "t").unwrap();
    assert!(matches!(
        m.judge(at(3, None), "t"),
        Err(OutboxError::SchemaPastWindow {
            store: 2,
            found: 3,
            oldest_compatible: 3
        })
    ));
    let err = m.judge(at(4, Some(3)), "t").unwrap_err();
    assert!(err.to_string().contains("finish the rollout"), "{err}");
    let err = m.judge(at(1, Some(1)), "t").unwrap_err();
    assert!(
        matches!(
            err,
            OutboxError::SchemaVersionMismatch {
                expected: 2,
                found: 1
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("outbox migrate"), "{err}");
    assert!(matches!(
        m.judge(RecordedSchema::exact(None), "t"),
        Err(OutboxError::SchemaNotMigrated { .. })
    ));
}

#[test]
fn a_migration_list_with_a_gap_a_window_out_of_order_or_an_unspelt_parameter_is_refused() {
    static GAP: [Migration; 1] = [Migration::new(2, "x", "", "")];
    assert!(migrator(&GAP).check().is_err());
    static AHEAD: [Migration; 1] = [Migration::new(1, "x", "", "").compatible_from(2)];
    assert!(migrator(&AHEAD).check().is_err());
    static BACKWARDS: [Migration; 3] = [
        Migration::new(1, "x", "", ""),
        Migration::new(2, "y", "", ""),
        Migration::new(3, "z", "", "").compatible_from(1),
    ];
    assert!(migrator(&BACKWARDS).check().is_err());
    let mut wrong = migrator(&STEPS);
    wrong.record_parameters = "?1, ?2";
    assert!(wrong.check().is_err());
    migrator(&STEPS).check().unwrap();
}
