//! The server is killed (SIGKILL) and started again in the middle of a drain: the store
//! recovers on fresh connections, and every entry is delivered, none recorded twice.
//!
//! Killing the shared test server would break every other test, so this test starts a
//! throwaway `mariadbd` of its own (its own data directory and port) from the installed
//! server binaries; where there are none it is reported skipped, loudly (a failure when
//! `OUTBOX_TEST_REQUIRE` names `mariadb-throwaway`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use outbox_core::drain::{Drain, DrainOptions};
use outbox_core::{EmissionStatus, NewEntry, OutboxAdmin, OutboxStore};
use outbox_mysql::{MySqlClaimStore, MySqlStoreConfig};
use outbox_testkit::emitters::{nothing_left_to_send, PerEntry};

const ENGINE: &str = "mariadb-throwaway";
const ENTRIES: usize = 2_000;

/// A `mariadbd` on a data directory, temporary directory and port of its own, killed
/// when dropped.
struct Throwaway {
    dir: tempfile::TempDir,
    port: u16,
    server: Option<Child>,
}

fn binary(name: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/usr/bin", "/usr/local/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists())
}

impl Throwaway {
    fn create() -> Result<Self, String> {
        let install = binary("mariadb-install-db").ok_or("mariadb-install-db is not installed")?;
        binary("mariadbd").ok_or("mariadbd is not installed")?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        // --no-defaults first: the machine's option files (user=mysql, its own datadir and
        // socket) must not apply to a server of the test's own.
        // A temporary directory of its own too: a starting server deletes every `#sql`
        // file in its tmpdir, and the shared test server keeps its temporary tables in
        // /tmp while other tests run.
        std::fs::create_dir(dir.path().join("tmp")).map_err(|e| e.to_string())?;
        let out = Command::new(install)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", dir.path().join("data").display()))
            .arg(format!("--tmpdir={}", dir.path().join("tmp").display()))
            .args([
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--user=root",
            ])
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "mariadb-install-db failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let mut server = Self {
            dir,
            port,
            server: None,
        };
        server.start()?;
        Ok(server)
    }

    fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:{}/app", self.port)
    }

    fn start(&mut self) -> Result<(), String> {
        let data = self.dir.path().join("data");
        let child = Command::new(binary("mariadbd").expect("checked"))
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!(
                "--tmpdir={}",
                self.dir.path().join("tmp").display()
            ))
            .arg(format!(
                "--socket={}",
                self.dir.path().join("sock").display()
            ))
            .arg(format!(
                "--pid-file={}",
                self.dir.path().join("pid").display()
            ))
            .arg(format!("--port={}", self.port))
            .args([
                "--bind-address=127.0.0.1",
                "--user=root",
                "--skip-log-bin",
                "--innodb-buffer-pool-size=64M",
                "--skip-grant-tables",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        self.server = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if Instant::now() > deadline {
                return Err("the throwaway server did not start within 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.server.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        self.kill();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_survives_a_server_restart_mid_drain() {
    let mut server = match tokio::task::spawn_blocking(Throwaway::create)
        .await
        .unwrap()
    {
        Ok(s) => s,
        Err(why) => {
            outbox_testkit::engines::unavailable(ENGINE, &why);
            return;
        }
    };
    {
        use sqlx::{Connection, Executor};
        let base = format!("mysql://root@127.0.0.1:{}", server.port);
        let mut admin = sqlx::MySqlConnection::connect(&base).await.unwrap();
        admin.execute("CREATE DATABASE app").await.unwrap();
    }
    let config = MySqlStoreConfig::new().acquire_timeout(Duration::from_secs(2));
    let pool = MySqlClaimStore::open_pool(&server.url(), &config)
        .await
        .unwrap();
    outbox_mysql::migrate(&pool, config.table_name())
        .await
        .unwrap();
    let store = Arc::new(MySqlClaimStore::new(pool, config).await.unwrap());
    let entries: Vec<_> = (0..ENTRIES)
        .map(|i| NewEntry::new("t", i.to_string().into_bytes()))
        .collect();
    for chunk in entries.chunks(500) {
        store.enqueue_batch(chunk.to_vec()).await.unwrap();
    }

    let emitter = Arc::new(PerEntry::default());
    let drains: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|owner| {
            let options = DrainOptions::new()
                .owner(owner)
                .batch_size(25)
                .lease(chrono::TimeDelta::seconds(3))
                .max_attempts(1_000);
            let drain = Drain::new(store.clone(), emitter.clone(), options).unwrap();
            let watched = store.clone();
            tokio::spawn(async move {
                let done = move || {
                    let store = watched.clone();
                    async move { nothing_left_to_send(&*store).await }
                };
                drain.run_until(done, std::future::pending::<()>()).await
            })
        })
        .collect();

    // Kill the server once some entries are out, then start it again.
    let started = Instant::now();
    while emitter.emissions().len() < ENTRIES / 5 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the drain never got going"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    server.kill();
    let at_kill = emitter.emissions().len();
    tokio::time::sleep(Duration::from_millis(500)).await;
    server = tokio::task::spawn_blocking(move || {
        server.start().expect("restart the server");
        server
    })
    .await
    .unwrap();
    eprintln!("restart: killed the server after {at_kill} entries were emitted, started it again");

    for drain in drains {
        tokio::time::timeout(Duration::from_secs(120), drain)
            .await
            .expect("the drain did not finish after the restart")
            .unwrap();
    }
    let stats = store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap();
    assert_eq!(stats.count(EmissionStatus::Delivered), ENTRIES as u64);
    let emissions = emitter.emissions();
    assert_eq!(emissions.len(), ENTRIES, "not every entry was emitted");
    let again = emissions.values().filter(|n| **n > 1).count();
    eprintln!("restart: {again} entries emitted more than once (at least once, by design)");
    drop(server);
}
