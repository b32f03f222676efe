//! The test server, fresh streams, an SQLite outbox, and a drain run to the end.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, consumer, stream};
use futures_util::StreamExt;
use outbox_core::{AdminClaimStore, TableName};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};

/// The server the tests use: `OUTBOX_TEST_NATS_URL`, or the local one.
pub(crate) fn nats_url() -> String {
    std::env::var("OUTBOX_TEST_NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into())
}

/// A client of the test server, or `None` after a loud report (a failure when NATS is
/// required).
pub(crate) async fn server() -> Option<async_nats::Client> {
    let url = nats_url();
    let connect = async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_secs(3))
        .connect(url.as_str());
    match connect.await {
        Ok(client) => Some(client),
        Err(e) => {
            outbox_testkit::engines::unavailable("nats", &format!("{url}: {e}"));
            None
        }
    }
}

/// A stream of this test's own (in memory) capturing `<prefix>.>`.
pub(crate) struct TestStream {
    pub(crate) js: jetstream::Context,
    pub(crate) name: String,
    pub(crate) prefix: String,
}

impl TestStream {
    pub(crate) async fn create(client: &async_nats::Client) -> Self {
        Self::named(client).create_now().await
    }

    /// A stream's names, not created yet: [`TestStream::create_now`] does.
    pub(crate) fn named(client: &async_nats::Client) -> Self {
        let js = jetstream::new(client.clone());
        let tag = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        let (name, prefix) = (format!("OUTBOX_T_{tag}"), format!("t{tag}"));
        Self { js, name, prefix }
    }

    /// Creates the stream.
    pub(crate) async fn create_now(self) -> Self {
        let Self { js, name, prefix } = self;
        js.create_stream(stream::Config {
            name: name.clone(),
            subjects: vec![format!("{prefix}.>")],
            storage: stream::StorageType::Memory,
            max_age: Duration::from_secs(600),
            ..Default::default()
        })
        .await
        .expect("create the test stream");
        Self { js, name, prefix }
    }

    /// Every message in the stream, read by a durable pull consumer: (msg id, headers,
    /// payload, sequence).
    pub(crate) async fn read_all(&self) -> Vec<Received> {
        let stream = self.js.get_stream(&self.name).await.expect("stream");
        let consumer: consumer::PullConsumer = stream
            .create_consumer(consumer::pull::Config {
                durable_name: Some("check".into()),
                ..Default::default()
            })
            .await
            .expect("create the consumer");
        let mut received = Vec::new();
        loop {
            let mut batch = consumer
                .fetch()
                .max_messages(500)
                .expires(Duration::from_millis(500))
                .messages()
                .await
                .expect("fetch");
            let before = received.len();
            while let Some(message) = batch.next().await {
                let message = message.expect("a message");
                let headers = message.headers.clone().unwrap_or_default();
                let mut copied = BTreeMap::new();
                for (name, values) in headers.iter() {
                    let value = values
                        .iter()
                        .next()
                        .map(|v| v.as_str().to_owned())
                        .unwrap_or_default();
                    copied.insert(name.to_string(), value);
                }
                let sequence = message.info().expect("a JetStream message").stream_sequence;
                received.push(Received {
                    msg_id: copied
                        .remove(outbox_nats::MSG_ID_HEADER)
                        .unwrap_or_default(),
                    headers: copied,
                    payload: message.payload.to_vec(),
                    subject: message.subject.to_string(),
                    sequence,
                });
                message.ack().await.expect("ack");
            }
            if received.len() == before {
                return received;
            }
        }
    }

    /// The emitter URL that publishes `<topic>` to this stream's `<prefix>.<topic>`, the
    /// stream checked at start.
    pub(crate) fn emitter_url(&self) -> String {
        format!(
            "{}?subject={}.{{topic}}&stream={}",
            nats_url(),
            self.prefix,
            self.name
        )
    }

    /// How many messages the stream holds.
    pub(crate) async fn count(&self) -> u64 {
        let mut stream = self.js.get_stream(&self.name).await.expect("stream");
        stream.info().await.expect("stream info").state.messages
    }

    pub(crate) async fn delete(self) {
        let _ = self.js.delete_stream(&self.name).await;
    }
}

/// One message as a consumer got it.
#[derive(Debug)]
pub(crate) struct Received {
    pub(crate) msg_id: String,
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) payload: Vec<u8>,
    pub(crate) subject: String,
    pub(crate) sequence: u64,
}

pub(crate) use outbox_testkit::emitters::{drain_all, enqueue, rows};

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
