//! The Grafana dashboard (`dashboards/outbox.json`) queries only what a drain serves:
//! every series and label it selects is found in a real scrape of `outbox drain
//! --metrics-addr` on PostgreSQL (the engine with every gauge), and it shows every
//! metric the drain exports.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use outbox_testkit::postgres::PgTestDb;

mod common;

use common::scrape::{free_port, scrape, value};
use common::{ok, Db};

/// The dashboard, parsed.
fn dashboard() -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../dashboards/outbox.json");
    let text = std::fs::read_to_string(path).expect("dashboards/outbox.json");
    serde_json::from_str(&text).expect("the dashboard is JSON")
}

/// Every query of every panel.
fn queries(board: &serde_json::Value) -> Vec<String> {
    board["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .map(|t| t["expr"].as_str().expect("a query").to_owned())
        .collect()
}

/// One selector of a query: the series name and its exact label matchers (`name="v"`);
/// regex matchers and matchers on dashboard variables select nothing to check.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Selector {
    series: String,
    labels: Vec<String>,
}

fn selectors(query: &str) -> Vec<Selector> {
    let mut found = Vec::new();
    let mut rest = query;
    while let Some(at) = rest.find("outbox_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let series = tail[..end].to_owned();
        let mut labels = Vec::new();
        let after = &tail[end..];
        if let Some(body) = after.strip_prefix('{') {
            let close = body.find('}').expect("a closed selector");
            for matcher in body[..close].split(',') {
                let exact = matcher.contains('=')
                    && !matcher.contains("=~")
                    && !matcher.contains("!=")
                    && !matcher.contains('$');
                if exact {
                    labels.push(matcher.trim().to_owned());
                }
            }
        }
        found.push(Selector { series, labels });
        rest = &tail[end..];
    }
    found
}

#[test]
fn every_panel_has_a_unique_id_and_every_query_names_an_outbox_metric() {
    let board = dashboard();
    let panels = board["panels"].as_array().unwrap();
    let ids: BTreeSet<u64> = panels.iter().map(|p| p["id"].as_u64().unwrap()).collect();
    assert_eq!(ids.len(), panels.len(), "panel ids repeat");
    let exported: BTreeSet<String> = outbox_core::metric_names::ALL
        .iter()
        .map(|n| n.replace('.', "_"))
        .collect();
    let mut shown = BTreeSet::new();
    for query in queries(&board) {
        let found = selectors(&query);
        assert!(!found.is_empty(), "a query of no outbox metric: {query}");
        for s in found {
            let base = ["_sum", "_count"]
                .iter()
                .find_map(|suffix| s.series.strip_suffix(suffix))
                .filter(|b| exported.contains(*b))
                .unwrap_or(&s.series)
                .to_owned();
            assert!(
                exported.contains(&base),
                "{} is not a metric the drain exports",
                s.series
            );
            shown.insert(base);
        }
    }
    assert_eq!(shown, exported, "metrics the dashboard does not show");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_series_the_dashboard_selects_is_in_a_real_scrape() {
    let Some(pg) = PgTestDb::create().await else {
        return;
    };
    let db = Db::postgres(&pg.url, &pg.schema);
    ok(db.cmd().arg("migrate"));
    ok(db.cmd().args(["enqueue", "--count", "300"]));
    let port = free_port();
    let mut child = db
        .cmd()
        .args(["drain", "--emitter", "noop", "--batch", "30"])
        .args(["--stats-interval", "100ms"])
        .args(["--metrics-addr", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let body = loop {
        let body = scrape(port);
        let drained = value(&body, r#"outbox_entries{status="delivered"}"#) == Some(300.0)
            && body.contains("outbox_dead_index_entries ");
        if drained {
            break body;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "never drained: {body}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let stopped = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    assert!(child.wait().unwrap().success());

    let wanted: BTreeSet<Selector> = queries(&dashboard())
        .iter()
        .flat_map(|q| selectors(q))
        .collect();
    let missing: Vec<&Selector> = wanted
        .iter()
        .filter(|s| {
            !body.lines().any(|line| {
                let named = line
                    .strip_prefix(s.series.as_str())
                    .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '));
                named && s.labels.iter().all(|l| line.contains(l.as_str()))
            })
        })
        .collect();
    assert!(
        missing.is_empty(),
        "selected by the dashboard, not served by the drain: {missing:?}\n{body}"
    );
}
