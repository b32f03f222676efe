//! Running one statement on a pooled connection without ever giving the pool back a
//! connection that may still be busy.
//!
//! Every store call is a single autocommit statement, so the server applies it entirely
//! or not at all. What a dropped future (a timeout, a cancelled task) can leave behind is
//! the connection: its statement may still be running on the server, waiting on a lock,
//! and the next borrower's query would queue behind it. So while a statement is in
//! flight the connection is held by an [`InFlight`] guard; if the guard is dropped
//! before the statement's answer arrived, it takes the connection out of the pool for
//! good, asks the server to cancel the statement (which rolls it back, releasing its
//! locks, unless it already committed), and then closes the connection. The next call
//! gets another connection, whatever recycling method the host configured.
//!
//! Every call is also bounded by the store's call deadline, waiting for a pooled
//! connection included: a server that stops answering without closing the connection (a
//! partition, a frozen machine, a firewall that drops packets) would otherwise hold the
//! call until the operating system gives up on the socket, while the caller's leases run
//! out. A call past its deadline is dropped like any other, which closes its connection.

use std::future::Future;
use std::time::Duration;

use deadpool_postgres::{Object, Pool};
use outbox_core::{OutboxError, Result};

use tokio_postgres::Row;

use crate::error::{map_err, map_pool_err};
use crate::typed::Param;
use crate::{PgTls, StatementMode};

/// The store's connections: the pool, the TLS connector a cancellation must use to reach
/// the server the way the pool's connections do, and how statements are sent.
#[derive(Debug)]
pub(crate) struct Db {
    pub(crate) pool: Pool,
    pub(crate) tls: Option<PgTls>,
    /// How long one call may take, end to end.
    pub(crate) deadline: Duration,
    /// Named and cached per connection, or unnamed (behind a transaction pooler).
    pub(crate) statements: StatementMode,
}

impl Db {
    /// The same connections, sending statements unnamed: for what runs once.
    pub(crate) fn unnamed(&self) -> Db {
        Db {
            pool: self.pool.clone(),
            tls: self.tls.clone(),
            deadline: self.deadline,
            statements: StatementMode::Unnamed,
        }
    }
}

/// How long the cancellation of a dropped statement may take: it needs a connection of
/// its own, which a server that stopped answering never accepts.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `call` within `db`'s deadline; past it, the call is dropped (closing its
/// connection) and fails with [`OutboxError::Connection`].
async fn bounded<T>(db: &Db, call: impl Future<Output = Result<T>>) -> Result<T> {
    match tokio::time::timeout(db.deadline, call).await {
        Ok(result) => result,
        Err(_) => Err(OutboxError::Connection {
            message: format!(
                "no answer from the server within the call's deadline ({:?}); its connection \
                 is closed, and what it asked may or may not have been applied",
                db.deadline
            ),
            source: None,
        }),
    }
}

/// Runs `sql` with `params` and returns its rows, in one round trip: prepared once per
/// connection (the server inferring the parameter types) and reused in
/// [`StatementMode::Named`], sent unnamed with the parameters' types in
/// [`StatementMode::Unnamed`].
pub(crate) async fn query(db: &Db, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
    query_mapped(db, sql, params, map_err).await
}

