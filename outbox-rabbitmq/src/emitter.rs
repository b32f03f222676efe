//! [`RabbitEmitter`]: one confirmed, persistent, mandatory publish per emission.

use std::sync::Arc;

use lapin::options::{BasicPublishOptions, ConfirmSelectOptions, ExchangeDeclareOptions};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{
    BasicProperties, Channel, Confirmation, Connection, ConnectionProperties, ExchangeKind,
};
use outbox_core::async_trait;
use outbox_core::drain::{Emission, EmitOutcome, Emitter, RouteFault};
use outbox_core::OutboxEntry;
use tokio::sync::Mutex;

use crate::{ExchangeSetup, RabbitError, RabbitOptions};
use outbox_core::redact_url;

/// Publishes each entry to RabbitMQ with publisher confirms, and reports it delivered only
/// when the broker has confirmed it (routed and, for durable queues, stored).
///
/// Each message is persistent, mandatory, carries the entry id as `message_id` (the key a
/// consumer dedupes by: delivery is at least once) and the entry's headers as AMQP
/// headers (`content-type` also as the content type).
///
/// Outcomes:
/// - confirmed → delivered;
/// - the route's ([`EmitOutcome::RouteFailed`]: the entry is held, no attempt counted, the
///   drain backs off): returned as unroutable (no queue bound for the routing key) or
///   published to an exchange that does not exist (`missing`); access refused, at login
///   or on the exchange (`refused`); a broker that cannot be connected to (`unreachable`);
/// - the entry's, for good (dead-lettered with the reason): a topic that makes no valid
///   exchange or routing key, a header AMQP cannot carry;
/// - the entry's, retryable: a negative confirm, no confirm within the timeout, a
///   connection lost mid-publish.
///
/// After any failure of the connection or channel the emitter opens a new one on the next
/// emission; a publish whose confirm never came is retried, never counted.
#[derive(Debug)]
pub struct RabbitEmitter {
    uri: String,
    options: RabbitOptions,
    link: Mutex<Option<Link>>,
}

#[derive(Debug, Clone)]
struct Link {
    connection: Arc<Connection>,
    channel: Channel,
}

impl RabbitEmitter {
    /// An emitter for an emitter URL (see [`RabbitOptions::from_url`]); connects and sets
    /// up the exchange when the options name one. Without one, a broker that is down does
    /// not fail this call: emissions fail as retryable until it is up.
    pub async fn connect(url: &str) -> Result<Self, RabbitError> {
        let (uri, options) = RabbitOptions::from_url(url)?;
        Self::new(uri, options).await
    }

    /// An emitter for the client URL `uri` with `options`.
    pub async fn new(uri: String, options: RabbitOptions) -> Result<Self, RabbitError> {
        options.validate()?;
        let emitter = Self {
            uri,
            options,
            link: Mutex::new(None),
        };
        if emitter.options.exchange_setup != ExchangeSetup::None {
            let link = emitter.link().await.map_err(|e| {
                RabbitError::Connect(format!("cannot reach {}: {e}", redact_url(&emitter.uri)))
            })?;
            emitter.set_up_exchange(&link.channel).await?;
        }
        Ok(emitter)
    }

    async fn set_up_exchange(&self, channel: &Channel) -> Result<(), RabbitError> {
        let name = &self.options.exchange;
        let options = ExchangeDeclareOptions {
            passive: self.options.exchange_setup == ExchangeSetup::Check,
            durable: true,
            ..Default::default()
        };
        let declared = channel
            .exchange_declare(
                name.as_str().into(),
                ExchangeKind::Topic,
                options,
                FieldTable::default(),
            )
            .await;
        if let Err(e) = declared {
            // A failed declare closes the channel: start afresh next time.
            self.link.lock().await.take();
            return Err(RabbitError::Exchange(format!("exchange {name:?}: {e}")));
        }
        Ok(())
    }

    /// The open channel, opening a connection and a confirming channel if there is none
    /// or the last one failed.
    async fn link(&self) -> lapin::Result<Link> {
        let mut slot = self.link.lock().await;
        if let Some(link) = slot.as_ref() {
            if link.connection.status().connected() && link.channel.status().connected() {
                return Ok(link.clone());
            }
        }
        slot.take();
        let connection = Connection::connect(&self.uri, ConnectionProperties::default()).await?;
        let channel = connection.create_channel().await?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await?;
        let link = Link {
            connection: Arc::new(connection),
            channel,
        };
        *slot = Some(link.clone());
        Ok(link)
    }

    /// Drops `failed` if it is still the current link, so the next emission opens anew.
    async fn forget(&self, failed: &Link) {
        let mut slot = self.link.lock().await;
        if slot
            .as_ref()
            .is_some_and(|l| Arc::ptr_eq(&l.connection, &failed.connection))
        {
            slot.take();
        }
    }

