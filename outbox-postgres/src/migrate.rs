//! The PostgreSQL schema: numbered migrations the host applies explicitly.

use outbox_core::store_kit::schema::{
    Bookkeeping, Definition, Definitions, Migrate, Migrator, ReadSchema, RecordedDefinition,
};
use outbox_core::{async_trait, Migration, OutboxError, Result, TableName};
use tokio_postgres::{Client, Transaction};

use crate::typed::typed;

static MIGRATIONS: [Migration; 13] = [
    Migration::new(
        1,
        "create_outbox",
        include_str!("../migrations/0001_create_outbox.up.sql"),
        include_str!("../migrations/0001_create_outbox.down.sql"),
    ),
    Migration::new(
        2,
        "claim_function",
        include_str!("../migrations/0002_claim_function.up.sql"),
        include_str!("../migrations/0002_claim_function.down.sql"),
    ),
    Migration::new(
        3,
        "plans_without_statistics",
        include_str!("../migrations/0003_plans_without_statistics.up.sql"),
        include_str!("../migrations/0003_plans_without_statistics.down.sql"),
    ),
    Migration::new(
        4,
        "key_heads",
        include_str!("../migrations/0004_key_heads.up.sql"),
        include_str!("../migrations/0004_key_heads.down.sql"),
    ),
    Migration::new(
        5,
        "slices",
        include_str!("../migrations/0005_slices.up.sql"),
        include_str!("../migrations/0005_slices.down.sql"),
    ),
    Migration::new(
        6,
        "claim_from_head",
        include_str!("../migrations/0006_claim_from_head.up.sql"),
        include_str!("../migrations/0006_claim_from_head.down.sql"),
    ),
    Migration::new(
        7,
        "shared_claim_starts",
        include_str!("../migrations/0007_shared_claim_starts.up.sql"),
        include_str!("../migrations/0007_shared_claim_starts.down.sql"),
    ),
    Migration::new(
        8,
        "claim_limits_at_least_zero",
        include_str!("../migrations/0008_claim_limits_at_least_zero.up.sql"),
        include_str!("../migrations/0008_claim_limits_at_least_zero.down.sql"),
    ),
    Migration::new(
        9,
        "operator_reads",
        include_str!("../migrations/0009_operator_reads.up.sql"),
        include_str!("../migrations/0009_operator_reads.down.sql"),
    )
    .compatible_from(8),
    Migration::new(
        10,
        "key_runs",
        include_str!("../migrations/0010_key_runs.up.sql"),
        include_str!("../migrations/0010_key_runs.down.sql"),
    )
    .compatible_from(9),
    Migration::new(
        11,
        "heads_move_with_their_head",
        include_str!("../migrations/0011_heads_move_with_their_head.up.sql"),
        include_str!("../migrations/0011_heads_move_with_their_head.down.sql"),
    )
    .compatible_from(9),
    Migration::new(
        12,
        "completions_move_heads",
        include_str!("../migrations/0012_completions_move_heads.up.sql"),
        include_str!("../migrations/0012_completions_move_heads.down.sql"),
    )
    .compatible_from(9),
    Migration::new(
        13,
        "ordered_claim_starts",
        include_str!("../migrations/0013_ordered_claim_starts.up.sql"),
        include_str!("../migrations/0013_ordered_claim_starts.down.sql"),
    )
    .compatible_from(9),
];

