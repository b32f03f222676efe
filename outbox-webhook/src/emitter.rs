//! [`WebhookEmitter`]: one signed POST per emission, delivered only on a 2xx.

use chrono::Utc;
use outbox_core::async_trait;
use outbox_core::drain::{Emission, EmitOutcome, Emitter, RouteFault};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE, RETRY_AFTER};

use crate::status::classify;
use crate::{WebhookError, WebhookOptions, WebhookSecret};

/// The header carrying the entry id: the key a receiver dedupes by.
pub const ID_HEADER: &str = "webhook-id";
/// The header carrying the time of signing, in Unix seconds.
pub const TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// The header carrying one `v1,<signature>` per secret, separated by spaces.
pub const SIGNATURE_HEADER: &str = "webhook-signature";

/// Headers the emitter sets itself; an entry header of the same name is not sent.
const OWN_HEADERS: [&str; 6] = [
    ID_HEADER,
    TIMESTAMP_HEADER,
    SIGNATURE_HEADER,
    "idempotency-key",
    "x-outbox-topic",
    "x-outbox-attempt",
];

/// How much of a refusing response's body goes into the entry's last error.
const ERROR_BODY_CHARS: usize = 200;
/// How much of a response's body is read at most.
const ERROR_BODY_BYTES: usize = 1024;

/// POSTs each entry's payload to one URL, signed as [Standard Webhooks] describes, and
/// reports it delivered only on a 2xx response.
///
/// Each request carries `webhook-id` (the entry id: delivery is at least once, and a
/// receiver dedupes by it, also sent as `Idempotency-Key`), `webhook-timestamp` (when
/// this attempt was signed) and, when the options hold secrets, `webhook-signature`:
/// HMAC-SHA256 over `<id>.<timestamp>.<body>` with each secret, so a receiver holding
/// either key verifies while a key is rotated. Also `X-Outbox-Topic`,
/// `X-Outbox-Attempt` and the entry's own headers; the payload goes as its
/// `content-type` header says, `application/octet-stream` without one.
///
/// Outcomes (see [`crate::classify`] for each status): 2xx → delivered; 429 or 503 with
/// `Retry-After` → deferred until then; the route's (held, no attempt counted, the
/// drain backs off): no connection (refused, no such host, TLS refused) → `unreachable`,
/// 401/403/407 → `refused`, 404/410 → `missing`, 502/503/504 → `unavailable`; other 429,
/// 5xx and timeouts → retryable; redirects (not followed: a redirected POST would arrive
/// as a body-less GET) and other statuses → permanent, with the start of the receiver's
/// answer in the reason. The request runs on the drain's own task: an emission the drain
/// drops (its lease lost, shutdown) closes its connection at once.
///
/// [Standard Webhooks]: https://www.standardwebhooks.com/
#[derive(Clone)]
pub struct WebhookEmitter {
    client: reqwest::Client,
    url: reqwest::Url,
    secrets: Vec<WebhookSecret>,
    timeout: std::time::Duration,
}

