//! Preparing a table for claims in per-key order.
//!
//! Migration 0004 keeps every keyed row's head flag and installs the ordered claim; the
//! two indexes that claim walks (heads and keyless rows, pending and retry-ready) are
//! created only for tables drained in key order, because they hold every keyless row and
//! so cost every enqueue one more index entry.

use outbox_core::{OutboxError, Result, TableName};
use tokio_postgres::Client;

const ORDERED_PENDING_INDEX: &str = include_str!("../sql/ordered_pending_index.sql");
const ORDERED_RETRY_INDEX: &str = include_str!("../sql/ordered_retry_index.sql");
pub(crate) const ORDERED_INDEXES_PRESENT: &str = include_str!("../sql/ordered_indexes_present.sql");

/// The qualified names of the two indexes, as `ORDERED_INDEXES_PRESENT` takes them.
pub(crate) fn ordered_index_names(table: &TableName) -> [String; 2] {
    [
        table.render("{schema_prefix}{name}_ordered_pending_idx"),
        table.render("{schema_prefix}{name}_ordered_retry_idx"),
    ]
}

/// What [`enable_ordered_claims`] runs, as SQL, for hosts that apply schemas with their
/// own tools: after the migrations, and outside any transaction block (each statement
/// builds its index concurrently).
pub fn ordered_claims_script(table: &TableName) -> String {
    format!(
        "{};\n{};\n",
        table.render(ORDERED_PENDING_INDEX).trim_end(),
        table.render(ORDERED_RETRY_INDEX).trim_end()
    )
}

/// Creates the indexes claims in per-key order walk (`outbox migrate --ordered`), on a
/// migrated table, without blocking its writers (`CREATE INDEX CONCURRENTLY`, so not
/// inside a transaction); an index a failed build left invalid is dropped and built again.
/// Does nothing where they exist. Stores built afterwards claim in key order
/// ([`outbox_core::Capabilities::ordered_claims`]); stores built before keep refusing it
/// until they are built again.
pub async fn enable_ordered_claims(client: &Client, table: &TableName) -> Result<()> {
    crate::check_schema(client, table).await?;
    let names = ordered_index_names(table);
    for (name, create) in names
        .iter()
        .zip([ORDERED_PENDING_INDEX, ORDERED_RETRY_INDEX])
    {
        let invalid: bool = client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_index \
                 WHERE indexrelid = to_regclass($1) AND NOT indisvalid)",
                &[name],
            )
            .await
            .map_err(crate::error::map_err)?
            .get(0);
        if invalid {
            client
                .batch_execute(&format!("DROP INDEX CONCURRENTLY IF EXISTS {name}"))
                .await
                .map_err(crate::error::map_err)?;
        }
        client
            .batch_execute(&table.render(create))
            .await
            .map_err(crate::error::map_err)?;
    }
    let present: i64 = client
        .query_one(ORDERED_INDEXES_PRESENT, &[&names[0], &names[1]])
        .await
        .map_err(crate::error::map_err)?
        .get(0);
    if present != 2 {
        return Err(OutboxError::Database {
            message: format!(
                "the ordered-claim indexes of {} were not built (a concurrent build failed?)",
                table.qualified()
            ),
            source: None,
        });
    }
    Ok(())
}
