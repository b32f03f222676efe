//! The JSON a batch statement reads with OPENJSON: one object per completion or claim.

use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{Claim, CompletionRequest, Result};
use serde_json::{json, Value};

use crate::row::id_hex;

/// Times as OPENJSON reads them into datetime2(6): ISO 8601 without an offset, in UTC.
fn iso(at: Option<chrono::DateTime<chrono::Utc>>) -> Value {
    at.map_or(Value::Null, |at| {
        Value::String(
            normalize_time(at)
                .format("%Y-%m-%dT%H:%M:%S%.6f")
                .to_string(),
        )
    })
}

/// The input of `complete_batch.sql`.
pub(crate) fn completions(reqs: &[CompletionRequest]) -> Result<String> {
    let items: Vec<Value> = reqs
        .iter()
        .map(|req| {
            let t = req.completion.target(&req.claim.entry);
            json!({
                "id": id_hex(req.claim.id()),
                "owner": req.claim.owner,
                "token": req.claim.token.to_string(),
                "status": t.status.code(),
                "next_retry_at": iso(t.next_retry_at),
                "attempt_count": t.attempt_count,
                "last_error": t.last_error,
                "dead_letter_reason": t.dead_letter_reason,
                "delivered_at": iso(t.delivered_at),
                "stamp_delivered_now": t.stamp_delivered_now,
                "provider_message_id": t.provider_message_id,
                "at": iso(req.now),
                "stamp": req.stamp.to_string(),
            })
        })
        .collect();
    Ok(Value::Array(items).to_string())
}

/// The input of `renew.sql`.
pub(crate) fn holders(claims: &[Claim]) -> String {
    let items: Vec<Value> = claims
        .iter()
        .map(|c| {
            json!({
                "id": id_hex(c.id()),
                "owner": c.owner,
                "token": c.token.to_string(),
            })
        })
        .collect();
    Value::Array(items).to_string()
}

#[cfg(test)]
mod tests {
    use outbox_core::{Completion, EmissionError, EmissionResult};

    use super::*;
    use crate::fixtures::sample;

    #[test]
    fn completions_carry_what_the_statement_reads() {
        let claim = Claim::from_claimed_entry(sample()).unwrap();
        let at = claim.claimed_at + chrono::TimeDelta::microseconds(5);
        let reqs = vec![
            CompletionRequest::new(claim.clone(), Completion::Delivered(EmissionResult::new()))
                .at(at),
            CompletionRequest::new(
                claim.clone(),
                Completion::Failed {
                    error: EmissionError::new("broker down"),
                    next_retry: Some(at),
                },
            ),
        ];
        let parsed: Value = serde_json::from_str(&completions(&reqs).unwrap()).unwrap();
        let first = &parsed[0];
        assert_eq!(first["id"], id_hex(claim.id()));
        assert_eq!(first["token"], claim.token.to_string());
        assert_eq!(first["status"], 1);
        assert_eq!(first["stamp_delivered_now"], true);
        assert_eq!(first["at"], "2026-11-30T12:00:00.123461");
        assert_eq!(first["stamp"], reqs[0].stamp.to_string());
        let second = &parsed[1];
        assert_eq!(second["status"], 4);
        assert_eq!(second["at"], Value::Null, "no time: the server's clock");
        assert_eq!(second["last_error"], "broker down");
        assert_eq!(second["next_retry_at"], "2026-11-30T12:00:00.123461");
        // Every key the statement's OPENJSON ... WITH reads is present.
        let sql = include_str!("../sql/complete_batch.sql");
        for key in first.as_object().unwrap().keys() {
            assert!(
                sql.contains(&format!("'$.{key}'")),
                "complete_batch.sql does not read {key}"
            );
        }
    }

    #[test]
    fn holders_carry_id_owner_and_token() {
        let claim = Claim::from_claimed_entry(sample()).unwrap();
        let parsed: Value = serde_json::from_str(&holders(std::slice::from_ref(&claim))).unwrap();
        let sql = include_str!("../sql/renew.sql");
        for key in parsed[0].as_object().unwrap().keys() {
            assert!(
                sql.contains(&format!("'$.{key}'")),
                "renew.sql does not read {key}"
            );
        }
        assert_eq!(parsed[0]["owner"], "worker-1");
    }
}
