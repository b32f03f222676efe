//! [`NatsEmitter`]: one JetStream publish per emission, delivered on the stream's ack.

use std::str::FromStr;
use std::time::Duration;

use async_nats::connection::State;
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::{self, stream};
use async_nats::{HeaderMap, HeaderName, HeaderValue};
use outbox_core::async_trait;
use outbox_core::drain::{Emission, EmitOutcome, Emitter, RouteFault};
use outbox_core::OutboxEntry;

use crate::{NatsError, NatsOptions, StreamSetup};

/// The header JetStream deduplicates by, within the stream's duplicate window.
pub const MSG_ID_HEADER: &str = "Nats-Msg-Id";

/// Publishes each entry to JetStream and reports it delivered only once the stream has
/// acknowledged it (stored it, or recognised it as a duplicate of one it stored).
///
/// The entry id travels as `Nats-Msg-Id`, so an entry emitted again (a worker died after
/// publishing, before recording; a lease ran out) is stored once as long as the stream's
/// duplicate window (two minutes by default) covers the gap. The entry's headers travel as
/// NATS headers, its payload as the message body.
///
/// Outcomes:
/// - the route's ([`EmitOutcome::RouteFailed`]: the entry is held, no attempt counted,
///   and the drain backs off): no stream captures the subject (`missing`); no
///   acknowledgement or a broken pipe while the client is not connected (`unreachable`);
/// - the entry's, for good (dead-lettered with the reason): a topic that makes no valid
///   subject, a header NATS cannot carry, a message over the server's size limit;
/// - the entry's, retryable: no acknowledgement within the timeout while connected, any
///   other server error.
///
/// The client reconnects on its own.
#[derive(Debug, Clone)]
pub struct NatsEmitter {
    js: jetstream::Context,
    options: NatsOptions,
}

impl NatsEmitter {
    /// Connects to the server of an emitter URL (see [`NatsOptions::from_url`]) and sets
    /// up its stream. Without a stream to set up, a server that is down does not fail
    /// this call: the client keeps connecting, and emissions fail as retryable until it
    /// is up.
    pub async fn connect(url: &str) -> Result<Self, NatsError> {
        let (server, options) = NatsOptions::from_url(url)?;
        let mut connect = async_nats::ConnectOptions::new()
            .connection_timeout(Duration::from_secs(5))
            .max_reconnects(None);
        if options.stream == StreamSetup::None {
            connect = connect.retry_on_initial_connect();
        }
        let client = connect
            .connect(server.as_str())
            .await
            .map_err(|e| NatsError::Connect(format!("cannot connect to {server}: {e}")))?;
        Self::new(client, options).await
    }

    /// An emitter on a client the host already holds; sets up the stream the options name.
    pub async fn new(client: async_nats::Client, options: NatsOptions) -> Result<Self, NatsError> {
        options.validate()?;
        let js = jetstream::ContextBuilder::new()
            .timeout(options.ack_timeout)
            .backpressure_on_inflight(true)
            .build(client);
        let emitter = Self { js, options };
        emitter.set_up_stream().await?;
        Ok(emitter)
    }

    /// The JetStream context it publishes on.
    pub fn context(&self) -> &jetstream::Context {
        &self.js
    }

    async fn set_up_stream(&self) -> Result<(), NatsError> {
        match &self.options.stream {
            StreamSetup::None => Ok(()),
            StreamSetup::Check(name) => self
                .js
                .get_stream(name)
                .await
                .map(drop)
                .map_err(|e| NatsError::Stream(format!("stream {name:?}: {e}"))),
            StreamSetup::Create(name) => {
                let subjects = self.options.subject.stream_subjects().ok_or_else(|| {
                    NatsError::Config(format!(
                        "cannot derive the subjects of stream {name:?} from {:?}: put \
                         {{topic}} last, or create the stream yourself",
                        self.options.subject.as_str()
                    ))
                })?;
                let config = stream::Config {
                    name: name.clone(),
                    subjects: vec![subjects],
                    ..Default::default()
                };
                self.js
                    .get_or_create_stream(config)
                    .await
                    .map(drop)
                    .map_err(|e| NatsError::Stream(format!("cannot create stream {name:?}: {e}")))
            }
        }
    }

    async fn publish(&self, entry: &OutboxEntry) -> EmitOutcome {
        let subject = match self.options.subject.render(&entry.topic) {
            Ok(s) => s,
            Err(why) => return EmitOutcome::permanent(why),
        };
        let headers = match headers(entry) {
            Ok(h) => h,
            Err(why) => return EmitOutcome::permanent(why),
        };
        let message = PublishMessage::build()
            .payload(bytes::Bytes::copy_from_slice(&entry.payload))
            .headers(headers);
        let acked = tokio::time::timeout(self.options.ack_timeout, async {
            self.js.send_publish(subject.clone(), message).await?.await
        })
        .await;
        match acked {
            Ok(Ok(ack)) => EmitOutcome::Delivered {
                provider_message_id: Some(format!("{}:{}", ack.stream, ack.sequence)),
            },
            Ok(Err(e)) => match e.kind() {
                PublishErrorKind::StreamNotFound => EmitOutcome::route(
                    RouteFault::Missing,
                    format!("subject {subject:?}"),
                    "no JetStream stream captures it",
                ),
                PublishErrorKind::MaxPayloadExceeded => {
                    EmitOutcome::permanent(format!("the message is too large for the server: {e}"))
                }
                PublishErrorKind::TimedOut | PublishErrorKind::BrokenPipe => {
                    self.unanswered(&subject, &e.to_string())
                }
                _ => EmitOutcome::retryable(format!("publish to {subject:?} failed: {e}")),
            },
            Err(_) => self.unanswered(
                &subject,
                &format!("no acknowledgement within {:?}", self.options.ack_timeout),
            ),
        }
    }

    /// A publish that got no answer: the route's while the client is not connected (the
    /// server is down or refuses the connection), else the entry's.
    fn unanswered(&self, subject: &str, why: &str) -> EmitOutcome {
        match self.js.client().connection_state() {
            State::Connected => EmitOutcome::retryable(format!("publish to {subject:?}: {why}")),
            State::Pending | State::Disconnected => EmitOutcome::route(
                RouteFault::Unreachable,
                "the NATS server",
                format!("not connected ({why})"),
            ),
        }
    }
}

/// The entry's headers as NATS headers, with its id as `Nats-Msg-Id`.
fn headers(entry: &OutboxEntry) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in &entry.headers {
        if name.eq_ignore_ascii_case(MSG_ID_HEADER) {
            return Err(format!(
                "header {name:?} is the outbox's own (the entry id)"
            ));
        }
        let name = HeaderName::from_str(name)
            .map_err(|e| format!("header name {name:?} cannot travel over NATS: {e}"))?;
        if value.contains(['\r', '\n']) {
            return Err(format!(
                "header {name} holds a line break, which NATS cannot carry"
            ));
        }
        map.append(name, HeaderValue::from(value.as_str()));
    }
    map.insert(MSG_ID_HEADER, entry.id.to_string());
    Ok(map)
}

#[async_trait]
impl Emitter for NatsEmitter {
    fn name(&self) -> &'static str {
        "nats"
    }

    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        self.publish(emission.entry).await
    }
}
