//! Shared set-up: a schema per test with the outbox migrated into it, and stores on it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use outbox_core::TableName;
use outbox_sqlserver::{
    connect, connect_pool, ConnectOptions, SqlClient, SqlServerClaimStore, SqlServerStoreConfig,
};

/// The variable naming the test server.
pub(crate) const URL_VAR: &str = "OUTBOX_TEST_SQLSERVER_URL";

/// How to run these tests where Docker runs, as the skip banner says it.
pub(crate) const HOW_TO_RUN: &str = "docker compose up -d sqlserver, then \
OUTBOX_TEST_SQLSERVER_URL='sqlserver://sa:Outbox-Test-1@127.0.0.1:14330/master?trustServerCertificate=true' \
OUTBOX_TEST_REQUIRE=sqlserver cargo test -p outbox-sqlserver";

/// One test's schema on the test server; dropped with everything in it at the end.
pub(crate) struct SqlServerTestDb {
    pub(crate) options: ConnectOptions,
    pub(crate) schema: String,
}

impl SqlServerTestDb {
    /// A fresh schema with the outbox migrated into it; `None` (reported loudly) when no
    /// server is configured or reachable.
    pub(crate) async fn create() -> Option<Self> {
        let Ok(url) = std::env::var(URL_VAR) else {
            outbox_testkit::engines::unavailable(
                "sqlserver",
                &format!("{URL_VAR} is not set; to run these tests: {HOW_TO_RUN}"),
            );
            return None;
        };
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let schema = format!(
            "outbox_t{}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            uuid::Uuid::new_v4()
                .simple()
                .to_string()
                .get(..6)
                .unwrap_or("x")
        );
        let options = ConnectOptions::parse(&url)
            .expect("OUTBOX_TEST_SQLSERVER_URL is not a SQL Server connection string")
            .application_name(&schema);
        let mut client = match connect(&options).await {
            Ok(c) => c,
            Err(e) => {
                outbox_testkit::engines::unavailable("sqlserver", &e.to_string());
                return None;
            }
        };
        run(&mut client, &format!("CREATE SCHEMA [{schema}]")).await;
        let db = Self { options, schema };
        outbox_sqlserver::migrate(&mut client, &db.table())
            .await
            .expect("migrate");
        Some(db)
    }

    /// The outbox table of this test.
    pub(crate) fn table(&self) -> TableName {
        TableName::in_schema(&self.schema, "outbox").expect("valid test table name")
    }

    /// A connection of the test's own (not the store's).
    pub(crate) async fn client(&self) -> SqlClient {
        connect(
            &self
                .options
                .clone()
                .application_name(&format!("{}-observer", self.schema)),
        )
        .await
        .expect("connect")
    }

    /// A store on the test's table over a pool of `size` connections, its sessions
    /// named after the schema.
    pub(crate) async fn store(&self, size: usize) -> SqlServerClaimStore {
        self.store_with(self.options.clone(), size, SqlServerStoreConfig::default())
            .await
    }

    /// A store with other connection options and config (whose table is replaced).
    pub(crate) async fn store_with(
        &self,
        options: ConnectOptions,
        size: usize,
        config: SqlServerStoreConfig,
    ) -> SqlServerClaimStore {
        let pool = connect_pool(options, size).await.expect("pool");
        SqlServerClaimStore::new(
            pool,
            SqlServerStoreConfig {
                table: self.table(),
                ..config
            },
        )
        .await
        .expect("build store")
    }
}

impl Drop for SqlServerTestDb {
    fn drop(&mut self) {
        let (options, schema) = (self.options.clone(), self.schema.clone());
        // Drop runs outside any runtime's guarantees: use a private one on a thread.
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if let Ok(mut client) = connect(&options).await {
                    let sql = format!(
                        "DROP TABLE IF EXISTS [{schema}].[outbox]; \
                         DROP TABLE IF EXISTS [{schema}].[outbox_migrations]; \
                         DROP TABLE IF EXISTS [{schema}].[outbox_definitions]; \
                         DROP SCHEMA IF EXISTS [{schema}];"
                    );
                    if let Ok(stream) = client.simple_query(sql).await {
                        let _ = stream.into_results().await;
                    }
                }
            });
        })
        .join();
    }
}

/// Runs a batch of the test's own and reads its whole response.
pub(crate) async fn run(client: &mut SqlClient, sql: &str) {
    client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_results()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Waits (polling, up to `within`) until a session named `program` is blocked behind a
/// lock; returns its session id.
pub(crate) async fn blocked_session(
    observer: &mut SqlClient,
    program: &str,
    within: Duration,
) -> i16 {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let row = observer
            .query(
                "SELECT TOP (1) r.session_id FROM sys.dm_exec_requests AS r \
                 JOIN sys.dm_exec_sessions AS s ON s.session_id = r.session_id \
                 WHERE s.program_name = @P1 AND r.blocking_session_id <> 0",
                &[&program],
            )
            .await
            .expect("read sys.dm_exec_requests")
            .into_row()
            .await
            .expect("read sys.dm_exec_requests");
        if let Some(id) = row.and_then(|r| r.get::<i16, _>(0)) {
            return id;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no session of {program} blocked within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A connection of the test's own holding a table lock READPAST cannot skip, inside an
/// open transaction: every claim on the table waits behind it until it is rolled back.
pub(crate) async fn lock_table(db: &SqlServerTestDb) -> SqlClient {
    let mut blocker = db.client().await;
    run(&mut blocker, "BEGIN TRANSACTION").await;
    run(
        &mut blocker,
        &format!(
            "SELECT COUNT(*) FROM [{}].[outbox] WITH (TABLOCKX, HOLDLOCK)",
            db.schema
        ),
    )
    .await;
    blocker
}

/// Starts a claim of `n` pending entries on its own task.
pub(crate) fn spawn_claim(
    store: &outbox_sqlserver::SqlServerClaimStore,
    n: u32,
) -> tokio::task::JoinHandle<outbox_core::Result<Vec<outbox_core::Claim>>> {
    let store = store.clone();
    tokio::spawn(async move {
        outbox_core::ClaimStore::claim_pending(
            &store,
            &outbox_core::ClaimRequest::new("w", n, chrono::TimeDelta::minutes(5)),
        )
        .await
    })
}
