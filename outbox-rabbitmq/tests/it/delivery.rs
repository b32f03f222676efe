//! What reaches the queue, and what the outbox records of it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use outbox_core::drain::{Emission, EmitOutcome, Emitter, RouteFault};
use outbox_core::{EmissionStatus, NewEntry};
use outbox_rabbitmq::{ExchangeSetup, RabbitEmitter, RabbitOptions};
use outbox_testkit::emitters::{
    assert_delivered_once_in_key_order, drain_across_a_missing_destination, enqueue_keyed,
};

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
async fn a_drain_started_before_its_queue_is_bound_holds_the_entries_then_delivers_them_in_key_order(
) {
    let Some(b) = broker().await else { return };
    let q = TestQueue::create(b).await;
    let (store, _dir) = outbox().await;
    let entries = enqueue_keyed(&*store, "orders", 300, 5).await;
    // Routed to keys no queue is bound for, until `create` binds one.
    let url = format!(
        "{}?exchange={}&routing_key=late.{{topic}}",
        amqp_url(),
        q.exchange
    );
    let emitter = Arc::new(RabbitEmitter::connect(&url).await.expect("emitter"));
    let summary =
        drain_across_a_missing_destination(store.clone(), emitter, q.bind("late.#")).await;
    assert_eq!(summary.delivered, 300, "{summary:?}");
    let received = q.read_all().await;
    let received: Vec<_> = received
        .iter()
        .map(|r| (r.message_id.clone(), &r.headers))
        .collect();
    assert_delivered_once_in_key_order(&*store, &entries, &received).await;
    q.delete().await;
}

#[tokio::test]
async fn a_missing_exchange_is_the_route_and_a_topic_amqp_cannot_route_is_the_entry() {
    let Some(b) = broker().await else { return };
    let q = TestQueue::create(b).await;
    let (store, _dir) = outbox().await;
    // An exchange that does not exist (not checked at start-up): held, not failed.
    let entry = enqueue(&*store, "x", 1).await.remove(0);
    let (client, mut options) = RabbitOptions::from_url(&amqp_url()).unwrap();
    options.exchange = format!("{}.missing", q.exchange);
    options.exchange_setup = ExchangeSetup::None;
    let emitter = RabbitEmitter::new(client, options).await.expect("emitter");
    let outcome = emitter
        .emit(Emission {
            entry: &entry,
            delivery_attempt: 1,
            owner: "w",
        })
        .await;
    let EmitOutcome::RouteFailed {
        fault, destination, ..
    } = outcome
    else {
        panic!("{outcome:?}");
    };
    assert_eq!(fault, RouteFault::Missing);
    assert!(destination.contains(".missing"), "{destination}");

    // A topic making a routing key over 255 bytes: this entry's fault, dead-lettered.
    let (store, _dir) = outbox().await;
    let refused = store
        .enqueue_batch(vec![NewEntry::new("t".repeat(252), "x")])
        .await
        .unwrap();
    let emitter = RabbitEmitter::connect(&url(&q)).await.expect("emitter");
    let summary = drain_all(store.clone(), Arc::new(emitter), Duration::from_secs(30)).await;
    assert_eq!(
        (summary.dead_lettered, summary.route_failures),
        (1, 0),
        "{summary:?}"
    );
    let row = store.get(refused[0].id).await.unwrap().unwrap();
    assert_eq!(row.status, EmissionStatus::DeadLettered);
    assert!(row
        .last_error
        .unwrap_or_default()
        .contains("routing key over 255 bytes"));
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
