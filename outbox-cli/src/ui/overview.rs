//! `/`: counts per status, the oldest pending entry's age, leases and retries, the
//! PostgreSQL cleanup warnings, and the chart of the last hour.

use outbox_core::{CleanupThresholds, EmissionStatus, OutboxStats};

use super::page::{escape, frame, query_component, table};
use super::samples::{chart, Point};
use crate::route_holds::Holds;

/// The overview page of `stats` and the routes `holds` name, with the chart of `points`.
pub(crate) fn render(stats: &OutboxStats, holds: &Holds, points: &[Point]) -> String {
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
    body.push_str(&chart(points));
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
        assert!(!render(&stats, &holds, &[]).contains("(estimate)"));
        stats.delivered_estimated = true;
        assert!(render(&stats, &holds, &[]).contains("(estimate)"));
    }

    #[test]
    fn ages_read_as_a_person_says_them() {
        assert_eq!(age(850), "850 ms");
        assert_eq!(age(12_400), "12.4 s");
        assert_eq!(age(200_000), "3 min 20 s");
        assert_eq!(age(18_120_000), "5 h 02 min");
        assert_eq!(age(-5), "0 ms");
    }
}
