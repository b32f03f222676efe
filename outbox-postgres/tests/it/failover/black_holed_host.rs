//! The first host of a connection string that drops every connection attempt (its SYNs go
//! unanswered, as a failed primary's address does): with no `connect_timeout` of its own,
//! the store's reading of the string gives each host 3 s, so the second host is reached
//! well inside a call's deadline instead of never.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use outbox_core::OutboxAdmin;
use outbox_postgres::MULTI_HOST_CONNECT_TIMEOUT;

use crate::support;

/// A loopback address whose accept queue is full and never drained: the kernel drops
/// further SYNs there, so a connection attempt hangs as it does towards a host that is
/// gone. The returned sockets keep it that way while they live.
async fn black_hole() -> (
    SocketAddr,
    tokio::net::TcpListener,
    Vec<std::net::TcpStream>,
) {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket
        .bind("127.0.0.1:0".parse().unwrap())
        .expect("bind on loopback");
    let listener = socket.listen(0).expect("listen");
    let addr = listener.local_addr().unwrap();
    let mut queued = Vec::new();
    loop {
        match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
            Ok(stream) => queued.push(stream),
            Err(_) => break,
        }
        assert!(queued.len() < 16, "the accept queue never filled");
    }
    (addr, listener, queued)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_black_holed_first_host_costs_a_call_the_per_host_timeout_not_its_deadline() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let (hole, _listener, _queued) = black_hole().await;
    let server = support::server_addr(&db.url);
    let url =
        format!("postgres://postgres@{hole},{server}/postgres?target_session_attrs=read-write");

    // The hole is real: the driver alone, with no timeout, is still waiting after 6 s.
    let raw: tokio_postgres::Config = url.parse().unwrap();
    assert!(
        tokio::time::timeout(Duration::from_secs(6), raw.connect(tokio_postgres::NoTls))
            .await
            .is_err(),
        "the black hole answered"
    );

    let started = Instant::now();
    let store = super::store_on_table(&url, "black-holed", 1, &support::table(&db)).await;
    store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .expect("stats through the second host");
    let took = started.elapsed();
    assert!(
        took >= MULTI_HOST_CONNECT_TIMEOUT && took < Duration::from_secs(8),
        "the first call took {took:?}: the first host was not given up on after {MULTI_HOST_CONNECT_TIMEOUT:?}"
    );
}
