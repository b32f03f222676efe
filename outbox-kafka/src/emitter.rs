//! [`KafkaEmitter`]: each entry produced to the partition of its key, delivered once
//! every in-sync replica has it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use outbox_core::async_trait;
use outbox_core::drain::{Emission, EmitOutcome, Emitter, RouteFault};
use outbox_core::OutboxEntry;
use rskafka::client::partition::UnknownTopicHandling;
use rskafka::client::{Client, ClientBuilder};
use rskafka::record::Record;
use rskafka::BackoffConfig;
use tokio::sync::Mutex;

use crate::options::check_broker;
use crate::partitioner::partition_for;
use crate::producer::{Failure, PartitionSender};
use crate::{KafkaError, KafkaOptions};

/// The Kafka header carrying the entry id: the key a consumer dedupes by, since delivery
/// is at least once.
pub const ENTRY_ID_HEADER: &str = "outbox-entry-id";

/// Produces each entry to Kafka and reports it delivered only once the partition's leader
/// has acknowledged it with every in-sync replica (`acks=all`).
///
/// - **Key and partition**: the message key is the entry's partition key, or its id when it
///   has none; the partition is chosen from the key as the Java client's default
///   partitioner does (murmur2), so an aggregate's events share a partition, and with the
///   drain in key order they arrive in commit order.
/// - **Headers**: the entry's headers, and its id as [`ENTRY_ID_HEADER`]; the payload is
///   the value, the entry's creation time the timestamp.
/// - **Pipelined**: the emissions in flight for one partition share a produce request (up
///   to 7 KiB of records) per round trip. A record over about 8 KiB travels alone and
///   waits up to 40 ms for the broker's delayed acknowledgement (the client leaves Nagle's
///   algorithm on), so such records make about 25 a second per partition.
/// - **Outcomes**:
///   - the route's ([`EmitOutcome::RouteFailed`]: the entry is held, no attempt counted,
///     the drain backs off): a topic the brokers do not list or call unknown (`missing`);
///     a topic, cluster or login the broker refuses to authorize (`refused`); brokers that
///     cannot be reached (`unreachable`); no leader, or not the leader (`unavailable`);
///   - the entry's, for good (dead-lettered with the reason): a topic that makes no valid
///     Kafka topic, a message over `max_message_bytes` or refused as too large, a record
///     or timestamp the broker calls invalid, a header clashing with the entry id's;
///   - the entry's, retryable: no acknowledgement within the timeout, any other broker
///     error.
///
///   After a lost connection, a moved leader or a timeout the next emission connects
///   afresh. Partition counts are read again every five minutes.
///
/// The client (rskafka) has no idempotent producer: a request retried after a lost
/// acknowledgement can store a record twice, as a crash between emit and record can.
/// Consumers dedupe by the entry id.
#[derive(Debug)]
pub struct KafkaEmitter {
    brokers: Vec<String>,
    options: KafkaOptions,
    link: Mutex<Option<Arc<Link>>>,
}

/// A connected client, the partition counts it has looked up and a sender per partition.
struct Link {
    client: Client,
    broken: Arc<AtomicBool>,
    partitions: Mutex<HashMap<String, (i32, Instant)>>,
    senders: Mutex<HashMap<(String, i32), Arc<PartitionSender>>>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("broken", &self.broken)
            .finish_non_exhaustive()
    }
}

impl KafkaEmitter {
    /// An emitter for an emitter URL (see [`KafkaOptions::from_url`]). Nothing is
    /// connected yet: a broker that is down does not fail this call, and emissions fail
    /// as retryable until it is up.
    pub fn connect(url: &str) -> Result<Self, KafkaError> {
        let (brokers, options) = KafkaOptions::from_url(url)?;
        Self::new(brokers, options)
    }

    /// An emitter for the bootstrap brokers `brokers` (`host:port`) with `options`.
    pub fn new(brokers: Vec<String>, options: KafkaOptions) -> Result<Self, KafkaError> {
        options.validate()?;
        if brokers.is_empty() {
            return Err(KafkaError::Config("no bootstrap broker".into()));
        }
        for broker in &brokers {
            check_broker(broker)?;
        }
        Ok(Self {
            brokers,
            options,
            link: Mutex::new(None),
        })
    }

