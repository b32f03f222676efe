//! An emitter that prints each event, standing in for a broker.

use std::io::Write;

use outbox_core::async_trait;
use outbox_core::drain::{Emission, EmitOutcome, Emitter};

/// Prints each event as one line on standard output: its id (the consumer's idempotency
/// key), topic and payload.
#[derive(Debug, Default, Clone, Copy)]
pub struct PrintEmitter;

#[async_trait]
impl Emitter for PrintEmitter {
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        let entry = emission.entry;
        let line = format!(
            "{} {} {}\n",
            entry.id,
            entry.topic,
            String::from_utf8_lossy(&entry.payload)
        );
        match std::io::stdout().lock().write_all(line.as_bytes()) {
            Ok(()) => EmitOutcome::delivered(),
            Err(e) => EmitOutcome::retryable(format!("cannot write to stdout: {e}")),
        }
    }
}
