//! A bench's fresh table ([`Place`], at a [`Location`]) and a store on it ([`Subject`]):
//! either path on every engine, reached directly or (PostgreSQL) through the latency proxy.
//!
//! Stores are wrapped in [`Observed`] as a host (and the `outbox` command) runs them, so
//! the figures include the store-level metrics and warnings.

use std::any::Any;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use outbox_core::portable::PortableConfig;
use outbox_core::{AdminClaimStore, NewEntry, Observed};
use outbox_mysql::{MySqlClaimStore, MySqlStoreConfig, PortableMySqlStore};
use outbox_postgres::PortablePgStore;
use outbox_postgres::{PgClaimStore, PgStoreConfig, StatementMode};
use outbox_sqlite::PortableSqliteStore;
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};
use outbox_testkit::proxy::{PgProxy, ProxyConfig};

use crate::location::Location;
use crate::pg;
use crate::results::{Engine, StorePath};

/// A fresh, migrated table that is removed (schema dropped, file deleted) on drop.
pub struct Place {
    /// Where it is.
    pub location: Location,
    _guard: Box<dyn Any + Send>,
}

impl Place {
    /// A new migrated table named `table`; `None` (reported loudly, or a panic when the
    /// engine is required) when the engine cannot be reached.
    pub async fn create(engine: Engine, table: &str) -> Option<Place> {
        match engine {
            Engine::Sqlite => {
                let dir = tempfile::tempdir().expect("temporary directory");
                let url = format!("sqlite://{}", dir.path().join("outbox.db").display());
                let location = Location {
                    engine,
                    url,
                    schema: None,
                    table: table.to_owned(),
                };
                let config = SqliteStoreConfig::new().table(location.table_name());
                let pool = SqliteClaimStore::open_pool(&location.url, &config)
                    .await
                    .expect("open the bench file");
                outbox_sqlite::migrate(&pool, &location.table_name())
                    .await
                    .expect("migrate the bench file");
                pool.close().await;
                Some(Place {
                    location,
                    _guard: Box::new(dir),
                })
            }
            Engine::Postgres => {
                let db = pg::schema().await?;
                let location = Location {
                    engine,
                    url: db.url.clone(),
                    schema: Some(db.schema.clone()),
                    table: table.to_owned(),
                };
                let mut client = db.connect().await;
                outbox_postgres::migrate(&mut client, &location.table_name())
                    .await
                    .expect("migrate the bench schema");
                Some(Place {
                    location,
                    _guard: Box::new(db),
                })
            }
            Engine::Mysql => {
                let db = crate::mariadb::database().await?;
                let location = Location {
                    engine,
                    url: db.url.clone(),
                    schema: Some(db.name.clone()),
                    table: table.to_owned(),
                };
                let config = MySqlStoreConfig::new()
                    .table(location.table_name())
                    .max_connections(1);
                let pool = MySqlClaimStore::open_pool(&location.url, &config)
                    .await
                    .expect("open the bench database");
                outbox_mysql::migrate(&pool, &location.table_name())
                    .await
                    .expect("migrate the bench database");
                pool.close().await;
                Some(Place {
                    location,
                    _guard: Box::new(db),
                })
            }
        }
    }
}

/// How a store reaches its database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// Added round-trip latency, milliseconds (PostgreSQL only).
    pub latency_ms: u32,
    /// Route through the counting proxy even without latency.
    pub counted: bool,
    /// How the PostgreSQL store sends its statements.
    pub statements: StatementMode,
    /// A pooler (PgBouncer) to connect through instead of the server (PostgreSQL only,
    /// not with the latency proxy).
    pub pooler: Option<SocketAddr>,
}

impl Link {
    /// Straight to the server (or file).
    pub fn direct() -> Self {
        Self {
            latency_ms: 0,
            counted: false,
            statements: StatementMode::Named,
            pooler: None,
        }
    }

    /// Through the proxy, adding `latency_ms` per round trip (0: direct).
    pub fn with_latency(latency_ms: u32) -> Self {
        Self {
            latency_ms,
            ..Self::direct()
        }
    }

    /// Through the proxy without delay, so its traffic is counted.
    pub fn counted() -> Self {
        Self {
            counted: true,
            ..Self::direct()
        }
    }

