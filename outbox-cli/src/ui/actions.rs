//! The pages' writes, offered only when `outbox ui` runs with `--allow-writes`: requeue
//! and purge of the entries that wait for an operator (failed, dead-lettered), one or
//! every one of a status. Each is a form POST to `/actions` carrying the server's form
//! token (a cross-site page cannot read it, so it cannot forge the post), and each is
//! logged with who asked, from where, and what it did.

use std::fmt::Write as _;
use std::net::SocketAddr;

use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use outbox_core::{DeadLetterSelection, EmissionStatus, EntryId, OutboxError};

use super::auth::{same_origin, same_secret, who};
use super::page::{escape, failed, frame, query_component};
use super::state::{Ui, Writes};

/// One write a form asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Make the entries pending again with a fresh attempt budget.
    Requeue,
    /// Delete the entries.
    Purge,
}

impl Action {
    fn as_str(self) -> &'static str {
        match self {
            Self::Requeue => "requeue",
            Self::Purge => "purge",
        }
    }

    fn done(self) -> &'static str {
        match self {
            Self::Requeue => "requeued",
            Self::Purge => "purged",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "requeue" => Some(Self::Requeue),
            "purge" => Some(Self::Purge),
            _ => None,
        }
    }
}

/// Whether the pages offer writes for entries in `status`.
pub(crate) fn offered(status: EmissionStatus) -> bool {
    outbox_core::store_kit::admin::check_requeue(status).is_ok()
}

/// The buttons for the entries in `status` that `which` selects: one entry, one topic's,
/// or every one (`label` says which). Without writes, a note saying how to get them.
pub(crate) fn buttons(
    writes: Option<&Writes>,
    status: EmissionStatus,
    which: &DeadLetterSelection,
    label: &str,
) -> String {
    let id = which.id();
    let Some(writes) = writes else {
        return "<p class=\"muted readonly\">Read-only: start <code>outbox ui</code> with \
                <code>--allow-writes</code> to requeue or purge.</p>"
            .into();
    };
    let mut html = String::from("<div class=\"actions\">");
    for action in [Action::Requeue, Action::Purge] {
        // A deletion, and a write to every entry of a status, ask first. The question is
        // data the script reads, never script text.
        let question = match (action, id) {
            (Action::Purge, _) => Some(format!("Delete {label}? This cannot be undone.")),
            (Action::Requeue, None) => Some(format!("Requeue {label}?")),
            (Action::Requeue, Some(_)) => None,
        };
        let confirm = question.map_or_else(String::new, |q| {
            format!(
                " data-confirm=\"{}\" onsubmit=\"return confirm(this.dataset.confirm)\"",
                escape(&q)
            )
        });
        let _ = write!(
            html,
            "<form method=\"post\" action=\"/actions\"{confirm}>\
             <input type=\"hidden\" name=\"token\" value=\"{}\">\
             <input type=\"hidden\" name=\"action\" value=\"{}\">\
             <input type=\"hidden\" name=\"status\" value=\"{}\">\
             <input type=\"hidden\" name=\"id\" value=\"{}\">\
             <input type=\"hidden\" name=\"topic\" value=\"{}\">\
             <button class=\"{}\" title=\"{} {}\">{}</button></form>",
            escape(&writes.token),
            action.as_str(),
            escape(status.as_str()),
            id.map(|i| i.to_string()).unwrap_or_default(),
            escape(which.topic().unwrap_or("")),
            action.as_str(),
            action.as_str(),
            escape(label),
            if id.is_some() {
                capitalized(action.as_str())
            } else {
                format!("{} all", capitalized(action.as_str()))
            },
        );
    }
    html.push_str("</div>");
    html
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// What a page says after a write sent it there (`done` and `n` from its query): only
/// the words of a known write, never text taken from the query.
pub(crate) fn notice(done: Option<&str>, n: Option<u64>, status: Option<EmissionStatus>) -> String {
    let verb = match done {
        Some("requeued") => "Requeued",
        Some("purged") => "Purged",
        _ => return String::new(),
    };
    let n = n.unwrap_or(0);
    let noun = if n == 1 { "entry" } else { "entries" };
    let of = status.map_or_else(String::new, |s| format!("{} ", escape(s.as_str())));
    format!("<p class=\"done\" id=\"done\">{verb} {n} {of}{noun}.</p>")
}

/// The fields of a write's form.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct ActionForm {
    token: Option<String>,
    action: Option<String>,
    status: Option<String>,
    id: Option<String>,
    topic: Option<String>,
}

