//! `/entries`: one status (and topic) a page at a time, with the same cursor as
//! `outbox list`; `/entries/ID`: every field of one entry, its payload shown safely.

use std::fmt::Write as _;

use outbox_core::{DeadLetterSelection, EmissionStatus, OutboxEntry};

use super::actions::{buttons, offered};
use super::page::{escape, frame, query_component, table};
use super::state::Writes;

/// The most payload bytes shown as hex; the rest is counted, not shown.
const HEX_SHOWN: usize = 4_096;

/// What a page shows besides the entries: the write buttons (with `--allow-writes`) and
/// what a write just did.
pub(crate) struct Shown<'a> {
    /// Present when the pages may write.
    pub(crate) writes: Option<&'a Writes>,
    /// Markup saying what a write just did, or empty.
    pub(crate) notice: String,
}

/// What a list is narrowed to: a topic, a partition key.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Filter<'a> {
    /// Only this topic.
    pub(crate) topic: Option<&'a str>,
    /// Only this partition key.
    pub(crate) key: Option<&'a str>,
}

impl Filter<'_> {
    /// The filter as a query string's tail (`&topic=…&key=…`), or empty.
    fn query(&self) -> String {
        let mut q = String::new();
        if let Some(t) = self.topic {
            let _ = write!(q, "&topic={}", query_component(t));
        }
        if let Some(k) = self.key {
            let _ = write!(q, "&key={}", query_component(k));
        }
        q
    }
}

/// A page of entries in `status` (narrowed by `filter`), after the entry `after`; on
/// statuses that wait for an operator, requeue and purge of each and of all.
pub(crate) fn list(
    status: EmissionStatus,
    filter: Filter<'_>,
    entries: &[OutboxEntry],
    limit: u32,
    shown: &Shown<'_>,
) -> String {
    let topic = filter.topic;
    let current = section(status);
    let mut body = format!("<h1>{}</h1>{}", escape(status.as_str()), shown.notice);
    body.push_str(
        "<form method=\"get\" action=\"/entries\"><label>status <select name=\"status\">",
    );
    for s in EmissionStatus::ALL {
        let selected = if s == status { " selected" } else { "" };
        let _ = write!(body, "<option{selected}>{}</option>", escape(s.as_str()));
    }
    let _ = write!(
        body,
        "</select></label> <label>topic <input name=\"topic\" value=\"{}\"></label> \
         <label>key <input name=\"key\" value=\"{}\"></label> <button>Show</button></form>",
        escape(topic.unwrap_or("")),
        escape(filter.key.unwrap_or(""))
    );
    let writable = offered(status);
    if entries.is_empty() {
        body.push_str("<p class=\"muted\" id=\"empty\">No entries here.</p>");
    } else {
        if writable && filter.key.is_some() {
            // A requeue or purge of all selects by status and topic only: offered only
            // where it acts on exactly what the list shows.
            if shown.writes.is_some() {
                body.push_str(
                    "<p class=\"muted\" id=\"no-bulk\">To requeue or purge all of them, \
                     clear the key (those act on every key).</p>",
                );
            }
        } else if writable {
            // Requeue and purge of all act on what the list shows: one topic's entries
            // when it is filtered by topic, every one's otherwise.
            let (which, every) = match topic {
                Some(t) => (
                    DeadLetterSelection::Topic(t.to_owned()),
                    format!("every {} entry of topic {t}", status.as_str()),
                ),
                None => (
                    DeadLetterSelection::All,
                    format!("every {} entry", status.as_str()),
                ),
            };
            body.push_str(&buttons(shown.writes, status, &which, &every));
        }
        let mut headings = vec!["id", "topic", "key", "created", "attempts", "last error"];
        if status == EmissionStatus::DeadLettered {
            headings.push("dead-letter reason");
        }
        let mut rows: Vec<Vec<String>> = entries.iter().map(row).collect();
        if writable && shown.writes.is_some() {
            headings.push("");
            for (cells, e) in rows.iter_mut().zip(entries) {
                cells.push(buttons(
                    shown.writes,
                    status,
                    &DeadLetterSelection::One(e.id),
                    &format!("entry {}", e.id),
                ));
            }
        }
        body.push_str(&table(&headings, &rows));
    }
    let full = u32::try_from(entries.len()).is_ok_and(|n| n == limit);
    if let Some(last) = entries.last().filter(|_| full) {
        let next = format!(
            "/entries?status={}&after={}{}",
            query_component(status.as_str()),
            last.id,
            filter.query()
        );
        let _ = write!(
            body,
            "<p><a id=\"next\" href=\"{}\">Next page →</a></p>",
            escape(&next)
        );
    }
    frame(status.as_str(), current, &body)
}

/// The navigation's section for entries in `status`: dead letters have their own.
fn section(status: EmissionStatus) -> &'static str {
    if status == EmissionStatus::DeadLettered {
        "Dead letters"
    } else {
        "Entries"
    }
}

