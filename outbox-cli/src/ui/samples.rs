//! What the overview charts: the outbox's counts sampled by the server every interval,
//! the last hour kept in memory.

use std::collections::VecDeque;
use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use outbox_core::{EmissionStatus, OutboxStats};

/// How far back the chart looks.
const WINDOW: chrono::TimeDelta = chrono::TimeDelta::hours(1);

/// One sample: when, rows delivered so far, rows in the table, claims made of them (when
/// the picture summed them), rows pending.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sample {
    at: DateTime<Utc>,
    delivered: u64,
    total: u64,
    claims: Option<u64>,
    pending: u64,
}

/// The samples of the last hour, oldest first, taken every `every`.
#[derive(Debug)]
pub(crate) struct Samples {
    kept: VecDeque<Sample>,
    every: std::time::Duration,
}

/// One point of the chart: the rates between two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Point {
    /// The later sample's time.
    pub(crate) at: DateTime<Utc>,
    /// Entries delivered per second since the sample before.
    pub(crate) delivered_per_s: f64,
    /// Claims made per second since the sample before (a claim of ten entries is ten;
    /// rows removed in between hide claims: never below zero), where both samples summed
    /// the claims.
    pub(crate) claimed_per_s: Option<f64>,
    /// Entries written per second since the sample before (rows removed by a prune in
    /// between hide writes: never below zero).
    pub(crate) enqueued_per_s: f64,
    /// Entries pending at the later sample.
    pub(crate) pending: u64,
}

impl Samples {
    /// No samples yet; the server samples every `every`.
    pub(crate) fn new(every: std::time::Duration) -> Self {
        Self {
            kept: VecDeque::new(),
            every,
        }
    }

    /// The overview's chart: the rates of the last hour, or, until two rates can be
    /// drawn, why it is empty and when it fills in (`now` is the page's time). Rates are
    /// differences between samples this server took; the database keeps no history of
    /// its counts to start from.
    pub(crate) fn chart(&self, now: DateTime<Utc>) -> String {
        let points = self.points();
        if points.len() >= 2 {
            return chart(&points);
        }
        let every = chrono::TimeDelta::from_std(self.every).unwrap_or(chrono::TimeDelta::MAX);
        // The third sample's time; past what a time can hold, never (no panic under the
        // samples' lock).
        let third = |first: DateTime<Utc>| {
            every
                .checked_mul(2)
                .and_then(|twice| first.checked_add_signed(twice))
        };
        let seconds = self.every.as_secs_f64();
        let when = |t: DateTime<Utc>| t.format("%H:%M:%S UTC").to_string();
        let why = match self.kept.front() {
            None => format!(
                "The server takes its first sample of the counts now, then one every \
                 {seconds} s."
            ),
            Some(first) => format!(
                "Sampling since {} every {seconds} s; the first lines appear at the third \
                 sample, about {}.",
                when(first.at),
                third(first.at).map_or_else(|| "never".to_owned(), |t| when(t.max(now)))
            ),
        };
        format!(
            "<p class=\"muted\" id=\"chart\">{why} The chart draws delivered and enqueued \
             per second between the samples this server took (the last hour, kept in its \
             memory: a restart starts it afresh); the database keeps no history of its \
             counts to start from.</p>"
        )
    }

    /// Keeps `stats`, forgetting what fell out of the window.
    pub(crate) fn add(&mut self, stats: &OutboxStats) {
        let total = stats.counts.values().sum();
        self.kept.push_back(Sample {
            at: stats.at,
            delivered: stats.count(EmissionStatus::Delivered),
            total,
            claims: stats.claims_made,
            pending: stats.count(EmissionStatus::Pending),
        });
        while self.kept.front().is_some_and(|s| stats.at - s.at > WINDOW) {
            self.kept.pop_front();
        }
    }

    /// The rates between consecutive samples.
    pub(crate) fn points(&self) -> Vec<Point> {
        self.kept
            .iter()
            .zip(self.kept.iter().skip(1))
            .filter_map(|(a, b)| {
                let seconds = (b.at - a.at).num_milliseconds() as f64 / 1_000.0;
                (seconds > 0.0).then(|| Point {
                    at: b.at,
                    delivered_per_s: b.delivered.saturating_sub(a.delivered) as f64 / seconds,
                    claimed_per_s: a
                        .claims
                        .zip(b.claims)
                        .map(|(a, b)| b.saturating_sub(a) as f64 / seconds),
                    enqueued_per_s: b.total.saturating_sub(a.total) as f64 / seconds,
                    pending: b.pending,
                })
            })
            .collect()
    }
}

