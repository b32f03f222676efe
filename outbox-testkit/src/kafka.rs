//! The Kafka test broker: `OUTBOX_TEST_KAFKA_URL` (`kafka://host:port`), or the local one
//! on 127.0.0.1:9092 that `scripts/services.sh` starts; topics of a test's own, read back
//! whole; and brokers of a test's own, for tests that cut the connection through a proxy.
//! `OUTBOX_TEST_REQUIRE` names `kafka` to make an unreachable broker a failure.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rskafka::client::partition::{PartitionClient, UnknownTopicHandling};
use rskafka::client::{Client, ClientBuilder};

/// The engine's name in `OUTBOX_TEST_REQUIRE` and in the skip banner.
pub const ENGINE: &str = "kafka";

/// The test broker's emitter URL, without parameters.
pub fn url() -> String {
    std::env::var("OUTBOX_TEST_KAFKA_URL").unwrap_or_else(|_| "kafka://127.0.0.1:9092".into())
}

/// The test broker as `host:port`.
pub fn bootstrap() -> String {
    url()
        .trim_start_matches("kafka://")
        .split(['?', '/'])
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// A client of the test broker, or `None` after a loud report (a failure when Kafka is
/// required).
pub async fn client() -> Option<Arc<Client>> {
    connect(&bootstrap()).await
}

async fn connect(bootstrap: &str) -> Option<Arc<Client>> {
    let built = tokio::time::timeout(
        Duration::from_secs(5),
        ClientBuilder::new(vec![bootstrap.to_owned()]).build(),
    )
    .await;
    match built {
        Ok(Ok(client)) => Some(Arc::new(client)),
        Ok(Err(e)) => {
            crate::engines::unavailable(ENGINE, &format!("{bootstrap}: {e}"));
            None
        }
        Err(_) => {
            crate::engines::unavailable(ENGINE, &format!("{bootstrap}: no answer within 5 s"));
            None
        }
    }
}

/// A topic of this test's own, named `<prefix>-<random>`.
pub struct TestTopic {
    client: Arc<Client>,
    /// Its name.
    pub name: String,
    /// How many partitions it has.
    pub partitions: i32,
}

/// One record as a consumer reads it.
#[derive(Debug, Clone)]
pub struct Received {
    /// The partition it was appended to.
    pub partition: i32,
    /// Its offset in that partition.
    pub offset: i64,
    /// Its key, as text.
    pub key: Option<String>,
    /// Its headers, as text.
    pub headers: BTreeMap<String, String>,
    /// Its value.
    pub payload: Vec<u8>,
}

impl TestTopic {
    /// Creates the topic with `partitions` partitions (replication factor 1).
    pub async fn create(client: &Arc<Client>, prefix: &str, partitions: i32) -> Self {
        Self::create_as(client, Self::fresh_name(prefix), partitions).await
    }

    /// A topic name of this test's own, starting with `prefix`; nothing is created.
    pub fn fresh_name(prefix: &str) -> String {
        let tag = uuid::Uuid::new_v4().simple().to_string();
        format!("{prefix}-{}", &tag[..12])
    }

    /// Creates the topic `name` with `partitions` partitions (replication factor 1).
    pub async fn create_as(client: &Arc<Client>, name: String, partitions: i32) -> Self {
        client
            .controller_client()
            .expect("controller client")
            .create_topic(&name, partitions, 1, 5_000)
            .await
            .expect("create the test topic");
        Self {
            client: client.clone(),
            name,
            partitions,
        }
    }

    async fn partition(&self, partition: i32) -> PartitionClient {
        self.client
            .partition_client(&self.name, partition, UnknownTopicHandling::Retry)
            .await
            .expect("partition client")
    }

    /// Every record of every partition, partition by partition in offset order.
    pub async fn read_all(&self) -> Vec<Received> {
        let mut received = Vec::new();
        for partition in 0..self.partitions {
            let client = self.partition(partition).await;
            let mut offset = 0;
            loop {
                let (records, high_watermark) = client
                    .fetch_records(offset, 1..4_000_000, 200)
                    .await
                    .expect("fetch");
                for r in records {
                    offset = r.offset + 1;
                    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
                    received.push(Received {
                        partition,
                        offset: r.offset,
                        key: r.record.key.map(text),
                        headers: r
                            .record
                            .headers
                            .into_iter()
                            .map(|(k, v)| (k, text(v)))
                            .collect(),
                        payload: r.record.value.unwrap_or_default(),
                    });
                }
                if offset >= high_watermark {
                    break;
                }
            }
        }
        received
    }

    /// Deletes the topic (best effort).
    pub async fn delete(self) {
        if let Ok(controller) = self.client.controller_client() {
            let _ = controller.delete_topic(&self.name, 5_000).await;
        }
    }
}

/// A broker of the test's own: a tansu process with in-memory storage on a loopback port,
/// killed when dropped.
pub struct OwnBroker {
    child: tokio::process::Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl OwnBroker {
    /// A free loopback address to start one at (a proxy can forward to it first).
    pub fn free_addr() -> SocketAddr {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        probe.local_addr().expect("its address")
    }

    /// Starts one listening at `addr` and telling clients to connect at `advertised` (a
    /// proxy in front of it), or `None` after a loud report when the tansu binary is not
    /// installed.
    pub async fn start(addr: SocketAddr, advertised: SocketAddr) -> Option<Self> {
        let Some(binary) = tansu_binary() else {
            crate::engines::unavailable(
                ENGINE,
                "the tansu binary is not installed (scripts/services.sh installs it; \
                 OUTBOX_TEST_TANSU names another)",
            );
            return None;
        };
        let child = tokio::process::Command::new(&binary)
            .args(["broker", "--storage-engine", "memory://tansu/"])
            .arg("--listener-url")
            .arg(format!("tcp://{addr}"))
            .arg("--advertised-listener-url")
            .arg(format!("tcp://{advertised}"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", binary.display()));
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(addr).await.is_ok() {
                return Some(Self { child, addr });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("tansu did not listen on {addr} within 5 s");
    }

    /// A client bootstrapped straight from it; what it connects to after that is the
    /// advertised address (the proxy, if there is one).
    pub async fn client(&self) -> Arc<Client> {
        connect(&self.addr.to_string())
            .await
            .expect("the broker of the test's own answers")
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// The tansu binary: `OUTBOX_TEST_TANSU`, `tansu` on the `PATH`, or cargo's bin directory.
pub fn tansu_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("OUTBOX_TEST_TANSU") {
        return Some(PathBuf::from(path));
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    on_path
        .chain(cargo_home.map(|c| c.join("bin")))
        .map(|dir| dir.join("tansu"))
        .find(|p| p.is_file())
}
