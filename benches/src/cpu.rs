//! CPU time per entry, read from `/proc`: the drain process's own, and the database
//! server's (every process of a local PostgreSQL cluster, or MariaDB's one process). On a
//! machine where the drain and the server share the cores, throughput hides what an entry
//! costs; these figures show it.
//!
//! Times come from `/proc/PID/stat` in clock ticks (`USER_HZ`, 100 per second on Linux):
//! each process's time is rounded to 10 ms, so a figure summed over many processes (a
//! cluster's backends) is coarse by 10 ms for each of them. Over runs of several seconds
//! and many thousand entries that is a small share of a per-entry figure; over the quick
//! run's few thousand entries it is not.

use std::path::Path;

use crate::location::Location;
use crate::results::Engine;

/// Clock ticks per second in `/proc/PID/stat` (`USER_HZ`, fixed at 100 by Linux's ABI).
const TICKS_PER_SECOND: f64 = 100.0;

/// The fields of `/proc/PID/stat` used here, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    /// The parent's process id.
    ppid: u32,
    /// User and system time of the process itself (all its threads, living or not).
    own: u64,
    /// User and system time of its children that ended and were waited for.
    children: u64,
}

/// Reads the fields of one `/proc/PID/stat` line. The command name (field 2) is in
/// parentheses and may hold spaces or parentheses, so the fields are counted after the
/// last `)`.
fn parse_stat(line: &str) -> Option<Stat> {
    let rest = &line[line.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3), ppid (4), …, utime (14), stime (15), cutime (16),
    // cstime (17); `fields[0]` is field 3.
    let tick = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some(Stat {
        ppid: fields.get(1)?.parse().ok()?,
        own: tick(14)? + tick(15)?,
        children: tick(16)? + tick(17)?,
    })
}

fn stat_of(pid: &str) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// CPU seconds this process has used so far (every thread, living or ended); `None` where
/// `/proc` cannot be read.
pub fn own_seconds() -> Option<f64> {
    stat_of("self").map(|s| ticks(s.own))
}

/// CPU seconds this process and its children that ended and were waited for (a `pgbench`
/// run, say) have used so far; `None` where `/proc` cannot be read.
pub fn with_children_seconds() -> Option<f64> {
    stat_of("self").map(|s| ticks(s.own + s.children))
}

#[allow(clippy::cast_precision_loss)] // Tick counts far below 2^52.
fn ticks(n: u64) -> f64 {
    n as f64 / TICKS_PER_SECOND
}

/// Microseconds of CPU per entry: `seconds` of CPU spent on `entries`; `None` for none.
#[allow(clippy::cast_precision_loss)] // Entry counts far below 2^52.
pub fn per_entry_us(seconds: f64, entries: u64) -> Option<f64> {
    (entries > 0 && seconds.is_finite() && seconds >= 0.0).then(|| seconds * 1e6 / entries as f64)
}

/// A database server running on this machine, whose CPU time can be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// A PostgreSQL cluster: its postmaster and every process it started (one per
    /// connection, plus the background workers). A process that ended has its time in the
    /// postmaster's children's time once it was waited for.
    Cluster {
        /// The postmaster's process id.
        postmaster: u32,
    },
    /// A server in one process (MariaDB), its threads included.
    Process {
        /// Its process id.
        pid: u32,
    },
}

impl Server {
    /// The server `location` is on, when it runs on this machine; `None` for SQLite (it
    /// runs in the drain's own process) and for a server elsewhere.
    pub async fn of(location: &Location) -> Option<Self> {
        match location.engine {
            Engine::Sqlite => None,
            Engine::Postgres => {
                let client = crate::pg::client(&location.url).await;
                let backend: i32 = client
                    .query_one("SELECT pg_backend_pid()", &[])
                    .await
                    .ok()?
                    .get(0);
                let postmaster = stat_of(&backend.to_string())?.ppid;
                is_named(postmaster, &["postgres", "postmaster"])
                    .then_some(Self::Cluster { postmaster })
            }
            Engine::Mysql => {
                let mut conn = crate::mariadb::connect(location).await;
                let file: String = sqlx::query_scalar("SELECT @@global.pid_file")
                    .fetch_one(&mut conn)
                    .await
                    .ok()?;
                let _ = sqlx::Connection::close(conn).await;
                let pid: u32 = std::fs::read_to_string(&file).ok()?.trim().parse().ok()?;
                is_named(pid, &["mariadbd", "mysqld"]).then_some(Self::Process { pid })
            }
        }
    }

