//! `outbox ui`: the outbox in a browser. Server-rendered pages (an overview with the
//! last hour's chart, entries by status and topic, one entry), `/healthz` and the
//! Prometheus `/metrics` on one listener. Read-only unless started with
//! `--allow-writes` (see [`actions`]). A listener other machines can reach needs
//! `--auth-token-file`; the token is then asked of every request but `/healthz` (HTTP
//! basic auth with the token as password, or `Authorization: Bearer TOKEN`).

mod actions;
mod entries;
mod keyed;
mod overview;
mod page;
mod samples;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{ConnectInfo, Form, Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use base64::Engine as _;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use outbox_core::{AdminClaimStore, EmissionStatus, EntryId, ListRequest, OutboxError, Result};

use crate::args::UiArgs;
use crate::backend::Target;
use samples::Samples;

/// The shortest token `--auth-token-file` may hold.
const MIN_TOKEN_CHARS: usize = 16;

/// What every handler shares.
struct Ui {
    store: Arc<dyn AdminClaimStore>,
    samples: Mutex<Samples>,
    token: Option<String>,
    metrics: PrometheusHandle,
    /// Present when the pages may requeue and purge (`--allow-writes`).
    writes: Option<actions::Writes>,
}

/// Serves the pages until Ctrl-C or SIGTERM.
pub(crate) async fn run(target: &Target, args: UiArgs) -> Result<()> {
    let token = match &args.auth_token_file {
        Some(path) => Some(read_token(path)?),
        None => None,
    };
    check_listen(args.listen, token.is_some())?;
    let every = args
        .sample_interval
        .to_std()
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| OutboxError::invalid("--sample-interval", "must be positive"))?;
    let store = if args.allow_writes {
        target.open().await?
    } else {
        target.open_for_reading().await?
    };
    let metrics = PrometheusBuilder::new()
        .install_recorder()
        .map_err(|e| OutboxError::invalid("metrics", e.to_string()))?;
    let ui = Arc::new(Ui {
        store: store.clone(),
        samples: Mutex::new(Samples::new(every)),
        token,
        metrics,
        writes: args.allow_writes.then(actions::Writes::new),
    });
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| OutboxError::Connection {
            message: format!("cannot listen on {}: {e}", args.listen),
            source: None,
        })?;
    let shared = ui.clone();
    let sampler = tokio::spawn(crate::metrics::sample(store, every, move |stats| {
        shared.samples.lock().expect("the samples").add(stats);
    }));
    out!(
        "serving the outbox at http://{}/ ({}; Ctrl-C to stop)",
        listener.local_addr().unwrap_or(args.listen),
        if args.allow_writes {
            "requeue and purge allowed, every write logged here"
        } else {
            "read-only"
        }
    );
    let app = router(ui).into_make_service_with_connect_info::<SocketAddr>();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(crate::signals::stop_signal())
        .await;
    sampler.abort();
    served.map_err(|e| OutboxError::Connection {
        message: format!("serving the pages failed: {e}"),
        source: None,
    })
}

/// Every route; all but `/healthz` behind the token when there is one, and every page
/// refused to frames of other pages.
fn router(ui: Arc<Ui>) -> Router {
    Router::new()
        .route("/", get(overview))
        .route("/entries", get(list))
        .route("/entries/{id}", get(one))
        .route("/lookup", get(lookup))
        .route("/keys", get(keys))
        .route("/actions", post(act))
        .route("/metrics", get(metrics))
        .layer(middleware::from_fn_with_state(ui.clone(), guard))
        .route("/healthz", get(healthz))
        .layer(middleware::map_response(unframed))
        .with_state(ui)
}

/// Adds the headers that keep a page out of another site's frames, where a visitor
/// could be led to press its buttons unseen.
async fn unframed(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::X_FRAME_OPTIONS,
        header::HeaderValue::from_static("DENY"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static("frame-ancestors 'none'"),
    );
    response
}

/// Refuses a listener other machines can reach unless a token guards it.
fn check_listen(addr: SocketAddr, guarded: bool) -> Result<()> {
    if addr.ip().is_loopback() || guarded {
        return Ok(());
    }
    Err(OutboxError::invalid(
        "--listen",
        format!(
            "refusing to serve the outbox on {addr}, which other machines can reach, without \
             --auth-token-file: anyone reaching it would read every entry (listen on \
             127.0.0.1, or give a token)"
        ),
    ))
}

