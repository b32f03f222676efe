//! One soak drain process: a drain on the soak table, run until the process is killed,
//! writing one line per emission to the run's shared log.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::async_trait;
use outbox_core::drain::{Drain, DrainOptions, Emission, EmitOutcome, Emitter};
use serde::{Deserialize, Serialize};

use crate::location::Location;
use crate::results::StorePath;
use crate::subject::{open, Link};

/// What a soak drain process runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SoakWorkerSpec {
    /// The table.
    pub location: Location,
    /// This process's owner name: unique to the process, so the log tells which
    /// emissions a killed process made.
    pub owner: String,
    /// Lease length, milliseconds.
    pub lease_ms: u64,
    /// Claim batch size.
    pub batch: u32,
    /// The shared emission log, appended to.
    pub log: std::path::PathBuf,
    /// How long each emission takes after its line is logged, milliseconds: the
    /// broker's acknowledgement, the window in which a kill leaves an entry emitted but
    /// not recorded.
    pub emission_ms: u64,
}

/// One emission as the log holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Emitted {
    /// The entry.
    pub id: uuid::Uuid,
    /// The process that emitted it.
    pub owner: String,
    /// When, microseconds since the Unix epoch.
    pub at_us: i64,
}

/// Appends an [`Emitted`] line per emission, in one `write` on a file opened for
/// appending, so lines of several processes never interleave; then waits the emission
/// time and delivers.
struct LogEmitter {
    owner: String,
    file: Mutex<std::fs::File>,
    emission: Duration,
}

#[async_trait]
impl Emitter for LogEmitter {
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        let line = Emitted {
            id: emission.entry.id.as_uuid(),
            owner: self.owner.clone(),
            at_us: chrono::Utc::now().timestamp_micros(),
        };
        let mut text = serde_json::to_string(&line).expect("a log line");
        text.push('\n');
        let written = self
            .file
            .lock()
            .expect("the log's lock")
            .write_all(text.as_bytes());
        tokio::time::sleep(self.emission).await;
        match written {
            Ok(()) => EmitOutcome::delivered(),
            Err(e) => EmitOutcome::retryable(format!("cannot append to the soak log: {e}")),
        }
    }
}

/// Runs the drain `spec` describes in this process until the process is killed.
pub async fn run(spec: SoakWorkerSpec) -> ! {
    let subject = open(&spec.location, StorePath::Optimized, Link::direct(), 4).await;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&spec.log)
        .expect("open the soak log");
    let emitter = Arc::new(LogEmitter {
        owner: spec.owner.clone(),
        file: Mutex::new(file),
        emission: Duration::from_millis(spec.emission_ms),
    });
    let lease = TimeDelta::milliseconds(i64::try_from(spec.lease_ms).expect("lease fits"));
    let options = DrainOptions::new()
        .owner(spec.owner)
        .batch_size(spec.batch)
        .lease(lease)
        .poll_interval(Duration::from_millis(5), Duration::from_millis(100));
    let drain = Drain::new(subject.store, emitter, options).expect("drain options");
    println!("READY");
    drain.run(std::future::pending()).await;
    unreachable!("a drain without a shutdown signal returned");
}
