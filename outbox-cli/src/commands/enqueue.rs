//! `outbox enqueue`: test entries in transactions of `--batch`.

use outbox_core::{NewEntry, OutboxError, Result};

use crate::args::EnqueueArgs;
use crate::backend::Target;

/// A JSON payload of at least `bytes` bytes carrying its sequence number.
pub(crate) fn payload(seq: u64, bytes: usize) -> Vec<u8> {
    let head = format!("{{\"seq\":{seq},\"pad\":\"");
    let pad = bytes.saturating_sub(head.len() + 2);
    format!("{head}{}\"}}", "x".repeat(pad)).into_bytes()
}

pub(crate) async fn run(target: &Target, args: EnqueueArgs) -> Result<()> {
    let store = target.open().await?;
    let max = store.limits().max_payload_bytes;
    if args.payload_bytes > max {
        return Err(OutboxError::invalid(
            "--payload-bytes",
            format!(
                "{} is above the store's maximum of {max}",
                args.payload_bytes
            ),
        ));
    }
    let given = match &args.payload {
        Some(text) => Some(match text.strip_prefix('@') {
            Some(path) => std::fs::read(path).map_err(|e| {
                OutboxError::invalid("--payload", format!("cannot read {path:?}: {e}"))
            })?,
            None => text.clone().into_bytes(),
        }),
        None => None,
    };
    let entry = |seq: u64| {
        let bytes = match &given {
            Some(bytes) => bytes.clone(),
            None => payload(seq, args.payload_bytes),
        };
        let mut e = NewEntry::new(args.topic.clone(), bytes);
        if let Some(key) = &args.partition_key {
            e = e.partition_key(key.clone());
        }
        for (name, value) in &args.headers {
            e = e.header(name.clone(), value.clone());
        }
        e
    };
    let bar = crate::progress::bar(args.count, "enqueue");
    let mut written = 0u64;
    while written < args.count {
        let n = (args.count - written).min(u64::from(args.batch));
        let batch = (written..written + n).map(entry).collect();
        store.enqueue_batch(batch).await?;
        written += n;
        bar.set_position(written);
    }
    bar.finish_and_clear();
    let noun = if written == 1 { "entry" } else { "entries" };
    out!("enqueued {written} {noun} on topic {:?}", args.topic);
    Ok(())
}