    fn proxied(self) -> bool {
        self.latency_ms > 0 || self.counted
    }
}

/// The concrete store behind a [`Subject`], for what only a concrete type offers (enqueue
/// inside the host's transaction).
#[derive(Debug, Clone)]
pub enum Concrete {
    /// `outbox-sqlite`.
    SqliteOptimized(SqliteClaimStore),
    /// The portable store on SQLite.
    SqlitePortable(PortableSqliteStore),
    /// `outbox-postgres`.
    PgOptimized(PgClaimStore),
    /// The portable store on PostgreSQL.
    PgPortable(PortablePgStore),
    /// `outbox-mysql`.
    MySqlOptimized(MySqlClaimStore),
    /// The portable store on MariaDB.
    MySqlPortable(PortableMySqlStore),
}

/// A store on a [`Location`], ready to bench.
pub struct Subject {
    /// The store, observed as a host runs it.
    pub store: Arc<dyn AdminClaimStore>,
    /// The same store, concrete.
    pub concrete: Concrete,
    /// The proxy between the store and the server, when there is one.
    pub proxy: Option<PgProxy>,
}

/// Opens `path`'s store on `location` with up to `connections` connections.
pub async fn open(location: &Location, path: StorePath, link: Link, connections: u32) -> Subject {
    let table = location.table_name();
    match location.engine {
        Engine::Sqlite => {
            let config = SqliteStoreConfig::new()
                .table(table.clone())
                .max_connections(connections)
                .busy_timeout(Duration::from_secs(60));
            let concrete = match path {
                StorePath::Optimized => Concrete::SqliteOptimized(
                    SqliteClaimStore::open(&location.url, config)
                        .await
                        .expect("open the SQLite store"),
                ),
                StorePath::Portable => {
                    let pool = SqliteClaimStore::open_pool(&location.url, &config)
                        .await
                        .expect("open the SQLite pool");
                    Concrete::SqlitePortable(
                        outbox_sqlite::portable_store(pool, PortableConfig::default().table(table))
                            .await
                            .expect("open the portable SQLite store"),
                    )
                }
            };
            Subject::of(concrete, None)
        }
        Engine::Postgres => {
            let proxy = if link.proxied() {
                let latency = Duration::from_millis(u64::from(link.latency_ms));
                Some(
                    PgProxy::start(
                        pg::server_addr(&location.url),
                        ProxyConfig::new().round_trip_latency(latency),
                    )
                    .await
                    .expect("start the latency proxy"),
                )
            } else {
                None
            };
            assert!(
                link.pooler.is_none() || proxy.is_none(),
                "the latency proxy and a pooler do not combine"
            );
            let via = proxy.as_ref().map(PgProxy::local_addr).or(link.pooler);
            let config = pg::config(&location.url, via);
            let concrete = match path {
                StorePath::Optimized => {
                    let manager = Manager::from_config(
                        config,
                        tokio_postgres::NoTls,
                        ManagerConfig {
                            recycling_method: RecyclingMethod::Fast,
                        },
                    );
                    let pool = Pool::builder(manager)
                        .max_size(connections as usize)
                        .build()
                        .expect("build the pool");
                    Concrete::PgOptimized(
                        PgClaimStore::new(
                            pool,
                            PgStoreConfig::new()
                                .table(table)
                                .statement_mode(link.statements),
                        )
                        .await
                        .expect("open the PostgreSQL store"),
                    )
                }
                StorePath::Portable => {
                    let pool = sqlx::postgres::PgPoolOptions::new()
                        .max_connections(connections)
                        .connect_with(sqlx_options(&config))
                        .await
                        .expect("open the sqlx pool");
                    Concrete::PgPortable(
                        outbox_postgres::portable_store(
                            pool,
                            PortableConfig::default().table(table),
                        )
                        .await
                        .expect("open the portable PostgreSQL store"),
                    )
                }
            };
            Subject::of(concrete, proxy)
        }
        Engine::Mysql => {
            assert!(
                !link.proxied(),
                "the latency proxy reads the PostgreSQL protocol: MariaDB is reached direct"
            );
            let config = MySqlStoreConfig::new()
                .table(table.clone())
                .max_connections(connections);
            let pool = MySqlClaimStore::open_pool(&location.url, &config)
                .await
                .expect("open the MariaDB pool");
            let concrete = match path {
                StorePath::Optimized => Concrete::MySqlOptimized(
                    MySqlClaimStore::new(pool, config)
                        .await
                        .expect("open the MariaDB store"),
                ),
                StorePath::Portable => Concrete::MySqlPortable(
                    outbox_mysql::portable_store(pool, PortableConfig::default().table(table))
                        .await
                        .expect("open the portable MariaDB store"),
                ),
            };
            Subject::of(concrete, None)
        }
    }
}

