//! [`PgListener`]: the enqueue wake-up over LISTEN/NOTIFY, on a connection of its own.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use outbox_core::{async_trait, TableName, WakeSignal};
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::{AsyncMessage, SimpleQueryMessage, Socket};

/// The longest channel name PostgreSQL accepts.
const MAX_CHANNEL_BYTES: usize = 63;
/// The first wait before reconnecting; it doubles after each failed attempt.
const MIN_BACKOFF: Duration = Duration::from_millis(50);
/// The longest wait between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How often an idle listener checks that its connection still answers.
const PING_EVERY: Duration = Duration::from_secs(30);
/// How long that check may take before the connection is given up on; also how long
/// connecting and starting to listen may take: a server that stops answering without
/// closing anything would otherwise hold a reconnection attempt for good.
const PING_TIMEOUT: Duration = Duration::from_secs(10);

/// The notification channel enqueues on `table` signal: the schema-qualified table name
/// plus `_wake`, shortened with a hash when it would exceed PostgreSQL's 63 bytes.
pub fn wake_channel(table: &TableName) -> String {
    let full = match table.schema() {
        Some(schema) => format!("{schema}.{}_wake", table.table()),
        None => format!("{}_wake", table.table()),
    };
    if full.len() <= MAX_CHANNEL_BYTES {
        return full;
    }
    // FNV-1a: stable across builds and platforms, unlike the std hasher.
    let hash = full.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    // Validated names are ASCII, so any byte offset is a character boundary.
    format!("{}_{hash:016x}", &full[..MAX_CHANNEL_BYTES - 17])
}

/// One established listening connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenSession {
    /// Counts sessions from 1; a reconnection starts the next number.
    pub number: u64,
    /// The server process serving this session (for `pg_terminate_backend` in tests and
    /// for operators matching it in `pg_stat_activity`).
    pub backend_pid: i32,
}

#[derive(Debug)]
struct Shared {
    notify: Notify,
    waiting: AtomicUsize,
    session: watch::Sender<Option<ListenSession>>,
}

impl Shared {
    fn wake(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.notify.notify_waiters();
        } else {
            // Nobody waits right now: keep one wake-up for the next waiter, so a drain
            // busy with a cycle still polls once more for what was enqueued meanwhile.
            self.notify.notify_one();
        }
    }
}

