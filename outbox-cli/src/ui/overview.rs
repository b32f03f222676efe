//! `/`: counts per status, the oldest pending entry's age, leases and retries, what is
//! live per topic, the PostgreSQL cleanup warnings, and the chart of the last hour.

use outbox_core::{CleanupThresholds, EmissionStatus, OutboxStats, TopicStats};

use super::page::{escape, frame, query_component, table};
use crate::route_holds::Holds;

/// The most topics the overview's by-topic table shows: those with the most live entries.
pub(crate) const TOPICS_SHOWN: u32 = 50;

/// The overview page of `stats`, the routes `holds` name and what is live per topic in
/// `topics`, with `chart` (markup: the last hour's rates, or why there are none yet).
pub(crate) fn render(
    stats: &OutboxStats,
    holds: &Holds,
    topics: &[TopicStats],
    chart: &str,
) -> String {
    let mut body = String::from("<h1>Overview</h1>");
    for (hold, n, error) in &holds.routes {
        body.push_str(&format!(
            "<p class=\"warn route-hold\">{} entries held for a failing route, {} ({}): \
             deferred, no attempt counted, and delivered once it carries again. Last error: {}</p>",
            escape(&holds.shown(*n)),
            escape(hold.fault.as_str()),
            escape(&hold.destination),
            escape(error),
        ));
    }
    for warning in stats
        .cleanup
        .iter()
        .flat_map(|c| c.warnings(&CleanupThresholds::default()))
    {
        body.push_str(&format!("<p class=\"warn\">{}</p>", escape(&warning)));
    }
    let oldest = stats.oldest_pending_created_at.map_or_else(
        || "—".to_owned(),
        |t| age((stats.at - t).num_milliseconds()),
    );
    body.push_str("<div class=\"cards\">");
    for (label, value, id) in [
        (
            "pending",
            stats.count(EmissionStatus::Pending).to_string(),
            "pending",
        ),
        ("oldest pending", oldest, "oldest"),
        (
            "retry-ready now",
            stats.retry_ready.to_string(),
            "retry-ready",
        ),
        ("live leases", stats.claims_in_flight.to_string(), "live"),
        (
            "expired leases",
            stats.expired_leases.to_string(),
            "expired",
        ),
        (
            "dead letters",
            stats.count(EmissionStatus::DeadLettered).to_string(),
            "dead",
        ),
    ] {
        body.push_str(&format!(
            "<div class=\"card\" id=\"card-{id}\"><b>{}</b>{label}</div>",
            escape(&value)
        ));
    }
    body.push_str("</div><h2>Last hour</h2>");
    body.push_str(chart);
    body.push_str("<h2>By status</h2>");
    let rows: Vec<Vec<String>> = EmissionStatus::ALL
        .into_iter()
        .map(|s| {
            vec![
                format!(
                    "<a href=\"/entries?status={}\">{}</a>",
                    query_component(s.as_str()),
                    escape(s.as_str())
                ),
                {
                    let estimated = s == EmissionStatus::Delivered && stats.delivered_estimated;
                    let note = if estimated {
                        " <span class=\"muted\" title=\"the engine's row count less the live \
                         rows; outbox stats --exact counts every row\">(estimate)</span>"
                    } else {
                        ""
                    };
                    format!("<span class=\"n\">{}</span>{note}", stats.count(s))
                },
            ]
        })
        .collect();
    body.push_str(&table(&["status", "entries"], &rows));
    body.push_str(&by_topic(topics, stats.at));
    if let Some(c) = &stats.cleanup {
        body.push_str("<h2>Row versions (PostgreSQL)</h2>");
        let held = c.oldest_snapshot.as_ref().map_or_else(
            || "none".to_owned(),
            |h| {
                let open = h.open_for.map_or_else(
                    || "—".to_owned(),
                    |d| age(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
                );
                format!("{open}, {} ({} transactions old)", h.holder, h.xmin_age)
            },
        );
        let rows = vec![
            vec!["dead rows".into(), c.dead_rows.to_string()],
            vec!["live rows".into(), c.live_rows.to_string()],
            vec![
                "dead index entries".into(),
                c.dead_index_entries.to_string(),
            ],
            vec!["oldest snapshot held elsewhere".into(), escape(&held)],
        ];
        body.push_str(&table(&["", ""], &rows));
    }
    body.push_str(&format!(
        "<p class=\"muted\">As of {} · refreshes every 10 s while shown.</p>\
         <script>setInterval(()=>{{if(!document.hidden)location.reload()}},10000)</script>",
        stats.at.format("%Y-%m-%d %H:%M:%S UTC")
    ));
    frame("Overview", "Overview", &body)
}

/// The by-topic table: per topic, its pending entries and the oldest one's age, those
/// waiting to retry, failed and dead-lettered, each count a link to its list.
fn by_topic(topics: &[TopicStats], at: chrono::DateTime<chrono::Utc>) -> String {
    let mut html = String::from("<h2>By topic</h2>");
    if topics.is_empty() {
        html.push_str("<p class=\"muted\" id=\"no-topics\">Nothing live in any topic.</p>");
        return html;
    }
    let link = |topic: &str, status: EmissionStatus, n: u64| {
        if n == 0 {
            "<span class=\"n\">0</span>".to_owned()
        } else {
            format!(
                "<a class=\"n\" href=\"/entries?status={}&amp;topic={}\">{n}</a>",
                query_component(status.as_str()),
                escape(&query_component(topic))
            )
        }
    };
    let rows: Vec<Vec<String>> = topics
        .iter()
        .map(|t| {
            let oldest = t
                .oldest_pending_created_at
                .map_or_else(|| "—".to_owned(), |c| age((at - c).num_milliseconds()));
            let retrying =
                t.count(EmissionStatus::Deferred) + t.count(EmissionStatus::RetryableFailure);
            vec![
                escape(&t.topic),
                link(
                    &t.topic,
                    EmissionStatus::Pending,
                    t.count(EmissionStatus::Pending),
                ),
                oldest,
                format!("<span class=\"n\">{retrying}</span>"),
                link(
                    &t.topic,
                    EmissionStatus::Failed,
                    t.count(EmissionStatus::Failed),
                ),
                link(
                    &t.topic,
                    EmissionStatus::DeadLettered,
                    t.count(EmissionStatus::DeadLettered),
                ),
            ]
        })
        .collect();
    html.push_str("<div id=\"by-topic\">");
    html.push_str(&table(
        &[
            "topic",
            "pending",
            "oldest pending",
            "retrying",
            "failed",
            "dead letters",
        ],
        &rows,
    ));
    html.push_str("</div>");
    if topics.len() == TOPICS_SHOWN as usize {
        html.push_str(&format!(
            "<p class=\"muted\">The {TOPICS_SHOWN} topics with the most live entries.</p>"
        ));
    }
    html
}

/// A duration in milliseconds as a person reads it: `850 ms`, `12.4 s`, `3 min 20 s`,
/// `5 h 02 min`.
pub(crate) fn age(ms: i64) -> String {
    let ms = ms.max(0);
    match ms {
        0..=999 => format!("{ms} ms"),
        1_000..=59_999 => format!("{:.1} s", ms as f64 / 1_000.0),
        60_000..=3_599_999 => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1_000),
        _ => format!("{} h {:02} min", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_estimated_delivered_count_says_so() {
        let mut stats = OutboxStats::empty(chrono::Utc::now());
        stats.counts.insert(EmissionStatus::Delivered, 7);
        let holds = crate::route_holds::Holds::default();
        assert!(!render(&stats, &holds, &[], "").contains("(estimate)"));
        stats.delivered_estimated = true;
        assert!(render(&stats, &holds, &[], "").contains("(estimate)"));
    }

    #[test]
    fn ages_read_as_a_person_says_them() {
        assert_eq!(age(850), "850 ms");
        assert_eq!(age(12_400), "12.4 s");
        assert_eq!(age(200_000), "3 min 20 s");
        assert_eq!(age(18_120_000), "5 h 02 min");
        assert_eq!(age(-5), "0 ms");
    }

    #[test]
    fn the_by_topic_table_links_each_count_to_its_list_and_escapes_the_topic() {
        let at = chrono::Utc::now();
        let mut t = TopicStats::new("a&<b>".into());
        for (status, n) in [
            (EmissionStatus::Pending, 2),
            (EmissionStatus::Deferred, 1),
            (EmissionStatus::RetryableFailure, 3),
            (EmissionStatus::DeadLettered, 4),
        ] {
            t.counts.insert(status, n);
        }
        t.oldest_pending_created_at = Some(at - chrono::TimeDelta::seconds(90));
        let html = by_topic(&[t], at);
        assert!(html.contains("<td>a&amp;&lt;b&gt;</td>"), "{html}");
        assert!(
            html.contains("href=\"/entries?status=pending&amp;topic=a%26%3Cb%3E\">2</a>"),
            "{html}"
        );
        assert!(html.contains("status=dead_lettered&amp;topic=a%26%3Cb%3E\">4</a>"));
        assert!(
            html.contains("<span class=\"n\">0</span>"),
            "no link to nothing"
        );
        assert!(
            html.contains("<span class=\"n\">4</span>"),
            "deferred and retryable: {html}"
        );
        assert!(html.contains("1 min 30 s"), "{html}");
        assert!(by_topic(&[], at).contains("Nothing live in any topic."));
    }
}
