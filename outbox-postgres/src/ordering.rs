//! Preparing a table for claims in per-key order.
//!
//! Migration 0004 installs the code (the head flag's column, the trigger function, the
//! ordered claim); [`enable_ordered_claims`] turns it on for one table: the indexes the
//! ordered claim and the trigger walk, the triggers, and the heads of the rows already
//! there. Tables drained unordered do without all of it: the walk indexes hold every
//! keyless row and cost every enqueue one more index entry, and the triggers cost every
//! keyed row's writes.

use outbox_core::{OutboxError, Result, TableName};
use tokio_postgres::Client;

use crate::error::map_err;
use crate::typed::typed;

/// The indexes, each built concurrently: (the name after the table's, its statement).
const INDEXES: [(&str, &str); 4] = [
    (
        "key_order_idx",
        include_str!("../sql/ordered/key_order_index.sql"),
    ),
    (
        "key_head_idx",
        include_str!("../sql/ordered/key_head_index.sql"),
    ),
    (
        "ordered_pending_idx",
        include_str!("../sql/ordered/pending_index.sql"),
    ),
    (
        "ordered_retry_idx",
        include_str!("../sql/ordered/retry_index.sql"),
    ),
];
const HEADS: &str = include_str!("../sql/ordered/heads.sql");
pub(crate) const PREPARED: &str = include_str!("../sql/ordered/prepared.sql");

/// The parameters of `PREPARED` for `table`: the walk indexes' qualified names, the
/// table's, and the trigger's name.
pub(crate) fn prepared_params(table: &TableName) -> [String; 4] {
    [
        table.render("{schema_prefix}{name}_ordered_pending_idx"),
        table.render("{schema_prefix}{name}_ordered_retry_idx"),
        table.qualified(),
        table.render("{name}_heads_after_insert"),
    ]
}

/// What [`enable_ordered_claims`] runs, as SQL, for hosts that apply schemas with their
/// own tools: after the migrations; each index statement outside any transaction block
/// (it builds concurrently), the rest in one transaction.
pub fn ordered_claims_script(table: &TableName) -> String {
    let mut script = String::new();
    for (_, create) in INDEXES {
        script.push_str(table.render(create).trim_end());
        script.push_str(";\n");
    }
    script.push_str("BEGIN;\n");
    script.push_str(&table.render(HEADS));
    script.push_str("COMMIT;\n");
    script
}

/// Prepares a migrated table for claims in per-key order (`outbox migrate --ordered`):
/// builds the indexes concurrently, without blocking writers (an index a failed build left
/// invalid is dropped and built again), then, in one short transaction that writers wait
/// for, installs the triggers that keep each key's head and marks the heads of the rows
/// already there. Run again, it marks every head afresh. Stores built afterwards claim in
/// key order ([`outbox_core::Capabilities::ordered_claims`]); stores built before keep
/// refusing it until they are built again.
pub async fn enable_ordered_claims(client: &mut Client, table: &TableName) -> Result<()> {
    crate::check_schema(client, table).await?;
    for (suffix, create) in INDEXES {
        let name = table.render(&format!("{{schema_prefix}}{{name}}_{suffix}"));
        let invalid: bool = client
            .query_typed_one(
                "SELECT EXISTS (SELECT 1 FROM pg_index \
                 WHERE indexrelid = to_regclass($1) AND NOT indisvalid)",
                &[typed(&name)],
            )
            .await
            .map_err(map_err)?
            .get(0);
        if invalid {
            client
                .batch_execute(&format!("DROP INDEX CONCURRENTLY IF EXISTS {name}"))
                .await
                .map_err(map_err)?;
        }
        client
            .batch_execute(&table.render(create))
            .await
            .map_err(map_err)?;
    }
    let tx = client.transaction().await.map_err(map_err)?;
    tx.batch_execute(&table.render(HEADS))
        .await
        .map_err(map_err)?;
    tx.commit().await.map_err(map_err)?;
    let [pending, retry, qualified, trigger] = prepared_params(table);
    let prepared: bool = client
        .query_typed_one(
            PREPARED,
            &[
                typed(&pending),
                typed(&retry),
                typed(&qualified),
                typed(&trigger),
            ],
        )
        .await
        .map_err(map_err)?
        .get(0);
    if !prepared {
        return Err(OutboxError::Database {
            message: format!(
                "{} was not prepared for claims in per-key order (a concurrent index build failed?)",
                table.qualified()
            ),
            source: None,
        });
    }
    Ok(())
}
