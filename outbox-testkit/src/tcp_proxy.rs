//! A loopback TCP proxy for any protocol, whose connection to the server can be cut and
//! restored (a broker going away and coming back, as its clients see it), or black-holed:
//! a server that stops answering without closing anything, as a network partition, a
//! frozen machine or a firewall that drops packets looks to its clients.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Forwards each connection it accepts to `upstream` until cut or black-holed.
#[derive(Debug)]
pub struct TcpProxy {
    addr: SocketAddr,
    up: Arc<AtomicBool>,
    holes: Arc<AtomicBool>,
    cuts: watch::Sender<u64>,
    black_holes: watch::Sender<u64>,
    accept: tokio::task::JoinHandle<()>,
}

impl TcpProxy {
    /// Listens on a free loopback port, forwarding to `upstream`.
    pub async fn start(upstream: SocketAddr) -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let up = Arc::new(AtomicBool::new(true));
        let holes = Arc::new(AtomicBool::new(false));
        let (cuts, _) = watch::channel(0u64);
        let (black_holes, _) = watch::channel(0u64);
        let accept = {
            let up = Arc::clone(&up);
            let holes = Arc::clone(&holes);
            let cuts = cuts.clone();
            let black_holes = black_holes.clone();
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    if holes.load(Ordering::SeqCst) {
                        // Black-holed: accepted, then never answered.
                        tokio::spawn(swallow(client, cuts.subscribe()));
                        continue;
                    }
                    if !up.load(Ordering::SeqCst) {
                        // Down: the connection is accepted and closed at once.
                        drop(client);
                        continue;
                    }
                    let signals = (cuts.subscribe(), black_holes.subscribe());
                    tokio::spawn(forward(client, upstream, signals));
                }
            })
        };
        Ok(Self {
            addr,
            up,
            holes,
            cuts,
            black_holes,
            accept,
        })
    }

    /// The address clients connect to.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Closes every forwarded connection and refuses new ones until [`TcpProxy::restore`].
    pub fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.cuts.send_modify(|n| *n += 1);
    }

    /// Stops forwarding anything, closing nothing: every open connection and every new one
    /// is read and never answered, and the server sees its connections go quiet, until
    /// [`TcpProxy::restore`]. Connections black-holed stay that way after the restore, as
    /// connections a client gave up on do.
    pub fn black_hole(&self) {
        self.holes.store(true, Ordering::SeqCst);
        self.black_holes.send_modify(|n| *n += 1);
    }

    /// Forwards new connections again.
    pub fn restore(&self) {
        self.holes.store(false, Ordering::SeqCst);
        self.up.store(true, Ordering::SeqCst);
    }

    /// An outage: waits until `reached()` says so (polling every 5 ms), cuts, stays down
    /// for `down`, restores.
    pub async fn outage_once(&self, reached: impl Fn() -> bool, down: std::time::Duration) {
        while !reached() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        self.cut();
        tokio::time::sleep(down).await;
        self.restore();
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cuts.send_modify(|n| *n += 1);
    }
}

async fn forward(
    mut client: TcpStream,
    upstream: SocketAddr,
    (mut cuts, mut black_holes): (watch::Receiver<u64>, watch::Receiver<u64>),
) {
    // The receivers were subscribed at accept: a cut or black hole from then on, even one
    // that lands while connecting, applies to this connection.
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
        _ = cuts.changed() => {}
        _ = black_holes.changed() => {
            // The server's side stays open and unread; the client's is read and dropped.
            swallow(client, cuts).await;
            drop(server);
        }
    }
}

/// Reads `client` and drops what it sends, answering nothing, until it closes or the
/// proxy cuts or goes away. A cut `cuts` has not yet been marked as seen counts: a cut
/// that arrives together with the black hole closes the connection.
async fn swallow(mut client: TcpStream, mut cuts: watch::Receiver<u64>) {
    let mut sink = tokio::io::sink();
    tokio::select! {
        _ = tokio::io::copy(&mut client, &mut sink) => {}
        _ = cuts.changed() => {}
    }
}