/// Shows the URL as [`WebhookOptions`] does (no path, query or credentials) and how many
/// secrets sign, never the secrets.
impl std::fmt::Debug for WebhookEmitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookEmitter")
            .field("url", &crate::options::shown(self.url.as_str()))
            .field("secrets", &self.secrets.len())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl WebhookEmitter {
    /// An emitter with `options`, checked first (see [`WebhookOptions::validate`]).
    /// Nothing is sent until the first emission: a receiver that is down then shows as
    /// retryable failures.
    pub fn new(options: WebhookOptions) -> Result<Self, WebhookError> {
        let url = options.validate()?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(options.timeout)
            .connect_timeout(options.connect_timeout)
            .build()
            .map_err(|e| WebhookError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            client,
            url,
            secrets: options.secrets,
            timeout: options.timeout,
        })
    }

    /// The receiver as route failures name it: scheme, host and port, never the path or
    /// query (they may carry tokens).
    fn destination(&self) -> String {
        format!("webhook {}", crate::options::shown(self.url.as_str()))
    }

    /// The signing headers of one message: id, timestamp and, with secrets, signatures.
    fn signing_headers(&self, id: &str, timestamp: i64, body: &[u8]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let value = |text: String| HeaderValue::try_from(text).expect("ASCII header value");
        headers.insert(ID_HEADER, value(id.to_owned()));
        headers.insert("idempotency-key", value(id.to_owned()));
        headers.insert(TIMESTAMP_HEADER, value(timestamp.to_string()));
        if !self.secrets.is_empty() {
            let signatures: Vec<String> = self
                .secrets
                .iter()
                .map(|s| s.sign(id, timestamp, body))
                .collect();
            headers.insert(SIGNATURE_HEADER, value(signatures.join(" ")));
        }
        headers
    }

    async fn post(&self, emission: Emission<'_>) -> EmitOutcome {
        let entry = emission.entry;
        let mut headers = match entry_headers(emission) {
            Ok(headers) => headers,
            Err(why) => return EmitOutcome::permanent(why),
        };
        let id = entry.id.to_string();
        headers.extend(self.signing_headers(&id, Utc::now().timestamp(), &entry.payload));
        let sent = self
            .client
            .post(self.url.clone())
            .headers(headers)
            .body(entry.payload.clone())
            .send()
            .await;
        let response = match sent {
            Ok(response) => response,
            Err(e) if e.is_timeout() && !e.is_connect() => {
                return EmitOutcome::retryable(format!("no response within {:?}", self.timeout))
            }
            Err(e) => {
                // reqwest's message names the whole URL, token and all: the entry's last
                // error is read by operators, so it goes without.
                let unconnected = e.is_connect();
                let why = outbox_core::error_chain(&e.without_url());
                if unconnected {
                    return EmitOutcome::route(
                        RouteFault::Unreachable,
                        self.destination(),
                        format!("cannot connect: {why}"),
                    );
                }
                return EmitOutcome::retryable(format!("webhook request failed: {why}"));
            }
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let outcome = classify(
            status,
            retry_after.as_deref(),
            &self.destination(),
            Utc::now(),
        );
        with_answer(outcome, &answer_start(response).await)
    }
}

#[async_trait]
impl Emitter for WebhookEmitter {
    fn name(&self) -> &'static str {
        "webhook"
    }

    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        self.post(emission).await
    }
}

/// The entry's own headers, the content type and the topic and attempt headers; a
/// header that HTTP cannot carry is a permanent failure naming it.
fn entry_headers(emission: Emission<'_>) -> Result<HeaderMap, String> {
    let entry = emission.entry;
    let mut headers = HeaderMap::new();
    for (name, value) in &entry.headers {
        let lower = name.to_ascii_lowercase();
        if OWN_HEADERS.contains(&lower.as_str()) {
            continue;
        }
        let name = HeaderName::try_from(lower.as_str())
            .map_err(|_| format!("header name {name:?} cannot be sent over HTTP"))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|_| format!("the value of header {name:?} cannot be sent over HTTP"))?;
        headers.append(name, value);
    }
    if !headers.contains_key(CONTENT_TYPE) {
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/octet-stream"),
        );
    }
    let topic = HeaderValue::try_from(entry.topic.as_str())
        .map_err(|_| format!("topic {:?} cannot be sent as an HTTP header", entry.topic))?;
    headers.insert("x-outbox-topic", topic);
    headers.insert("x-outbox-attempt", emission.delivery_attempt.into());
    Ok(headers)
}

/// The start of a response's body: at most [`ERROR_BODY_BYTES`] are read, whatever the
/// receiver sends.
async fn answer_start(mut response: reqwest::Response) -> String {
    let mut said = Vec::new();
    while said.len() < ERROR_BODY_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => said.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    said.truncate(ERROR_BODY_BYTES);
    String::from_utf8_lossy(&said).into_owned()
}

/// `outcome` with the start of the receiver's answer added to a failure's reason.
fn with_answer(outcome: EmitOutcome, said: &str) -> EmitOutcome {
    let said: String = said.trim().chars().take(ERROR_BODY_CHARS).collect();
    if said.is_empty() {
        return outcome;
    }
    match outcome {
        EmitOutcome::Retryable { error, retry_after } => EmitOutcome::Retryable {
            error: format!("{error}: {said}"),
            retry_after,
        },
        EmitOutcome::Permanent { error } => EmitOutcome::Permanent {
            error: format!("{error}: {said}"),
        },
        EmitOutcome::RouteFailed {
            fault,
            destination,
            error,
        } => EmitOutcome::RouteFailed {
            fault,
            destination,
            error: format!("{error}: {said}"),
        },
        other => other,
    }
}