/// The token in `path`: its first line, trimmed, at least [`MIN_TOKEN_CHARS`] long.
fn read_token(path: &std::path::Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        OutboxError::invalid(
            "--auth-token-file",
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    let token = text.lines().next().unwrap_or("").trim().to_owned();
    if token.chars().count() < MIN_TOKEN_CHARS {
        return Err(OutboxError::invalid(
            "--auth-token-file",
            format!(
                "{} must hold a token of at least {MIN_TOKEN_CHARS} characters on its first line",
                path.display()
            ),
        ));
    }
    Ok(token)
}

/// Lets a request through when it carries the token, or when no token is set and it was
/// sent to a loopback name. Without a token the server listens on loopback only, and a
/// request naming another host there is another site's page that had its name resolve to
/// this machine (DNS rebinding): refused, so such a page can neither read nor write.
async fn guard(State(ui): State<Arc<Ui>>, request: Request, next: Next) -> Response {
    if ui.token.is_none() && !loopback_host(request.headers()) {
        return (
            StatusCode::MISDIRECTED_REQUEST,
            "without --auth-token-file the outbox's pages answer only to a loopback name \
             (127.0.0.1, localhost, [::1])\n",
        )
            .into_response();
    }
    match &ui.token {
        Some(token) if !carries(request.headers(), token) => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Basic realm=\"outbox\"")],
            "the outbox's pages need the token (basic auth, any user, the token as password; or a bearer token)\n",
        )
            .into_response(),
        _ => next.run(request).await,
    }
}

/// Whether `headers` carry `token`, as a bearer token or a basic-auth password.
fn carries(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let given = if let Some(bearer) = value.strip_prefix("Bearer ") {
        bearer.trim().to_owned()
    } else if let Some(basic) = value.strip_prefix("Basic ") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic.trim())
            .ok()
            .and_then(|d| String::from_utf8(d).ok());
        match decoded.as_deref().and_then(|d| d.split_once(':')) {
            Some((_, password)) => password.to_owned(),
            None => return false,
        }
    } else {
        return false;
    };
    same_secret(&given, token)
}

