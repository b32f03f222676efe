//! `outbox show ID`: one entry, every field.

use outbox_core::{EntryId, OutboxEntry, OutboxError, Result};

use crate::backend::Target;

/// Every field of `e`, the payload as text where it is UTF-8 (else as hex).
pub(crate) fn to_json(e: &OutboxEntry) -> serde_json::Value {
    let payload = match std::str::from_utf8(&e.payload) {
        Ok(text) => serde_json::json!({ "text": text }),
        Err(_) => serde_json::json!({
            "hex": e.payload.iter().map(|b| format!("{b:02x}")).collect::<String>()
        }),
    };
    serde_json::json!({
        "id": e.id,
        "topic": e.topic,
        "partition_key": e.partition_key,
        "status": e.status.as_str(),
        "created_at": e.created_at,
        "updated_at": e.updated_at,
        "not_before": e.not_before,
        "next_retry_at": e.next_retry_at,
        "attempt_count": e.attempt_count,
        "last_error": e.last_error,
        "dead_letter_reason": e.dead_letter_reason,
        "delivered_at": e.delivered_at,
        "provider_message_id": e.provider_message_id,
        "claim_owner": e.claim_owner,
        "claim_expires_at": e.claim_expires_at,
        "claim_attempt_count": e.claim_attempt_count,
        "headers": e.headers,
        "payload": payload,
    })
}

pub(crate) async fn run(target: &Target, id: EntryId, json: bool) -> Result<()> {
    let store = target.open_for_reading().await?;
    let Some(entry) = store.get(id).await? else {
        return Err(OutboxError::Database {
            message: format!("no outbox entry with id {id}"),
            source: None,
        });
    };
    let value = to_json(&entry);
    if json {
        out!("{value}");
        return Ok(());
    }
    if let Some(fields) = value.as_object() {
        for (name, v) in fields {
            let shown = match v {
                serde_json::Value::Null => "-".to_owned(),
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out!("{name:<20} {shown}");
        }
    }
    Ok(())
}
