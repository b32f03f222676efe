//! The I/O of a [`super::PortableBackend`] on a sqlx pool, written once for every engine
//! crate that runs the portable store on sqlx. `outbox-core` does not depend on sqlx: the
//! macro expands in the engine crate, against that crate's sqlx.

/// Implements [`PortableBackend`](crate::portable::PortableBackend) for `$backend`, a
/// struct with a field `pool: sqlx::Pool<$db>`, given the engine's data and its row
/// format: `build(sql, params) -> Result<Query>` binds the parameters, `map_err` maps a
/// sqlx error, `decode_clock(&row)` and `decode_entry(&row)` read the `clock_now` column
/// and an entry, `corrupt(id, what)` reports a row that cannot be read. The calling crate
/// depends on `sqlx` (and `uuid`, `chrono`).
#[macro_export]
macro_rules! sqlx_portable_backend {
    (
        $backend:ty {
            database: $db:ty,
            connection: $conn:ty,
            name: $name:expr,
            concurrent_writes: $concurrent:expr,
            dialect: $dialect:expr,
            build: $build:path,
            map_err: $map_err:path,
            decode_clock: $decode_clock:path,
            decode_entry: $decode_entry:path,
            corrupt: $corrupt:path $(,)?
        }
    ) => {
        #[$crate::async_trait]
        impl $crate::portable::PortableBackend for $backend {
            type Connection = $conn;
            type Lease = sqlx::pool::PoolConnection<$db>;
            const NAME: &'static str = $name;
            const CONCURRENT_WRITES: bool = $concurrent;
            const DIALECT: $crate::portable::Dialect = $dialect;

            async fn acquire(&self) -> $crate::Result<Self::Lease> {
                self.pool.acquire().await.map_err($map_err)
            }

            fn close_on_drop(lease: &mut Self::Lease) {
                lease.close_on_drop();
            }

            fn in_transaction(conn: &$conn) -> bool {
                sqlx::Connection::is_in_transaction(conn)
            }

            async fn begin(conn: &mut $conn) -> $crate::Result<()> {
                <<$db as sqlx::Database>::TransactionManager as sqlx::TransactionManager>::begin(
                    conn, None,
                )
                .await
                .map_err($map_err)
            }

            async fn commit(conn: &mut $conn) -> $crate::Result<()> {
                <<$db as sqlx::Database>::TransactionManager as sqlx::TransactionManager>::commit(
                    conn,
                )
                .await
                .map_err($map_err)
            }

            async fn rollback(conn: &mut $conn) -> $crate::Result<()> {
                <<$db as sqlx::Database>::TransactionManager as sqlx::TransactionManager>::rollback(
                    conn,
                )
                .await
                .map_err($map_err)
            }

            fn is_duplicate(err: &$crate::OutboxError) -> bool {
                let source = match err {
                    $crate::OutboxError::Database { source, .. }
                    | $crate::OutboxError::Conflict { source, .. } => source,
                    _ => return false,
                };
                source
                    .as_ref()
                    .and_then(|s| s.downcast_ref::<sqlx::Error>())
                    .and_then(|e| e.as_database_error())
                    .is_some_and(|db| db.is_unique_violation())
            }

            async fn fetch_entries(
                conn: &mut $conn,
                sql: &str,
                params: Vec<$crate::portable::SqlParam>,
            ) -> $crate::Result<Vec<$crate::portable::ClockedEntry>> {
                let rows = $build(sql, params)?
                    .fetch_all(&mut *conn)
                    .await
                    .map_err($map_err)?;
                rows.iter()
                    .map(|r| Ok(($decode_clock(r)?, $decode_entry(r)?)))
                    .collect()
            }

            async fn fetch_ids(
                conn: &mut $conn,
                sql: &str,
                params: Vec<$crate::portable::SqlParam>,
            ) -> $crate::Result<
                Vec<(
                    $crate::chrono::DateTime<$crate::chrono::Utc>,
                    $crate::EntryId,
                )>,
            > {
                let rows = $build(sql, params)?
                    .fetch_all(&mut *conn)
                    .await
                    .map_err($map_err)?;
                rows.iter()
                    .map(|r| {
                        let id: $crate::uuid::Uuid =
                            sqlx::Row::try_get(r, "id").map_err(|e| $corrupt("?", e))?;
                        Ok(($decode_clock(r)?, $crate::EntryId::from_uuid(id)))
                    })
                    .collect()
            }

            async fn fetch_clock(
                conn: &mut $conn,
                sql: &str,
                params: Vec<$crate::portable::SqlParam>,
            ) -> $crate::Result<$crate::chrono::DateTime<$crate::chrono::Utc>> {
                let row = $build(sql, params)?
                    .fetch_one(&mut *conn)
                    .await
                    .map_err($map_err)?;
                $decode_clock(&row)
            }

            async fn fetch_counts(
                conn: &mut $conn,
                sql: &str,
                params: Vec<$crate::portable::SqlParam>,
            ) -> $crate::Result<Vec<i64>> {
                let row = $build(sql, params)?
                    .fetch_one(&mut *conn)
                    .await
                    .map_err($map_err)?;
                (0..sqlx::Row::len(&row))
                    .map(|i| sqlx::Row::try_get::<i64, _>(&row, i).map_err($map_err))
                    .collect()
            }

            async fn execute(
                conn: &mut $conn,
                sql: &str,
                params: Vec<$crate::portable::SqlParam>,
            ) -> $crate::Result<u64> {
                let done = $build(sql, params)?
                    .execute(&mut *conn)
                    .await
                    .map_err($map_err)?;
                Ok(done.rows_affected())
            }
        }
    };
}
