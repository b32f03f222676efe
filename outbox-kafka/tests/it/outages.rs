//! The broker going away, seen through a proxy in front of a broker of the test's own
//! that advertises the proxy (so every connection the client makes crosses it).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use outbox_core::{AdminClaimStore, EmissionStatus, OutboxEntry};
use outbox_kafka::{KafkaEmitter, ENTRY_ID_HEADER};
use outbox_testkit::emitters::{drain_after_comeback, drain_through_outage, Counting};
use outbox_testkit::kafka::OwnBroker;
use outbox_testkit::tcp_proxy::TcpProxy;

use crate::support::{drain_all, enqueue_keyed, outbox, rows, TestTopic};

/// A broker of the test's own behind a proxy, and a topic on it.
async fn broker_behind_proxy() -> Option<(OwnBroker, TcpProxy, TestTopic)> {
    let addr = OwnBroker::free_addr();
    let proxy = TcpProxy::start(addr).await.expect("proxy");
    let broker = OwnBroker::start(addr, proxy.local_addr()).await?;
    let topic = TestTopic::create(&broker.client().await, "outbox-outage", 2).await;
    Some((broker, proxy, topic))
}

fn emitter_through(proxy: &TcpProxy, topic: &TestTopic) -> Arc<Counting<KafkaEmitter>> {
    let url = format!(
        "kafka://{}?topic={}&ack_timeout=500ms",
        proxy.local_addr(),
        topic.name
    );
    Arc::new(Counting::new(KafkaEmitter::connect(&url).expect("emitter")))
}

/// Every entry delivered and in the topic, and each delivered row naming a record that
/// carries its id: nothing was marked delivered without an acknowledgement.
async fn assert_all_stored(
    topic: &TestTopic,
    store: &dyn AdminClaimStore,
    entries: &[OutboxEntry],
) {
    let received = topic.read_all().await;
    let places: HashMap<_, _> = received
        .iter()
        .map(|r| (format!("{}/{}@{}", topic.name, r.partition, r.offset), r))
        .collect();
    for row in rows(store, entries).await {
        assert_eq!(
            row.status,
            EmissionStatus::Delivered,
            "{:?}",
            row.last_error
        );
        let place = row.provider_message_id.clone().expect("a provider id");
        let record = places
            .get(&place)
            .unwrap_or_else(|| panic!("no record at {place}"));
        assert_eq!(record.headers[ENTRY_ID_HEADER], row.id.to_string());
    }
}

#[tokio::test]
async fn a_broker_lost_mid_drain_costs_retries_not_entries() {
    let Some((_broker, proxy, topic)) = broker_behind_proxy().await else {
        return;
    };
    let (store, _dir) = outbox(false).await;
    let entries = enqueue_keyed(&*store, "orders", 400, 9).await;
    let emitter = emitter_through(&proxy, &topic);

    drain_through_outage(store.clone(), emitter, &proxy).await;
    assert_all_stored(&topic, &*store, &entries).await;
}

#[tokio::test]
async fn a_broker_down_at_start_is_waited_for() {
    let Some((_broker, proxy, topic)) = broker_behind_proxy().await else {
        return;
    };
    let (store, _dir) = outbox(false).await;
    let entries = enqueue_keyed(&*store, "orders", 100, 0).await;
    // Nothing is connected until the first emission: the broker is away from the start.
    let emitter = emitter_through(&proxy, &topic);
    drain_after_comeback(store.clone(), emitter, &proxy).await;
    assert_all_stored(&topic, &*store, &entries).await;
}

#[tokio::test]
async fn a_broker_that_stops_answering_times_out_and_is_reconnected() {
    let Some((_broker, proxy, topic)) = broker_behind_proxy().await else {
        return;
    };
    let (store, _dir) = outbox(false).await;
    let entries = enqueue_keyed(&*store, "orders", 300, 5).await;
    let emitter = emitter_through(&proxy, &topic);
    let silence = async {
        while emitter.delivered() < 50 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        proxy.black_hole();
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        proxy.restore();
    };
    let (summary, ()) = tokio::join!(
        drain_all(store.clone(), emitter.clone(), Duration::from_secs(120)),
        silence
    );
    assert!(
        emitter.failed() > 0,
        "the silence was not seen: {summary:?}"
    );
    assert_eq!(summary.dead_lettered, 0, "{summary:?}");
    assert_all_stored(&topic, &*store, &entries).await;
}
