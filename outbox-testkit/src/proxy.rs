//! A loopback TCP proxy between a client and a database server, for tests and benches.
//!
//! It forwards bytes both ways, can hold every chunk back by a fixed one-way delay (the
//! kernel here has no netem, so this is how latency is injected), and reads the
//! PostgreSQL frontend protocol on the way to the server to count what a call really
//! cost: each simple `Query` or extended-protocol `Execute` is one command, and each
//! `Query` or `Sync` is one round trip. The counts are taken outside the store, so a
//! store cannot misreport its own cost.
//!
//! It can also lose a reply: [`PgProxy::lose_next_reply`] makes the next bytes the server
//! sends vanish and closes the client's connection, while the server side stays open
//! until the server has finished what it was sent. The client sees a broken connection
//! after the server did the work: the case of a commit whose acknowledgement never came.
//!
//! Only the client's messages are parsed. A startup packet (no type byte) is read by its
//! length; an `SSLRequest` or `GSSENCRequest` is forwarded and the next packet is read as
//! a startup packet again (a server that accepted encryption would make the rest opaque:
//! use plain connections through the proxy); a `CancelRequest` is forwarded as is.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio::time::Instant;

/// How the proxy treats the traffic it forwards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProxyConfig {
    /// Every chunk, in each direction, is delivered this long after it was read, so a
    /// request/response round trip gains twice this. Zero forwards at once.
    pub one_way_delay: Duration,
}

impl ProxyConfig {
    /// Forwards without delay.
    pub fn new() -> Self {
        Self::default()
    }

    /// Delays every chunk by `delay` in each direction.
    pub fn one_way_delay(mut self, delay: Duration) -> Self {
        self.one_way_delay = delay;
        self
    }

    /// Adds `latency` to every round trip (half of it in each direction).
    pub fn round_trip_latency(self, latency: Duration) -> Self {
        self.one_way_delay(latency / 2)
    }
}

/// What clients sent through the proxy so far, as PostgreSQL frontend messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PgTraffic {
    /// Simple queries (`Q`) plus extended-protocol executes (`E`).
    pub commands: u64,
    /// Simple queries (`Q`) plus syncs (`S`): the times a client waited for the server.
    pub round_trips: u64,
    /// Connections accepted (cancel requests included).
    pub connections: u64,
}

impl PgTraffic {
    /// The traffic between `earlier` and `self`.
    pub fn since(&self, earlier: &PgTraffic) -> PgTraffic {
        PgTraffic {
            commands: self.commands - earlier.commands,
            round_trips: self.round_trips - earlier.round_trips,
            connections: self.connections - earlier.connections,
        }
    }
}

#[derive(Debug, Default)]
struct Counters {
    commands: AtomicU64,
    round_trips: AtomicU64,
    connections: AtomicU64,
    /// Armed by [`PgProxy::lose_next_reply`]; the first server chunk to arrive disarms it.
    lose_reply: AtomicBool,
}

impl Counters {
    fn message(&self, kind: u8) {
        match kind {
            b'Q' => {
                self.commands.fetch_add(1, Ordering::SeqCst);
                self.round_trips.fetch_add(1, Ordering::SeqCst);
            }
            b'E' => {
                self.commands.fetch_add(1, Ordering::SeqCst);
            }
            b'S' => {
                self.round_trips.fetch_add(1, Ordering::SeqCst);
            }
            _ => {}
        }
    }
}

/// A running proxy; it stops (and drops every connection through it) when dropped.
#[derive(Debug)]
pub struct PgProxy {
    addr: SocketAddr,
    counters: Arc<Counters>,
    tasks: Arc<Mutex<Vec<AbortHandle>>>,
}

