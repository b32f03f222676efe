//! A transaction-mode pooler for tests: Debian's PgBouncer, started by the test process in
//! front of a PostgreSQL server with a small server pool, the way production reaches most
//! PostgreSQL. Every statement may run on another server connection than the one before,
//! outside a transaction; named prepared statements and `LISTEN` do not survive that.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::postgres::{
    as_server_user, chown_to_postgres, free_port, is_root, when_this_process_ends,
};
use std::time::{Duration, Instant};

/// The engine name used in skip reports and `OUTBOX_TEST_REQUIRE`.
pub const ENGINE: &str = "pgbouncer";

/// A PgBouncer in transaction mode, stopped when dropped (or when the test process ends).
#[derive(Debug)]
pub struct PgBouncer {
    /// A URL for the `postgres` database through the pooler.
    pub url: String,
    /// Where the pooler listens.
    pub addr: std::net::SocketAddr,
    /// Server connections the pooler keeps per database and user.
    pub server_connections: u32,
    dir: PathBuf,
}

static SHARED: OnceLock<Result<PgBouncer, String>> = OnceLock::new();

/// The pooler this test binary shares, in front of [`crate::postgres::server`], with two
/// server connections; `None` after a loud report (a failure when required) when there is
/// no PostgreSQL server or no PgBouncer binary.
pub async fn shared() -> Option<&'static PgBouncer> {
    let started = tokio::task::spawn_blocking(|| {
        SHARED
            .get_or_init(|| {
                let server = crate::postgres::server()?;
                PgBouncer::start(&server.url, 2)
            })
            .as_ref()
            .map_err(Clone::clone)
    })
    .await
    .expect("start the pooler");
    match started {
        Ok(p) => Some(p),
        Err(why) => {
            crate::engines::unavailable(ENGINE, &why);
            None
        }
    }
}

impl PgBouncer {
    /// Starts a PgBouncer in transaction mode in front of the server `server_url` names,
    /// keeping at most `server_connections` connections to it per database and user.
    pub fn start(server_url: &str, server_connections: u32) -> Result<PgBouncer, String> {
        let bin = find_bin()
            .ok_or("no pgbouncer binary (apt-get install pgbouncer; scripts/services.sh does)")?;
        let server = crate::postgres::server_addr(server_url);
        let config: tokio_postgres::Config = server_url
            .parse()
            .map_err(|e| format!("not a PostgreSQL URL: {e}"))?;
        let user = config.get_user().unwrap_or("postgres").to_owned();
        let port = free_port()?;
        let dir = std::env::temp_dir().join(format!(
            "outbox-pgbouncer-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let ini = dir.join("pgbouncer.ini");
        std::fs::write(&ini, ini_text(server, port, server_connections, &dir))
            .and_then(|()| std::fs::write(dir.join("users.txt"), format!("\"{user}\" \"\"\n")))
            .map_err(|e| format!("cannot write the pooler's configuration: {e}"))?;
        // PgBouncer refuses to run as root; the PostgreSQL clusters' user runs it then.
        let as_postgres_user = is_root();
        if as_postgres_user {
            chown_to_postgres(&dir)?;
        }
        let out = as_server_user(&bin, as_postgres_user)
            .arg("-d")
            .arg(&ini)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
        if !out.status.success() {
            return Err(format!(
                "pgbouncer did not start: {}{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                std::fs::read_to_string(dir.join("pgbouncer.log")).unwrap_or_default()
            ));
        }
        let bouncer = PgBouncer {
            url: format!(
                "postgres://{user}@127.0.0.1:{port}/{}",
                config.get_dbname().unwrap_or("postgres")
            ),
            addr: format!("127.0.0.1:{port}").parse().expect("pooler address"),
            server_connections,
            dir,
        };
        when_this_process_ends(&stop_script(&bouncer.dir));
        bouncer.wait_ready(Duration::from_secs(20))?;
        Ok(bouncer)
    }

    /// Waits until the pooler accepts connections.
    fn wait_ready(&self, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        loop {
            if std::net::TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok()
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "pgbouncer did not listen on {} within {within:?}: {}",
                    self.addr,
                    std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The pooler's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        let _ = Command::new("sh")
            .args(["-c", &stop_script(&self.dir)])
            .status();
    }
}

/// The pooler's configuration: every database forwarded to `server`, trust for the users
/// listed, transaction pooling with `server_connections` per database and user.
fn ini_text(
    server: std::net::SocketAddr,
    port: u16,
    server_connections: u32,
    dir: &Path,
) -> String {
    format!(
        "[databases]\n\
         * = host={host} port={server_port}\n\
         [pgbouncer]\n\
         listen_addr = 127.0.0.1\n\
         listen_port = {port}\n\
         unix_socket_dir =\n\
         auth_type = trust\n\
         auth_file = {dir}/users.txt\n\
         pool_mode = transaction\n\
         default_pool_size = {server_connections}\n\
         min_pool_size = 0\n\
         reserve_pool_size = 0\n\
         max_client_conn = 1000\n\
         max_db_connections = {server_connections}\n\
         server_lifetime = 3600\n\
         ignore_startup_parameters = extra_float_digits\n\
         logfile = {dir}/pgbouncer.log\n\
         pidfile = {dir}/pgbouncer.pid\n\
         log_connections = 0\n\
         log_disconnections = 0\n",
        host = server.ip(),
        server_port = server.port(),
        dir = dir.display(),
    )
}

/// A shell line stopping the pooler whose pid file is in `dir`, then removing `dir`.
fn stop_script(dir: &Path) -> String {
    let dir = dir.display();
    format!(
        "[ -f {dir}/pgbouncer.pid ] && kill -TERM \"$(cat {dir}/pgbouncer.pid)\" 2>/dev/null; \
         sleep 0.2; rm -rf {dir}"
    )
}

fn find_bin() -> Option<PathBuf> {
    let on_path = std::env::var("PATH").ok().and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("pgbouncer"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let sbin = PathBuf::from("/usr/sbin/pgbouncer");
        sbin.is_file().then_some(sbin)
    })
}
