//! The connection pool: a small deadpool manager of the store's own.
//!
//! The published pool adapters for tiberius (bb8-tiberius, deadpool-tiberius) target
//! older tiberius releases; a manager is a few lines, and owning it lets every
//! connection get the store's session settings and isolation check before first use.
//!
//! Cancellation: tiberius needs every response read in full before the next request,
//! and a batch dropped mid-flight may leave a transaction open on the server. A call
//! holds its connection in a [`Checkout`]; only a call that read its response to the end
//! hands the connection back. A call that failed or whose future was dropped takes the
//! connection out of the pool and closes it, which makes the server roll back whatever
//! it had begun.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use deadpool::managed::{self, Metrics, Object, RecycleResult};
use outbox_core::{OutboxError, Result};
use tiberius::{Client, Row, ToSql};
use tokio::net::TcpStream;
use tokio_util::compat::{Compat, TokioAsyncWriteCompatExt};

use crate::connection::ConnectOptions;
use crate::error::map_err;
use crate::isolation::SessionFacts;
use outbox_core::ConflictRetry;

use crate::retry::{self, CallError};

/// How long a pooled connection may sit idle before it is checked on its way out.
const IDLE_CHECK_AFTER: Duration = Duration::from_secs(30);

/// A tiberius client on a tokio TCP stream, as the store and its hosts use it.
pub type SqlClient = Client<Compat<TcpStream>>;

/// The store's pool of connections.
pub type SqlServerPool = managed::Pool<ConnectionManager>;

/// Opens connections for [`SqlServerPool`]: TCP, TLS and login as the [`ConnectOptions`]
/// say, then the session settings (`sql/session.sql`) and the isolation check.
#[derive(Debug)]
pub struct ConnectionManager {
    options: ConnectOptions,
    session_sql: String,
}

impl ConnectionManager {
    /// A manager for `options`.
    pub fn new(options: ConnectOptions) -> Self {
        let lock_ms = options.get_lock_timeout().as_millis().to_string();
        let session_sql = include_str!("../sql/session.sql").replace("{lock_timeout_ms}", &lock_ms);
        Self {
            options,
            session_sql,
        }
    }
}

impl managed::Manager for ConnectionManager {
    type Type = SqlClient;
    type Error = OutboxError;

    async fn create(&self) -> Result<SqlClient> {
        let mut client = open(&self.options).await?;
        client
            .simple_query(self.session_sql.as_str())
            .await
            .map_err(map_err)?
            .into_results()
            .await
            .map_err(map_err)?;
        let row = client
            .simple_query(include_str!("../sql/isolation.sql"))
            .await
            .map_err(map_err)?
            .into_row()
            .await
            .map_err(map_err)?
            .ok_or_else(|| OutboxError::Database {
                message: "the isolation check returned no row".into(),
                source: None,
            })?;
        SessionFacts::from_row(&row)?.judge()?;
        Ok(client)
    }

    async fn recycle(
        &self,
        client: &mut SqlClient,
        metrics: &Metrics,
    ) -> RecycleResult<OutboxError> {
        // Only connections whose last call read its whole response come back (see
        // `Checkout`), so a returned connection is ready for the next request. One that
        // sat idle may have been closed by the server or a failover meanwhile: it is
        // checked with a round trip before it is handed out again.
        if metrics.last_used() < IDLE_CHECK_AFTER {
            return Ok(());
        }
        let alive = match client.simple_query("SELECT 1").await {
            Ok(stream) => stream.into_results().await.is_ok(),
            Err(_) => false,
        };
        if alive {
            Ok(())
        } else {
            Err(managed::RecycleError::message(
                "an idle connection was closed by the server",
            ))
        }
    }
}

/// Opens one connection with the store's session settings: for migrations, for the
/// command line, or for a host that wants a client configured like the store's.
pub async fn connect(options: &ConnectOptions) -> Result<SqlClient> {
    managed::Manager::create(&ConnectionManager::new(options.clone())).await
}

/// Builds a pool of at most `max_size` connections and opens one, so a wrong address,
/// login or database fails here with the server's words rather than at first use.
pub async fn connect_pool(options: ConnectOptions, max_size: usize) -> Result<SqlServerPool> {
    if max_size == 0 {
        return Err(OutboxError::invalid("pool size", "must be at least 1"));
    }
    let pool = managed::Pool::builder(ConnectionManager::new(options))
        .max_size(max_size)
        .runtime(deadpool::Runtime::Tokio1)
        .create_timeout(Some(Duration::from_secs(60)))
        .build()
        .map_err(|e| OutboxError::invalid("pool", e.to_string()))?;
    Checkout::get(&pool).await?.done();
    Ok(pool)
}

