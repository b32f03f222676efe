//! Preparing a table for claims in per-key order.
//!
//! Migration 3 adds the head flag; the indexes an ordered claim walks, the triggers that
//! keep the flag and the flags of the rows already there come with
//! [`enable_ordered_claims`], only for tables drained in key order: the walk indexes hold
//! every keyless row and cost every enqueue one more index entry, the triggers cost every
//! keyed row's writes.

use outbox_core::{Result, TableName};
use sqlx::SqlitePool;

use crate::connection::WriteTx;
use crate::error::map_err;

const PREPARE: &str = include_str!("../sql/ordered/prepare.sql");
const PREPARED: &str = include_str!("../sql/ordered/prepared.sql");
const CURRENT_STATUS_TRIGGER: &str = include_str!("../sql/ordered/current_status_trigger.sql");

/// Prepares a migrated table for claims in per-key order (`outbox migrate --ordered`):
/// the indexes they walk, the triggers that keep each key's head, and the heads of the
/// rows already there, in one transaction; run again, it marks the heads afresh. Stores built afterwards claim in key
/// order ([`outbox_core::Capabilities::ordered_claims`]); stores built before keep
/// refusing it until they are built again.
pub async fn enable_ordered_claims(pool: &SqlitePool, table: &TableName) -> Result<()> {
    crate::check_schema(pool, table).await?;
    let mut tx = WriteTx::begin(pool).await?;
    let created = sqlx::query(&table.render(PREPARE))
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
    table.render(PREPARE)
}

/// Whether the table was prepared for claims in per-key order.
pub(crate) async fn prepared(pool: &SqlitePool, table: &TableName) -> Result<bool> {
    sqlx::query_scalar(&table.render(PREPARED))
        .fetch_one(pool)
        .await
        .map_err(map_err)
}

/// Warns when a table prepared for per-key order still has an earlier release's status
/// trigger: heads stay right, but every row the store finishes runs it, which this
/// release's leaves to the store. Preparing the table again replaces it.
pub(crate) async fn warn_of_an_earlier_status_trigger(
    pool: &SqlitePool,
    table: &TableName,
) -> Result<()> {
    let current: bool = sqlx::query_scalar(&table.render(CURRENT_STATUS_TRIGGER))
        .fetch_one(pool)
        .await
        .map_err(map_err)?;
    if !current {
        tracing::warn!(
            table = %table.qualified(),
            "the table was prepared for per-key order by an earlier release: its status \
             trigger runs for every entry the store finishes; run `outbox migrate --ordered` \
             (or enable_ordered_claims) again to replace it"
        );
    }
    Ok(())
}