/// The stored functions, each in one file of definitions/, applied after the migrations
/// in this order (a claim's body calls the slice hash).
static DEFINITIONS: [Definition; 9] = [
    Definition {
        name: "slice_hash",
        revision: 1,
        sql: include_str!("../definitions/slice_hash.sql"),
    },
    Definition {
        name: "keep_heads",
        revision: 4,
        sql: include_str!("../definitions/keep_heads.sql"),
    },
    Definition {
        name: "complete_batch",
        revision: 3,
        sql: include_str!("../definitions/complete_batch.sql"),
    },
    Definition {
        name: "renew",
        revision: 1,
        sql: include_str!("../definitions/renew.sql"),
    },
    Definition {
        name: "claim",
        revision: 2,
        sql: include_str!("../definitions/claim.sql"),
    },
    Definition {
        name: "claim_runs",
        revision: 4,
        sql: include_str!("../definitions/claim_runs.sql"),
    },
    Definition {
        name: "claim_ordered",
        revision: 1,
        sql: include_str!("../definitions/claim_ordered.sql"),
    },
    Definition {
        name: "dead_index_entries",
        revision: 1,
        sql: include_str!("../definitions/dead_index_entries.sql"),
    },
    Definition {
        name: "live_counts",
        revision: 1,
        sql: include_str!("../definitions/live_counts.sql"),
    },
];

/// The PostgreSQL schema and its bookkeeping, for the core's migrator.
static MIGRATOR: Migrator = Migrator::new(
    &MIGRATIONS,
    Bookkeeping {
        create: include_str!("../sql/migrations/create_bookkeeping.sql"),
        columns: include_str!("../sql/migrations/bookkeeping_columns.sql"),
        add_columns: include_str!("../sql/migrations/add_bookkeeping_columns.sql"),
        version: include_str!("../sql/migrations/recorded_version.sql"),
        window: include_str!("../sql/migrations/recorded_window.sql"),
        applied: include_str!("../sql/migrations/applied.sql"),
        record: include_str!("../sql/migrations/record.sql"),
        forget: include_str!("../sql/migrations/forget.sql"),
        drop: include_str!("../sql/migrations/drop_bookkeeping.sql"),
    },
    TableName::render,
    "$1, $2, $3, $4",
    |m| m.record_literals(""),
)
.with_definitions(Definitions {
    list: &DEFINITIONS,
    create: include_str!("../sql/migrations/create_definitions.sql"),
    recorded: include_str!("../sql/migrations/recorded_definitions.sql"),
    record: include_str!("../sql/migrations/record_definition.sql"),
    record_parameters: "$1, $2, $3",
    record_literals: |d| format!("'{}', {}, '{}'", d.name, d.revision, d.checksum()),
    script_form: str::to_owned,
    drop: include_str!("../sql/migrations/drop_definitions.sql"),
})
.with_script_frame("BEGIN;\n", "COMMIT;\n");

const LOCK: &str = include_str!("../sql/migrations/lock.sql");

/// The migrations of the PostgreSQL schema, oldest first.
pub fn migrations() -> &'static [Migration] {
    MIGRATOR.migrations
}

/// The schema version this build of the store requires.
pub fn required_version() -> i64 {
    MIGRATOR.required_version()
}

/// The whole schema as one SQL script, for hosts that apply migrations with their own tools.
pub fn migration_script(table: &TableName) -> String {
    MIGRATOR.script(table)
}

fn db_err(e: tokio_postgres::Error) -> OutboxError {
    crate::error::map_err(e)
}

/// A transaction the core's migrator runs on; dropped before its end, it rolls back.
struct OnTransaction<'a>(Option<Transaction<'a>>);

impl<'a> OnTransaction<'a> {
    fn tx(&self) -> Result<&Transaction<'a>> {
        self.0.as_ref().ok_or_else(|| OutboxError::Database {
            message: "the migration transaction has ended".into(),
            source: None,
        })
    }
}

#[async_trait]
impl ReadSchema for OnTransaction<'_> {
    async fn pair(&mut self, sql: &str) -> Result<(Option<i64>, Option<i64>)> {
        pair_of(&self.tx()?.query_typed(sql, &[]).await.map_err(db_err)?)
    }
}

