//! [`PgListener`]: the enqueue wake-up over LISTEN/NOTIFY, on a connection of its own.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
/// How often a listener checks that it still hears its channel.
const PING_EVERY: Duration = Duration::from_secs(30);
/// How long that check's queries may take before the connection is given up on; also how
/// long connecting and starting to listen may take: a server that stops answering without
/// closing anything would otherwise hold a reconnection attempt for good.
const PING_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a probe notification, sent from a connection of its own, may take to arrive.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// The payload prefix of a probe notification: other listeners of the channel hear it
/// too, and none of them takes it for a wake-up.
const PROBE_PREFIX: &str = "outbox-listener-probe:";
/// How many of the latest probes heard are kept: other listeners' probes may arrive
/// between a probe being sent and being looked for.
const PROBES_KEPT: usize = 64;
/// The wait before trying again after a session failed its proof: long enough not to
/// keep running `LISTEN` through a pooler that cannot serve it.
const DEAF_BACKOFF: Duration = PING_EVERY;

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
    /// The payloads of the latest probe notifications heard, oldest first.
    probes: watch::Sender<VecDeque<String>>,
    /// Sessions given up because they could not prove they hear.
    refused: AtomicU64,
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
/// Its connection must be a session of its own with the server: a direct connection, or
/// one through a session-mode pooler. Through a transaction-mode pooler (PgBouncer with
/// `pool_mode = transaction`, RDS Proxy) `LISTEN` succeeds and then hears nothing, since
/// the server connection it ran on serves other clients afterwards. So the listener
/// proves that it hears: when a session starts and every 30 s after, it checks that its
/// server process is the one that ran `LISTEN`, still listens on the channel and is not
/// a standby, and it sends a probe notification from a connection of its own, which must
/// arrive within 5 s (a probe connection that cannot be made proves nothing either way
/// and is tried at the next check). A session that fails the proof is dropped with a
/// warning (once per streak of failures), counted in [`PgListener::refused_sessions`],
/// the `outbox_listener_up` gauge drops to 0 (one gauge per process), and the listener
/// tries again after 30 s. Drains go on polling meanwhile at their poll interval, as they do
/// whenever a wake-up is missed: the listener only makes them react sooner.
///
/// When the connection drops, or a health check gets no answer within 10 s, it reconnects
/// with exponential backoff (50 ms doubling up to 5 s; an attempt that gets no answer
/// within 10 s counts as failed) and listens again; every new session also wakes the
/// waiters once, since notifications sent while it was away are lost. A missed
/// notification only delays a drain until its next poll. The background task stops when
/// the listener is dropped.
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
            probes: watch::channel(VecDeque::new()).0,
            refused: AtomicU64::new(0),
        });
        let check = include_str!("../sql/listener_check.sql")
            .replace("{channel_literal}", &literal(&channel));
        let probe = include_str!("../sql/listener_probe.sql")
            .replace("{channel_literal}", &literal(&channel));
        let sql = Sql {
            listen,
            check,
            probe,
        };
        let task = tokio::spawn(run(config, tls, sql, shared.clone()));
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

    /// How many sessions were made and then given up because they could not prove that
    /// they hear their channel: behind a transaction-mode pooler, every one.
    pub fn refused_sessions(&self) -> u64 {
        self.shared.refused.load(Ordering::Relaxed)
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
        metrics::gauge!(outbox_core::metric_names::LISTENER_UP).set(0.0);
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

fn literal(channel: &str) -> String {
    // As above: a validated identifier holds no quote to escape.
    format!("'{channel}'")
}

/// The listener's statements, rendered for its channel.
struct Sql {
    listen: String,
    /// `sql/listener_check.sql`.
    check: String,
    /// `sql/listener_probe.sql`, `{probe_literal}` standing for its quoted payload.
    probe: String,
}

async fn run<T>(config: tokio_postgres::Config, tls: T, sql: Sql, shared: Arc<Shared>)
where
    T: MakeTlsConnect<Socket> + Clone + Send + Sync + 'static,
    T::Stream: Send + 'static,
    T::TlsConnect: Send,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    let mut backoff = MIN_BACKOFF;
    let mut sessions = 0u64;
    // Whether the last session failed its proof: warned once per streak.
    let mut deaf = false;
    metrics::gauge!(outbox_core::metric_names::LISTENER_UP).set(0.0);
    loop {
        let number = sessions + 1;
        let ended = session(&config, tls.clone(), &sql, &shared, number).await;
        // A session that was published took its number, and ends any streak of failures.
        if shared.session.send_replace(None).is_some() {
            sessions = number;
            backoff = MIN_BACKOFF;
            deaf = false;
        }
        metrics::gauge!(outbox_core::metric_names::LISTENER_UP).set(0.0);
        match ended {
            SessionError::Connect(e) => {
                tracing::warn!(error = %e, retry_in = ?backoff, "outbox listener cannot connect");
            }
            SessionError::Lost(e) => {
                tracing::warn!(error = %e, "outbox listener connection lost; reconnecting");
            }
            SessionError::Deaf(e) => {
                shared.refused.fetch_add(1, Ordering::Relaxed);
                backoff = DEAF_BACKOFF;
                if !deaf {
                    tracing::warn!(
                        problem = %e,
                        "outbox listener does not hear its channel: drains poll instead of \
                         being woken; give the listener a direct or session-mode connection \
                         (outbox --listen-url), or turn it off (outbox --no-listen)"
                    );
                }
                deaf = true;
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
    /// A session was established but does not hear its channel (or is on a standby).
    Deaf(String),
}

/// Connects, listens, proves it hears, and serves notifications until the connection
/// fails or a later proof does; says how it ended (`Lost` and `Deaf` mean session
/// `number` had been established).
async fn session<T>(
    config: &tokio_postgres::Config,
    tls: T,
    sql: &Sql,
    shared: &Arc<Shared>,
    number: u64,
) -> SessionError
where
    T: MakeTlsConnect<Socket> + Clone + Send + 'static,
    T::Stream: Send + 'static,
    T::TlsConnect: Send,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    let (client, mut connection) =
        match tokio::time::timeout(PING_TIMEOUT, config.connect(tls.clone())).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return SessionError::Connect(e.to_string()),
            Err(_) => return SessionError::Connect(format!("no answer within {PING_TIMEOUT:?}")),
        };
    let notified = shared.clone();
    let mut driver = AbortOnDrop(tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(n)) if n.payload().starts_with(PROBE_PREFIX) => {
                    notified.probes.send_modify(|heard| {
                        heard.push_back(n.payload().to_owned());
                        if heard.len() > PROBES_KEPT {
                            heard.pop_front();
                        }
                    });
                }
                Ok(AsyncMessage::Notification(_)) => notified.wake(),
                Ok(_) => {}
                Err(e) => return e.to_string(),
            }
        }
        "the server closed the connection".to_owned()
    }));
    let answer = match tokio::time::timeout(PING_TIMEOUT, client.simple_query(&sql.listen)).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => return SessionError::Connect(e.to_string()),
        Err(_) => {
            return SessionError::Connect(format!("LISTEN got no answer within {PING_TIMEOUT:?}"))
        }
    };
    let pid = first_row(&answer)
        .and_then(|row| row.get(0).and_then(|pid| pid.parse::<i32>().ok()))
        .unwrap_or_default();
    let check = Check {
        client: &client,
        config,
        sql,
        shared,
        pid,
    };
    if let Err(ended) = check.run(tls.clone()).await {
        return ended;
    }
    // Whatever was enqueued while no session listened was not heard: poll once. The
    // wake-up comes before the session is published, so whoever waits for the session
    // sees that wake-up already behind it.
    shared.wake();
    shared.session.send_replace(Some(ListenSession {
        number,
        backend_pid: pid,
    }));
    metrics::gauge!(outbox_core::metric_names::LISTENER_UP).set(1.0);
    loop {
        tokio::select! {
            ended = &mut driver.0 => {
                return SessionError::Lost(ended.unwrap_or_else(|e| e.to_string()));
            }
            () = tokio::time::sleep(PING_EVERY) => {
                if let Err(ended) = check.run(tls.clone()).await {
                    return ended;
                }
                // Set again, for a recorder installed after the session started.
                metrics::gauge!(outbox_core::metric_names::LISTENER_UP).set(1.0);
            }
        }
    }
}

