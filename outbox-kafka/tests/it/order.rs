//! Per-key order carried into Kafka: drained in key order, each key's entries are appended
//! to its partition in commit order, however many emissions are in flight and however
//! long each takes to reach the producer.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use outbox_core::async_trait;
use outbox_core::drain::{Drain, DrainOptions, Emission, EmitOutcome, Emitter};
use outbox_kafka::KafkaEmitter;
use outbox_testkit::emitters::nothing_left_to_send;

use crate::support::{client, enqueue_keyed, outbox, url, TestTopic};

/// Holds each emission 0 to 4 ms (by its id) before producing it, as an emitter doing
/// work of its own first would: without key order, entries of a key overtake each other.
struct Jittered(KafkaEmitter);

#[async_trait]
impl Emitter for Jittered {
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        let ms = u64::try_from(emission.entry.id.as_uuid().as_u128() % 5).unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        self.0.emit(emission).await
    }
}

#[tokio::test]
async fn keyed_entries_keep_commit_order_within_their_partition() {
    let Some(client) = client().await else { return };
    let topic = TestTopic::create(&client, "outbox-order", 4).await;
    let (store, _dir) = outbox(true).await;
    enqueue_keyed(&*store, "orders", 600, 12).await;
    let emitter = Arc::new(Jittered(
        KafkaEmitter::connect(&url(&topic.name, "")).unwrap(),
    ));
    let options = DrainOptions::new()
        .owner("order-test")
        .ordered(true)
        .batch_size(50)
        .emit_concurrency(16)
        .poll_interval(Duration::from_millis(5), Duration::from_millis(20));
    let claims: Arc<dyn outbox_core::ClaimStore> = store.clone();
    let drain = Drain::new(claims, emitter, options).expect("drain");
    let done = || {
        let store = store.clone();
        async move { nothing_left_to_send(&*store).await }
    };
    let summary = tokio::time::timeout(
        Duration::from_secs(60),
        drain.run_until(done, std::future::pending::<()>()),
    )
    .await
    .expect("drained within a minute");
    assert_eq!(summary.delivered, 600, "{summary:?}");

    // Records come back partition by partition in offset order.
    let mut seen: HashMap<String, (i32, Vec<u64>)> = HashMap::new();
    for record in topic.read_all().await {
        let key = record.key.clone().expect("a key");
        let seq: u64 = record.headers["x-seq"].parse().unwrap();
        let (partition, seqs) = seen
            .entry(key.clone())
            .or_insert((record.partition, vec![]));
        assert_eq!(*partition, record.partition, "{key} spans partitions");
        seqs.push(seq);
    }
    assert_eq!(seen.len(), 12);
    for (key, (_, seqs)) in seen {
        assert_eq!(seqs.len(), 50, "{key}");
        assert!(
            seqs.windows(2).all(|w| w[0] < w[1]),
            "{key} out of commit order: {seqs:?}"
        );
    }
    topic.delete().await;
}
