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
    let bar = crate::progress::bar(args.count, "enqueue");
    let mut written = 0u64;
    while written < args.count {
        let n = (args.count - written).min(u64::from(args.batch));
        let batch = (written..written + n)
            .map(|seq| NewEntry::new(args.topic.clone(), payload(seq, args.payload_bytes)))
            .collect();
        store.enqueue_batch(batch).await?;
        written += n;
        bar.set_position(written);
    }
    bar.finish_and_clear();
    out!("enqueued {written} entries on topic {:?}", args.topic);
    Ok(())
}
