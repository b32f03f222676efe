//! The pages' frame and the few pieces of markup every page uses; every string that
//! comes from the database goes through [`escape`].

use std::fmt::Write as _;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use outbox_core::OutboxError;

/// `text` safe inside HTML text and quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` as one component of a URL query (RFC 3986 unreserved characters kept).
pub(crate) fn query_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A whole page: `title`, the navigation (with `current` marked) and `body`.
pub(crate) fn frame(title: &str, current: &str, body: &str) -> String {
    let mut nav = String::new();
    for (href, label) in [
        ("/", "Overview"),
        ("/entries?status=pending", "Entries"),
        ("/entries?status=dead_lettered", "Dead letters"),
    ] {
        let mark = if label == current {
            " aria-current=\"page\""
        } else {
            ""
        };
        let _ = write!(nav, "<a href=\"{href}\"{mark}>{label}</a>");
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · outbox</title><style>{STYLE}</style></head>\
         <body><header><strong>outbox</strong><nav>{nav}</nav>\
         <form method=\"get\" action=\"/lookup\" role=\"search\">\
         <input name=\"q\" id=\"lookup\" placeholder=\"entry id or key\" \
         aria-label=\"entry id or partition key\" size=\"38\" required></form></header>\
         <main>{body}</main></body></html>\n",
        escape(title)
    )
}

/// A table of `rows` under `headings`; the cells are markup already.
pub(crate) fn table(headings: &[&str], rows: &[Vec<String>]) -> String {
    let mut html = String::from("<table><thead><tr>");
    for h in headings {
        let _ = write!(html, "<th>{}</th>", escape(h));
    }
    html.push_str("</tr></thead><tbody>");
    for row in rows {
        html.push_str("<tr>");
        for cell in row {
            let _ = write!(html, "<td>{cell}</td>");
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table>");
    html
}

/// The pages' look: plain, readable, light and dark.
const STYLE: &str = "\
:root{color-scheme:light dark;--line:#8884;--muted:#888;--warn:#b45309;--accent:#2563eb}\
body{font:15px/1.45 system-ui,sans-serif;margin:0}\
header{display:flex;gap:2rem;align-items:center;padding:.7rem 1.5rem;border-bottom:1px solid var(--line)}\
header form{margin-left:auto}nav{display:flex;gap:1.2rem}nav a{text-decoration:none}nav a[aria-current]{font-weight:600;text-decoration:underline}\
main{padding:1rem 1.5rem;max-width:75rem}\
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{padding:.3rem .8rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
.cards{display:flex;flex-wrap:wrap;gap:1rem;margin:1rem 0}\
.card{border:1px solid var(--line);border-radius:.5rem;padding:.6rem 1rem;min-width:9rem}\
.card b{display:block;font-size:1.6rem;font-variant-numeric:tabular-nums}\
.warn{border-left:4px solid var(--warn);padding:.4rem .8rem;margin:.5rem 0}\
pre{white-space:pre-wrap;word-break:break-all;border:1px solid var(--line);padding:.6rem;border-radius:.3rem;max-height:40rem;overflow:auto}\
.muted{color:var(--muted)}svg text{fill:currentColor;font-size:11px}\
.actions{display:flex;gap:.5rem;margin:.3rem 0}.actions form{margin:0}\
button.purge{color:#b91c1c}.done{border-left:4px solid #16a34a;padding:.4rem .8rem;margin:.5rem 0}\
";

/// A page saying what went wrong: 400 for bad input, 503 when the store failed.
pub(super) fn failed(e: &OutboxError) -> Response {
    let status = if e.is_invalid_input() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = format!("<h1>{}</h1><p>{}</p>", status, escape(&e.to_string()));
    (status, axum::response::Html(frame("Error", "", &body))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_data_is_shown_as_text() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(query_component("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
    }
}
