//! What reaches the topic, and what the outbox records of it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use outbox_core::drain::{Emission, EmitOutcome, Emitter};
use outbox_core::{EmissionStatus, NewEntry};
use outbox_kafka::{partition_for, KafkaEmitter, ENTRY_ID_HEADER};

use crate::support::{client, drain_all, enqueue_keyed, outbox, rows, url, TestTopic};
use outbox_testkit::emitters::{
    assert_delivered_once_in_key_order, drain_across_a_missing_destination,
};

#[tokio::test]
async fn a_drained_backlog_arrives_once_with_its_key_headers_and_payload() {
    let Some(client) = client().await else { return };
    let topic = TestTopic::create(&client, "outbox-t", 3).await;
    let (store, _dir) = outbox(false).await;
    let mut entries = enqueue_keyed(&*store, "orders.created", 200, 7).await;
    entries.extend(enqueue_keyed(&*store, "orders.created", 100, 0).await);
    // Records larger than a request's share: each travels alone.
    let large = (0..3)
        .map(|i| NewEntry::new("orders.created", vec![b'a' + i; 60_000]).partition_key("big"))
        .collect();
    entries.extend(store.enqueue_batch(large).await.expect("enqueue"));
    let emitter = Arc::new(KafkaEmitter::connect(&url(&topic.name, "")).expect("emitter"));

    let summary = drain_all(store.clone(), emitter, Duration::from_secs(60)).await;
    assert_eq!(summary.delivered, 303, "{summary:?}");

    let received = topic.read_all().await;
    assert_eq!(received.len(), 303, "records in the topic");
    let by_id: HashMap<_, _> = received
        .iter()
        .map(|r| (r.headers[ENTRY_ID_HEADER].clone(), r))
        .collect();
    assert_eq!(by_id.len(), 303, "each entry once");
    for row in rows(&*store, &entries).await {
        assert_eq!(row.status, EmissionStatus::Delivered);
        let got = by_id[&row.id.to_string()];
        assert_eq!(got.payload, row.payload);
        let key = row.partition_key.clone().unwrap_or(row.id.to_string());
        assert_eq!(got.key.as_deref(), Some(key.as_str()), "the key");
        assert_eq!(got.partition, partition_for(key.as_bytes(), 3), "{key}");
        let mut headers = got.headers.clone();
        headers.remove(ENTRY_ID_HEADER);
        assert_eq!(headers, row.headers);
        // The provider id names the stored record: topic, partition and offset.
        assert_eq!(
            row.provider_message_id,
            Some(format!("{}/{}@{}", topic.name, got.partition, got.offset))
        );
    }
    topic.delete().await;
}

#[tokio::test]
async fn entries_that_cannot_be_produced_are_dead_lettered_with_the_reason() {
    let Some(client) = client().await else { return };
    let topic = TestTopic::create(&client, "outbox-t", 1).await;
    let (store, _dir) = outbox(false).await;
    let mut cases = Vec::new();
    for (entry, says) in [
        (NewEntry::new("two words", "x"), "no valid Kafka topic"),
        (
            NewEntry::new(topic.name.clone(), vec![b'x'; 3_000]),
            "over the 2000 bytes",
        ),
        (
            NewEntry::new(topic.name.clone(), "x").header(ENTRY_ID_HEADER, "mine"),
            "the outbox's own",
        ),
    ] {
        let row = store.enqueue_batch(vec![entry]).await.expect("enqueue");
        cases.push((row[0].id, says));
    }
    let fine = enqueue_keyed(&*store, &topic.name, 5, 0).await;
    let emitter = KafkaEmitter::connect(&url("{topic}", "&max_message_bytes=2000")).unwrap();
    let summary = drain_all(store.clone(), Arc::new(emitter), Duration::from_secs(30)).await;
    assert_eq!(
        (summary.dead_lettered, summary.delivered),
        (3, 5),
        "{summary:?}"
    );
    for (id, says) in cases {
        let row = store.get(id).await.unwrap().unwrap();
        assert_eq!(row.status, EmissionStatus::DeadLettered, "{says}");
        let error = row.last_error.unwrap_or_default();
        assert!(error.contains(says), "wanted {says:?} in {error:?}");
    }
    assert_eq!(
        topic.read_all().await.len(),
        fine.len(),
        "only the fine ones"
    );
    topic.delete().await;
}

#[tokio::test]
async fn a_drain_started_before_its_topic_holds_the_entries_then_delivers_them_in_key_order() {
    let Some(client) = client().await else { return };
    let (store, _dir) = outbox(true).await;
    let name = TestTopic::fresh_name("outbox-late");
    let entries = outbox_testkit::emitters::enqueue_keyed(&*store, "orders", 300, 5).await;
    let emitter = Arc::new(KafkaEmitter::connect(&url(&name, "")).expect("emitter"));
    let (tx, rx) = tokio::sync::oneshot::channel();
    let create = async {
        let _ = tx.send(TestTopic::create_as(&client, name.clone(), 3).await);
    };
    let summary = drain_across_a_missing_destination(store.clone(), emitter, create).await;
    let topic = rx.await.expect("the topic");
    assert_eq!(summary.delivered, 300, "{summary:?}");
    let received = topic.read_all().await;
    let received: Vec<_> = received
        .iter()
        .map(|r| (r.headers[ENTRY_ID_HEADER].clone(), &r.headers))
        .collect();
    assert_delivered_once_in_key_order(&*store, &entries, &received).await;
    topic.delete().await;
}

#[tokio::test]
async fn an_entry_emitted_again_carries_the_same_id() {
    let Some(client) = client().await else { return };
    let topic = TestTopic::create(&client, "outbox-t", 2).await;
    let (store, _dir) = outbox(false).await;
    let entry = enqueue_keyed(&*store, "orders", 1, 1).await.remove(0);
    let emitter = KafkaEmitter::connect(&url(&topic.name, "")).unwrap();
    // The first worker produced, then died before recording; a second worker, after the
    // lease ran out, emits the same entry again.
    let emission = |attempt| Emission {
        entry: &entry,
        delivery_attempt: attempt,
        owner: "w",
    };
    let first = emitter.emit(emission(1)).await;
    let second = emitter.emit(emission(2)).await;
    assert!(matches!(first, EmitOutcome::Delivered { .. }), "{first:?}");
    assert!(
        matches!(second, EmitOutcome::Delivered { .. }),
        "{second:?}"
    );
    let received = topic.read_all().await;
    assert_eq!(received.len(), 2, "Kafka keeps both copies");
    for copy in &received {
        assert_eq!(copy.headers[ENTRY_ID_HEADER], entry.id.to_string());
        assert_eq!(copy.key.as_deref(), Some("key-0"));
    }
    assert_eq!(
        received[0].partition, received[1].partition,
        "one key, one partition"
    );
    topic.delete().await;
}
