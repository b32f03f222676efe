//! A primary with a synchronous standby, for failover tests: two throwaway clusters of the
//! test's own, the standby made with `pg_basebackup -R` and streaming from the primary,
//! every commit waiting for the standby's flush. The test stops the primary or turns it
//! read-only, and promotes the standby; clients given both hosts follow.

use std::time::{Duration, Instant};

use crate::postgres::{cluster_dir, init_cluster, start, Cluster};

/// The engine name used in skip reports and `OUTBOX_TEST_REQUIRE`.
pub const ENGINE: &str = "postgres-standby";

/// The primary's settings: commits wait until the standby has flushed them.
const SYNCHRONOUS: &str = "-c synchronous_commit=on -c synchronous_standby_names=walreceiver \
     -c wal_level=replica -c max_wal_senders=4";

/// The standby's: once promoted it has no standby of its own, so its commits must not wait
/// for one (they would wait for good).
const STANDBY: &str = "-c synchronous_commit=on -c hot_standby=on";

/// A primary and its synchronous standby; both stop when the test process ends.
#[derive(Debug)]
pub struct PrimaryAndStandby {
    primary: Cluster,
    standby: Cluster,
}

impl PrimaryAndStandby {
    /// Starts a primary, copies it into a standby with `pg_basebackup -R`, starts the
    /// standby, and waits until the primary reports it as its synchronous standby. Blocks:
    /// call it outside a runtime (`spawn_blocking`).
    pub fn start() -> Result<Self, String> {
        let (primary, dir) = init_cluster(SYNCHRONOUS.to_owned())?;
        start(&primary, &dir)?;
        let standby_dir = cluster_dir(primary.as_postgres_user)?;
        let standby = Cluster {
            bin: primary.bin.clone(),
            data: standby_dir.join("data"),
            port: crate::postgres::free_port()?,
            as_postgres_user: primary.as_postgres_user,
            extra: STANDBY.to_owned(),
        };
        let port = primary.port.to_string();
        let data = standby.data.to_string_lossy().into_owned();
        primary.run(
            &primary.bin.join("pg_basebackup"),
            &[
                "-D",
                &data,
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "--no-sync",
            ],
        )?;
        start(&standby, &standby_dir)?;
        let pair = Self { primary, standby };
        pair.wait_until_synchronous(Duration::from_secs(30))?;
        Ok(pair)
    }

    /// A URL of the primary alone.
    pub fn primary_url(&self) -> String {
        url_of(&[self.primary.port], "")
    }

    /// A URL of the standby alone.
    pub fn standby_url(&self) -> String {
        url_of(&[self.standby.port], "")
    }

    /// A URL listing both servers, primary first, that connects only to one taking writes
    /// (`target_session_attrs=read-write`).
    pub fn both_hosts_url(&self) -> String {
        url_of(
            &[self.primary.port, self.standby.port],
            "?target_session_attrs=read-write",
        )
    }

    /// Stops the primary at once, as a crash would (`pg_ctl stop -m immediate`).
    pub fn stop_primary(&self) -> Result<(), String> {
        self.primary.pg_ctl(&["stop", "-m", "immediate", "-w"])
    }

    /// Promotes the standby and waits until it takes writes.
    pub fn promote_standby(&self) -> Result<(), String> {
        self.standby.pg_ctl(&["promote", "-w", "-t", "60"])
    }

    /// Polls the primary until its standby streams synchronously.
    fn wait_until_synchronous(&self, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        let url = self.primary_url();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let client = crate::postgres::connect(&url).await?;
            loop {
                let row = client
                    .query_opt(
                        "SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync' LIMIT 1",
                        &[],
                    )
                    .await
                    .map_err(|e| e.to_string())?;
                if row.is_some() {
                    return Ok(());
                }
                if Instant::now() > deadline {
                    return Err(format!(
                        "the standby did not stream synchronously within {within:?}"
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    }
}

fn url_of(ports: &[u16], query: &str) -> String {
    let hosts: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    format!("postgres://postgres@{}/postgres{query}", hosts.join(","))
}