impl PgProxy {
    /// Listens on a free loopback port and forwards every connection to `upstream`.
    pub async fn start(upstream: SocketAddr, config: ProxyConfig) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let counters = Arc::new(Counters::default());
        let tasks = Arc::new(Mutex::new(Vec::new()));
        let accept = {
            let (counters, tasks) = (counters.clone(), tasks.clone());
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    counters.connections.fetch_add(1, Ordering::SeqCst);
                    let conn = tokio::spawn(serve(client, upstream, config, counters.clone()));
                    lock(&tasks).push(conn.abort_handle());
                }
            })
        };
        lock(&tasks).push(accept.abort_handle());
        Ok(Self {
            addr,
            counters,
            tasks,
        })
    }

    /// The address clients connect to instead of the server.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Loses the next reply any server sends through the proxy: the bytes are dropped,
    /// the client's connection is closed, and the server's connection is kept until the
    /// server has finished the work already sent to it (it then sees the client leave).
    pub fn lose_next_reply(&self) {
        self.counters.lose_reply.store(true, Ordering::SeqCst);
    }

    /// True while a reply loss is armed and no reply has been lost to it yet.
    pub fn reply_loss_pending(&self) -> bool {
        self.counters.lose_reply.load(Ordering::SeqCst)
    }

    /// The traffic counted so far.
    pub fn traffic(&self) -> PgTraffic {
        PgTraffic {
            commands: self.counters.commands.load(Ordering::SeqCst),
            round_trips: self.counters.round_trips.load(Ordering::SeqCst),
            connections: self.counters.connections.load(Ordering::SeqCst),
        }
    }
}

impl Drop for PgProxy {
    fn drop(&mut self) {
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

async fn serve(
    client: TcpStream,
    upstream: SocketAddr,
    config: ProxyConfig,
    counters: Arc<Counters>,
) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let mut parser = FrontendParser::default();
    let cut = Arc::new(AtomicBool::new(false));
    let to_server = {
        let counters = counters.clone();
        pump(
            client_read,
            server_write,
            config.one_way_delay,
            move |chunk| {
                parser.feed(chunk, &counters);
                Verdict::Forward
            },
        )
    };
    let to_client = {
        let cut = cut.clone();
        pump(server_read, client_write, config.one_way_delay, move |_| {
            if counters.lose_reply.swap(false, Ordering::SeqCst) {
                cut.store(true, Ordering::SeqCst);
                Verdict::Cut
            } else {
                Verdict::Forward
            }
        })
    };
    tokio::pin!(to_server, to_client);
    // Either side closing ends the connection, as it would without the proxy; after a
    // lost reply the server keeps its side until it has finished and closed it.
    tokio::select! {
        _ = &mut to_server => {
            if cut.load(Ordering::SeqCst) {
                to_client.await;
            }
        }
        _ = &mut to_client => {}
    }
}

/// What a pump does with the chunk it was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Deliver it.
    Forward,
    /// Drop it and everything after it, and close the receiving side.
    Cut,
}

/// Copies `from` to `to`, showing each chunk to `inspect` and delivering it `delay`
/// after it was read; chunks keep their order and never wait for one another. After a
/// [`Verdict::Cut`] it closes `to` and reads `from` to its end without forwarding.
async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    delay: Duration,
    mut inspect: impl FnMut(&[u8]) -> Verdict + Send,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let writer = async move {
        while let Some((due, chunk)) = rx.recv().await {
            // The timer wheel fires on millisecond ticks even for a deadline already
            // passed: skip it then, or a proxy without delay would add a tick each way.
            if due > Instant::now() {
                tokio::time::sleep_until(due).await;
            }
            if to.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    };
    let reader = async move {
        let mut buf = vec![0u8; 64 * 1024];
        let mut tx = Some(tx);
        loop {
            match from.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    let Some(sender) = &tx else { continue };
                    if inspect(&buf[..n]) == Verdict::Cut {
                        tx = None; // the writer shuts `to` down once the channel closes
                        continue;
                    }
                    if sender
                        .send((Instant::now() + delay, buf[..n].to_vec()))
                        .is_err()
                    {
                        return;
                    }
                }
            }
        }
    };
    // The writer drains what the reader queued before the reader's end closes the channel.
    tokio::join!(reader, writer);
}

