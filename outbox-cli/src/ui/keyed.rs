//! `/keys?key=K`: what is live under one partition key, status by status, as the header's
//! lookup finds it when what was typed is not an entry id.

use std::fmt::Write as _;

use outbox_core::{EmissionStatus, OutboxEntry};

use super::page::{escape, frame, query_component, table};

/// The statuses the page shows: every one but delivered, whose history has no index by
/// key on most engines (its link lists them on request).
pub(crate) const LIVE: [EmissionStatus; 5] = [
    EmissionStatus::Pending,
    EmissionStatus::Deferred,
    EmissionStatus::RetryableFailure,
    EmissionStatus::Failed,
    EmissionStatus::DeadLettered,
];

/// The most entries shown per status; a full section links to the whole list.
pub(crate) const PER_STATUS: u32 = 20;

/// The page for `key`: each status's entries found under it.
pub(crate) fn render(key: &str, found: &[(EmissionStatus, Vec<OutboxEntry>)]) -> String {
    let q = query_component(key);
    let mut body = format!("<h1>Key <code>{}</code></h1>", escape(key));
    let mut any = false;
    for (status, entries) in found.iter().filter(|(_, e)| !e.is_empty()) {
        any = true;
        let _ = write!(body, "<h2 id=\"key-{0}\">{0}</h2>", escape(status.as_str()));
        let rows: Vec<Vec<String>> = entries
            .iter()
            .map(|e| {
                vec![
                    format!("<a href=\"/entries/{0}\"><code>{0}</code></a>", e.id),
                    escape(&e.topic),
                    e.created_at.format("%Y-%m-%d %H:%M:%S").to_string(),
                    e.attempt_count.to_string(),
                    escape(e.last_error.as_deref().unwrap_or("")),
                ]
            })
            .collect();
        body.push_str(&table(
            &["id", "topic", "created", "attempts", "last error"],
            &rows,
        ));
        if entries.len() == PER_STATUS as usize {
            let _ = write!(
                body,
                "<p><a href=\"/entries?status={}&amp;key={}\">All {} entries of this key →</a></p>",
                query_component(status.as_str()),
                escape(&q),
                escape(status.as_str())
            );
        }
    }
    if !any {
        body.push_str("<p class=\"muted\" id=\"no-live\">Nothing live under this key.</p>");
    }
    let _ = write!(
        body,
        "<p><a id=\"key-delivered\" href=\"/entries?status=delivered&amp;key={}\">Its delivered \
         entries</a> <span class=\"muted\">(newest first; where the engine has no index by \
         key, this reads back through the history until a page is found)</span></p>",
        escape(&q)
    );
    frame("Key", "", &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_escaped_and_an_empty_one_says_nothing_is_live() {
        let html = render("<k&>", &[(EmissionStatus::Pending, Vec::new())]);
        assert!(html.contains("<code>&lt;k&amp;&gt;</code>"), "{html}");
        assert!(html.contains("id=\"no-live\""), "{html}");
        assert!(
            html.contains("status=delivered&amp;key=%3Ck%26%3E"),
            "{html}"
        );
    }
}
