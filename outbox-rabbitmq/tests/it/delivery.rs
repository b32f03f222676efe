//! What reaches the queue, and what the outbox records of it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use outbox_core::drain::{Emission, EmitOutcome, Emitter};
use outbox_core::EmissionStatus;
use outbox_rabbitmq::{ExchangeSetup, RabbitEmitter, RabbitOptions};

use crate::support::{amqp_url, broker, drain_all, enqueue, outbox, rows, TestQueue};

fn url(q: &TestQueue) -> String {
    format!(
        "{}?exchange={}&routing_key=bound.{{topic}}",
        amqp_url(),
        q.exchange
    )
}

#[tokio::test]
async fn a_drained_backlog_arrives_once_as_committed() {
    let Some(b) = broker().await else { return };
    let q = TestQueue::create(b).await;
    let (store, _dir) = outbox().await;
    let entries = enqueue(&*store, "orders.created", 300).await;
    let emitter = Arc::new(RabbitEmitter::connect(&url(&q)).await.expect("emitter"));

    let summary = drain_all(store.clone(), emitter, Duration::from_secs(60)).await;
    assert_eq!(summary.delivered, 300, "{summary:?}");

    let received = q.read_all().await;
    assert_eq!(received.len(), 300, "messages in the queue");
    let by_id: HashMap<_, _> = received.iter().map(|r| (r.message_id.clone(), r)).collect();
    assert_eq!(by_id.len(), 300, "each entry once");
    for row in rows(&*store, &entries).await {
        assert_eq!(row.status, EmissionStatus::Delivered);
        let got = by_id[&row.id.to_string()];
        assert_eq!(got.payload, row.payload);
        assert_eq!(got.headers, row.headers);
        assert!(got.persistent, "persistent delivery mode");
        assert_eq!(got.routing_key, "bound.orders.created");
    }
    q.delete().await;
}

#[tokio::test]
async fn an_entry_emitted_again_carries_the_same_message_id() {
    let Some(b) = broker().await else { return };
    let q = TestQueue::create(b).await;
    let (store, _dir) = outbox().await;
    let entry = enqueue(&*store, "orders.created", 1).await.remove(0);
    let emitter = RabbitEmitter::connect(&url(&q)).await.expect("emitter");
    // The first worker published, then died before recording; a second worker, after the
    // lease ran out, emits the same entry again. RabbitMQ keeps both; the consumer
    // collapses them by message id.
    for attempt in [1, 1] {
        let outcome = emitter
            .emit(Emission {
                entry: &entry,
                delivery_attempt: attempt,
                owner: "w",
            })
            .await;
        assert_eq!(outcome, EmitOutcome::delivered());
    }
    let received = q.read_all().await;
    assert_eq!(received.len(), 2);
    let ids: HashSet<_> = received.iter().map(|r| r.message_id.as_str()).collect();
    assert_eq!(ids, HashSet::from([entry.id.to_string().as_str()]));
    q.delete().await;
}

#[tokio::test]
async fn unroutable_messages_and_missing_exchanges_are_dead_lettered_with_the_reason() {
    let Some(b) = broker().await else { return };
    let q = TestQueue::create(b).await;
    let (store, _dir) = outbox().await;
    // Routed to a key no queue is bound for.
    let unroutable = enqueue(&*store, "nobody.listens", 2).await;
    let emitter = RabbitEmitter::connect(&format!("{}?exchange={}", amqp_url(), q.exchange))
        .await
        .expect("emitter");
    let summary = drain_all(store.clone(), Arc::new(emitter), Duration::from_secs(30)).await;
    assert_eq!(summary.dead_lettered, 2, "{summary:?}");
    for row in rows(&*store, &unroutable).await {
        assert_eq!(row.status, EmissionStatus::DeadLettered);
        let error = row.last_error.unwrap_or_default();
        assert!(error.contains("unroutable"), "{error}");
    }

    // An exchange that does not exist (not checked at start-up).
    let missing = enqueue(&*store, "x", 2).await;
    let (client, mut options) = RabbitOptions::from_url(&amqp_url()).unwrap();
    options.exchange = format!("{}.missing", q.exchange);
    options.exchange_setup = ExchangeSetup::None;
    let emitter = RabbitEmitter::new(client, options).await.expect("emitter");
    let summary = drain_all(store.clone(), Arc::new(emitter), Duration::from_secs(30)).await;
    assert_eq!(summary.dead_lettered, 2, "{summary:?}");
    for row in rows(&*store, &missing).await {
        let error = row.last_error.unwrap_or_default();
        assert!(error.contains("does not exist"), "{error}");
    }
    q.delete().await;
}

#[tokio::test]
async fn the_exchange_is_checked_or_declared_at_start_up() {
    let Some(b) = broker().await else { return };
    let q = TestQueue::create(b).await;
    let name = format!("{}.declared", q.exchange);
    let check = format!("{}?exchange={name}", amqp_url());
    let err = RabbitEmitter::connect(&check)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains(&name), "{err}");
    RabbitEmitter::connect(&format!("{check}&declare_exchange=true"))
        .await
        .expect("declared");
    RabbitEmitter::connect(&check)
        .await
        .expect("the check passes now");
    let _ = q
        .channel
        .exchange_delete(name.as_str().into(), Default::default())
        .await;
    q.delete().await;
}

#[tokio::test]
async fn an_exchange_template_gives_each_topic_its_exchange() {
    let Some(b) = broker().await else { return };
    let q = TestQueue::create(b).await;
    let (store, _dir) = outbox().await;
    // The test's exchange is `outbox.t.<tag>`: entries of topic `<tag>` go there.
    let tag = q.exchange.trim_start_matches("outbox.t.").to_owned();
    let entries = enqueue(&*store, &tag, 5).await;
    let url = format!(
        "{}?exchange=outbox.t.{{topic}}&routing_key=bound.x",
        amqp_url()
    );
    let emitter = RabbitEmitter::connect(&url).await.expect("emitter");
    let summary = drain_all(store.clone(), Arc::new(emitter), Duration::from_secs(30)).await;
    assert_eq!(summary.delivered, 5, "{summary:?}");
    let received = q.read_all().await;
    let ids: HashSet<_> = received.iter().map(|r| r.message_id.clone()).collect();
    let expected: HashSet<_> = entries.iter().map(|e| e.id.to_string()).collect();
    assert_eq!(ids, expected);
    q.delete().await;
}
