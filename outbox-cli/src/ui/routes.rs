//! The routes' handlers: each reads what its page shows and renders it, or says what
//! went wrong.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Form, Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use outbox_core::{EmissionStatus, EntryId, ListRequest, OutboxError};

use super::state::Ui;
use super::{actions, entries, keyed, overview, page};

pub(super) async fn overview(State(ui): State<Arc<Ui>>) -> Response {
    let read = async {
        let stats = ui
            .store
            .live_stats(&outbox_core::StatsRequest::new())
            .await?;
        let holds = crate::route_holds::read(&*ui.store).await?;
        let topics = ui.store.topic_stats(overview::TOPICS_SHOWN).await?;
        Ok::<_, outbox_core::OutboxError>((stats, holds, topics))
    };
    match read.await {
        Ok((stats, holds, topics)) => {
            let chart = ui.samples.lock().expect("the samples").chart(stats.at);
            Html(overview::render(&stats, &holds, &topics, &chart)).into_response()
        }
        Err(e) => page::failed(&e),
    }
}

/// The query of `/entries`.
#[derive(Debug, serde::Deserialize)]
pub(super) struct ListQuery {
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
pub(super) struct DoneQuery {
    done: Option<String>,
    n: Option<u64>,
}

pub(super) async fn list(State(ui): State<Arc<Ui>>, Query(q): Query<ListQuery>) -> Response {
    let status = match q
        .status
        .as_deref()
        .unwrap_or("pending")
        .parse::<EmissionStatus>()
    {
        Ok(s) => s,
        Err(e) => return page::failed(&OutboxError::invalid("status", e.to_string())),
    };
    let after = match q
        .after
        .as_deref()
        .filter(|a| !a.is_empty())
        .map(str::parse::<EntryId>)
    {
        Some(Ok(id)) => Some(id),
        Some(Err(e)) => return page::failed(&OutboxError::invalid("after", e.to_string())),
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
        Err(e) => page::failed(&e),
    }
}

pub(super) async fn one(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<String>,
    Query(q): Query<DoneQuery>,
) -> Response {
    let id = match id.parse::<EntryId>() {
        Ok(id) => id,
        Err(e) => return page::failed(&OutboxError::invalid("entry id", e.to_string())),
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
        Err(e) => page::failed(&e),
    }
}

/// The query of `/lookup`: an entry id or a partition key typed into the header's search
/// box.
#[derive(Debug, serde::Deserialize)]
pub(super) struct LookupQuery {
    #[serde(alias = "id")]
    q: String,
}

/// `/lookup?q=…`: the id of an entry opens the entry's page; anything else (a partition
/// key may look like an id too) is a partition key, whose live entries `/keys` shows,
/// spelt as typed. An empty box is refused.
pub(super) async fn lookup(State(ui): State<Arc<Ui>>, Query(q): Query<LookupQuery>) -> Response {
    if q.q.trim().is_empty() {
        return page::failed(&OutboxError::invalid(
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
            Err(e) => return page::failed(&e),
        }
    }
    let to = format!("/keys?key={}", page::query_component(&q.q));
    axum::response::Redirect::to(&to).into_response()
}

/// The query of `/keys`.
#[derive(Debug, serde::Deserialize)]
pub(super) struct KeyQuery {
    key: String,
}

/// `/keys?key=K`: the live entries with partition key `K` (as given, spaces and all), by
/// status (at most a page of each), and a link to its delivered ones.
pub(super) async fn keys(State(ui): State<Arc<Ui>>, Query(q): Query<KeyQuery>) -> Response {
    let key = q.key;
    let mut found = Vec::new();
    for status in keyed::LIVE {
        let mut req = ListRequest::new(status, keyed::PER_STATUS);
        req.partition_key = Some(key.clone());
        match ui.store.list(&req).await {
            Ok(entries) => found.push((status, entries)),
            Err(e) => return page::failed(&e),
        }
    }
    Html(keyed::render(&key, &found)).into_response()
}

pub(super) async fn act(
    State(ui): State<Arc<Ui>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<actions::ActionForm>,
) -> Response {
    actions::act(&ui, peer, &headers, form).await
}

pub(super) async fn metrics(State(ui): State<Arc<Ui>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        ui.metrics.render(),
    )
        .into_response()
}

/// 200 when the store answers a one-row read, 503 with the reason when it does not.
pub(super) async fn healthz(State(ui): State<Arc<Ui>>) -> Response {
    match ui
        .store
        .list(&ListRequest::new(EmissionStatus::Pending, 1))
        .await
    {
        Ok(_) => (StatusCode::OK, "ok\n").into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")).into_response(),
    }
}