/// `POST /actions`: checks the request may write, does the write, logs it, and sends the
/// browser back to the page it concerns.
pub(crate) async fn act(
    ui: &Ui,
    peer: SocketAddr,
    headers: &HeaderMap,
    form: ActionForm,
) -> Response {
    let who = who(headers, peer, ui.token.is_some());
    let Some(writes) = &ui.writes else {
        out!("ui: refused a write by {who}: the pages are read-only");
        return refused(
            StatusCode::FORBIDDEN,
            "These pages are read-only. Start <code>outbox ui</code> with \
             <code>--allow-writes</code> to requeue or purge.",
        );
    };
    if !same_origin(headers) {
        out!("ui: refused a write by {who}: it came from another site");
        return refused(
            StatusCode::FORBIDDEN,
            "The request came from another site, so it was refused.",
        );
    }
    if !form
        .token
        .as_deref()
        .is_some_and(|t| same_secret(t, &writes.token))
    {
        out!("ui: refused a write by {who}: the form's token was missing or stale");
        return refused(
            StatusCode::FORBIDDEN,
            "The form's token is missing or stale (the server restarted since the page \
             was loaded?). Reload the page and try again.",
        );
    }
    let request = match parse(&form) {
        Ok(r) => r,
        Err(e) => {
            out!("ui: refused a write by {who}: {}", one_line(&e.to_string()));
            return failed(&e);
        }
    };
    let (action, status, which) = request;
    let done = match action {
        Action::Requeue => {
            ui.store
                .requeue(&outbox_core::RequeueRequest::new(status, which.clone()))
                .await
        }
        Action::Purge => {
            ui.store
                .purge(&outbox_core::PurgeRequest::new(status, which.clone()))
                .await
        }
    };
    let n = match done {
        Ok(n) => n,
        Err(e) => {
            out!(
                "ui: {who} asked to {} {}: failed: {}",
                action.as_str(),
                described(&which, status),
                one_line(&e.to_string())
            );
            return failed(&e);
        }
    };
    out!(
        "ui: {who} {} {} ({n} {})",
        action.done(),
        described(&which, status),
        if n == 1 { "entry" } else { "entries" }
    );
    match (which, n, action) {
        (DeadLetterSelection::One(id), 0, _) => refused(
            StatusCode::CONFLICT,
            &format!(
                "Entry <code>{id}</code> is not {} (any more), or a worker holds it: nothing \
                 was {}. <a href=\"/entries/{id}\">See it as it is now.</a>",
                escape(status.as_str()),
                action.done()
            ),
        ),
        (DeadLetterSelection::One(id), _, Action::Requeue) => {
            Redirect::to(&format!("/entries/{id}?done=requeued&n=1")).into_response()
        }
        (which, _, _) => {
            // Back to the list the write was made from, its topic filter kept.
            let topic = which
                .topic()
                .map(|t| format!("&topic={}", query_component(t)))
                .unwrap_or_default();
            Redirect::to(&format!(
                "/entries?status={}{topic}&done={}&n={n}",
                query_component(status.as_str()),
                action.done()
            ))
            .into_response()
        }
    }
}

/// The form's action, status and selection, or what is wrong with them.
fn parse(form: &ActionForm) -> outbox_core::Result<(Action, EmissionStatus, DeadLetterSelection)> {
    let action = form
        .action
        .as_deref()
        .and_then(Action::parse)
        .ok_or_else(|| OutboxError::invalid("action", "must be requeue or purge"))?;
    let status = form
        .status
        .as_deref()
        .unwrap_or("")
        .parse::<EmissionStatus>()?;
    match action {
        Action::Requeue => outbox_core::store_kit::admin::check_requeue(status)?,
        Action::Purge => outbox_core::store_kit::admin::check_purge(status)?,
    }
    let id = form.id.as_deref().map(str::trim).filter(|i| !i.is_empty());
    let topic = form.topic.as_deref().filter(|t| !t.is_empty());
    let which = match (id, topic) {
        (Some(id), _) => DeadLetterSelection::One(id.parse::<EntryId>()?),
        (None, Some(topic)) => DeadLetterSelection::Topic(topic.to_owned()),
        (None, None) => DeadLetterSelection::All,
    };
    which.check()?;
    Ok((action, status, which))
}

/// The entries `which` selects in `status`, for the log: "entry ID, failed", "every
/// failed", "every failed of topic T".
fn described(which: &DeadLetterSelection, status: EmissionStatus) -> String {
    let status = status.as_str();
    match which {
        DeadLetterSelection::One(id) => format!("entry {id}, {status}"),
        DeadLetterSelection::All => format!("every {status}"),
        DeadLetterSelection::Topic(topic) => format!("every {status} of topic {}", one_line(topic)),
    }
}

