//! `outbox list` and `outbox requeue`: entries by status, for an operator.

use outbox_core::{EmissionStatus, ListRequest, OutboxError, Result};

use crate::args::{ListArgs, Selection};
use crate::backend::Target;

pub(crate) async fn list(target: &Target, args: ListArgs) -> Result<()> {
    let store = target.open_for_reading().await?;
    let mut req = ListRequest::new(args.status, args.limit);
    req.topic = args.topic;
    req.partition_key = args.partition_key;
    req.after = args.after;
    let page = store.list(&req).await?;
    if args.json {
        let rows: Vec<_> = page.iter().map(crate::commands::show::to_json).collect();
        out!("{}", serde_json::Value::Array(rows));
        return Ok(());
    }
    if page.is_empty() {
        out!("no {} entries", args.status.as_str());
        return Ok(());
    }
    for e in &page {
        out!(
            "{}  {}  attempts={}  created={}  updated={}  error={}",
            e.id,
            e.topic,
            e.attempt_count,
            e.created_at.format("%Y-%m-%dT%H:%M:%SZ"),
            e.updated_at.format("%Y-%m-%dT%H:%M:%SZ"),
            e.last_error.as_deref().unwrap_or("-")
        );
    }
    if page.len() == args.limit as usize {
        if let Some(last) = page.last() {
            out!("next page: --after {}", last.id);
        }
    }
    Ok(())
}

pub(crate) async fn requeue(target: &Target, from: EmissionStatus, which: Selection) -> Result<()> {
    let store = target.open().await?;
    let n = store
        .requeue(&outbox_core::RequeueRequest::new(from, which.which()))
        .await?;
    if let (Some(id), 0) = (which.id, n) {
        return Err(OutboxError::Database {
            message: format!("no {} entry with id {id}", from.as_str()),
            source: None,
        });
    }
    let noun = if n == 1 { "entry" } else { "entries" };
    out!("requeued {n} {} {noun} (now pending)", from.as_str());
    Ok(())
}
