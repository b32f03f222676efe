//! Drain processes in per-key order, one killed mid-run: every key's entries are emitted
//! in the key's order, across the processes, the kill and the reclaims after it. A
//! reclaimed entry may be emitted again (at least once), and a reclaimed run again from
//! its head, but no entry is ever emitted before every earlier entry of its key was.

use std::collections::HashMap;
use std::path::Path;

use super::{emitted, four_drains_one_killed, ok, Db, Emitted};

/// Keys, and entries of each, written one key after the other.
const KEYS: usize = 6;
const PER_KEY: usize = 200;

/// Each key's entry ids in the key's order: the pending listing's order (created time,
/// then id), which is the order a claim in key order follows.
fn key_orders(db: &Db) -> HashMap<String, Vec<String>> {
    (0..KEYS)
        .map(|k| {
            let key = format!("k{k}");
            let listed = ok(db.cmd().args([
                "list",
                "--status",
                "pending",
                "--partition-key",
                &key,
                "--limit",
                "1000",
                "--json",
            ]));
            let rows: Vec<serde_json::Value> = serde_json::from_str(&listed).expect("json");
            let ids: Vec<String> = rows
                .iter()
                .map(|r| r["id"].as_str().expect("id").to_owned())
                .collect();
            assert_eq!(ids.len(), PER_KEY, "{key}");
            (key, ids)
        })
        .collect()
}

/// Checks that no emission overtook an earlier entry of its key: when an entry is
/// emitted, every entry before it in its key's order has been emitted at least once.
/// Returns how many emissions repeated an entry.
fn check_order(orders: &HashMap<String, Vec<String>>, emissions: &[Emitted]) -> usize {
    let places: HashMap<(&str, &str), usize> = orders
        .iter()
        .flat_map(|(key, ids)| {
            ids.iter()
                .enumerate()
                .map(move |(at, id)| ((key.as_str(), id.as_str()), at))
        })
        .collect();
    // Per key, how many of its first entries have been emitted.
    let mut reached: HashMap<&str, usize> = HashMap::new();
    let mut repeats = 0;
    for Emitted { id, key, owner } in emissions {
        let key = key.as_deref().expect("keyed entries");
        let at = places[&(key, id.as_str())];
        let done = reached.entry(key).or_default();
        assert!(
            at <= *done,
            "{id} (place {at} of {key}) was emitted by {owner} before place {done} ever was"
        );
        if at == *done {
            *done += 1;
        } else {
            repeats += 1;
        }
    }
    for (key, ids) in orders {
        assert_eq!(
            reached.get(key.as_str()),
            Some(&ids.len()),
            "{key} was not emitted whole"
        );
    }
    repeats
}

/// Four ordered drain processes (the first slow, killed mid-run) empty a keyed backlog;
/// every key comes out in order, and the kill did make entries be emitted again.
pub fn ordered_drain_processes_with_one_killed_keep_each_key_in_order(db: &Db, dir: &Path) {
    ok(db.cmd().args(["migrate", "--ordered"]));
    for k in 0..KEYS {
        let key = format!("k{k}");
        let count = PER_KEY.to_string();
        ok(db.cmd().args([
            "enqueue",
            "--count",
            &count,
            "--partition-key",
            &key,
            "--batch",
            "50",
        ]));
    }
    let orders = key_orders(db);
    let jsonl = dir.join("ordered.jsonl");
    four_drains_one_killed(db, &jsonl, &["--ordered"]);
    let after = db.exact_stats();
    assert_eq!(after["counts"]["delivered"], KEYS * PER_KEY, "{after}");
    let emissions = emitted(&jsonl);
    let repeats = check_order(&orders, &emissions);
    let victims = emissions
        .iter()
        .filter(|e| e.owner.starts_with("victim"))
        .count();
    // The victim was killed holding claims of runs it had begun to emit.
    assert!(
        repeats > 0,
        "the kill caught no emission in flight ({victims} by the victim); the test proved nothing"
    );
    println!(
        "{} emissions, {repeats} of them again after the kill, {victims} by the killed process; no key out of order",
        emissions.len()
    );
}