    async fn publish(&self, entry: &OutboxEntry) -> EmitOutcome {
        let (exchange, key) = match (
            self.options.exchange_for(&entry.topic),
            self.options.routing_key_for(&entry.topic),
        ) {
            (Ok(x), Ok(k)) => (x, k),
            (Err(why), _) | (_, Err(why)) => return EmitOutcome::permanent(why),
        };
        let properties = match properties(entry) {
            Ok(p) => p,
            Err(why) => return EmitOutcome::permanent(why),
        };
        // Getting a link (waiting for another emission's connect, or connecting) is bounded
        // on its own: a time-out there means the broker does not answer, the route's fault.
        let link = match tokio::time::timeout(self.options.ack_timeout, self.link()).await {
            Ok(Ok(link)) => Ok(link),
            Ok(Err(e)) => Err(Stage::Connect(e)),
            Err(_) => {
                return EmitOutcome::route(
                    RouteFault::Unreachable,
                    redact_url(&self.uri),
                    format!("no connection within {:?}", self.options.ack_timeout),
                )
            }
        };
        let confirmed = tokio::time::timeout(self.options.ack_timeout, async {
            let link = link?;
            let sent = async {
                link.channel
                    .basic_publish(
                        exchange.as_str().into(),
                        key.as_str().into(),
                        BasicPublishOptions {
                            mandatory: true,
                            ..Default::default()
                        },
                        &entry.payload,
                        properties,
                    )
                    .await?
                    .await
            }
            .await;
            if sent.is_err() {
                self.forget(&link).await;
            }
            sent.map_err(Stage::Publish)
        })
        .await;
        let route =
            |fault, destination: String, why: String| EmitOutcome::route(fault, destination, why);
        match confirmed {
            Ok(Ok(Confirmation::Ack(None))) => EmitOutcome::delivered(),
            Ok(Ok(Confirmation::Ack(Some(returned)))) => route(
                RouteFault::Missing,
                format!("exchange {exchange:?}, routing key {key:?}"),
                format!(
                    "unroutable: no queue is bound for it ({} {})",
                    returned.reply_code, returned.reply_text
                ),
            ),
            Ok(Ok(Confirmation::Nack(_))) => {
                EmitOutcome::retryable("the broker refused the message (negative confirm)")
            }
            Ok(Ok(Confirmation::NotRequested)) => {
                EmitOutcome::retryable("the channel is not in confirm mode")
            }
            Ok(Err(stage)) => {
                let e = stage.error();
                let broker = redact_url(&self.uri);
                match (amqp_code(e), &stage) {
                    (Some(404), _) => route(
                        RouteFault::Missing,
                        format!("exchange {exchange:?}"),
                        format!("it does not exist: {e}"),
                    ),
                    (Some(403), Stage::Publish(_)) => route(
                        RouteFault::Refused,
                        format!("exchange {exchange:?}"),
                        format!("access refused: {e}"),
                    ),
                    (Some(403), Stage::Connect(_)) => {
                        route(RouteFault::Refused, broker, format!("login refused: {e}"))
                    }
                    (_, Stage::Connect(_)) => route(
                        RouteFault::Unreachable,
                        broker,
                        format!("cannot connect: {e}"),
                    ),
                    (_, Stage::Publish(_)) => {
                        EmitOutcome::retryable(format!("publish failed: {e}"))
                    }
                }
            }
            Err(_) => {
                // The channel may be wedged (a blocked broker): start afresh.
                self.link.lock().await.take();
                EmitOutcome::retryable(format!("no confirm within {:?}", self.options.ack_timeout))
            }
        }
    }
}

/// Where a publish failed: opening the connection and channel, or publishing.
enum Stage {
    Connect(lapin::Error),
    Publish(lapin::Error),
}

impl Stage {
    fn error(&self) -> &lapin::Error {
        match self {
            Self::Connect(e) | Self::Publish(e) => e,
        }
    }
}

/// The AMQP reply code the broker closed the channel or connection with, if it did:
/// 404 (NOT_FOUND), 403 (ACCESS_REFUSED), ... Read from the error's words too, for
/// errors the client reports in other shapes.
fn amqp_code(e: &lapin::Error) -> Option<u16> {
    if let lapin::ErrorKind::ProtocolError(amqp) = e.kind() {
        return Some(amqp.get_id());
    }
    let text = e.to_string();
    [("NOT_FOUND", 404), ("ACCESS_REFUSED", 403)]
        .into_iter()
        .find(|(word, _)| text.contains(word))
        .map(|(_, code)| code)
}

/// Persistent, with the entry id as message id and the entry's headers.
fn properties(entry: &OutboxEntry) -> Result<BasicProperties, String> {
    let mut headers = FieldTable::default();
    for (name, value) in &entry.headers {
        if name.len() > 255 {
            return Err(format!("header name {name:?} is over 255 bytes"));
        }
        headers.insert(
            ShortString::from(name.clone()),
            AMQPValue::LongString(LongString::from(value.clone())),
        );
    }
    let mut properties = BasicProperties::default()
        .with_message_id(ShortString::from(entry.id.to_string()))
        .with_delivery_mode(2)
        .with_headers(headers);
    if let Ok(at) = u64::try_from(entry.created_at.timestamp()) {
        properties = properties.with_timestamp(at);
    }
    if let Some(kind) = entry.headers.get("content-type") {
        properties = properties.with_content_type(ShortString::from(kind.clone()));
    }
    Ok(properties)
}

#[async_trait]
impl Emitter for RabbitEmitter {
    fn name(&self) -> &'static str {
        "rabbitmq"
    }

    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        self.publish(emission.entry).await
    }
}
