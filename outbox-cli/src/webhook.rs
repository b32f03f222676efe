//! `webhook:URL`: POST the payload, keyed by the entry id.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use outbox_core::async_trait;
use outbox_core::drain::{Emission, EmitOutcome, Emitter};
use outbox_core::{OutboxError, Result};

/// POSTs each payload with an `Idempotency-Key` header equal to the entry id.
///
/// 2xx delivers; 429 or 503 with `Retry-After` (seconds or an HTTP date) defers; other
/// 5xx and network errors are retryable; other 4xx, and redirects (which are not
/// followed), are permanent.
pub(crate) struct Webhook {
    url: String,
    agent: ureq::Agent,
}

impl Webhook {
    pub(crate) fn new(url: &str) -> Result<Self> {
        let plain = url.starts_with("http://");
        let tls = url.starts_with("https://");
        if !plain && !tls {
            return Err(OutboxError::invalid(
                "emitter",
                format!("webhook URL {url:?} must start with http:// or https://"),
            ));
        }
        if tls && !cfg!(feature = "tls") {
            return Err(OutboxError::invalid(
                "emitter",
                "https webhooks need the command built with its default `tls` feature",
            ));
        }
        // Redirects are not followed: a redirected POST turns into a body-less GET whose
        // 2xx would record an entry as delivered that never arrived.
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        Ok(Self {
            url: url.to_owned(),
            agent,
        })
    }
}

/// When a `Retry-After` value (delay in seconds, or an HTTP date) says to come back.
fn retry_at(value: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let value = value.trim();
    let at = match value.parse::<i64>() {
        Ok(secs) if secs >= 0 => now.checked_add_signed(TimeDelta::try_seconds(secs)?)?,
        Ok(_) => return None,
        Err(_) => DateTime::parse_from_rfc2822(value)
            .ok()?
            .with_timezone(&Utc),
    };
    Some(at.max(now))
}

/// What a response status (and its `Retry-After`) means for the entry.
pub(crate) fn classify(status: u16, retry_after: Option<&str>) -> EmitOutcome {
    let now = Utc::now();
    match status {
        200..=299 => EmitOutcome::delivered(),
        429 | 503 => match retry_after.and_then(|v| retry_at(v, now)) {
            Some(until) => EmitOutcome::Deferred {
                until,
                reason: Some(format!("HTTP {status}, retry after {until}")),
            },
            None => EmitOutcome::retryable(format!("HTTP {status}")),
        },
        500..=599 => EmitOutcome::retryable(format!("HTTP {status}")),
        300..=399 => EmitOutcome::permanent(format!("HTTP {status}: redirects are not followed")),
        _ => EmitOutcome::permanent(format!("HTTP {status}")),
    }
}

#[async_trait]
impl Emitter for Webhook {
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        let agent = self.agent.clone();
        let url = self.url.clone();
        let entry = emission.entry.clone();
        let attempt = emission.delivery_attempt;
        let sent = tokio::task::spawn_blocking(move || {
            let mut request = agent
                .post(&url)
                .header("Idempotency-Key", entry.id.to_string())
                .header("X-Outbox-Topic", entry.topic.as_str())
                .header("X-Outbox-Attempt", attempt.to_string());
            // The entry's own Content-Type wins; a payload without one is sent as bytes.
            let typed = entry
                .headers
                .keys()
                .any(|name| name.eq_ignore_ascii_case("content-type"));
            if !typed {
                request = request.header("Content-Type", "application/octet-stream");
            }
            for (name, value) in &entry.headers {
                request = request.header(name.as_str(), value.as_str());
            }
            match request.send(&entry.payload[..]) {
                Ok(response) => {
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    classify(response.status().as_u16(), retry_after.as_deref())
                }
                Err(e) => EmitOutcome::retryable(format!("webhook request failed: {e}")),
            }
        })
        .await;
        sent.unwrap_or_else(|e| EmitOutcome::retryable(format!("webhook task failed: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_outcomes() {
        assert_eq!(classify(204, None), EmitOutcome::delivered());
        assert!(matches!(
            classify(429, Some("30")),
            EmitOutcome::Deferred { .. }
        ));
        assert!(matches!(
            classify(503, Some("5")),
            EmitOutcome::Deferred { .. }
        ));
        assert!(matches!(classify(503, None), EmitOutcome::Retryable { .. }));
        assert!(matches!(
            classify(500, Some("5")),
            EmitOutcome::Retryable { .. }
        ));
        assert!(matches!(classify(404, None), EmitOutcome::Permanent { .. }));
        assert!(matches!(
            classify(400, Some("5")),
            EmitOutcome::Permanent { .. }
        ));
    }

    #[test]
    fn urls_are_checked() {
        assert!(Webhook::new("ftp://x").is_err());
        assert!(Webhook::new("http://127.0.0.1:9/hook").is_ok());
    }
}