/// The chart of `points` (two or more; see [`Samples::chart`]): delivered/s, claimed/s
/// and enqueued/s as lines over the window, as SVG markup with its own legend.
fn chart(points: &[Point]) -> String {
    let (w, h, left, bottom) = (720.0, 200.0, 48.0, 20.0);
    let first = points[0].at;
    let span = (points[points.len() - 1].at - first)
        .num_milliseconds()
        .max(1) as f64;
    // Claims per second only where every sample summed them (full counts); live samples
    // do not, since the sum reads the whole history.
    let claimed: Option<Vec<f64>> = points.iter().map(|p| p.claimed_per_s).collect();
    let top = points
        .iter()
        .map(|p| p.delivered_per_s.max(p.enqueued_per_s))
        .chain(claimed.iter().flatten().copied())
        .fold(1.0_f64, f64::max);
    let x = |p: &Point| left + (p.at - first).num_milliseconds() as f64 / span * (w - left - 8.0);
    let y = |v: f64| (h - bottom) - v / top * (h - bottom - 10.0);
    let line = |values: &mut dyn Iterator<Item = f64>| {
        points
            .iter()
            .zip(values)
            .map(|(p, v)| format!("{:.1},{:.1}", x(p), y(v)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let named = if claimed.is_some() {
        "delivered, claimed and enqueued"
    } else {
        "delivered and enqueued"
    };
    let mut svg = format!(
        "<svg id=\"chart\" role=\"img\" aria-label=\"{named} per second, last hour\" \
         viewBox=\"0 0 {w} {h}\" width=\"100%\" style=\"max-width:{w}px\">"
    );
    let _ = write!(
        svg,
        "<line x1=\"{left}\" y1=\"{b}\" x2=\"{w}\" y2=\"{b}\" stroke=\"#8888\"/>\
         <text x=\"2\" y=\"14\">{top:.0}/s</text><text x=\"2\" y=\"{b}\">0</text>",
        b = h - bottom
    );
    if let Some(claimed) = &claimed {
        // Claimed/s is wide and pale beneath delivered/s: where every claim is delivered
        // at once the two lines coincide and both stay visible.
        let _ = write!(
            svg,
            "<polyline class=\"claimed\" fill=\"none\" stroke=\"#d97706\" stroke-opacity=\"0.55\" stroke-width=\"5\" points=\"{}\"/>",
            line(&mut claimed.iter().copied())
        );
    }
    let _ = write!(
        svg,
        "<polyline class=\"delivered\" fill=\"none\" stroke=\"#16a34a\" stroke-width=\"2\" points=\"{}\"/>\
         <polyline class=\"enqueued\" fill=\"none\" stroke=\"#2563eb\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\" points=\"{}\"/>",
        line(&mut points.iter().map(|p| p.delivered_per_s)),
        line(&mut points.iter().map(|p| p.enqueued_per_s))
    );
    let claimed_legend = if claimed.is_some() {
        "<span style=\"color:#d97706\">▬ claimed/s</span> · "
    } else {
        ""
    };
    let _ = write!(
        svg,
        "<text x=\"{left}\" y=\"{h}\">{}</text><text x=\"{}\" y=\"{h}\" text-anchor=\"end\">{}</text></svg>\
         <p><span style=\"color:#16a34a\">━ delivered/s</span> · {claimed_legend}\
         <span style=\"color:#2563eb\">╍ enqueued/s</span></p>",
        first.format("%H:%M:%S"),
        w - 8.0,
        points[points.len() - 1].at.format("%H:%M:%S UTC"),
    );
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(at_s: i64, delivered: u64, pending: u64) -> OutboxStats {
        let mut s = OutboxStats::empty(DateTime::from_timestamp(at_s, 0).expect("a time"));
        s.counts.insert(EmissionStatus::Delivered, delivered);
        s.counts.insert(EmissionStatus::Pending, pending);
        // Every delivered row was claimed twice (a first attempt that failed).
        s.claims_made = Some(2 * delivered);
        s
    }

    #[test]
    fn rates_come_from_consecutive_samples_and_the_window_forgets() {
        let mut samples = Samples::new(std::time::Duration::from_secs(10));
        samples.add(&stats(0, 0, 100));
        samples.add(&stats(10, 50, 60));
        samples.add(&stats(20, 50, 70));
        let points = samples.points();
        assert_eq!(points.len(), 2);
        assert_eq!(points[0].delivered_per_s, 5.0);
        assert_eq!(points[0].enqueued_per_s, 1.0);
        assert_eq!(points[0].claimed_per_s, Some(10.0));
        assert_eq!(
            (points[1].delivered_per_s, points[1].enqueued_per_s),
            (0.0, 1.0)
        );
        let svg = chart(&points);
        assert!(svg.starts_with("<svg"), "{svg}");
        for line in ["delivered", "claimed", "enqueued"] {
            assert!(svg.contains(&format!("class=\"{line}\"")), "{line}: {svg}");
        }
        let mut live = Samples::new(std::time::Duration::from_secs(10));
        for (at, delivered) in [(0, 0), (10, 50), (20, 60)] {
            let mut s = stats(at, delivered, 0);
            s.claims_made = None;
            live.add(&s);
        }
        let svg = chart(&live.points());
        assert!(
            !svg.contains("class=\"claimed\""),
            "no claims summed: {svg}"
        );
        assert!(svg.contains("class=\"delivered\""), "{svg}");
        samples.add(&stats(20 + 3_600, 60, 0));
        assert_eq!(
            samples.points().len(),
            1,
            "samples past the hour are dropped"
        );
    }

    #[test]
    fn an_empty_chart_says_why_and_when_it_fills_in() {
        let mut samples = Samples::new(std::time::Duration::from_secs(5));
        let at = |s| DateTime::from_timestamp(s, 0).expect("a time");
        let note = samples.chart(at(0));
        assert!(note.contains("first sample of the counts now"), "{note}");
        assert!(note.contains("every 5 s"), "{note}");
        samples.add(&stats(0, 0, 1));
        samples.add(&stats(5, 1, 1));
        let note = samples.chart(at(6));
        assert!(
            note.contains("Sampling since 00:00:00 UTC every 5 s")
                && note.contains("about 00:00:10 UTC"),
            "{note}"
        );
        assert!(note.contains("no history of its counts"), "{note}");
        samples.add(&stats(10, 2, 1));
        assert!(samples.chart(at(11)).starts_with("<svg"));
    }
}
