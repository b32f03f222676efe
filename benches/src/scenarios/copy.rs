//! Scenario 4's baseline: what the engine's own bulk loader does with the rows the
//! optimized bulk enqueue writes. On PostgreSQL, `psql \copy` loads a CSV file of the same
//! columns (id, topic, payload, headers, status, times, stamp, slice hash) into a fresh
//! table of the store's schema, triggers and indexes included; only `psql`'s run is timed.

use std::io::Write;
use std::time::Instant;

use chrono::Utc;
use outbox_core::{NewEntry, OutboxEntry};

use super::{progress, Ctx};
use crate::results::{CopyRow, Engine};
use crate::stats::rate;
use crate::subject::Place;

/// Loads `entries` rows of `payload_bytes` bytes with `psql \copy` and records the rate;
/// a machine without `psql` is reported as skipped.
pub async fn postgres(ctx: &mut Ctx, entries: u64, payload_bytes: u32) {
    let Some(psql) = crate::pg::psql() else {
        ctx.skip("the enqueue baseline needs psql (not found)".into());
        return;
    };
    let Some(place) = Place::create(Engine::Postgres, "outbox").await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let file = dir.path().join("rows.csv");
    write_rows(&file, entries, payload_bytes).expect("write the rows' CSV file");
    let table = place.location.table_name();
    let command = table.render(&format!(
        "\\copy {{table}} (id, topic, partition_key, payload, headers, status, created_at, \
         updated_at, not_before, stamp, slice_hash) FROM '{}' (FORMAT csv)",
        file.display()
    ));
    let started = Instant::now();
    let out = tokio::process::Command::new(&psql)
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", &command])
        .arg(&place.location.url)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap_or_else(|e| panic!("run {}: {e}", psql.display()));
    let elapsed = started.elapsed();
    assert!(
        out.status.success(),
        "psql \\copy failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let client = crate::pg::client(&place.location.url).await;
    let loaded: i64 = client
        .query_one(&table.render("SELECT count(*) FROM {table}"), &[])
        .await
        .expect("count the loaded rows")
        .get(0);
    assert_eq!(
        u64::try_from(loaded).ok(),
        Some(entries),
        "psql \\copy did not load every row"
    );
    let row = CopyRow {
        engine: Engine::Postgres,
        method: "psql \\copy, CSV".into(),
        entries,
        payload_bytes,
        seconds: elapsed.as_secs_f64(),
        entries_per_s: rate(entries, elapsed),
    };
    progress(format_args!(
        "enqueue baseline postgres psql \\copy of {entries} ({payload_bytes} B): {:.0}/s",
        row.entries_per_s
    ));
    ctx.results.copies.push(row);
}

/// Writes `entries` new pending rows, as the store's bulk enqueue would write them, to
/// `file` as CSV (an empty field is NULL; a payload is bytea's `\x` hex form).
fn write_rows(file: &std::path::Path, entries: u64, payload_bytes: u32) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(file)?);
    let now = Utc::now().to_rfc3339();
    let payload = vec![b'x'; payload_bytes as usize];
    let hex = super::ceiling_sqlite::hex(&payload);
    for _ in 0..entries {
        let e = OutboxEntry::from_new(NewEntry::new("bench", payload.clone()), Utc::now());
        writeln!(
            out,
            "{},{},,\\x{hex},{{}},0,{now},{now},,{},{}",
            e.id,
            e.topic,
            e.stamp,
            e.slice_hash()
        )?;
    }
    out.flush()
}
