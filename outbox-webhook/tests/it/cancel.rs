//! A receiver that never answers: the request times out as retryable, and an emission
//! dropped by its caller closes its connection at once.

use std::time::{Duration, Instant};

use outbox_core::drain::EmitOutcome;
use outbox_webhook::{WebhookEmitter, WebhookOptions};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};

use crate::support::{emit_once, one_entry};

/// A listener that accepts and reads, never answering.
async fn silent() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    (listener, url)
}

/// Reads the request's head (up to the blank line) from `socket`.
async fn read_head(socket: &mut TcpStream) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = socket.read(&mut buf).await.expect("read");
        assert!(n > 0, "the client closed before sending its request");
        seen.extend_from_slice(&buf[..n]);
    }
}

#[tokio::test]
async fn a_receiver_that_never_answers_is_a_timeout_and_retryable() {
    let (listener, url) = silent().await;
    let held = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        read_head(&mut socket).await;
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    let emitter = WebhookEmitter::new(WebhookOptions::new(url).timeout(Duration::from_millis(500)))
        .expect("emitter");
    let started = Instant::now();
    match emit_once(&emitter, &one_entry().await).await {
        EmitOutcome::Retryable { error, .. } => {
            assert!(error.contains("no response within"), "{error}")
        }
        other => panic!("expected retryable, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    held.abort();
}

#[tokio::test]
async fn a_dropped_emission_closes_its_connection_at_once() {
    let (listener, url) = silent().await;
    let emitter = WebhookEmitter::new(WebhookOptions::new(url)).expect("emitter");
    let entry = one_entry().await;
    let (head_read, head_seen) = tokio::sync::oneshot::channel();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        read_head(&mut socket).await;
        head_read.send(()).expect("the test waits");
        // The body may follow; then the end of the stream once the client drops it.
        let mut buf = [0u8; 4096];
        loop {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => return Instant::now(),
                Ok(_) => {}
            }
        }
    });
    let emission = emit_once(&emitter, &entry);
    tokio::select! {
        outcome = emission => panic!("the receiver never answers, yet: {outcome:?}"),
        _ = head_seen => {}
    }
    // The emission future is dropped here, mid-request.
    let dropped_at = Instant::now();
    let ended = tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the connection closed within 5 s of the drop (the timeout is 30 s)")
        .expect("server task");
    assert!(ended.duration_since(dropped_at) < Duration::from_secs(2));
}
