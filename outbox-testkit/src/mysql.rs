//! The MariaDB / MySQL test server (`OUTBOX_TEST_MYSQL_URL`, by default the machine's own
//! server as root on 127.0.0.1:3306): a throwaway database per test, dropped when the test
//! ends. An unreachable server is reported loudly, and fails the test when
//! `OUTBOX_TEST_REQUIRE` names `mariadb`.

use sqlx::{Connection, Executor, MySqlConnection};

/// The engine's name in `OUTBOX_TEST_REQUIRE` and in the skip banner.
pub const ENGINE: &str = "mariadb";

/// The server the tests use, without a database.
pub fn server_url() -> String {
    std::env::var("OUTBOX_TEST_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306".to_owned())
}

/// A database of its own for one test; dropped with it.
#[derive(Debug)]
pub struct TestDatabase {
    /// The database's name.
    pub name: String,
    /// A URL naming it.
    pub url: String,
}

impl TestDatabase {
    /// Creates a fresh database, or reports the server unreachable and returns `None`.
    pub async fn create() -> Option<Self> {
        let server = server_url();
        let mut admin = match MySqlConnection::connect(&server).await {
            Ok(conn) => conn,
            Err(e) => {
                crate::engines::unavailable(ENGINE, &format!("{server}: {e}"));
                return None;
            }
        };
        let name = format!("outbox_t_{}", uuid::Uuid::new_v4().simple());
        admin
            .execute(format!("CREATE DATABASE `{name}`").as_str())
            .await
            .expect("create the test database");
        let url = format!("{}/{name}", server.trim_end_matches('/'));
        Some(Self { name, url })
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let (server, name) = (server_url(), self.name.clone());
        // A drop cannot await: a thread of its own runs the statement to its end.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let mut admin = MySqlConnection::connect(&server).await?;
                admin
                    .execute(format!("DROP DATABASE IF EXISTS `{name}`").as_str())
                    .await
                    .map(drop)
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop the test database {}", self.name);
        }
    }
}