    /// The current link, connecting when there is none or the last one broke.
    async fn link(&self) -> Result<Arc<Link>, Failure> {
        let mut slot = self.link.lock().await;
        if let Some(link) = slot.as_ref() {
            if !link.broken.load(Ordering::Relaxed) {
                return Ok(link.clone());
            }
        }
        slot.take();
        let backoff = BackoffConfig {
            init_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(1),
            base: 2.0,
            deadline: Some(self.options.ack_timeout),
        };
        let building = ClientBuilder::new(self.brokers.clone())
            .client_id("outbox")
            .backoff_config(backoff)
            .build();
        // Bounded here too: the slot stays locked while the client connects.
        let brokers = self.brokers.join(",");
        let client = match tokio::time::timeout(self.options.ack_timeout, building).await {
            Ok(Ok(client)) => client,
            Ok(Err(e)) => {
                return Err(Failure::Route(
                    RouteFault::Unreachable,
                    format!("brokers {brokers}"),
                    format!("cannot reach them: {e}"),
                ))
            }
            Err(_) => {
                return Err(Failure::Route(
                    RouteFault::Unreachable,
                    format!("brokers {brokers}"),
                    format!("no answer within {:?}", self.options.ack_timeout),
                ))
            }
        };
        let link = Arc::new(Link {
            client,
            broken: Arc::new(AtomicBool::new(false)),
            partitions: Mutex::new(HashMap::new()),
            senders: Mutex::new(HashMap::new()),
        });
        *slot = Some(link.clone());
        Ok(link)
    }

    async fn produce(&self, entry: &OutboxEntry) -> EmitOutcome {
        let topic = match self.options.topic.render(&entry.topic) {
            Ok(t) => t,
            Err(why) => return EmitOutcome::permanent(why),
        };
        let record = match record(entry, self.options.max_message_bytes) {
            Ok(r) => r,
            Err(why) => return EmitOutcome::permanent(why),
        };
        // Getting a link (waiting for another emission's connect, or connecting) is bounded
        // on its own: a time-out there means no broker answers, the route's fault.
        let link = match tokio::time::timeout(self.options.ack_timeout, self.link()).await {
            Ok(Ok(link)) => link,
            Ok(Err(failure)) => return failure.outcome(),
            Err(_) => {
                return EmitOutcome::route(
                    RouteFault::Unreachable,
                    format!("brokers {}", self.brokers.join(",")),
                    format!("no connection within {:?}", self.options.ack_timeout),
                )
            }
        };
        let acknowledged = tokio::time::timeout(self.options.ack_timeout, async {
            let key = record.key.as_deref().unwrap_or_default();
            let partition = partition_for(key, link.partition_count(&topic).await?);
            let sender = link.sender(&topic, partition, &self.options).await?;
            let offset = sender.send(record).await?;
            Ok::<_, Failure>((partition, offset))
        })
        .await;
        match acknowledged {
            Ok(Ok((partition, offset))) => EmitOutcome::Delivered {
                provider_message_id: Some(format!("{topic}/{partition}@{offset}")),
            },
            Ok(Err(failure)) => failure.outcome(),
            Err(_) => {
                // The client has no timeout of its own: a connection gone quiet would hang
                // the next emission the same way. Start afresh.
                // (Not waiting for the slot: an emission connecting holds it.)
                if let Ok(slot) = self.link.try_lock() {
                    if let Some(link) = slot.as_ref() {
                        link.broken.store(true, Ordering::Relaxed);
                    }
                }
                EmitOutcome::retryable(format!(
                    "no acknowledgement for {topic:?} within {:?}",
                    self.options.ack_timeout
                ))
            }
        }
    }
}

/// How long a topic's partition count is trusted before it is read again (as the Java
/// client's `metadata.max.age.ms`), so partitions added later are used.
const PARTITIONS_MAX_AGE: Duration = Duration::from_secs(300);