#[async_trait]
impl Migrate for OnTransaction<'_> {
    async fn begin_locked(&mut self, table: &TableName) -> Result<()> {
        self.tx()?
            .execute_typed(LOCK, &[typed(&table.qualified())])
            .await
            .map(drop)
            .map_err(db_err)
    }

    async fn run_script(&mut self, sql: &str) -> Result<()> {
        self.tx()?.batch_execute(sql).await.map_err(db_err)
    }

    async fn applied(&mut self, sql: &str) -> Result<Vec<(i64, Option<String>)>> {
        let rows = self.tx()?.query_typed(sql, &[]).await.map_err(db_err)?;
        rows.iter()
            .map(|r| Ok((r.try_get(0).map_err(db_err)?, r.try_get(1).map_err(db_err)?)))
            .collect()
    }

    async fn record(&mut self, sql: &str, m: &Migration, checksum: &str) -> Result<()> {
        self.tx()?
            .execute_typed(
                sql,
                &[
                    typed(&m.version),
                    typed(&m.name),
                    typed(&m.oldest_compatible),
                    typed(&checksum),
                ],
            )
            .await
            .map(drop)
            .map_err(db_err)
    }

    async fn recorded_definitions(&mut self, sql: &str) -> Result<Vec<RecordedDefinition>> {
        let rows = self.tx()?.query_typed(sql, &[]).await.map_err(db_err)?;
        rows.iter()
            .map(|r| {
                Ok(RecordedDefinition {
                    name: r.try_get(0).map_err(db_err)?,
                    revision: r.try_get(1).map_err(db_err)?,
                    checksum: r.try_get(2).map_err(db_err)?,
                })
            })
            .collect()
    }

    async fn record_definition(&mut self, sql: &str, d: &Definition, checksum: &str) -> Result<()> {
        self.tx()?
            .execute_typed(sql, &[typed(&d.name), typed(&d.revision), typed(&checksum)])
            .await
            .map(drop)
            .map_err(db_err)
    }

    async fn forget(&mut self, sql: &str, version: i64) -> Result<()> {
        self.tx()?
            .execute_typed(sql, &[typed(&version)])
            .await
            .map(drop)
            .map_err(db_err)
    }

    async fn end(&mut self, outcome: Result<()>) -> Result<()> {
        let tx = self.0.take();
        match (outcome, tx) {
            (Ok(()), Some(tx)) => tx.commit().await.map_err(db_err),
            // Rolled back before the error is returned, so that the caller's next use of
            // the client (or its closing) does not find the transaction still open; if
            // the rollback fails, dropping the transaction rolls it back.
            (outcome, Some(tx)) => {
                let _ = tx.rollback().await;
                outcome
            }
            (outcome, None) => outcome,
        }
    }
}

/// The migrations of the PostgreSQL schema and their bookkeeping, for tools that run them
/// through the core's [`Migrator`] (a host extending the schema, a test playing a later
/// release) on a [`migration_connection`].
pub fn migrator() -> &'static Migrator {
    &MIGRATOR
}

/// A transaction on `client` the core's [`Migrator`] applies and reverts migrations in,
/// under an advisory lock per table; it commits when the run succeeds.
pub async fn migration_connection(client: &mut Client) -> Result<impl Migrate + '_> {
    let tx = client.transaction().await.map_err(db_err)?;
    Ok(OnTransaction(Some(tx)))
}

/// Applies every migration the database does not have yet in one transaction, serialized
/// against concurrent migrators by an advisory lock; returns the resulting version.
pub async fn migrate(client: &mut Client, table: &TableName) -> Result<i64> {
    MIGRATOR
        .migrate(&mut migration_connection(client).await?, table)
        .await
}

/// Reverts every migration, newest first, and drops the bookkeeping table: the outbox and
/// everything in it are deleted.
pub async fn migrate_down(client: &mut Client, table: &TableName) -> Result<()> {
    migrate_down_to(client, table, 0).await.map(drop)
}

/// Reverts the migrations newer than `version`, newest first, in one transaction, keeping
/// the rows (`0`: every migration, and the outbox with them). Refuses, changing nothing, a
/// migration on the way that cannot be reverted.
pub async fn migrate_down_to(client: &mut Client, table: &TableName, version: i64) -> Result<i64> {
    MIGRATOR
        .migrate_down_to(&mut migration_connection(client).await?, table, version)
        .await
}

