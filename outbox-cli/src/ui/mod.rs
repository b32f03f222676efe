//! `outbox ui`: the outbox in a browser. Server-rendered pages (an overview with the
//! last hour's chart, entries by status and topic, one entry), `/healthz` and the
//! Prometheus `/metrics` on one listener. Read-only unless started with
//! `--allow-writes` (see [`actions`]). A listener other machines can reach needs
//! `--auth-token-file`; the token is then asked of every request but `/healthz` (HTTP
//! basic auth with the token as password, or `Authorization: Bearer TOKEN`).

mod actions;
mod auth;
mod entries;
mod keyed;
mod overview;
mod page;
mod routes;
mod samples;
mod state;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::http::header;
use axum::middleware;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use metrics_exporter_prometheus::PrometheusBuilder;
use outbox_core::{OutboxError, Result};

use crate::args::UiArgs;
use crate::backend::Target;
use samples::Samples;
use state::Ui;

/// Serves the pages until Ctrl-C or SIGTERM.
pub(crate) async fn run(target: &Target, args: UiArgs) -> Result<()> {
    let token = match &args.auth_token_file {
        Some(path) => Some(auth::read_token(path)?),
        None => None,
    };
    auth::check_listen(args.listen, token.is_some())?;
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
        writes: args.allow_writes.then(state::Writes::new),
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
        .route("/", get(routes::overview))
        .route("/entries", get(routes::list))
        .route("/entries/{id}", get(routes::one))
        .route("/lookup", get(routes::lookup))
        .route("/keys", get(routes::keys))
        .route("/actions", post(routes::act))
        .route("/metrics", get(routes::metrics))
        .layer(middleware::from_fn_with_state(ui.clone(), auth::guard))
        .route("/healthz", get(routes::healthz))
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
