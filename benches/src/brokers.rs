//! The brokers a drain bench can deliver to: their emitters, and a destination of each
//! run's own that is removed afterwards.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use outbox_core::drain::{Emission, EmitOutcome, Emitter};
use outbox_core::{NewEntry, OutboxEntry};
use outbox_kafka::rskafka;
use outbox_nats::async_nats;
use outbox_rabbitmq::lapin;

/// The local NATS server (`OUTBOX_TEST_NATS_URL` overrides).
pub fn nats_url() -> String {
    std::env::var("OUTBOX_TEST_NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into())
}

/// The local RabbitMQ broker (`OUTBOX_TEST_RABBITMQ_URL` overrides).
pub fn amqp_url() -> String {
    std::env::var("OUTBOX_TEST_RABBITMQ_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into())
}

/// The emitter an emitter URL names.
pub async fn emitter(url: &str) -> Arc<dyn Emitter> {
    if url.starts_with("kafka://") {
        Arc::new(outbox_kafka::KafkaEmitter::connect(url).expect("Kafka emitter"))
    } else if url.starts_with("nats://") {
        Arc::new(
            outbox_nats::NatsEmitter::connect(url)
                .await
                .expect("NATS emitter"),
        )
    } else {
        Arc::new(
            outbox_rabbitmq::RabbitEmitter::connect(url)
                .await
                .expect("RabbitMQ emitter"),
        )
    }
}

/// A destination on one broker, with the URL that delivers there.
pub enum Destination {
    /// A JetStream stream (file storage) capturing the run's subjects.
    Nats {
        /// The stream's JetStream context.
        js: async_nats::jetstream::Context,
        /// The stream's name.
        stream: String,
        /// The first token of every subject the stream captures.
        prefix: String,
        /// The emitter URL.
        url: String,
    },
    /// A durable topic exchange with a durable queue bound for every key.
    Rabbit {
        /// The connection the destination was declared on.
        connection: lapin::Connection,
        /// Its channel.
        channel: lapin::Channel,
        /// The exchange.
        exchange: String,
        /// The queue.
        queue: String,
        /// The emitter URL.
        url: String,
    },
    /// A topic on the Kafka broker (three partitions, replication factor 1).
    Kafka {
        /// The broker's client.
        client: Arc<rskafka::client::Client>,
        /// The topic.
        topic: outbox_testkit::kafka::TestTopic,
        /// The emitter URL.
        url: String,
    },
}

/// The brokers the bench delivers to, by the name the report gives them.
pub const BROKERS: [&str; 3] = ["NATS JetStream", "RabbitMQ", "Kafka"];

/// Partitions of the bench's Kafka topic.
const KAFKA_PARTITIONS: i32 = 3;

impl Destination {
    /// A fresh destination on the broker `name` (one of [`BROKERS`]).
    pub async fn of(name: &str) -> Result<Self, String> {
        match name {
            "NATS JetStream" => Self::nats().await,
            "RabbitMQ" => Self::rabbit().await,
            "Kafka" => Self::kafka().await,
            other => Err(format!("no broker is called {other:?}")),
        }
    }

    /// The broker's name in `OUTBOX_TEST_REQUIRE`.
    pub fn engine(name: &str) -> &'static str {
        match name {
            "NATS JetStream" => "nats",
            "RabbitMQ" => "rabbitmq",
            _ => outbox_testkit::kafka::ENGINE,
        }
    }

    /// A fresh topic on the Kafka broker (`OUTBOX_TEST_KAFKA_URL`), or why there cannot be
    /// one.
    pub async fn kafka() -> Result<Self, String> {
        let bootstrap = outbox_testkit::kafka::bootstrap();
        let client = rskafka::client::ClientBuilder::new(vec![bootstrap.clone()])
            .build()
            .await
            .map_err(|e| format!("{bootstrap}: {e}"))?;
        let client = Arc::new(client);
        let topic =
            outbox_testkit::kafka::TestTopic::create(&client, "outbox-bench", KAFKA_PARTITIONS)
                .await;
        let url = format!("{}?topic={}", outbox_testkit::kafka::url(), topic.name);
        Ok(Self::Kafka { client, topic, url })
    }

    /// A fresh stream on the NATS server, or why there cannot be one.
    pub async fn nats() -> Result<Self, String> {
        let client = async_nats::connect(nats_url())
            .await
            .map_err(|e| e.to_string())?;
        let js = async_nats::jetstream::new(client);
        let tag = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        let stream = format!("OUTBOX_BENCH_{tag}");
        js.create_stream(async_nats::jetstream::stream::Config {
            name: stream.clone(),
            subjects: vec![format!("bench{tag}.>")],
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
        let url = format!(
            "{}?subject=bench{tag}.{{topic}}&stream={stream}",
            nats_url()
        );
        Ok(Self::Nats {
            js,
            stream,
            prefix: format!("bench{tag}"),
            url,
        })
    }

    /// A fresh exchange and queue on the RabbitMQ broker, or why there cannot be one.
    pub async fn rabbit() -> Result<Self, String> {
        use lapin::options::{ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions};
        use lapin::types::FieldTable;
        let tag = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        let (exchange, queue) = (
            format!("outbox.bench.{tag}"),
            format!("outbox.bench.q.{tag}"),
        );
        let declared = async {
            let connection =
                lapin::Connection::connect(&amqp_url(), lapin::ConnectionProperties::default())
                    .await?;
            let channel = connection.create_channel().await?;
            let durable = ExchangeDeclareOptions {
                durable: true,
                ..Default::default()
            };
            channel
                .exchange_declare(
                    exchange.as_str().into(),
                    lapin::ExchangeKind::Topic,
                    durable,
                    FieldTable::default(),
                )
                .await?;
            let durable = QueueDeclareOptions {
                durable: true,
                ..Default::default()
            };
            channel
                .queue_declare(queue.as_str().into(), durable, FieldTable::default())
                .await?;
            channel
                .queue_bind(
                    queue.as_str().into(),
                    exchange.as_str().into(),
                    "#".into(),
                    QueueBindOptions::default(),
                    FieldTable::default(),
                )
                .await?;
            Ok::<_, lapin::Error>((connection, channel))
        };
        let (connection, channel) = declared.await.map_err(|e| e.to_string())?;
        let url = format!("{}?exchange={exchange}", amqp_url());
        Ok(Self::Rabbit {
            connection,
            channel,
            exchange,
            queue,
            url,
        })
    }

    /// The emitter URL that delivers here.
    pub fn url(&self) -> &str {
        match self {
            Self::Nats { url, .. } | Self::Rabbit { url, .. } | Self::Kafka { url, .. } => url,
        }
    }

    /// Publishes `messages` messages of `payload_bytes` here through the client library
    /// alone (persistent, acknowledged, each with a fresh message id, as the emitters
    /// send them; on Kafka one record a request, round robin over the partitions), at
    /// most `in_flight` awaiting their acknowledgement: the broker's rate
    /// with nothing of the outbox in front. Acknowledged messages per second.
    pub async fn client_rate(
        &self,
        messages: u64,
        in_flight: usize,
        payload_bytes: u32,
    ) -> Result<f64, String> {
        let body = vec![b'x'; usize::try_from(payload_bytes).expect("payload size fits")];
        match self {
            Self::Nats { js, prefix, .. } => {
                let subject = format!("{prefix}.client");
                timed(messages, in_flight, || {
                    let (js, subject, body) = (js.clone(), subject.clone(), body.clone());
                    async move {
                        let mut headers = async_nats::HeaderMap::new();
                        let id = uuid::Uuid::new_v4().to_string();
                        headers.insert("Nats-Msg-Id", id.as_str());
                        js.publish_with_headers(subject, headers, body.into())
                            .await
                            .map_err(|e| e.to_string())?
                            .await
                            .map(drop)
                            .map_err(|e| e.to_string())
                    }
                })
                .await
            }
            Self::Rabbit {
                connection,
                exchange,
                ..
            } => {
                use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};
                let channel = connection
                    .create_channel()
                    .await
                    .map_err(|e| e.to_string())?;
                channel
                    .confirm_select(ConfirmSelectOptions::default())
                    .await
                    .map_err(|e| e.to_string())?;
                timed(messages, in_flight, || {
                    let (channel, exchange, body) =
                        (channel.clone(), exchange.clone(), body.clone());
                    async move {
                        let properties = lapin::BasicProperties::default()
                            .with_delivery_mode(2)
                            .with_message_id(uuid::Uuid::new_v4().to_string().into());
                        let mandatory = BasicPublishOptions {
                            mandatory: true,
                            ..Default::default()
                        };
                        let confirmed = channel
                            .basic_publish(
                                exchange.as_str().into(),
                                "client".into(),
                                mandatory,
                                &body,
                                properties,
                            )
                            .await
                            .map_err(|e| e.to_string())?
                            .await
                            .map_err(|e| e.to_string())?;
                        match confirmed {
                            lapin::Confirmation::Ack(None) => Ok(()),
                            other => Err(format!("not confirmed: {other:?}")),
                        }
                    }
                })
                .await
            }
            Self::Kafka { client, topic, .. } => {
                use rskafka::client::partition::{Compression, UnknownTopicHandling};
                let mut partitions = Vec::new();
                for p in 0..KAFKA_PARTITIONS {
                    let partition = client
                        .partition_client(topic.name.as_str(), p, UnknownTopicHandling::Retry)
                        .await
                        .map_err(|e| e.to_string())?;
                    partitions.push(Arc::new(partition));
                }
                let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
                timed(messages, in_flight, || {
                    let turn = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let partition = Arc::clone(&partitions[turn % partitions.len()]);
                    let body = body.clone();
                    async move {
                        let id = uuid::Uuid::new_v4().to_string().into_bytes();
                        let record = rskafka::record::Record {
                            key: Some(id.clone()),
                            value: Some(body),
                            headers: [("outbox-entry-id".to_owned(), id)].into(),
                            timestamp: Utc::now(),
                        };
                        partition
                            .produce(vec![record], Compression::NoCompression)
                            .await
                            .map(drop)
                            .map_err(|e| e.to_string())
                    }
                })
                .await
            }
        }
    }

    /// Sends `messages` entries of `payload_bytes` here through the project's emitter,
    /// called directly with no outbox around it, at most `in_flight` at a time. Delivered
    /// messages per second.
    pub async fn emitter_rate(
        &self,
        messages: u64,
        in_flight: usize,
        payload_bytes: u32,
    ) -> Result<f64, String> {
        let emitter = emitter(self.url()).await;
        let body = vec![b'x'; usize::try_from(payload_bytes).expect("payload size fits")];
        timed(messages, in_flight, || {
            let emitter = Arc::clone(&emitter);
            let entry = OutboxEntry::from_new(NewEntry::new("ceiling", body.clone()), Utc::now());
            async move {
                let emission = Emission {
                    entry: &entry,
                    delivery_attempt: 1,
                    owner: "bench",
                };
                match emitter.emit(emission).await {
                    EmitOutcome::Delivered { .. } => Ok(()),
                    other => Err(format!("not delivered: {other:?}")),
                }
            }
        })
        .await
    }

    /// Removes the destination and what it holds.
    pub async fn remove(self) {
        match self {
            Self::Nats { js, stream, .. } => {
                let _ = js.delete_stream(&stream).await;
            }
            Self::Rabbit {
                connection,
                channel,
                exchange,
                queue,
                ..
            } => {
                let _ = channel
                    .queue_delete(queue.as_str().into(), Default::default())
                    .await;
                let _ = channel
                    .exchange_delete(exchange.as_str().into(), Default::default())
                    .await;
                let _ = connection.close(200, "done".into()).await;
            }
            Self::Kafka { topic, .. } => topic.delete().await,
        }
    }
}

/// Runs `publish()` `messages` times, at most `in_flight` at once, each on a task of its
/// own; the first failure ends the run. Completed publishes per second.
async fn timed<F, Fut>(messages: u64, in_flight: usize, publish: F) -> Result<f64, String>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let joined = |done: Result<Result<(), String>, tokio::task::JoinError>| {
        done.map_err(|e| format!("a publish task failed: {e}"))?
    };
    let started = Instant::now();
    let mut running = tokio::task::JoinSet::new();
    for _ in 0..messages {
        if running.len() >= in_flight.max(1) {
            if let Some(done) = running.join_next().await {
                joined(done)?;
            }
        }
        running.spawn(publish());
    }
    while let Some(done) = running.join_next().await {
        joined(done)?;
    }
    Ok(crate::stats::rate(messages, started.elapsed()))
}
