//! A loopback TCP proxy for any protocol, whose connection to the server can be cut and
//! restored: a broker going away and coming back, as its clients see it.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Forwards each connection it accepts to `upstream` until cut.
#[derive(Debug)]
pub struct TcpProxy {
    addr: SocketAddr,
    up: Arc<AtomicBool>,
    cuts: watch::Sender<u64>,
    accept: tokio::task::JoinHandle<()>,
}

impl TcpProxy {
    /// Listens on a free loopback port, forwarding to `upstream`.
    pub async fn start(upstream: SocketAddr) -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let up = Arc::new(AtomicBool::new(true));
        let (cuts, _) = watch::channel(0u64);
        let accept = {
            let up = Arc::clone(&up);
            let cuts = cuts.clone();
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    if !up.load(Ordering::SeqCst) {
                        // Down: the connection is accepted and closed at once.
                        drop(client);
                        continue;
                    }
                    tokio::spawn(forward(client, upstream, cuts.subscribe()));
                }
            })
        };
        Ok(Self {
            addr,
            up,
            cuts,
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

    /// Forwards new connections again.
    pub fn restore(&self) {
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

async fn forward(mut client: TcpStream, upstream: SocketAddr, mut cuts: watch::Receiver<u64>) {
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    cuts.mark_unchanged();
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
        _ = cuts.changed() => {}
    }
}
