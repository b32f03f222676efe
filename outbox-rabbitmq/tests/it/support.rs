//! The test broker, an exchange and queue of each test's own, and an SQLite outbox.

use std::collections::BTreeMap;
use std::sync::Arc;

use lapin::options::{
    BasicGetOptions, ExchangeDeclareOptions, ExchangeDeleteOptions, QueueBindOptions,
    QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{Channel, Connection, ConnectionProperties, ExchangeKind};
use outbox_core::{AdminClaimStore, TableName};
use outbox_rabbitmq::lapin;
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};

pub(crate) use outbox_testkit::emitters::{drain_all, enqueue, rows};

/// The broker the tests use: `OUTBOX_TEST_RABBITMQ_URL`, or the local one.
pub(crate) fn amqp_url() -> String {
    std::env::var("OUTBOX_TEST_RABBITMQ_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into())
}

/// A channel on the test broker, or `None` after a loud report (a failure when RabbitMQ
/// is required).
pub(crate) async fn broker() -> Option<(Connection, Channel)> {
    let url = amqp_url();
    let connected = async {
        let connection = Connection::connect(&url, ConnectionProperties::default()).await?;
        let channel = connection.create_channel().await?;
        Ok::<_, lapin::Error>((connection, channel))
    };
    match tokio::time::timeout(std::time::Duration::from_secs(5), connected).await {
        Ok(Ok(pair)) => Some(pair),
        Ok(Err(e)) => {
            outbox_testkit::engines::unavailable(
                "rabbitmq",
                &format!("{}: {e}", outbox_core::redact_url(&url)),
            );
            None
        }
        Err(_) => {
            outbox_testkit::engines::unavailable("rabbitmq", "no answer within 5 s");
            None
        }
    }
}

/// A topic exchange and a queue bound to it for every routing key, of this test's own.
pub(crate) struct TestQueue {
    pub(crate) channel: Channel,
    pub(crate) exchange: String,
    pub(crate) queue: String,
    _connection: Connection,
}

impl TestQueue {
    pub(crate) async fn create((connection, channel): (Connection, Channel)) -> Self {
        let tag = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        let (exchange, queue) = (format!("outbox.t.{tag}"), format!("outbox.q.{tag}"));
        channel
            .exchange_declare(
                exchange.as_str().into(),
                ExchangeKind::Topic,
                ExchangeDeclareOptions::default(),
                FieldTable::default(),
            )
            .await
            .expect("declare the exchange");
        channel
            .queue_declare(
                queue.as_str().into(),
                QueueDeclareOptions::default(),
                FieldTable::default(),
            )
            .await
            .expect("declare the queue");
        channel
            .queue_bind(
                queue.as_str().into(),
                exchange.as_str().into(),
                "bound.#".into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .expect("bind the queue");
        Self {
            channel,
            exchange,
            queue,
            _connection: connection,
        }
    }

    /// Binds the queue to the exchange for `pattern` too.
    pub(crate) async fn bind(&self, pattern: &str) {
        self.channel
            .queue_bind(
                self.queue.as_str().into(),
                self.exchange.as_str().into(),
                pattern.into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .expect("bind the queue");
    }

    /// Takes every message from the queue.
    pub(crate) async fn read_all(&self) -> Vec<Received> {
        let mut received = Vec::new();
        while let Some(message) = self
            .channel
            .basic_get(self.queue.as_str().into(), BasicGetOptions { no_ack: true })
            .await
            .expect("basic.get")
        {
            let delivery = message.delivery;
            let properties = &delivery.properties;
            let mut headers = BTreeMap::new();
            if let Some(table) = properties.headers() {
                for (name, value) in table.inner() {
                    if let AMQPValue::LongString(s) = value {
                        headers.insert(name.to_string(), s.to_string());
                    }
                }
            }
            received.push(Received {
                message_id: properties
                    .message_id()
                    .as_ref()
                    .map(|m| m.to_string())
                    .unwrap_or_default(),
                persistent: *properties.delivery_mode() == Some(2),
                headers,
                payload: delivery.data.clone(),
                routing_key: delivery.routing_key.to_string(),
            });
        }
        received
    }

    pub(crate) async fn delete(self) {
        let _ = self
            .channel
            .queue_delete(self.queue.as_str().into(), QueueDeleteOptions::default())
            .await;
        let _ = self
            .channel
            .exchange_delete(
                self.exchange.as_str().into(),
                ExchangeDeleteOptions::default(),
            )
            .await;
    }
}

/// One message as a consumer got it.
#[derive(Debug)]
pub(crate) struct Received {
    pub(crate) message_id: String,
    pub(crate) persistent: bool,
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) payload: Vec<u8>,
    pub(crate) routing_key: String,
}

/// A migrated SQLite outbox in a temporary directory, ready for ordered drains.
pub(crate) async fn outbox() -> (Arc<dyn AdminClaimStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("outbox.db");
    let config = SqliteStoreConfig::new();
    let pool = SqliteClaimStore::open_pool(path.to_str().expect("utf-8 path"), &config)
        .await
        .expect("open");
    outbox_sqlite::migrate(&pool, &TableName::default())
        .await
        .expect("migrate");
    outbox_sqlite::enable_ordered_claims(&pool, &TableName::default())
        .await
        .expect("ordered claims");
    let store = SqliteClaimStore::new(pool, config).await.expect("store");
    (Arc::new(store), dir)
}
