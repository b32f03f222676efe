//! `outbox dead-letters list | requeue | purge`.

use outbox_core::{EmissionStatus, OutboxEntry, Result};

use crate::args::{DeadLetterCommand, Selection};
use crate::backend::Target;

fn to_json(e: &OutboxEntry) -> serde_json::Value {
    serde_json::json!({
        "id": e.id,
        "topic": e.topic,
        "attempt_count": e.attempt_count,
        "last_error": e.last_error,
        "dead_letter_reason": e.dead_letter_reason,
        "created_at": e.created_at,
        "dead_lettered_at": e.updated_at,
        "payload": String::from_utf8_lossy(&e.payload),
    })
}

pub(crate) async fn run(target: &Target, cmd: DeadLetterCommand) -> Result<()> {
    match cmd {
        DeadLetterCommand::List { json, limit } => {
            let store = target.open_for_reading().await?;
            let rows = store
                .dead_letters(&outbox_core::DeadLettersRequest::new(limit))
                .await?;
            if json {
                let list: Vec<_> = rows.iter().map(to_json).collect();
                out!("{}", serde_json::Value::Array(list));
            } else if rows.is_empty() {
                out!("no dead letters");
            } else {
                for e in rows {
                    out!(
                        "{}  {}  attempts={}  at={}  reason={}  error={}",
                        e.id,
                        e.topic,
                        e.attempt_count,
                        e.updated_at.format("%Y-%m-%dT%H:%M:%SZ"),
                        e.dead_letter_reason.as_deref().unwrap_or("-"),
                        e.last_error.as_deref().unwrap_or("-")
                    );
                }
            }
        }
        DeadLetterCommand::Requeue(which) => {
            let store = target.open().await?;
            let n = store
                .requeue(&outbox_core::RequeueRequest::dead_letters(which.which()))
                .await?;
            none_by_that_id(&which, n)?;
            out!("requeued {}", crate::plural(n, "dead letter"));
        }
        DeadLetterCommand::Purge { which, yes } => {
            return super::purge::run(target, EmissionStatus::DeadLettered, &which, yes).await;
        }
    }
    Ok(())
}

/// An operation on one id that touched nothing names the id: a typo must not pass as done.
fn none_by_that_id(which: &Selection, touched: u64) -> Result<()> {
    match which.id {
        Some(id) if touched == 0 => Err(outbox_core::OutboxError::Database {
            message: format!("no dead letter with id {id} (see `outbox dead-letters list`)"),
            source: None,
        }),
        _ => Ok(()),
    }
}
