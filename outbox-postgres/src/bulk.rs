//! Bulk enqueue through `COPY … FROM STDIN (FORMAT binary)`: large batches stream into the
//! table instead of travelling as parameter arrays that the server unnests, and nothing
//! comes back but the row count.
//!
//! Three statements on one connection: read the database clock (every entry of the batch is
//! created at that instant, as with the one-statement enqueue), copy the rows (one
//! autocommit statement: all of them or none; a duplicate id fails the whole batch, as it
//! fails the one-statement insert), then raise one wake-up, once the rows are visible.
//! They are pipelined: the clock's read travels with the start of the copy, and the
//! wake-up with its end, so a call waits on two round trips instead of four (the server
//! runs them in order, so the wake-up still comes after the rows are committed; a copy
//! that fails raises a wake-up that finds nothing). Both halves of a pair are awaited
//! whatever the other's outcome, so the connection goes back to the pool idle.

use chrono::{DateTime, Utc};
use futures_util::future::join;
use outbox_core::{NewEntry, OutboxEntry, Result};
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{Json, ToSql, Type};

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
    let sql = &inner.sql;
    with_connection(
        &inner.db,
        async |client| {
            let clock = client.prepare_cached(&sql.clock).await?;
            let copy = client.prepare_cached(&sql.copy_in).await?;
            let notify = client.prepare_cached(&sql.notify).await?;
            let client = &**client;
            let (now, sink) = join(
                async {
                    Ok(client
                        .query_one(&clock, &[])
                        .await?
                        .get::<_, DateTime<Utc>>(0))
                },
                client.copy_in(&copy),
            )
            .await;
            let sink = sink?;
            let now = match now {
                Ok(now) => now,
                Err(e) => {
                    // The copy started: end it with no rows before answering.
                    let empty = std::pin::pin!(BinaryCopyInWriter::new(sink, &TYPES));
                    empty.finish().await?;
                    return Err(e);
                }
            };
            let written: Vec<OutboxEntry> = entries
                .into_iter()
                .map(|e| OutboxEntry::from_new(e, now))
                .collect();
            let writer = BinaryCopyInWriter::new(sink, &TYPES);
            futures_util::pin_mut!(writer);
            let pending: i16 = 0;
            for e in &written {
                let id = e.id.as_uuid();
                let slice_hash = i64::from(e.slice_hash());
                let headers = Json(&e.headers);
                let row: [&(dyn ToSql + Sync); 11] = [
                    &id,
                    &e.topic,
                    &e.partition_key,
                    &e.payload,
                    &headers,
                    &pending,
                    &e.created_at,
                    &e.updated_at,
                    &e.not_before,
                    &e.stamp,
                    &slice_hash,
                ];
                writer.as_mut().write(&row).await?;
            }
            let (copied, notified) =
                join(writer.finish(), client.execute(&notify, &[&inner.channel])).await;
            copied?;
            notified?;
            Ok(written)
        },
        |e| map_insert_err(e, &ids),
    )
    .await
}