/// TCP, TLS and login, following one redirect (Azure SQL's gateway routes a login to
/// the node that serves the database).
async fn open(options: &ConnectOptions) -> Result<SqlClient> {
    let mut config = options.config().clone();
    let timeout = options.get_connect_timeout();
    for _ in 0..2 {
        let addr = config.get_addr();
        let attempt = async {
            let tcp = TcpStream::connect(&addr)
                .await
                .map_err(|e| OutboxError::Connection {
                    message: format!("cannot reach SQL Server at {addr}: {e}"),
                    source: Some(Box::new(e)),
                })?;
            tcp.set_nodelay(true).map_err(|e| OutboxError::Connection {
                message: format!("cannot set TCP_NODELAY: {e}"),
                source: Some(Box::new(e)),
            })?;
            Ok::<_, OutboxError>(Client::connect(config.clone(), tcp.compat_write()).await)
        };
        let connected = tokio::time::timeout(timeout, attempt).await.map_err(|_| {
            OutboxError::Connection {
                message: format!("connecting to SQL Server at {addr} took longer than {timeout:?}"),
                source: None,
            }
        })??;
        match connected {
            Ok(client) => return Ok(client),
            Err(tiberius::error::Error::Routing { host, port }) => {
                config.host(host);
                config.port(port);
            }
            Err(e) => return Err(map_err(e)),
        }
    }
    Err(OutboxError::Connection {
        message: "SQL Server redirected the login more than once".into(),
        source: None,
    })
}

/// A pooled connection held for one call. Dropped without [`Checkout::done`] (the call
/// failed, or its future was dropped mid-flight), the connection leaves the pool and is
/// closed, never handed to another call with unread results or an open transaction.
pub(crate) struct Checkout<M: managed::Manager<Error = OutboxError>> {
    object: Option<Object<M>>,
}

impl<M: managed::Manager<Error = OutboxError>> Checkout<M> {
    /// Takes a connection from `pool`.
    pub(crate) async fn get(pool: &managed::Pool<M>) -> Result<Self> {
        let object = pool.get().await.map_err(|e| match e {
            managed::PoolError::Backend(e) => e,
            other => OutboxError::Connection {
                message: format!("no connection from the pool: {other}"),
                source: None,
            },
        })?;
        Ok(Self {
            object: Some(object),
        })
    }

    /// The connection.
    pub(crate) fn client(&mut self) -> &mut M::Type {
        self.object
            .as_mut()
            .expect("a checkout holds its connection until dropped")
    }

    /// The call read its whole response: the connection goes back to the pool.
    pub(crate) fn done(mut self) {
        drop(self.object.take());
    }
}

impl<M: managed::Manager<Error = OutboxError>> Drop for Checkout<M> {
    fn drop(&mut self) {
        if let Some(object) = self.object.take() {
            drop(Object::take(object));
        }
    }
}

/// Runs one batch on a pooled connection and returns the rows of its result, running it
/// again on a fresh connection when the server rolled it back (see [`ConflictRetry`]).
pub(crate) async fn query(
    pool: &SqlServerPool,
    retry: &ConflictRetry,
    retried: &AtomicU64,
    sql: &str,
    params: &[&dyn ToSql],
) -> Result<Vec<Row>> {
    retry::run(retry, retried, || async {
        let mut checkout = Checkout::get(pool).await?;
        let rows = checkout
            .client()
            .query(sql, params)
            .await?
            .into_first_result()
            .await?;
        checkout.done();
        Ok::<_, CallError>(rows)
    })
    .await
}

/// The store's pool as the core's migrator reads the schema's records on it.
pub(crate) struct SchemaReader<'a> {
    pub(crate) pool: &'a SqlServerPool,
    pub(crate) retry: &'a ConflictRetry,
    pub(crate) retried: &'a AtomicU64,
}

#[outbox_core::async_trait]
impl outbox_core::store_kit::schema::ReadSchema for SchemaReader<'_> {
    async fn pair(&mut self, sql: &str) -> Result<(Option<i64>, Option<i64>)> {
        crate::migrate::pair_of(&query(self.pool, self.retry, self.retried, sql, &[]).await?)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Hands out numbered connections and counts them.
    struct Numbered(AtomicUsize);

    impl managed::Manager for Numbered {
        type Type = usize;
        type Error = OutboxError;

        async fn create(&self) -> Result<usize> {
            Ok(self.0.fetch_add(1, Ordering::SeqCst))
        }

        async fn recycle(&self, _: &mut usize, _: &Metrics) -> RecycleResult<OutboxError> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn only_a_finished_call_returns_its_connection() {
        let pool = managed::Pool::builder(Numbered(AtomicUsize::new(0)))
            .max_size(1)
            .build()
            .unwrap();
        let mut first = Checkout::get(&pool).await.unwrap();
        assert_eq!(*first.client(), 0);
        first.done();
        let mut again = Checkout::get(&pool).await.unwrap();
        assert_eq!(*again.client(), 0, "a finished call's connection is reused");

        // Dropped mid-call: the connection is discarded and the next call gets a new one.
        drop(again);
        let mut fresh = Checkout::get(&pool).await.unwrap();
        assert_eq!(*fresh.client(), 1, "a dropped call's connection came back");
        assert_eq!(pool.status().size, 1);

        // A call cancelled while awaiting (its future dropped) behaves the same.
        drop(fresh);
        let pool2 = pool.clone();
        let (holding, held) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let mut checkout = Checkout::get(&pool2).await.unwrap();
            let _ = holding.send(*checkout.client());
            std::future::pending::<()>().await;
            checkout.done();
        });
        assert_eq!(
            held.await.unwrap(),
            2,
            "the cancelled call held connection 2"
        );
        task.abort();
        assert!(task.await.unwrap_err().is_cancelled());
        let mut after = Checkout::get(&pool).await.unwrap();
        assert_eq!(
            *after.client(),
            3,
            "a cancelled call's connection came back"
        );
    }
}