/// The protocol version 3.0 code of a startup packet.
const PROTOCOL_3: i32 = 196_608;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Untyped packets: length, then a code (startup, SSL, GSS or cancel request).
    #[default]
    Startup,
    /// Typed messages: one type byte, then a length that counts itself.
    Typed,
}

/// Splits the client's byte stream into messages, whatever the chunking.
#[derive(Debug, Default)]
struct FrontendParser {
    phase: Phase,
    header: [u8; 8],
    header_len: usize,
    skip: usize,
}

impl FrontendParser {
    fn feed(&mut self, mut data: &[u8], counters: &Counters) {
        while !data.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(data.len());
                self.skip -= n;
                data = &data[n..];
                continue;
            }
            let need = match self.phase {
                Phase::Startup => 8,
                Phase::Typed => 5,
            };
            let n = (need - self.header_len).min(data.len());
            self.header[self.header_len..self.header_len + n].copy_from_slice(&data[..n]);
            self.header_len += n;
            data = &data[n..];
            if self.header_len < need {
                return;
            }
            self.header_len = 0;
            let h = self.header;
            match self.phase {
                Phase::Startup => {
                    let len = i32::from_be_bytes([h[0], h[1], h[2], h[3]]);
                    let code = i32::from_be_bytes([h[4], h[5], h[6], h[7]]);
                    self.skip = usize::try_from(len).unwrap_or(0).saturating_sub(8);
                    if code == PROTOCOL_3 {
                        self.phase = Phase::Typed;
                    }
                }
                Phase::Typed => {
                    let len = i32::from_be_bytes([h[1], h[2], h[3], h[4]]);
                    self.skip = usize::try_from(len).unwrap_or(0).saturating_sub(4);
                    counters.message(h[0]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn startup() -> Vec<u8> {
        let body = b"user\0postgres\0\0";
        let mut m = Vec::new();
        m.extend_from_slice(&(8 + i32::try_from(body.len()).unwrap()).to_be_bytes());
        m.extend_from_slice(&PROTOCOL_3.to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn typed(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![kind];
        m.extend_from_slice(&(4 + i32::try_from(body.len()).unwrap()).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn stream() -> Vec<u8> {
        let mut s = Vec::new();
        // An SSL request the server refuses, then the real startup packet.
        s.extend_from_slice(&8i32.to_be_bytes());
        s.extend_from_slice(&80_877_103i32.to_be_bytes());
        s.extend(startup());
        s.extend(typed(b'Q', b"SELECT 1\0"));
        // Extended protocol: parse, describe, sync (a prepare), then bind, execute, sync.
        // The bodies hold bytes that look like message types on purpose.
        s.extend(typed(b'P', b"\0SELECT 'QES'\0\0\0"));
        s.extend(typed(b'D', b"S\0"));
        s.extend(typed(b'S', b""));
        s.extend(typed(b'B', b"\0\0\0\0\0\0\0\0"));
        s.extend(typed(b'E', b"\0\0\0\0\0"));
        s.extend(typed(b'S', b""));
        s.extend(typed(b'X', b""));
        s
    }

    fn counted(counters: &Counters) -> (u64, u64) {
        (
            counters.commands.load(Ordering::SeqCst),
            counters.round_trips.load(Ordering::SeqCst),
        )
    }

    #[test]
    fn counts_commands_and_round_trips_in_one_chunk() {
        let counters = Counters::default();
        FrontendParser::default().feed(&stream(), &counters);
        assert_eq!(counted(&counters), (2, 3));
    }

    #[test]
    fn counts_the_same_whatever_the_chunking() {
        let data = stream();
        for size in [1, 2, 3, 5, 7, 13] {
            let counters = Counters::default();
            let mut parser = FrontendParser::default();
            for chunk in data.chunks(size) {
                parser.feed(chunk, &counters);
            }
            assert_eq!(counted(&counters), (2, 3), "chunks of {size}");
        }
    }
}
