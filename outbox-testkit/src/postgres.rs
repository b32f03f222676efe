//! A PostgreSQL server for tests: the one named by `OUTBOX_TEST_POSTGRES_URL`, or else a
//! throwaway cluster started once per test binary from the installed server binaries.
//! Every test gets a fresh schema of its own, dropped when its [`PgTestDb`] is dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The variable naming an existing server to test against.
pub const URL_VAR: &str = "OUTBOX_TEST_POSTGRES_URL";

/// The engine name used in skip reports and `OUTBOX_TEST_REQUIRE`.
pub const ENGINE: &str = "postgres";

/// A PostgreSQL server the tests may use.
#[derive(Debug)]
pub struct PgServer {
    /// Connection URL (to the `postgres` database as a superuser).
    pub url: String,
    /// The throwaway cluster, when this process started one.
    cluster: Option<Cluster>,
}

#[derive(Debug)]
pub(crate) struct Cluster {
    pub(crate) bin: PathBuf,
    pub(crate) data: PathBuf,
    pub(crate) port: u16,
    pub(crate) as_postgres_user: bool,
    /// Server settings beyond the test defaults (`-c name=value …`).
    pub(crate) extra: String,
}

static SERVER: OnceLock<Result<PgServer, String>> = OnceLock::new();

/// The server for this test binary, started on first use; `Err` says why there is none.
pub fn server() -> Result<&'static PgServer, String> {
    SERVER
        .get_or_init(|| match std::env::var(URL_VAR) {
            Ok(url) if !url.trim().is_empty() => Ok(PgServer { url, cluster: None }),
            _ => start_cluster(),
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Settings a production server keeps that the test clusters turn off for speed: every
/// commit flushed, full pages written, and the default autovacuum and analyze (given after
/// the test defaults, so they win). Benchmarks measure on these.
const PRODUCTION_SETTINGS: &str = "-c fsync=on -c synchronous_commit=on -c full_page_writes=on \
     -c shared_buffers=128MB -c autovacuum=on";

/// The server for this process as [`server`] gives it, except that a throwaway cluster
/// runs with production settings (durable commits, autovacuum on) instead of the test
/// defaults. Call it before anything else asks for the server: the first caller decides.
pub fn production_server() -> Result<&'static PgServer, String> {
    SERVER
        .get_or_init(|| match std::env::var(URL_VAR) {
            Ok(url) if !url.trim().is_empty() => Ok(PgServer { url, cluster: None }),
            _ => start_cluster_with(PRODUCTION_SETTINGS.to_owned()),
        })
        .as_ref()
        .map_err(Clone::clone)
}

impl PgServer {
    /// Restarts the throwaway cluster (fast shutdown, then start on the same port).
    /// Errors for a server named by URL, which these tests may not restart.
    pub fn restart(&self) -> Result<(), String> {
        let c = self
            .cluster
            .as_ref()
            .ok_or("the server was given by URL; only a throwaway cluster can be restarted")?;
        c.pg_ctl(&["restart", "-m", "fast", "-w", "-t", "60"])
    }

    /// A throwaway cluster of the caller's own, whatever [`URL_VAR`] names: one that may
    /// be restarted without disturbing anything else. Removed when the process ends.
    pub fn start_private() -> Result<PgServer, String> {
        start_cluster()
    }

    /// True when this process started the server (and so may restart it).
    pub fn is_throwaway(&self) -> bool {
        self.cluster.is_some()
    }
}

impl Cluster {
    pub(crate) fn run(&self, program: &Path, args: &[&str]) -> Result<(), String> {
        let out = as_server_user(program, self.as_postgres_user)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} {:?} failed: {}{}",
                program.display(),
                args,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    pub(crate) fn pg_ctl(&self, args: &[&str]) -> Result<(), String> {
        let data = self.data.to_string_lossy().into_owned();
        let log = self
            .data
            .with_file_name("server.log")
            .to_string_lossy()
            .into_owned();
        let opts = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections=300 -c shared_buffers=64MB {}",
            self.port,
            self.data.parent().unwrap_or(Path::new("/tmp")).display(),
            self.extra
        );
        let mut full = vec!["-D", &data, "-l", &log, "-o", &opts];
        full.extend_from_slice(args);
        self.run(&self.bin.join("pg_ctl"), &full)
    }
}

