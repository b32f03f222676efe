//! Bulk enqueue through `COPY … FROM STDIN (FORMAT binary)`: large batches stream into the
//! table instead of travelling as parameter arrays that the server unnests, and nothing
//! comes back but the row count.
//!
//! Three statements on one connection: read the database clock (every entry of the batch is
//! created at that instant, as with the one-statement enqueue), copy the rows (one
//! autocommit statement: all of them or none; a duplicate id fails the whole batch, as it
//! fails the one-statement insert), then raise one wake-up, once the rows are visible.

use chrono::{DateTime, Utc};
use outbox_core::{NewEntry, OutboxEntry, OutboxError, Result};
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};

use crate::connection::with_connection;
use crate::error::map_insert_err;
use crate::store::Inner;

/// Batches of at least this many entries are written by `COPY`; smaller ones take the
/// one-statement insert, whose single round trip beats the copy's handful.
pub const COPY_FROM: usize = 100;

/// The column types, in the order of `sql/copy_in.sql`.
const TYPES: [Type; 11] = [
    Type::UUID,
    Type::TEXT,
    Type::TEXT,
    Type::BYTEA,
    Type::JSONB,
    Type::INT2,
    Type::TIMESTAMPTZ,
    Type::TIMESTAMPTZ,
    Type::TIMESTAMPTZ,
    Type::UUID,
    Type::INT8,
];

/// Writes already-validated `entries`; returns them as written.
pub(crate) async fn enqueue(inner: &Inner, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>> {
    let ids: Vec<_> = entries.iter().map(|e| e.id).collect();
    let headers = entries
        .iter()
        .map(|e| serde_json::to_value(&e.headers))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| OutboxError::invalid("headers", e.to_string()))?;
    let sql = &inner.sql;
    with_connection(
        &inner.db,
        async |client| {
            let clock = client.prepare_cached(&sql.clock).await?;
            let now: DateTime<Utc> = client.query_one(&clock, &[]).await?.get(0);
            let written: Vec<OutboxEntry> = entries
                .into_iter()
                .map(|e| OutboxEntry::from_new(e, now))
                .collect();
            let copy = client.prepare_cached(&sql.copy_in).await?;
            let sink = client.copy_in(&copy).await?;
            let writer = BinaryCopyInWriter::new(sink, &TYPES);
            futures_util::pin_mut!(writer);
            let pending: i16 = 0;
            for (e, headers) in written.iter().zip(&headers) {
                let id = e.id.as_uuid();
                let slice_hash = i64::from(e.slice_hash());
                let row: [&(dyn ToSql + Sync); 11] = [
                    &id,
                    &e.topic,
                    &e.partition_key,
                    &e.payload,
                    headers,
                    &pending,
                    &e.created_at,
                    &e.updated_at,
                    &e.not_before,
                    &e.stamp,
                    &slice_hash,
                ];
                writer.as_mut().write(&row).await?;
            }
            writer.finish().await?;
            let notify = client.prepare_cached(&sql.notify).await?;
            client.execute(&notify, &[&inner.channel]).await?;
            Ok(written)
        },
        |e| map_insert_err(e, &ids),
    )
    .await
}