    /// CPU seconds the server has used so far; `None` once its processes cannot be read.
    pub fn seconds(self) -> Option<f64> {
        match self {
            Self::Process { pid } => stat_of(&pid.to_string()).map(|s| ticks(s.own)),
            Self::Cluster { postmaster } => cluster_ticks(postmaster).map(ticks),
        }
    }
}

/// The ticks of a cluster: the postmaster's own and its ended children's, plus every
/// living child's. A backend reaped while `/proc` is scanned would be counted in neither
/// part, so the scan is taken again until the postmaster's children's time stood still
/// across it.
fn cluster_ticks(postmaster: u32) -> Option<u64> {
    let pid = postmaster.to_string();
    let mut before = stat_of(&pid)?;
    for _ in 0..10 {
        let living: u64 = processes()
            .filter(|s| s.ppid == postmaster)
            .map(|s| s.own + s.children)
            .sum();
        let after = stat_of(&pid)?;
        if after.children == before.children {
            return Some(after.own + after.children + living);
        }
        before = after;
    }
    None
}

/// Whether process `pid` runs one of the programs `names`.
fn is_named(pid: u32, names: &[&str]) -> bool {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    names.contains(&comm.trim())
}

/// Every process this one can read the `stat` of.
fn processes() -> impl Iterator<Item = Stat> {
    std::fs::read_dir(Path::new("/proc"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| stat_of(&name))?
        })
}

/// A server's CPU time over a span: taken at its start, read at its end.
#[derive(Debug, Clone, Copy)]
pub struct ServerSpan {
    server: Server,
    started: f64,
}

impl ServerSpan {
    /// Starts a span on `location`'s server, when it runs here and can be read.
    pub async fn start(location: &Location) -> Option<Self> {
        let server = Server::of(location).await?;
        Some(Self {
            server,
            started: server.seconds()?,
        })
    }

    /// CPU seconds the server used since the span began; `None` if it can no longer be
    /// read.
    pub fn seconds(&self) -> Option<f64> {
        Some(self.server.seconds()? - self.started)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fields_after_a_name_with_spaces_and_parentheses() {
        // Fields 1–17 of a real line, with a name that would fool a split on spaces.
        let line = "4242 (postgres: a (b) c) S 17 4242 4242 0 -1 4194560 \
                    300 0 0 0 150 25 7 3 20 0 1 0 100 0 0";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                ppid: 17,
                own: 175,
                children: 10
            })
        );
        assert_eq!(parse_stat("4242 (cut short) S 17"), None);
        assert_eq!(parse_stat("no parenthesis"), None);
    }

    #[test]
    fn this_process_is_read_and_its_time_grows_with_work() {
        let before = own_seconds().expect("this process's /proc/self/stat");
        // Busy until 100 ms of CPU are read, whatever else the machine runs; a reading
        // that never moves fails at the deadline.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut x = 0u64;
        loop {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            let used = own_seconds().expect("still readable") - before;
            if used >= 0.1 {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "30 s of busy work read as {used} s of CPU"
            );
        }
        assert!(with_children_seconds().expect("readable") >= before + 0.1);
    }

    #[test]
    fn per_entry_needs_entries() {
        assert_eq!(per_entry_us(0.5, 100_000), Some(5.0));
        assert_eq!(per_entry_us(0.5, 0), None);
        assert_eq!(per_entry_us(f64::NAN, 10), None);
    }
}