/// Listens for enqueue notifications of one outbox table on a dedicated connection (not
/// a pooled one: a pooled connection cannot stay in LISTEN), and wakes waiting drains.
///
/// When the connection drops, or a health check every 30 s gets no answer within 10 s,
/// it reconnects with exponential backoff (50 ms doubling up to 5 s; an attempt that gets
/// no answer within 10 s counts as failed) and listens again; every new session also wakes the waiters once, since
/// notifications sent while it was away are lost. A missed notification only delays a
/// drain until its next poll. The background task stops when the listener is dropped.
#[derive(Debug)]
pub struct PgListener {
    channel: String,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl PgListener {
    /// Starts listening for `table`'s channel on connections made from `config` with
    /// `tls`. Returns at once; the connection is made in the background (see
    /// [`PgListener::wait_for_session`]). Must be called inside a Tokio runtime.
    pub fn start<T>(config: tokio_postgres::Config, tls: T, table: &TableName) -> Self
    where
        T: MakeTlsConnect<Socket> + Clone + Send + Sync + 'static,
        T::Stream: Send + 'static,
        T::TlsConnect: Send,
        <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
    {
        let channel = wake_channel(table);
        let listen = include_str!("../sql/listen.sql").replace("{channel}", &quoted(&channel));
        let shared = Arc::new(Shared {
            notify: Notify::new(),
            waiting: AtomicUsize::new(0),
            session: watch::channel(None).0,
        });
        let task = tokio::spawn(run(config, tls, listen, shared.clone()));
        Self {
            channel,
            shared,
            task,
        }
    }

    /// The channel this listener listens on.
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// The current session, `None` while (re)connecting.
    pub fn session(&self) -> Option<ListenSession> {
        *self.shared.session.borrow()
    }

    /// Waits until a session numbered above `after` is listening (pass 0 for the first)
    /// and returns it; `None` if none is established within `timeout`.
    pub async fn wait_for_session(&self, after: u64, timeout: Duration) -> Option<ListenSession> {
        let mut rx = self.shared.session.subscribe();
        let found = async move {
            rx.wait_for(|s| s.is_some_and(|s| s.number > after))
                .await
                .ok()
                .and_then(|session| *session)
        };
        tokio::time::timeout(timeout, found).await.ok().flatten()
    }
}

impl Drop for PgListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[async_trait]
impl WakeSignal for PgListener {
    async fn wait(&self, timeout: Duration) -> bool {
        let notified = self.shared.notify.notified();
        tokio::pin!(notified);
        // Registered before counted, so a wake-up in between is not lost.
        notified.as_mut().enable();
        self.shared.waiting.fetch_add(1, Ordering::SeqCst);
        let woken = tokio::time::timeout(timeout, notified).await.is_ok();
        self.shared.waiting.fetch_sub(1, Ordering::SeqCst);
        woken
    }
}

fn quoted(channel: &str) -> String {
    // Channel names are built from validated identifiers: no quote can occur.
    format!("\"{channel}\"")
}

async fn run<T>(config: tokio_postgres::Config, tls: T, listen: String, shared: Arc<Shared>)
where
    T: MakeTlsConnect<Socket> + Clone + Send + Sync + 'static,
    T::Stream: Send + 'static,
    T::TlsConnect: Send,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    let mut backoff = MIN_BACKOFF;
    let mut sessions = 0u64;
    loop {
        let ended = session(&config, tls.clone(), &listen, &shared, sessions + 1).await;
        shared.session.send_replace(None);
        match ended {
            SessionError::Connect(e) => {
                tracing::warn!(error = %e, retry_in = ?backoff, "outbox listener cannot connect");
            }
            SessionError::Lost(e) => {
                sessions += 1;
                backoff = MIN_BACKOFF;
                tracing::warn!(error = %e, "outbox listener connection lost; reconnecting");
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

enum SessionError {
    /// No session was established.
    Connect(String),
    /// A session was established, then failed.
    Lost(String),
}

/// Connects, listens, and serves notifications until the connection fails; says how it
/// ended (`Lost` means session `number` had been established).
async fn session<T>(
    config: &tokio_postgres::Config,
    tls: T,
    listen: &str,
    shared: &Arc<Shared>,
    number: u64,
) -> SessionError
where
    T: MakeTlsConnect<Socket> + Send + 'static,
    T::Stream: Send + 'static,
    T::TlsConnect: Send,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    let (client, mut connection) =
        match tokio::time::timeout(PING_TIMEOUT, config.connect(tls)).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return SessionError::Connect(e.to_string()),
            Err(_) => return SessionError::Connect(format!("no answer within {PING_TIMEOUT:?}")),
        };
    let notified = shared.clone();
    let mut driver = AbortOnDrop(tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(_)) => notified.wake(),
                Ok(_) => {}
                Err(e) => return e.to_string(),
            }
        }
        "the server closed the connection".to_owned()
    }));
    let answer = match tokio::time::timeout(PING_TIMEOUT, client.simple_query(listen)).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => return SessionError::Connect(e.to_string()),
        Err(_) => {
            return SessionError::Connect(format!("LISTEN got no answer within {PING_TIMEOUT:?}"))
        }
    };
    let pid = answer
        .into_iter()
        .find_map(|m| match m {
            SimpleQueryMessage::Row(row) => row.get(0).and_then(|pid| pid.parse::<i32>().ok()),
            _ => None,
        })
        .unwrap_or_default();
    // Whatever was enqueued while no session listened was not heard: poll once. The
    // wake-up comes before the session is published, so whoever waits for the session
    // sees that wake-up already behind it.
    shared.wake();
    shared.session.send_replace(Some(ListenSession {
        number,
        backend_pid: pid,
    }));
    loop {
        tokio::select! {
            ended = &mut driver.0 => {
                return SessionError::Lost(ended.unwrap_or_else(|e| e.to_string()));
            }
            () = tokio::time::sleep(PING_EVERY) => {
                let ping = client.simple_query(include_str!("../sql/ping.sql"));
                match tokio::time::timeout(PING_TIMEOUT, ping).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => return SessionError::Lost(e.to_string()),
                    Err(_) => return SessionError::Lost("health check timed out".into()),
                }
            }
        }
    }
}

struct AbortOnDrop(JoinHandle<String>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_are_derived_from_the_qualified_name_and_fit() {
        assert_eq!(
            wake_channel(&TableName::new("outbox").unwrap()),
            "outbox_wake"
        );
        assert_eq!(
            wake_channel(&TableName::in_schema("app", "outbox").unwrap()),
            "app.outbox_wake"
        );
        let long = TableName::in_schema(&"s".repeat(51), &"t".repeat(51)).unwrap();
        let other = TableName::in_schema(&"s".repeat(51), &"u".repeat(51)).unwrap();
        assert_eq!(wake_channel(&long).len(), MAX_CHANNEL_BYTES);
        assert_ne!(wake_channel(&long), wake_channel(&other));
    }
}
