//! The Python receiver, an outbox, and entries to send.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use base64::Engine as _;
use outbox_core::drain::{Emission, EmitOutcome, Emitter};
use outbox_core::{AdminClaimStore, MemoryClaimStore, OutboxEntry};
use outbox_webhook::WebhookSecret;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub(crate) use outbox_testkit::emitters::{drain_all, enqueue};

/// The name the receiver is required by (`OUTBOX_TEST_REQUIRE=webhook-receiver`).
const ENGINE: &str = "webhook-receiver";

/// A running receiver that accepts what one of its secrets verifies.
pub(crate) struct Receiver {
    _child: Child,
    base: String,
}

impl Receiver {
    /// A receiver verifying with `secrets`, or `None` after a loud report (a failure
    /// when the receiver is required) when Python or its package is missing.
    pub(crate) async fn start(secrets: &[&WebhookSecret]) -> Option<Self> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/receiver.py");
        let spawned = Command::new("python3")
            .arg(script)
            .args(secrets.iter().map(|s| s.to_text()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                outbox_testkit::engines::unavailable(ENGINE, &format!("python3: {e}"));
                return None;
            }
        };
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .await
            .expect("read the port");
        let Ok(port) = line.trim().parse::<u16>() else {
            let out = child
                .wait_with_output()
                .await
                .expect("the receiver's output");
            let why = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            outbox_testkit::engines::unavailable(
                ENGINE,
                &format!("tests/receiver.py did not start (pip install standardwebhooks): {why}"),
            );
            return None;
        };
        // What the receiver says on stderr (a handler's traceback) goes to the test's.
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr")).lines();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                eprintln!("receiver: {line}");
            }
        });
        Some(Self {
            _child: child,
            base: format!("http://127.0.0.1:{port}"),
        })
    }

    /// The URL of `path` on this receiver.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// What it received so far, in arrival order.
    pub(crate) async fn received(&self) -> Vec<Received> {
        let raw: Vec<Raw> = get_json(&self.url("/received")).await;
        raw.into_iter()
            .map(|r| Received {
                body: base64::engine::general_purpose::STANDARD
                    .decode(r.body)
                    .expect("base64 body"),
                headers: r.headers,
                verified: r.verified,
            })
            .collect()
    }
}

#[derive(serde::Deserialize)]
struct Raw {
    headers: BTreeMap<String, String>,
    body: String,
    verified: bool,
}

/// One request as the receiver got it (header names in lower case).
#[derive(Debug)]
pub(crate) struct Received {
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) body: Vec<u8>,
    pub(crate) verified: bool,
}

impl Received {
    /// A header's value, or "".
    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }
}

/// GETs `url` and parses its JSON body, on a plain socket (HTTP/1.0, one request).
async fn get_json<T: serde::de::DeserializeOwned>(url: &str) -> T {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_once('/').expect("a path");
    let mut socket = tokio::net::TcpStream::connect(host).await.expect("connect");
    let request = format!("GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n");
    socket.write_all(request.as_bytes()).await.expect("send");
    let mut response = Vec::new();
    socket.read_to_end(&mut response).await.expect("read");
    let text = String::from_utf8(response).expect("UTF-8 response");
    let (_, body) = text.split_once("\r\n\r\n").expect("a response body");
    serde_json::from_str(body).expect("JSON")
}

/// A 32-byte secret made of `byte`.
pub(crate) fn secret(byte: u8) -> WebhookSecret {
    WebhookSecret::from_key(vec![byte; 32]).expect("secret")
}

/// An in-memory outbox (the core's own store: the emitter is what is tested here).
pub(crate) fn outbox() -> Arc<dyn AdminClaimStore> {
    Arc::new(MemoryClaimStore::new())
}

/// One entry, enqueued in a fresh outbox so it is a real row.
pub(crate) async fn one_entry() -> OutboxEntry {
    enqueue(&*outbox(), "orders.created", 1).await.remove(0)
}

/// What `emitter` says about `entry` on its first attempt.
pub(crate) async fn emit_once(emitter: &dyn Emitter, entry: &OutboxEntry) -> EmitOutcome {
    emitter
        .emit(Emission {
            entry,
            delivery_attempt: 1,
            owner: "webhook-test",
        })
        .await
}