fn find_bin_dir() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.join("pg_ctl").is_file() && dir.join("initdb").is_file() {
                // Where the binaries really are (a PATH entry may hold links to a few of
                // them), for the others beside them (pg_basebackup).
                let real = std::fs::canonicalize(dir.join("pg_ctl"))
                    .ok()
                    .and_then(|p| p.parent().map(Path::to_path_buf));
                return Some(real.unwrap_or(dir));
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let v = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("pg_ctl").is_file().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

pub(crate) fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

pub(crate) fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

/// `program`, run as the `postgres` user when `as_postgres_user` (the tests run as root,
/// which the servers refuse).
pub(crate) fn as_server_user(program: &Path, as_postgres_user: bool) -> Command {
    if as_postgres_user {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

/// Hands `dir` (and everything in it) to the `postgres` user, who runs the servers when
/// the tests run as root.
pub(crate) fn chown_to_postgres(dir: &Path) -> Result<(), String> {
    let status = Command::new("chown")
        .args(["-R", "postgres:postgres"])
        .arg(dir)
        .status()
        .map_err(|e| e.to_string())?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("cannot hand {} to the postgres user", dir.display()))
}

fn start_cluster() -> Result<PgServer, String> {
    start_cluster_with(String::new())
}

fn start_cluster_with(extra: String) -> Result<PgServer, String> {
    let (cluster, dir) = init_cluster(extra)?;
    start(&cluster, &dir)?;
    Ok(PgServer {
        url: format!("postgres://postgres@127.0.0.1:{}/postgres", cluster.port),
        cluster: Some(cluster),
    })
}

/// A new cluster directory, initialised but not started, with `extra` server settings.
pub(crate) fn init_cluster(extra: String) -> Result<(Cluster, PathBuf), String> {
    let bin = find_bin_dir().ok_or_else(|| {
        format!("{URL_VAR} is unset and no PostgreSQL server binaries (initdb, pg_ctl) were found")
    })?;
    let as_postgres_user = is_root();
    let dir = cluster_dir(as_postgres_user)?;
    let cluster = Cluster {
        data: dir.join("data"),
        port: free_port()?,
        bin,
        as_postgres_user,
        extra,
    };
    let data = cluster.data.to_string_lossy().into_owned();
    cluster.run(
        &cluster.bin.join("initdb"),
        &[
            "-D",
            &data,
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        ],
    )?;
    Ok((cluster, dir))
}

/// A new, empty directory for a cluster, owned by the server's user.
pub(crate) fn cluster_dir(as_postgres_user: bool) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!(
        "outbox-pg-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    if as_postgres_user {
        chown_to_postgres(&dir)?;
    }
    Ok(dir)
}

/// Starts an initialised cluster, handing its directory (and whatever was written into it
/// since `initdb`) to the server's user first, and arranges its removal.
pub(crate) fn start(cluster: &Cluster, dir: &Path) -> Result<(), String> {
    if cluster.as_postgres_user {
        chown_to_postgres(dir)?;
    }
    cluster.pg_ctl(&["start", "-w", "-t", "60"])?;
    spawn_reaper(cluster, dir);
    Ok(())
}

/// Stops and deletes the cluster once this test process is gone, however it ends.
fn spawn_reaper(cluster: &Cluster, dir: &Path) {
    let stop = format!(
        "{}{} -D {} stop -m immediate",
        if cluster.as_postgres_user {
            "runuser -u postgres -- "
        } else {
            ""
        },
        cluster.bin.join("pg_ctl").display(),
        cluster.data.display()
    );
    when_this_process_ends(&format!(
        "{stop} >/dev/null 2>&1; rm -rf {dir}",
        dir = dir.display()
    ));
}

/// Runs the shell line `then` in the background once this test process is gone, however
/// it ends: a server it started is stopped, its files removed.
pub(crate) fn when_this_process_ends(then: &str) {
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {then}",
        pid = std::process::id()
    );
    let _ = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}