/// One line of the list: the error the last attempt met, and for dead letters the reason
/// they were dead-lettered beside it.
fn row(e: &OutboxEntry) -> Vec<String> {
    let mut cells = vec![
        format!("<a href=\"/entries/{0}\"><code>{0}</code></a>", e.id),
        escape(&e.topic),
        escape(e.partition_key.as_deref().unwrap_or("")),
        e.created_at.format("%Y-%m-%d %H:%M:%S").to_string(),
        e.attempt_count.to_string(),
        escape(&shortened(e.last_error.as_deref().unwrap_or(""), 120)),
    ];
    if e.status == EmissionStatus::DeadLettered {
        cells.push(escape(&shortened(
            e.dead_letter_reason.as_deref().unwrap_or(""),
            120,
        )));
    }
    cells
}

/// `text` cut to `max` characters, marked when cut.
fn shortened(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// Every field of `e`, its headers, and its payload; requeue and purge when it waits for
/// an operator.
pub(crate) fn one(e: &OutboxEntry, shown: &Shown<'_>) -> String {
    let mut body = format!("<h1>Entry <code>{}</code></h1>{}", e.id, shown.notice);
    if offered(e.status) {
        body.push_str(&buttons(
            shown.writes,
            e.status,
            &DeadLetterSelection::One(e.id),
            "this entry",
        ));
    }
    let time =
        |t: Option<chrono::DateTime<chrono::Utc>>| t.map_or_else(String::new, |t| t.to_rfc3339());
    let fields: Vec<(&str, String)> = vec![
        ("status", e.status.as_str().to_owned()),
        ("topic", e.topic.clone()),
        ("partition key", e.partition_key.clone().unwrap_or_default()),
        ("created", e.created_at.to_rfc3339()),
        ("updated", e.updated_at.to_rfc3339()),
        ("not before", time(e.not_before)),
        ("next retry", time(e.next_retry_at)),
        ("attempts", e.attempt_count.to_string()),
        ("last error", e.last_error.clone().unwrap_or_default()),
        (
            "dead-letter reason",
            e.dead_letter_reason.clone().unwrap_or_default(),
        ),
        ("delivered", time(e.delivered_at)),
        (
            "provider message id",
            e.provider_message_id.clone().unwrap_or_default(),
        ),
        ("claim owner", e.claim_owner.clone().unwrap_or_default()),
        ("claim expires", time(e.claim_expires_at)),
        ("claims", e.claim_attempt_count.to_string()),
    ];
    let rows: Vec<Vec<String>> = fields
        .into_iter()
        .map(|(name, value)| vec![escape(name), escape(&value)])
        .collect();
    body.push_str(&table(&["field", "value"], &rows));
    body.push_str("<h2>Headers</h2>");
    if e.headers.is_empty() {
        body.push_str("<p class=\"muted\">none</p>");
    } else {
        let rows: Vec<Vec<String>> = e
            .headers
            .iter()
            .map(|(k, v)| vec![escape(k), escape(v)])
            .collect();
        body.push_str(&table(&["name", "value"], &rows));
    }
    let (kind, text) = payload(&e.payload);
    let _ = write!(
        body,
        "<h2>Payload <span class=\"muted\">{kind}, {} bytes</span></h2><pre id=\"payload\">{}</pre>",
        e.payload.len(),
        escape(&text)
    );
    frame(&format!("Entry {}", e.id), section(e.status), &body)
}

/// The payload as text to show (escaped by the caller), and what it is: JSON
/// pretty-printed, other UTF-8 as it is, anything else as hex up to [`HEX_SHOWN`] bytes.
pub(crate) fn payload(bytes: &[u8]) -> (&'static str, String) {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes) {
        if let Ok(pretty) = serde_json::to_string_pretty(&value) {
            return ("JSON", pretty);
        }
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return ("text", text.to_owned());
    }
    let mut hex = String::with_capacity(bytes.len().min(HEX_SHOWN) * 3);
    for (i, b) in bytes.iter().take(HEX_SHOWN).enumerate() {
        let sep = if i % 32 == 31 { '\n' } else { ' ' };
        let _ = write!(hex, "{b:02x}{sep}");
    }
    if bytes.len() > HEX_SHOWN {
        let _ = write!(hex, "\n… {} more bytes not shown", bytes.len() - HEX_SHOWN);
    }
    ("binary", hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_shown_as_what_they_are() {
        let (kind, text) = payload(br#"{"a":[1,2]}"#);
        assert_eq!(
            (kind, text.as_str()),
            ("JSON", "{\n  \"a\": [\n    1,\n    2\n  ]\n}")
        );
        assert_eq!(
            payload(b"<script>x</script>"),
            ("text", "<script>x</script>".into())
        );
        let (kind, hex) = payload(&[0xff; 5_000]);
        assert_eq!(kind, "binary");
        assert!(hex.starts_with("ff ff"), "{hex}");
        assert!(hex.ends_with("904 more bytes not shown"), "{hex}");
        assert_eq!(shortened("abcdef", 3), "abc…");
        assert_eq!(shortened("abc", 3), "abc");
    }
}
