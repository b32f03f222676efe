//! Start-up (schema, pools, store, drain) and the run that serves requests and drains
//! events until shutdown.

use std::future::{Future, IntoFuture};
use std::sync::Arc;

use axum::Router;
use outbox_core::drain::{Drain, DrainOptions, DrainSummary, Emitter};
use outbox_core::Observed;
use outbox_postgres::deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use outbox_postgres::{connect_config, PgClaimStore, PgListener, PgStoreConfig};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::http::{router, PlaceOrder};
use crate::on_sqlx::SqlxOrders;
use crate::on_tokio_postgres::TokioPostgresOrders;
use crate::{Error, Settings};

/// The driver the request handler writes the order and its event with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stack {
    /// A sqlx `PgPool`; the event is written with `PgWriter::enqueue_in_sqlx`.
    Sqlx,
    /// A deadpool-postgres pool of tokio-postgres clients; the event is written with
    /// `PgWriter::enqueue_in`.
    TokioPostgres,
}

/// The service, ready to serve: its routes and the drain of its outbox.
#[derive(Debug)]
pub struct Service {
    router: Router,
    drain: Drain,
}

impl Service {
    /// Creates the schema and the orders table if missing, migrates the outbox table,
    /// builds the pools, the store and a drain into `emitter`.
    pub async fn start(
        settings: &Settings,
        stack: Stack,
        emitter: Arc<dyn Emitter>,
    ) -> Result<Self, Error> {
        let table = settings.outbox_table()?;
        let (pg, tls) = connect_config(&settings.database_url)?;

        let (mut client, connection) = pg.connect(tls.clone()).await?;
        let connection = tokio::spawn(connection);
        client
            .batch_execute(&settings.render(include_str!("../sql/orders.sql"))?)
            .await?;
        outbox_postgres::migrate(&mut client, &table).await?;
        drop(client);
        let _ = connection.await;

        let manager = Manager::from_config(
            pg.clone(),
            tls.clone(),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager).max_size(8).build()?;
        // Wakes the drain when a transaction that wrote an event commits.
        let listener = Arc::new(PgListener::start(pg, tls.clone(), &table));
        let config = PgStoreConfig::new()
            .table(table)
            .listener(listener)
            .tls(tls);
        let store = Observed::new(PgClaimStore::new(pool.clone(), config).await?);

        let insert_order = settings.render(include_str!("../sql/insert_order.sql"))?;
        let writer = store.writer().clone();
        let orders: Arc<dyn PlaceOrder> = match stack {
            Stack::Sqlx => Arc::new(SqlxOrders {
                pool: sqlx::PgPool::connect(&settings.database_url).await?,
                writer,
                insert_order,
            }),
            Stack::TokioPostgres => Arc::new(TokioPostgresOrders {
                pool,
                writer,
                insert_order,
            }),
        };
        let options = DrainOptions::new().owner(format!("orders-service-{}", std::process::id()));
        let drain = Drain::new(Arc::new(store), emitter, options)?;
        Ok(Self {
            router: router(orders),
            drain,
        })
    }

    /// Serves requests on `listener` and drains the outbox until `shutdown` completes;
    /// then stops taking connections, finishes the requests and emissions under way, and
    /// returns what the drain did.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<DrainSummary, Error> {
        let (stop, stopped) = watch::channel(false);
        tokio::spawn(async move {
            shutdown.await;
            let _ = stop.send(true);
        });
        let http =
            axum::serve(listener, self.router).with_graceful_shutdown(fired(stopped.clone()));
        let (served, summary) = tokio::join!(http.into_future(), self.drain.run(fired(stopped)));
        served?;
        Ok(summary)
    }
}

/// What each binary runs: the service on `stack`, configured from the environment
/// ([`Settings::from_env`], and `LISTEN`, default `127.0.0.1:3000`), events printed on
/// standard output, until Ctrl-C.
pub async fn run_from_env(stack: Stack) -> Result<(), Error> {
    let settings = Settings::from_env()?;
    let addr = std::env::var("LISTEN").unwrap_or_else(|_| "127.0.0.1:3000".into());
    let service = Service::start(&settings, stack, Arc::new(crate::PrintEmitter)).await?;
    let listener = TcpListener::bind(&addr).await?;
    eprintln!("orders service ({stack:?}) on http://{addr}: POST /orders");
    let summary = service
        .serve(listener, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    eprintln!("stopped: {summary:?}");
    Ok(())
}

/// Completes once the shutdown signal is sent (or its sender is gone).
async fn fired(mut stopped: watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}