/// A fresh schema on the test server, dropped (with everything in it) on drop.
#[derive(Debug)]
pub struct PgTestDb {
    /// The server's URL.
    pub url: String,
    /// The schema created for this test.
    pub schema: String,
}

impl PgTestDb {
    /// Creates a fresh schema; `None` (after a loud report, or a failure when PostgreSQL
    /// is required) when no server can be had.
    pub async fn create() -> Option<Self> {
        let server = match tokio::task::spawn_blocking(server)
            .await
            .expect("server start")
        {
            Ok(s) => s,
            Err(why) => {
                crate::engines::unavailable(ENGINE, &why);
                return None;
            }
        };
        let schema = format!(
            "outbox_test_{}",
            &uuid::Uuid::new_v4().simple().to_string()[..16]
        );
        let client = match connect(&server.url).await {
            Ok(c) => c,
            Err(why) => {
                crate::engines::unavailable(ENGINE, &why);
                return None;
            }
        };
        client
            .batch_execute(&format!("CREATE SCHEMA \"{schema}\""))
            .await
            .expect("create test schema");
        Some(Self {
            url: server.url.clone(),
            schema,
        })
    }

    /// A new connection to the test server.
    pub async fn connect(&self) -> tokio_postgres::Client {
        connect(&self.url)
            .await
            .expect("connect to the test server")
    }
}

/// The driver configuration for `url`, tagged with `application_name` (so a test can find
/// its own backends in `pg_stat_activity`), connecting to `via` (a proxy) instead of the
/// server when given.
pub fn client_config(
    url: &str,
    application_name: &str,
    via: Option<std::net::SocketAddr>,
) -> tokio_postgres::Config {
    let server: tokio_postgres::Config = url.parse().expect("a PostgreSQL URL");
    let mut config = match via {
        None => server.clone(),
        Some(addr) => {
            let mut through = tokio_postgres::Config::new();
            through
                .host(addr.ip().to_string())
                .port(addr.port())
                .user(server.get_user().unwrap_or("postgres"))
                .dbname(server.get_dbname().unwrap_or("postgres"));
            if let Some(password) = server.get_password() {
                through.password(password);
            }
            through
        }
    };
    config
        .application_name(application_name)
        .connect_timeout(std::time::Duration::from_secs(10));
    config
}

/// The server's TCP address, for pointing a proxy at it.
pub fn server_addr(url: &str) -> std::net::SocketAddr {
    let config: tokio_postgres::Config = url.parse().expect("a PostgreSQL URL");
    let host = match &config.get_hosts()[0] {
        tokio_postgres::config::Host::Tcp(h) if h == "localhost" => "127.0.0.1".to_owned(),
        tokio_postgres::config::Host::Tcp(h) => h.clone(),
        #[allow(unreachable_patterns)]
        other => panic!("the server must be reached over TCP, not {other:?}"),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}").parse().expect("server address")
}

/// Connects and drives the connection on a background task.
pub async fn connect(url: &str) -> Result<tokio_postgres::Client, String> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .map_err(|e| format!("cannot connect to {url}: {e}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

impl Drop for PgTestDb {
    fn drop(&mut self) {
        let (url, schema) = (self.url.clone(), self.schema.clone());
        // Drop runs outside async context guarantees; use a private runtime on a thread.
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if let Ok(client) = connect(&url).await {
                    let _ = client
                        .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
                        .await;
                }
            });
        })
        .join();
    }
}