/// The first row's two integer columns, as [`ReadSchema::pair`] returns them.
pub(crate) fn pair_of(rows: &[tokio_postgres::Row]) -> Result<(Option<i64>, Option<i64>)> {
    match rows.first() {
        Some(r) => Ok((r.try_get(0).map_err(db_err)?, r.try_get(1).map_err(db_err)?)),
        None => Ok((None, None)),
    }
}

/// A client the schema's records are read on, outside any transaction.
struct OnClient<'a>(&'a Client);

#[async_trait]
impl ReadSchema for OnClient<'_> {
    async fn pair(&mut self, sql: &str) -> Result<(Option<i64>, Option<i64>)> {
        pair_of(&self.0.query_typed(sql, &[]).await.map_err(db_err)?)
    }
}

/// Fails with a clear error unless a store of this build runs on the schema: at its
/// version, or newer inside its compatibility window (see [`Migration::compatible_from`]).
///
/// Its statements are sent unnamed, as every statement of the migrations is: both work
/// through a transaction-mode pooler.
pub async fn check_schema(client: &Client, table: &TableName) -> Result<()> {
    MIGRATOR
        .check_schema(&mut OnClient(client), table, &table.qualified())
        .await
}

/// The schema facts of `table` read through `reader`, judged as [`check_schema`] does.
pub(crate) async fn check_schema_on<R: ReadSchema + ?Sized>(
    reader: &mut R,
    table: &TableName,
) -> Result<()> {
    MIGRATOR
        .check_schema(reader, table, &table.qualified())
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each definition's revision with the checksum of its SQL at that revision: a file
    /// edited without raising its revision fails here, before a database refuses it.
    const PINNED: [(&str, i64, &str); 9] = [
        (
            "slice_hash",
            1,
            "7396072c9026462aba6be4dcad26c2c0034fbde97fe6e085d5cfa533fae5acf1",
        ),
        (
            "keep_heads",
            4,
            "1a27763d6b414146e9e6fd9777de6f1b4bcc28be8fd652b7f8ec69a3b861b66b",
        ),
        (
            "complete_batch",
            3,
            "41fc0317c33d89fbb8646874c597aedf7b462c563a77b6f28258948551802631",
        ),
        (
            "renew",
            1,
            "54c0f994bb96bd44632b940f0ea24f7431712c8a86745b95cca332680c3f4e8a",
        ),
        (
            "claim",
            2,
            "d615b2d48cb33e208e3f9a11c1051c000763db71ba2fd5c7be550713c34a18f6",
        ),
        (
            "claim_runs",
            4,
            "4221c1edb3f923919b9d4fdf52a2fde387f7026ad5c1a1c68862af79197120af",
        ),
        (
            "claim_ordered",
            1,
            "5198cc89a96298c0a6d726528345fa9bd250d207a3b332d4d1972dfc0b9691d0",
        ),
        (
            "dead_index_entries",
            1,
            "64f1117160108104e2a2774b7c97b926b6ef6d4fb53c01421a655bcb0a6f36aa",
        ),
        (
            "live_counts",
            1,
            "8907dc41d99893309c79e95d18e442c84182f628afdc3893bd839eafaaba0b39",
        ),
    ];

    #[test]
    fn every_definition_change_raises_its_revision() {
        assert_eq!(DEFINITIONS.len(), PINNED.len());
        for (d, (name, revision, checksum)) in DEFINITIONS.iter().zip(PINNED) {
            assert_eq!(d.name, name);
            assert_eq!(
                (d.revision, d.checksum().as_str()),
                (revision, checksum),
                "definitions/{name}.sql changed: raise its revision in DEFINITIONS and pin \\
                 its new checksum here"
            );
        }
        MIGRATOR.check().unwrap();
    }
}