fn first_row(answer: &[SimpleQueryMessage]) -> Option<&tokio_postgres::SimpleQueryRow> {
    answer.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(row) => Some(row),
        _ => None,
    })
}

/// The proof that a session hears its channel.
struct Check<'a> {
    client: &'a tokio_postgres::Client,
    config: &'a tokio_postgres::Config,
    sql: &'a Sql,
    shared: &'a Arc<Shared>,
    /// The server process that ran `LISTEN`.
    pid: i32,
}

impl Check<'_> {
    async fn run<T>(&self, tls: T) -> Result<(), SessionError>
    where
        T: MakeTlsConnect<Socket> + Send + 'static,
        T::Stream: Send + 'static,
        T::TlsConnect: Send,
        <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
    {
        self.same_session().await?;
        self.probe(tls).await
    }

    /// The connection still reaches the server process that ran `LISTEN`, which still
    /// listens on the channel and is not a standby.
    async fn same_session(&self) -> Result<(), SessionError> {
        let answer =
            match tokio::time::timeout(PING_TIMEOUT, self.client.simple_query(&self.sql.check))
                .await
            {
                Ok(Ok(answer)) => answer,
                Ok(Err(e)) => return Err(SessionError::Lost(e.to_string())),
                Err(_) => return Err(SessionError::Lost("health check timed out".into())),
            };
        let row = first_row(&answer)
            .ok_or_else(|| SessionError::Lost("the health check returned no row".into()))?;
        let pid = row.get("pid").and_then(|p| p.parse::<i32>().ok());
        if pid != Some(self.pid) {
            return Err(SessionError::Deaf(format!(
                "the connection now reaches server process {} instead of {}, the one that \
                 ran LISTEN: a transaction-mode pooler between the listener and the server?",
                pid.unwrap_or_default(),
                self.pid
            )));
        }
        if row.get("in_recovery") == Some("t") {
            return Err(SessionError::Deaf(
                "the server is a standby now; listening again to find the primary".into(),
            ));
        }
        if row.get("listening") != Some("t") {
            return Err(SessionError::Deaf(
                "the server process no longer listens on the channel".into(),
            ));
        }
        Ok(())
    }

    /// A notification sent from a connection of its own arrives. A probe connection
    /// that cannot be made proves nothing either way: the check passes, and the next one
    /// tries again (the listening connection's own failures end the session anyway).
    async fn probe<T>(&self, tls: T) -> Result<(), SessionError>
    where
        T: MakeTlsConnect<Socket> + Send + 'static,
        T::Stream: Send + 'static,
        T::TlsConnect: Send,
        <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
    {
        let (client, connection) =
            match tokio::time::timeout(PING_TIMEOUT, self.config.connect(tls)).await {
                Ok(Ok(c)) => c,
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "outbox listener probe: cannot connect");
                    return Ok(());
                }
                Err(_) => return Ok(()),
            };
        let _driver = AbortOnDrop(tokio::spawn(async move {
            let _ = connection.await;
            String::new()
        }));
        let payload = format!("{PROBE_PREFIX}{}", uuid::Uuid::new_v4().simple());
        let mut heard = self.shared.probes.subscribe();
        let sent = self
            .sql
            .probe
            .replace("{probe_literal}", &literal(&payload));
        match tokio::time::timeout(PING_TIMEOUT, client.simple_query(&sent)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "outbox listener probe: cannot notify");
                return Ok(());
            }
            Err(_) => return Ok(()),
        }
        let arrived = tokio::time::timeout(
            PROBE_TIMEOUT,
            heard.wait_for(|heard| heard.contains(&payload)),
        )
        .await;
        match arrived {
            Ok(Ok(_)) => Ok(()),
            _ => Err(SessionError::Deaf(format!(
                "a notification sent from another connection did not arrive within \
                 {PROBE_TIMEOUT:?}: a transaction-mode pooler between the listener and the \
                 server?"
            ))),
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