/// `text` on one line: control characters (a line break in a database's message) shown
/// as spaces, so one log line stays one write.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A page saying a write was not done, and why (`message` is markup).
fn refused(status: StatusCode, message: &str) -> Response {
    let body = format!("<h1>{status}</h1><p id=\"refused\">{message}</p>");
    (status, Html(frame("Not done", "", &body))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(action: &str, status: &str, id: &str) -> ActionForm {
        ActionForm {
            token: Some("t".into()),
            action: Some(action.into()),
            status: Some(status.into()),
            id: Some(id.into()),
            topic: None,
        }
    }

    #[test]
    fn a_topic_in_the_form_selects_that_topic_and_a_blank_one_is_refused() {
        let mut by_topic = form("purge", "failed", "");
        by_topic.topic = Some("orders".into());
        assert_eq!(
            parse(&by_topic).unwrap().2,
            DeadLetterSelection::Topic("orders".into())
        );
        by_topic.topic = Some("   ".into());
        assert!(parse(&by_topic).unwrap_err().is_invalid_input());
        by_topic.topic = Some(String::new());
        assert_eq!(parse(&by_topic).unwrap().2, DeadLetterSelection::All);
    }

    #[test]
    fn only_writes_on_entries_waiting_for_an_operator_parse() {
        let id = EntryId::new();
        assert_eq!(
            parse(&form("requeue", "dead_lettered", "")).unwrap(),
            (
                Action::Requeue,
                EmissionStatus::DeadLettered,
                DeadLetterSelection::All
            )
        );
        assert_eq!(
            parse(&form("purge", "failed", &id.to_string())).unwrap(),
            (
                Action::Purge,
                EmissionStatus::Failed,
                DeadLetterSelection::One(id)
            )
        );
        for bad in [
            form("delete", "failed", ""),
            form("requeue", "pending", ""),
            form("purge", "delivered", ""),
            form("purge", "nonsense", ""),
            form("purge", "failed", "not-an-id"),
        ] {
            assert!(parse(&bad).unwrap_err().is_invalid_input(), "{bad:?}");
        }
    }

    #[test]
    fn a_log_line_stays_one_line() {
        assert_eq!(one_line("a\nb\rc"), "a b c");
    }

    #[test]
    fn notices_say_only_what_a_write_did() {
        assert_eq!(
            notice(
                Some("requeued"),
                Some(3),
                Some(EmissionStatus::DeadLettered)
            ),
            "<p class=\"done\" id=\"done\">Requeued 3 dead_lettered entries.</p>"
        );
        assert_eq!(
            notice(Some("requeued"), Some(1), None),
            "<p class=\"done\" id=\"done\">Requeued 1 entry.</p>"
        );
        assert_eq!(notice(Some("<script>"), Some(1), None), "");
        assert_eq!(notice(None, None, Some(EmissionStatus::Failed)), "");
    }

    #[test]
    fn forms_carry_the_token_and_only_with_writes() {
        let writes = Writes::new();
        assert_eq!(writes.token.len(), 64);
        let html = buttons(
            Some(&writes),
            EmissionStatus::Failed,
            &DeadLetterSelection::All,
            "every failed entry",
        );
        assert!(html.contains(&writes.token), "{html}");
        assert!(
            html.contains(">Requeue all<") && html.contains(">Purge all<"),
            "{html}"
        );
        let sly = buttons(
            Some(&writes),
            EmissionStatus::Failed,
            &DeadLetterSelection::Topic("\"><b>".into()),
            "x'); alert('y",
        );
        assert!(
            sly.contains("name=\"topic\" value=\"&quot;&gt;&lt;b&gt;\""),
            "the topic is escaped: {sly}"
        );
        assert!(
            sly.contains("data-confirm=\"Delete x&#39;); alert(&#39;y? This")
                && sly.contains("data-confirm=\"Requeue x&#39;); alert(&#39;y?\""),
            "a label is data, escaped: {sly}"
        );
        let one = buttons(
            Some(&writes),
            EmissionStatus::Failed,
            &DeadLetterSelection::One(EntryId::new()),
            "this entry",
        );
        assert_eq!(
            one.matches("data-confirm").count(),
            1,
            "only the purge of one asks: {one}"
        );
        let html = buttons(
            None,
            EmissionStatus::Failed,
            &DeadLetterSelection::All,
            "every failed entry",
        );
        assert!(!html.contains("<form"), "{html}");
        assert!(html.contains("--allow-writes"), "{html}");
    }
}
