//! The broker going away, seen through a proxy that cuts the emitter's connection.

use std::collections::HashSet;
use std::sync::Arc;

use outbox_core::{AdminClaimStore, EmissionStatus, OutboxEntry};
use outbox_rabbitmq::RabbitEmitter;
use outbox_testkit::emitters::{drain_after_comeback, drain_through_outage, Counting};
use outbox_testkit::tcp_proxy::TcpProxy;

use crate::support::{amqp_url, broker, enqueue, outbox, rows, TestQueue};

/// The broker's address, from the test URL.
fn upstream() -> std::net::SocketAddr {
    let url = amqp_url();
    let rest = url.split("://").nth(1).unwrap_or_default();
    let host = rest
        .rsplit('@')
        .next()
        .unwrap_or_default()
        .split('/')
        .next()
        .unwrap_or_default();
    std::net::ToSocketAddrs::to_socket_addrs(host)
        .expect("the broker's address")
        .next()
        .expect("an address")
}

/// `amqp_url()` with its host and port replaced by the proxy's.
fn through(proxy: &TcpProxy, q: &TestQueue) -> String {
    let url = amqp_url();
    let (scheme, rest) = url.split_once("://").unwrap();
    let (auth, path) = match rest.rsplit_once('@') {
        Some((auth, hostpath)) => (
            format!("{auth}@"),
            hostpath.split_once('/').map_or("", |p| p.1).to_owned(),
        ),
        None => (
            String::new(),
            rest.split_once('/').map_or("", |p| p.1).to_owned(),
        ),
    };
    format!(
        "{scheme}://{auth}{}/{path}?exchange={}&routing_key=bound.{{topic}}&ack_timeout=500ms",
        proxy.local_addr(),
        q.exchange
    )
}

/// Every entry delivered, and every one in the queue at least once: a publish whose
/// confirm was lost is sent again (with the same message id), never lost.
async fn assert_all_arrived(q: &TestQueue, store: &dyn AdminClaimStore, entries: &[OutboxEntry]) {
    let received = q.read_all().await;
    let ids: HashSet<_> = received.iter().map(|r| r.message_id.clone()).collect();
    for row in rows(store, entries).await {
        assert_eq!(
            row.status,
            EmissionStatus::Delivered,
            "{:?}",
            row.last_error
        );
        assert!(
            ids.contains(&row.id.to_string()),
            "entry {} never arrived",
            row.id
        );
    }
    assert_eq!(ids.len(), entries.len(), "messages of other entries");
}

#[tokio::test]
async fn a_broker_lost_mid_drain_costs_retries_not_entries() {
    let Some(b) = broker().await else { return };
    let q = TestQueue::create(b).await;
    let proxy = TcpProxy::start(upstream()).await.expect("proxy");
    let (store, _dir) = outbox().await;
    let entries = enqueue(&*store, "orders", 400).await;
    let emitter = Arc::new(Counting::new(
        RabbitEmitter::connect(&through(&proxy, &q))
            .await
            .expect("emitter"),
    ));
    drain_through_outage(store.clone(), emitter, &proxy).await;
    assert_all_arrived(&q, &*store, &entries).await;
    q.delete().await;
}

#[tokio::test]
async fn a_broker_down_at_start_is_waited_for() {
    let Some(b) = broker().await else { return };
    let q = TestQueue::create(b).await;
    let proxy = TcpProxy::start(upstream()).await.expect("proxy");
    let (store, _dir) = outbox().await;
    let entries = enqueue(&*store, "orders", 100).await;
    // The emitter checks its exchange at start-up, so it is built while the broker is
    // reachable; the broker then goes away before the drain starts (the helper cuts it).
    let emitter = Arc::new(
        RabbitEmitter::connect(&through(&proxy, &q))
            .await
            .expect("emitter"),
    );
    drain_after_comeback(store.clone(), emitter, &proxy).await;
    assert_all_arrived(&q, &*store, &entries).await;
    q.delete().await;
}