/// Whether the request's `Host` names this machine's loopback interface: `localhost`,
/// an address in 127.0.0.0/8, or `[::1]`, with any port.
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `given` is `secret`, every byte compared, so the time taken says nothing of
/// where they differ.
fn same_secret(given: &str, secret: &str) -> bool {
    given.len() == secret.len()
        && given
            .bytes()
            .zip(secret.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

async fn overview(State(ui): State<Arc<Ui>>) -> Response {
    let read = async {
        let stats = ui.store.live_stats(None).await?;
        let holds = crate::route_holds::read(&*ui.store).await?;
        let topics = ui.store.topic_stats(overview::TOPICS_SHOWN).await?;
        Ok::<_, outbox_core::OutboxError>((stats, holds, topics))
    };
    match read.await {
        Ok((stats, holds, topics)) => {
            let chart = ui.samples.lock().expect("the samples").chart(stats.at);
            Html(overview::render(&stats, &holds, &topics, &chart)).into_response()
        }
        Err(e) => failed(&e),
    }
}

/// The query of `/entries`.
#[derive(Debug, serde::Deserialize)]
struct ListQuery {
    status: Option<String>,
    topic: Option<String>,
    /// Only this partition key.
    key: Option<String>,
    after: Option<String>,
    limit: Option<u32>,
    /// What a write just did, to say so (see [`actions::notice`]).
    done: Option<String>,
    /// How many entries it did it to.
    n: Option<u64>,
}

/// The query of `/entries/ID`: what a write just did to it.
#[derive(Debug, serde::Deserialize)]
struct DoneQuery {
    done: Option<String>,
    n: Option<u64>,
}

async fn list(State(ui): State<Arc<Ui>>, Query(q): Query<ListQuery>) -> Response {
    let status = match q
        .status
        .as_deref()
        .unwrap_or("pending")
        .parse::<EmissionStatus>()
    {
        Ok(s) => s,
        Err(e) => return failed(&OutboxError::invalid("status", e.to_string())),
    };
    let after = match q
        .after
        .as_deref()
        .filter(|a| !a.is_empty())
        .map(str::parse::<EntryId>)
    {
        Some(Ok(id)) => Some(id),
        Some(Err(e)) => return failed(&OutboxError::invalid("after", e.to_string())),
        None => None,
    };
    let topic = q.topic.filter(|t| !t.is_empty());
    let key = q.key.filter(|k| !k.is_empty());
    let limit = q.limit.unwrap_or(50);
    let mut request = ListRequest::new(status, limit);
    request.topic = topic.clone();
    request.partition_key = key.clone();
    request.after = after;
    let shown = entries::Shown {
        writes: ui.writes.as_ref(),
        notice: actions::notice(q.done.as_deref(), q.n, Some(status)),
    };
    match ui.store.list(&request).await {
        Ok(entries) => Html(entries::list(
            status,
            entries::Filter {
                topic: topic.as_deref(),
                key: key.as_deref(),
            },
            &entries,
            limit,
            &shown,
        ))
        .into_response(),
        Err(e) => failed(&e),
    }
}

async fn one(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<String>,
    Query(q): Query<DoneQuery>,
) -> Response {
    let id = match id.parse::<EntryId>() {
        Ok(id) => id,
        Err(e) => return failed(&OutboxError::invalid("entry id", e.to_string())),
    };
    match ui.store.get(id).await {
        Ok(Some(entry)) => {
            let shown = entries::Shown {
                writes: ui.writes.as_ref(),
                notice: actions::notice(q.done.as_deref(), q.n, None),
            };
            Html(entries::one(&entry, &shown)).into_response()
        }
        Ok(None) => (
            StatusCode::NOT_FOUND,
            Html(page::frame(
                "Not found",
                "Entries",
                &format!("<h1>Not found</h1><p>No outbox entry has the id <code>{id}</code>.</p>"),
            )),
        )
            .into_response(),
        Err(e) => failed(&e),
    }
}

/// The query of `/lookup`: an entry id or a partition key typed into the header's search
/// box.
#[derive(Debug, serde::Deserialize)]
struct LookupQuery {
    #[serde(alias = "id")]
    q: String,
}

/// `/lookup?q=…`: the id of an entry opens the entry's page; anything else (a partition
/// key may look like an id too) is a partition key, whose live entries `/keys` shows,
/// spelt as typed. An empty box is refused.
async fn lookup(State(ui): State<Arc<Ui>>, Query(q): Query<LookupQuery>) -> Response {
    if q.q.trim().is_empty() {
        return failed(&OutboxError::invalid(
            "lookup",
            "type an entry id or a partition key",
        ));
    }
    if let Ok(id) = q.q.trim().parse::<EntryId>() {
        match ui.store.get(id).await {
            Ok(Some(_)) => {
                return axum::response::Redirect::to(&format!("/entries/{id}")).into_response()
            }
            Ok(None) => {}
            Err(e) => return failed(&e),
        }
    }
    let to = format!("/keys?key={}", page::query_component(&q.q));
    axum::response::Redirect::to(&to).into_response()
}

/// The query of `/keys`.
#[derive(Debug, serde::Deserialize)]
struct KeyQuery {
    key: String,
}

/// `/keys?key=K`: the live entries with partition key `K` (as given, spaces and all), by
/// status (at most a page of each), and a link to its delivered ones.
async fn keys(State(ui): State<Arc<Ui>>, Query(q): Query<KeyQuery>) -> Response {
    let key = q.key;
    let mut found = Vec::new();
    for status in keyed::LIVE {
        let mut req = ListRequest::new(status, keyed::PER_STATUS);
        req.partition_key = Some(key.clone());
        match ui.store.list(&req).await {
            Ok(entries) => found.push((status, entries)),
            Err(e) => return failed(&e),
        }
    }
    Html(keyed::render(&key, &found)).into_response()
}

async fn act(
    State(ui): State<Arc<Ui>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<actions::ActionForm>,
) -> Response {
    actions::act(&ui, peer, &headers, form).await
}

async fn metrics(State(ui): State<Arc<Ui>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        ui.metrics.render(),
    )
        .into_response()
}

/// 200 when the store answers a one-row read, 503 with the reason when it does not.
async fn healthz(State(ui): State<Arc<Ui>>) -> Response {
    match ui
        .store
        .list(&ListRequest::new(EmissionStatus::Pending, 1))
        .await
    {
        Ok(_) => (StatusCode::OK, "ok\n").into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")).into_response(),
    }
}

/// A page saying what went wrong: 400 for bad input, 503 when the store failed.
fn failed(e: &OutboxError) -> Response {
    let status = if e.is_invalid_input() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = format!("<h1>{}</h1><p>{}</p>", status, page::escape(&e.to_string()));
    (status, Html(page::frame("Error", "", &body))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reachable_listener_needs_a_token() {
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let open: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert!(check_listen(local, false).is_ok());
        assert!(check_listen(open, true).is_ok());
        let err = check_listen(open, false).unwrap_err();
        assert!(err.to_string().contains("--auth-token-file"), "{err}");
    }

    #[test]
    fn only_loopback_names_are_loopback_hosts() {
        let host = |value: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, value.parse().unwrap());
            loopback_host(&h)
        };
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "[::1]:8080",
            "127.1.2.3",
        ] {
            assert!(host(ok), "{ok}");
        }
        for not in [
            "evil.example:8080",
            "192.168.1.5:8080",
            "[::2]:80",
            "localhost.evil.example",
        ] {
            assert!(!host(not), "{not}");
        }
        assert!(!loopback_host(&HeaderMap::new()));
    }

    #[test]
    fn the_token_is_taken_as_bearer_or_basic_password_only() {
        let token = "0123456789abcdef";
        let with = |value: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::AUTHORIZATION, value.parse().unwrap());
            carries(&h, token)
        };
        assert!(with("Bearer 0123456789abcdef"));
        let basic = base64::engine::general_purpose::STANDARD.encode("ops:0123456789abcdef");
        assert!(with(&format!("Basic {basic}")));
        let wrong = base64::engine::general_purpose::STANDARD.encode("0123456789abcdef:x");
        assert!(!with(&format!("Basic {wrong}")));
        assert!(!with("Bearer 0123456789abcdeX"));
        assert!(!with("Bearer 0123"));
        assert!(!carries(&HeaderMap::new(), token));
    }
}
