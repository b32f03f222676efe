//! The loopback proxy's cut closes every connection it forwards, whatever else was asked
//! of it first.
#![cfg(feature = "proxy")]

use std::time::Duration;

use outbox_testkit::tcp_proxy::TcpProxy;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// An upstream that echoes what it reads, one connection at a time.
async fn echo_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 64];
                while let Ok(n) = socket.read(&mut buf).await {
                    if n == 0 || socket.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    addr
}

/// A connection through the proxy that has carried one round trip, so it is forwarded.
async fn forwarded(proxy: &TcpProxy) -> TcpStream {
    let mut client = TcpStream::connect(proxy.local_addr())
        .await
        .expect("connect");
    client.write_all(b"x").await.expect("write");
    let mut byte = [0u8; 1];
    client.read_exact(&mut byte).await.expect("echo");
    client
}

/// Black-holing then cutting, back to back, before the forwarding task runs (one thread,
/// so it cannot run in between): the task sees both at once and must honour the cut. The
/// listener test relies on it; picking the black hole and forgetting the cut left the
/// connection open, a coin toss per run. Twenty tries make a regression near certain.
#[tokio::test(flavor = "current_thread")]
async fn a_cut_right_after_a_black_hole_still_closes_the_connection() {
    let upstream = echo_server().await;
    for attempt in 0..20 {
        let proxy = TcpProxy::start(upstream).await.expect("proxy");
        let mut client = forwarded(&proxy).await;
        proxy.black_hole();
        proxy.cut();
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(Duration::from_secs(5), client.read(&mut byte)).await;
        assert!(
            matches!(read, Ok(Ok(0)) | Ok(Err(_))),
            "try {attempt}: the cut left the connection open ({read:?})"
        );
    }
}

/// Black-holed alone, a forwarded connection stays open and silent.
#[tokio::test(flavor = "current_thread")]
async fn a_black_hole_answers_nothing_and_closes_nothing() {
    let proxy = TcpProxy::start(echo_server().await).await.expect("proxy");
    let mut client = forwarded(&proxy).await;
    proxy.black_hole();
    tokio::task::yield_now().await;
    client.write_all(b"y").await.expect("write into the hole");
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_millis(300), client.read(&mut byte)).await;
    assert!(read.is_err(), "a black hole answered or closed: {read:?}");
}
