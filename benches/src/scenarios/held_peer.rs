//! The held-snapshot rounds through a peer queue on the same server, so the report shows
//! whether the slowdown a held snapshot brings is this outbox's alone and how far above it
//! the outbox stays: pgqueuer (PyPI), driven by `benches/peers/pgqueuer_held.py` in a
//! database of its own, with the rounds, workers, batch, payload and vacuums of
//! the held-snapshot scenario (`held.rs`).

use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;

use super::Ctx;
use crate::pg;
use crate::results::{Engine, HeldRow};

/// The driver script, beside the bench's sources.
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/pgqueuer_held.py");

/// Its name in `OUTBOX_TEST_REQUIRE`, which makes a missing peer a failure, not a skip.
const REQUIRED_AS: &str = "peer-queue";

/// What the script prints as its last line.
#[derive(Debug, Deserialize)]
struct PeerRun {
    queue: String,
    version: String,
    held: bool,
    seconds: f64,
    round_entries: u64,
    rounds_per_s: Vec<f64>,
    dead_rows: Option<u64>,
}

/// The peer's rounds, held or not; `None` (reported as skipped) when the server or the
/// peer's Python packages cannot be had.
pub(super) async fn rounds(ctx: &mut Ctx, held: bool) -> Option<HeldRow> {
    let server = match pg::url() {
        Ok(url) => url,
        Err(why) => {
            ctx.skip(format!(
                "held snapshot, pgqueuer: no PostgreSQL server: {why}"
            ));
            return None;
        }
    };
    let name = format!(
        "outbox_bench_peer_{}",
        &uuid::Uuid::new_v4().simple().to_string()[..16]
    );
    let Some(url) = with_database(&server, &name) else {
        ctx.skip(format!(
            "held snapshot, pgqueuer: cannot name another database in {server:?}"
        ));
        return None;
    };
    let admin = pg::client(&server).await;
    admin
        .batch_execute(&format!("CREATE DATABASE \"{name}\""))
        .await
        .unwrap_or_else(|e| panic!("held snapshot, pgqueuer: CREATE DATABASE failed: {e}"));
    let run = drive(ctx, &url, held).await;
    admin
        .batch_execute(&format!("DROP DATABASE \"{name}\" WITH (FORCE)"))
        .await
        .unwrap_or_else(|e| panic!("held snapshot, pgqueuer: DROP DATABASE failed: {e}"));
    let run = match run {
        Ok(run) => run,
        Err(why) if !outbox_testkit::engines::is_required(REQUIRED_AS) => {
            ctx.skip(format!("held snapshot, pgqueuer: {why}"));
            return None;
        }
        Err(why) => panic!("held snapshot, pgqueuer ({REQUIRED_AS} is required): {why}"),
    };
    assert_eq!(run.held, held, "the peer ran the other way");
    Some(HeldRow {
        engine: Engine::Postgres,
        queue: Some(format!("{} {}", run.queue, run.version)),
        held,
        seconds: run.seconds,
        round_entries: run.round_entries,
        rounds_per_s: run.rounds_per_s,
        dead_rows: run.dead_rows,
    })
}

/// Runs the script on `url`; an error when its packages are missing (how to install them
/// is in it), a panic when it fails otherwise.
async fn drive(ctx: &Ctx, url: &str, held: bool) -> Result<PeerRun, String> {
    let plan = &ctx.plan;
    let mut command = tokio::process::Command::new("python3");
    command
        .arg(SCRIPT)
        .args(["--dsn", url])
        .args(["--seconds", &plan.held_duration.as_secs_f64().to_string()])
        .args(["--round", &plan.held_round.to_string()])
        .args(["--payload-bytes", &plan.payload_bytes.to_string()])
        .args(["--workers", "2", "--batch", "100"])
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if held {
        command.arg("--held");
    }
    let limit = plan.held_duration + Duration::from_secs(900);
    let out = tokio::time::timeout(limit, command.output())
        .await
        .map_err(|_| format!("the driver ran past {limit:?}"))?
        .map_err(|e| format!("cannot run python3: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        if stderr.contains("cannot import") {
            return Err(stderr.trim().to_owned());
        }
        panic!("the pgqueuer driver failed ({}): {stderr}", out.status);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    Ok(serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("the pgqueuer driver said {line:?}: {e}")))
}

/// `url` naming database `name` instead of its own: `postgres://…/DB` or `…/DB?…`.
fn with_database(url: &str, name: &str) -> Option<String> {
    let rest = url.find("://").map(|i| i + 3)?;
    let slash = rest + url[rest..].find('/')?;
    let end = url[slash..].find('?').map_or(url.len(), |q| slash + q);
    Some(format!("{}/{name}{}", &url[..slash], &url[end..]))
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn another_database_on_the_same_server() {
        let peer = |url| with_database(url, "p");
        assert_eq!(
            peer("postgres://postgres@127.0.0.1:5432/postgres").as_deref(),
            Some("postgres://postgres@127.0.0.1:5432/p")
        );
        assert_eq!(
            peer("postgresql://u:pw@h/app?sslmode=disable").as_deref(),
            Some("postgresql://u:pw@h/p?sslmode=disable")
        );
        assert_eq!(peer("host=h dbname=app"), None);
        assert_eq!(peer("postgres://h"), None);
    }
}
