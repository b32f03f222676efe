//! The server going away, seen through a proxy that cuts the client's connection.

use std::sync::Arc;

use outbox_core::EmissionStatus;
use outbox_nats::NatsEmitter;
use outbox_testkit::emitters::{drain_after_comeback, drain_through_outage, Counting};
use outbox_testkit::tcp_proxy::TcpProxy;

use crate::support::{enqueue, nats_url, outbox, rows, server, TestStream};

/// The address of the test server.
fn upstream() -> std::net::SocketAddr {
    let url = nats_url();
    let host = url
        .trim_start_matches("nats://")
        .split(['?', '/'])
        .next()
        .unwrap_or_default();
    std::net::ToSocketAddrs::to_socket_addrs(host)
        .expect("the server's address")
        .next()
        .expect("an address")
}

async fn emitter_through(proxy: &TcpProxy, stream: &TestStream) -> Arc<Counting<NatsEmitter>> {
    let url = format!(
        "nats://{}?subject={}.{{topic}}&ack_timeout=500ms",
        proxy.local_addr(),
        stream.prefix
    );
    Arc::new(Counting::new(
        NatsEmitter::connect(&url).await.expect("emitter"),
    ))
}

/// Every entry delivered, each stored once, and each delivered row naming the message
/// the stream stored for it: nothing was marked delivered without an acknowledgement.
async fn assert_all_stored_once(
    stream: &TestStream,
    store: &dyn outbox_core::AdminClaimStore,
    entries: &[outbox_core::OutboxEntry],
) {
    let received = stream.read_all().await;
    assert_eq!(received.len(), entries.len(), "messages in the stream");
    let by_id: std::collections::HashMap<_, _> = received
        .iter()
        .map(|r| (r.msg_id.clone(), r.sequence))
        .collect();
    assert_eq!(by_id.len(), entries.len(), "each entry once");
    for row in rows(store, entries).await {
        assert_eq!(
            row.status,
            EmissionStatus::Delivered,
            "{:?}",
            row.last_error
        );
        let sequence = by_id[&row.id.to_string()];
        assert_eq!(
            row.provider_message_id,
            Some(format!("{}:{sequence}", stream.name))
        );
    }
}

#[tokio::test]
async fn a_server_lost_mid_drain_costs_retries_not_entries() {
    let Some(client) = server().await else { return };
    let stream = TestStream::create(&client).await;
    let proxy = TcpProxy::start(upstream()).await.expect("proxy");
    let (store, _dir) = outbox().await;
    let entries = enqueue(&*store, "orders", 400).await;
    let emitter = emitter_through(&proxy, &stream).await;

    drain_through_outage(store.clone(), emitter, &proxy).await;
    assert_all_stored_once(&stream, &*store, &entries).await;
    stream.delete().await;
}

#[tokio::test]
async fn a_server_down_at_start_is_waited_for() {
    let Some(client) = server().await else { return };
    let stream = TestStream::create(&client).await;
    let proxy = TcpProxy::start(upstream()).await.expect("proxy");
    proxy.cut();
    let (store, _dir) = outbox().await;
    let entries = enqueue(&*store, "orders", 100).await;
    // Without a stream to set up, the emitter is built while the server is away.
    let emitter = emitter_through(&proxy, &stream).await;
    drain_after_comeback(store.clone(), emitter, &proxy).await;
    assert_all_stored_once(&stream, &*store, &entries).await;
    stream.delete().await;
}
