//! The emitters the command offers: noop, stdout, jsonl:PATH, webhook:URL (the
//! `outbox-webhook` crate), nats://…, amqp://…, kafka://….

use std::io::Write;
use std::sync::{Arc, Mutex};

use outbox_core::async_trait;
use outbox_core::drain::{Emission, EmitOutcome, Emitter};
use outbox_core::{OutboxError, Result};

/// Builds the emitter named by `spec`.
pub(crate) async fn parse(spec: &str) -> Result<Arc<dyn Emitter>> {
    if spec.starts_with("nats://") || spec.starts_with("tls://") {
        return nats(spec).await;
    }
    if spec.starts_with("amqp://") || spec.starts_with("amqps://") {
        return rabbitmq(spec).await;
    }
    if spec.starts_with("kafka://") {
        return kafka(spec);
    }
    match spec.split_once(':') {
        None if spec == "noop" => Ok(Arc::new(Noop)),
        None if spec == "stdout" => Ok(Arc::new(Stdout)),
        Some(("jsonl", path)) if !path.is_empty() => Ok(Arc::new(Jsonl::open(path)?)),
        Some(("webhook", url)) => webhook(url),
        _ => Err(OutboxError::invalid(
            "emitter",
            format!(
                "{spec:?} is not one of noop, stdout, jsonl:PATH, webhook:URL, \
                 nats://HOST:PORT?subject=…, amqp://USER:PASS@HOST:PORT/VHOST?exchange=…, \
                 kafka://HOST:PORT?topic=…"
            ),
        )),
    }
}

/// The variable holding the webhook's signing secrets (`whsec_…`, separated by spaces).
pub(crate) const WEBHOOK_SECRETS_VAR: &str = "OUTBOX_WEBHOOK_SECRETS";

/// A webhook emitter for `url`, signing with the secrets of `OUTBOX_WEBHOOK_SECRETS`.
fn webhook(url: &str) -> Result<Arc<dyn Emitter>> {
    use outbox_webhook::{WebhookEmitter, WebhookOptions};
    let invalid = |e: outbox_webhook::WebhookError| OutboxError::invalid("emitter", e.to_string());
    let secrets = match std::env::var(WEBHOOK_SECRETS_VAR) {
        Ok(text) => text,
        Err(std::env::VarError::NotPresent) => String::new(),
        Err(std::env::VarError::NotUnicode(_)) => {
            return Err(OutboxError::invalid(
                "emitter",
                format!("{WEBHOOK_SECRETS_VAR} is not UTF-8"),
            ))
        }
    };
    let options = WebhookOptions::new(url)
        .secrets_from_text(&secrets)
        .map_err(|e| OutboxError::invalid("emitter", format!("{WEBHOOK_SECRETS_VAR}: {e}")))?;
    Ok(Arc::new(WebhookEmitter::new(options).map_err(invalid)?))
}

/// A JetStream emitter from its URL (`nats://host:port?subject=events.{topic}&stream=…`).
async fn nats(url: &str) -> Result<Arc<dyn Emitter>> {
    use outbox_nats::NatsError;
    match outbox_nats::NatsEmitter::connect(url).await {
        Ok(emitter) => Ok(Arc::new(emitter)),
        Err(NatsError::Config(why)) => Err(OutboxError::invalid("emitter", why)),
        Err(e) => Err(OutboxError::Connection {
            message: e.to_string(),
            source: None,
        }),
    }
}

/// A RabbitMQ emitter from its URL (`amqp://user:pass@host:5672/%2f?exchange=events`).
async fn rabbitmq(url: &str) -> Result<Arc<dyn Emitter>> {
    use outbox_rabbitmq::RabbitError;
    match outbox_rabbitmq::RabbitEmitter::connect(url).await {
        Ok(emitter) => Ok(Arc::new(emitter)),
        Err(RabbitError::Config(why)) => Err(OutboxError::invalid("emitter", why)),
        Err(e) => Err(OutboxError::Connection {
            message: e.to_string(),
            source: None,
        }),
    }
}

/// A Kafka emitter from its URL (`kafka://host:9092?topic=events.{topic}`); it connects
/// on its first emission.
fn kafka(url: &str) -> Result<Arc<dyn Emitter>> {
    match outbox_kafka::KafkaEmitter::connect(url) {
        Ok(emitter) => Ok(Arc::new(emitter)),
        Err(outbox_kafka::KafkaError::Config(why)) => Err(OutboxError::invalid("emitter", why)),
    }
}

/// Adds a fixed delay after each emission: a stand-in for the provider's acknowledgement.
pub(crate) struct Delayed {
    pub(crate) inner: Arc<dyn Emitter>,
    pub(crate) delay: std::time::Duration,
}

#[async_trait]
impl Emitter for Delayed {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    /// Sends, then waits: the latency stands for the provider's acknowledgement, the
    /// window in which a message is out but its outcome not yet known (or recorded).
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        let outcome = self.inner.emit(emission).await;
        tokio::time::sleep(self.delay).await;
        outcome
    }
}

/// One line describing an emission attempt.
pub(crate) fn record(emission: &Emission<'_>) -> serde_json::Value {
    serde_json::json!({
        "id": emission.entry.id,
        "topic": emission.entry.topic,
        "partition_key": emission.entry.partition_key,
        "attempt": emission.delivery_attempt,
        "owner": emission.owner,
        "payload": String::from_utf8_lossy(&emission.entry.payload),
        "emitted_at": chrono::Utc::now(),
    })
}

/// Accepts everything and sends nothing (for measuring the outbox alone).
struct Noop;

#[async_trait]
impl Emitter for Noop {
    async fn emit(&self, _: Emission<'_>) -> EmitOutcome {
        EmitOutcome::delivered()
    }
}

/// Prints one JSON line per emission to standard output.
struct Stdout;

#[async_trait]
impl Emitter for Stdout {
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        let line = record(&emission).to_string();
        match writeln!(std::io::stdout().lock(), "{line}") {
            Ok(()) => EmitOutcome::delivered(),
            Err(e) => EmitOutcome::retryable(format!("cannot write to stdout: {e}")),
        }
    }
}

/// Appends one JSON object per emission attempt to a file; each line is one `write`
/// on a file opened for appending, so several processes can share the file.
pub(crate) struct Jsonl {
    file: Mutex<std::fs::File>,
}

impl Jsonl {
    pub(crate) fn open(path: &str) -> Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| {
                OutboxError::invalid(
                    "emitter",
                    format!("cannot open {path:?} for appending: {e}"),
                )
            })?;
        Ok(Self {
            file: Mutex::new(file),
        })
    }
}

#[async_trait]
impl Emitter for Jsonl {
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        let mut line = record(&emission).to_string();
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        match file.write_all(line.as_bytes()) {
            Ok(()) => EmitOutcome::delivered(),
            Err(e) => EmitOutcome::retryable(format!("cannot append to the jsonl file: {e}")),
        }
    }
}