/// Like [`query`], with the statement's own error mapping.
pub(crate) async fn query_mapped(
    db: &Db,
    sql: &str,
    params: &[Param<'_>],
    map: impl FnOnce(tokio_postgres::Error) -> OutboxError,
) -> Result<Vec<Row>> {
    bounded(db, async {
        let guard = InFlight::new(db.pool.get().await.map_err(map_pool_err)?, db.tls.clone());
        let result = run_query(guard.client(), db.statements, sql, params).await;
        guard.finish(result.as_ref().err());
        result.map_err(map)
    })
    .await
}

/// Like [`query`] for a statement that returns no rows; returns the affected row count.
pub(crate) async fn execute(db: &Db, sql: &str, params: &[Param<'_>]) -> Result<u64> {
    bounded(db, async {
        let guard = InFlight::new(db.pool.get().await.map_err(map_pool_err)?, db.tls.clone());
        let result = run_execute(guard.client(), db.statements, sql, params).await;
        guard.finish(result.as_ref().err());
        result.map_err(map_err)
    })
    .await
}

/// One statement on `client`, sent as `mode` says.
async fn run_query(
    client: &Object,
    mode: StatementMode,
    sql: &str,
    params: &[Param<'_>],
) -> std::result::Result<Vec<Row>, tokio_postgres::Error> {
    match mode {
        StatementMode::Named => {
            let statement = client.prepare_cached(sql).await?;
            client.query(&statement, &values(params)).await
        }
        StatementMode::Unnamed => client.query_typed(sql, params).await,
    }
}

/// Like [`run_query`] for a statement that returns no rows.
async fn run_execute(
    client: &Object,
    mode: StatementMode,
    sql: &str,
    params: &[Param<'_>],
) -> std::result::Result<u64, tokio_postgres::Error> {
    match mode {
        StatementMode::Named => {
            let statement = client.prepare_cached(sql).await?;
            client.execute(&statement, &values(params)).await
        }
        StatementMode::Unnamed => client.execute_typed(sql, params).await,
    }
}

fn values<'a>(params: &[Param<'a>]) -> Vec<&'a (dyn tokio_postgres::types::ToSql + Sync)> {
    params.iter().map(|(value, _)| *value).collect()
}

/// Runs `work` on a pooled connection of its own, for the few calls that need more than
/// one statement (a transaction around a `COPY`), under the same guard as [`query`]: a
/// call dropped midway never hands the pool a connection with work in flight. A
/// transaction `work` leaves unfinished on error is rolled back by the driver before the
/// connection serves anyone else.
pub(crate) async fn with_connection<T>(
    db: &Db,
    work: impl AsyncFnOnce(&mut Object) -> std::result::Result<T, tokio_postgres::Error>,
    map: impl FnOnce(tokio_postgres::Error) -> OutboxError,
) -> Result<T> {
    bounded(db, async {
        let mut guard = InFlight::new(db.pool.get().await.map_err(map_pool_err)?, db.tls.clone());
        let result = work(guard.client_mut()).await;
        guard.finish(result.as_ref().err());
        result.map_err(map)
    })
    .await
}

/// True for errors after which the connection cannot be used again: anything that is not
/// an ordinary error answer of the server (I/O, a closed connection, a protocol error),
/// FATAL or PANIC answers, which end the session, and a write refused because the server
/// is read-only (SQLSTATE 25006). A primary demoted in place, or a name that now points at
/// a standby, refuses every write on that connection for good; a new connection made
/// with `target_session_attrs=read-write` finds the server that takes writes.
pub(crate) fn breaks_connection(error: &tokio_postgres::Error) -> bool {
    match error.as_db_error() {
        None => true,
        Some(db) => {
            matches!(db.severity(), "FATAL" | "PANIC")
                || *db.code() == tokio_postgres::error::SqlState::READ_ONLY_SQL_TRANSACTION
        }
    }
}

/// A pooled connection with a statement in flight; see the module docs.
struct InFlight {
    client: Option<Object>,
    tls: Option<PgTls>,
}

impl InFlight {
    fn new(client: Object, tls: Option<PgTls>) -> Self {
        Self {
            client: Some(client),
            tls,
        }
    }

    fn client(&self) -> &Object {
        self.client
            .as_ref()
            .expect("the connection is present until finish or drop")
    }

    fn client_mut(&mut self) -> &mut Object {
        self.client
            .as_mut()
            .expect("the connection is present until finish or drop")
    }

    /// The statement's answer arrived: the connection is idle again and goes back to
    /// the pool, unless `error` says it is broken. A server that ends a session (a
    /// terminated backend, a shutdown) answers with a FATAL error before closing the
    /// socket, and the pool's `is_closed` check may run before the driver has seen the
    /// close; such a connection is dropped here instead.
    fn finish(mut self, error: Option<&tokio_postgres::Error>) {
        let Some(object) = self.client.take() else {
            return;
        };
        if error.is_some_and(breaks_connection) {
            drop(Object::take(object));
        } else {
            drop(object);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let Some(object) = self.client.take() else {
            return;
        };
        let client = Object::take(object);
        let cancel = client.cancel_token();
        let tls = self.tls.take();
        tracing::debug!(
            "outbox call dropped mid-statement; cancelling it and closing the connection"
        );
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    // Best effort: a statement that already finished ignores the cancel.
                    // Over TLS the cancel request is encrypted like the connection was.
                    let sent = match tls {
                        Some(tls) => {
                            tokio::time::timeout(CANCEL_TIMEOUT, cancel.cancel_query(tls)).await
                        }
                        None => {
                            let sent = cancel.cancel_query(tokio_postgres::NoTls);
                            tokio::time::timeout(CANCEL_TIMEOUT, sent).await
                        }
                    };
                    match sent {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => {
                            tracing::warn!(error = %e, "cancelling a dropped outbox statement failed")
                        }
                        Err(_) => tracing::warn!(
                            timeout = ?CANCEL_TIMEOUT,
                            "cancelling a dropped outbox statement got no answer; closing its connection"
                        ),
                    }
                    drop(client);
                });
            }
            // Without a runtime the connection is only closed; the server ends the
            // statement when it next talks to the client.
            Err(_) => drop(client),
        }
    }
}

/// The store's connections as the core's migrator reads the schema's records on them.
pub(crate) struct SchemaReader<'a>(pub(crate) &'a Db);

#[outbox_core::async_trait]
impl outbox_core::store_kit::schema::ReadSchema for SchemaReader<'_> {
    async fn pair(&mut self, sql: &str) -> Result<(Option<i64>, Option<i64>)> {
        crate::migrate::pair_of(&query(self.0, sql, &[]).await?)
    }
}