impl Link {
    /// How many partitions `topic` has; a topic the broker does not have is a route
    /// failure (it may be created yet).
    async fn partition_count(&self, topic: &str) -> Result<i32, Failure> {
        if let Some((n, read)) = self.partitions.lock().await.get(topic) {
            if read.elapsed() < PARTITIONS_MAX_AGE {
                return Ok(*n);
            }
        }
        let topics = self.client.list_topics().await.map_err(|e| {
            self.broken.store(true, Ordering::Relaxed);
            Failure::Route(
                RouteFault::Unreachable,
                "the brokers".into(),
                format!("cannot read their topics: {e}"),
            )
        })?;
        let found = topics.iter().find(|t| t.name == topic).ok_or_else(|| {
            Failure::Route(
                RouteFault::Missing,
                format!("topic {topic:?}"),
                "the brokers do not have it".into(),
            )
        })?;
        let n = i32::try_from(found.partitions.len()).unwrap_or(i32::MAX);
        if n == 0 {
            return Err(Failure::Route(
                RouteFault::Unavailable,
                format!("topic {topic:?}"),
                "it has no partitions yet".into(),
            ));
        }
        self.partitions
            .lock()
            .await
            .insert(topic.to_owned(), (n, Instant::now()));
        Ok(n)
    }

    /// The sender of `topic`'s `partition`, started on first use.
    async fn sender(
        &self,
        topic: &str,
        partition: i32,
        options: &KafkaOptions,
    ) -> Result<Arc<PartitionSender>, Failure> {
        let key = (topic.to_owned(), partition);
        if let Some(sender) = self.senders.lock().await.get(&key).filter(|s| s.is_open()) {
            return Ok(sender.clone());
        }
        // Found without the lock: finding a leader must not hold up the other partitions.
        let client = self
            .client
            .partition_client(topic, partition, UnknownTopicHandling::Error)
            .await
            .map_err(|e| {
                self.broken.store(true, Ordering::Relaxed);
                Failure::Route(
                    RouteFault::Unavailable,
                    format!("topic {topic:?}"),
                    format!("cannot reach the leader of partition {partition}: {e}"),
                )
            })?;
        let sender = Arc::new(PartitionSender::start(
            client,
            options.ack_timeout,
            self.broken.clone(),
        ));
        let mut senders = self.senders.lock().await;
        match senders.get(&key).filter(|s| s.is_open()) {
            // Another emission started one meanwhile: use it (this one's task ends when
            // `sender` is dropped, its queue closing).
            Some(first) => Ok(first.clone()),
            None => {
                senders.insert(key, sender.clone());
                Ok(sender)
            }
        }
    }
}

/// The entry as a Kafka record: key, value, headers with the entry id, creation time.
fn record(entry: &OutboxEntry, max_bytes: usize) -> Result<Record, String> {
    let mut headers = BTreeMap::new();
    for (name, value) in &entry.headers {
        if name.eq_ignore_ascii_case(ENTRY_ID_HEADER) {
            return Err(format!(
                "header {name:?} is the outbox's own (the entry id)"
            ));
        }
        headers.insert(name.clone(), value.clone().into_bytes());
    }
    headers.insert(
        ENTRY_ID_HEADER.to_owned(),
        entry.id.to_string().into_bytes(),
    );
    let key = entry
        .partition_key
        .clone()
        .unwrap_or_else(|| entry.id.to_string());
    let record = Record {
        key: Some(key.into_bytes()),
        value: Some(entry.payload.clone()),
        headers,
        timestamp: entry.created_at,
    };
    let size = record.approximate_size();
    if size > max_bytes {
        return Err(format!(
            "the message is {size} bytes, over the {max_bytes} bytes allowed (max_message_bytes)"
        ));
    }
    Ok(record)
}

#[async_trait]
impl Emitter for KafkaEmitter {
    fn name(&self) -> &'static str {
        "kafka"
    }

    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        self.produce(emission.entry).await
    }
}