fn sqlx_options(config: &tokio_postgres::Config) -> sqlx::postgres::PgConnectOptions {
    let mut options = sqlx::postgres::PgConnectOptions::new()
        .username(config.get_user().unwrap_or("postgres"))
        .database(config.get_dbname().unwrap_or("postgres"))
        .application_name("outbox-bench");
    if let Some(tokio_postgres::config::Host::Tcp(host)) = config.get_hosts().first() {
        options = options.host(host);
    }
    if let Some(port) = config.get_ports().first() {
        options = options.port(*port);
    }
    if let Some(password) = config.get_password() {
        options = options.password(&String::from_utf8_lossy(password));
    }
    options
}

impl Subject {
    fn of(concrete: Concrete, proxy: Option<PgProxy>) -> Self {
        let store: Arc<dyn AdminClaimStore> = match &concrete {
            Concrete::SqliteOptimized(s) => Arc::new(Observed::new(s.clone())),
            Concrete::SqlitePortable(s) => Arc::new(Observed::new(s.clone())),
            Concrete::PgOptimized(s) => Arc::new(Observed::new(s.clone())),
            Concrete::PgPortable(s) => Arc::new(Observed::new(s.clone())),
            Concrete::MySqlOptimized(s) => Arc::new(Observed::new(s.clone())),
            Concrete::MySqlPortable(s) => Arc::new(Observed::new(s.clone())),
        };
        Self {
            store,
            concrete,
            proxy,
        }
    }

    /// Writes `entry` the way a host does: in a transaction of its own on the store's
    /// database, through the store's in-transaction enqueue, then commits.
    pub async fn enqueue_in_host_transaction(&self, entry: NewEntry) {
        match &self.concrete {
            Concrete::SqliteOptimized(s) => {
                let mut tx = s.pool().begin_with("BEGIN IMMEDIATE").await.expect("begin");
                s.writer()
                    .enqueue_in(&mut tx, vec![entry])
                    .await
                    .expect("enqueue");
                tx.commit().await.expect("commit");
            }
            Concrete::SqlitePortable(s) => {
                let mut tx = s
                    .backend()
                    .pool()
                    .begin_with("BEGIN IMMEDIATE")
                    .await
                    .expect("begin");
                s.enqueue_in(&mut tx, vec![entry]).await.expect("enqueue");
                tx.commit().await.expect("commit");
            }
            Concrete::PgOptimized(s) => {
                let mut pooled = s.pool().get().await.expect("connection");
                let client: &mut tokio_postgres::Client = &mut pooled;
                let tx = client.transaction().await.expect("begin");
                s.writer()
                    .enqueue_one_in(&tx, entry)
                    .await
                    .expect("enqueue");
                tx.commit().await.expect("commit");
            }
            Concrete::PgPortable(s) => {
                let mut tx = s.backend().pool().begin().await.expect("begin");
                s.enqueue_in(&mut tx, vec![entry]).await.expect("enqueue");
                tx.commit().await.expect("commit");
            }
            Concrete::MySqlOptimized(s) => {
                let mut tx = s.pool().begin().await.expect("begin");
                s.writer()
                    .enqueue_in(&mut tx, vec![entry])
                    .await
                    .expect("enqueue");
                tx.commit().await.expect("commit");
            }
            Concrete::MySqlPortable(s) => {
                let mut tx = s.backend().pool().begin().await.expect("begin");
                s.enqueue_in(&mut tx, vec![entry]).await.expect("enqueue");
                tx.commit().await.expect("commit");
            }
        }
    }
}
