//! Preparing a table for claims in per-key order.
//!
//! Migration 3 keeps every keyed row's head flag; the two indexes an ordered claim walks
//! (heads and keyless rows, pending and retry-ready) are created only for tables drained
//! in key order, because they hold every keyless row and so cost every enqueue one more
//! index entry.

use outbox_core::{Result, TableName};
use sqlx::SqlitePool;

use crate::connection::WriteTx;
use crate::error::map_err;

const ORDERED_INDEXES: &str = include_str!("../sql/ordered_indexes.sql");
const ORDERED_INDEXES_PRESENT: &str = include_str!("../sql/ordered_indexes_present.sql");

/// Creates the indexes claims in per-key order walk (`outbox migrate --ordered`), on a
/// migrated table; does nothing where they exist. Stores built afterwards claim in key
/// order ([`outbox_core::Capabilities::ordered_claims`]); stores built before keep
/// refusing it until they are built again.
pub async fn enable_ordered_claims(pool: &SqlitePool, table: &TableName) -> Result<()> {
    crate::check_schema(pool, table).await?;
    let mut tx = WriteTx::begin(pool).await?;
    let created = sqlx::query(&table.render(ORDERED_INDEXES))
        .persistent(false)
        .execute(&mut *tx)
        .await
        .map(drop)
        .map_err(map_err);
    tx.finish(created).await
}

/// What [`enable_ordered_claims`] runs, as SQL, for hosts that apply schemas with their
/// own tools (after the migrations).
pub fn ordered_claims_script(table: &TableName) -> String {
    table.render(ORDERED_INDEXES)
}

/// Whether the table has the indexes claims in per-key order walk.
pub(crate) async fn ordered_indexes_present(pool: &SqlitePool, table: &TableName) -> Result<bool> {
    sqlx::query_scalar(&table.render(ORDERED_INDEXES_PRESENT))
        .fetch_one(pool)
        .await
        .map_err(map_err)
}
