//! Faults against the real server: connections killed by the server mid-call, a call
//! abandoned at its deadline while it waits for a lock. (A SIGKILLed drain process is
//! `outbox-cli`'s `drain_processes_with_one_killed_deliver_everything_on_mariadb`.)

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::TimeDelta;
use outbox_core::{
    Bounded, ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult,
    EmissionStatus, NewEntry, OutboxAdmin, OutboxError, OutboxStore, TransitionOutcome,
};
use outbox_mysql::MySqlStoreConfig;
use sqlx::{Connection, MySqlConnection};
use uuid::Uuid;

use crate::common::fresh_store;

const ENTRIES: usize = 3_000;

/// Kills one of the store's server connections every few milliseconds (whatever it is
/// doing: a claim's locking read, a lease write, a commit, a completion) until `stop`.
async fn killer(url: String, database: String, stop: Arc<AtomicUsize>) -> usize {
    let mut admin = MySqlConnection::connect(&url)
        .await
        .expect("admin connection");
    let mut kills = 0;
    while stop.load(Ordering::SeqCst) == 0 {
        let ids: Vec<i64> = sqlx::query_scalar(
            "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()",
        )
        .bind(&database)
        .fetch_all(&mut admin)
        .await
        .expect("process list");
        if let Some(id) = ids.get(kills % ids.len().max(1)) {
            // The connection may have ended on its own in between.
            if sqlx::query(&format!("KILL CONNECTION {id}"))
                .execute(&mut admin)
                .await
                .is_ok()
            {
                kills += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    kills
}

/// Four workers drain while the server kills their connections: calls fail, claims made
/// by a transaction killed before its commit were never made, leases granted to a call
/// that never heard back run out and are taken again, and a completion retried after its
/// connection died recognises its own write. Every entry ends delivered, no entry is
/// leased to two workers at once, and no delivery is recorded twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn connections_killed_mid_call_lose_nothing_and_record_nothing_twice() {
    let Some((store, db)) = fresh_store(MySqlStoreConfig::new().max_connections(6)).await else {
        return;
    };
    let store = Arc::new(store);
    let entries = (0..ENTRIES)
        .map(|i| NewEntry::new("t", i.to_string().into_bytes()))
        .collect::<Vec<_>>();
    for chunk in entries.chunks(1000) {
        store.enqueue_batch(chunk.to_vec()).await.unwrap();
    }
    let stop = Arc::new(AtomicUsize::new(0));
    let kills = tokio::spawn(killer(
        outbox_testkit::mysql::server_url(),
        db.name.clone(),
        stop.clone(),
    ));
    // Per entry: the claims (owner, token) it was applied under.
    let applied: Arc<Mutex<HashMap<Uuid, Vec<Uuid>>>> = Arc::default();
    let failures = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let (store, applied, failures) = (store.clone(), applied.clone(), failures.clone());
            tokio::spawn(async move {
                let req = ClaimRequest::new(format!("w{w}"), 50, TimeDelta::seconds(2));
                loop {
                    assert!(started.elapsed() < Duration::from_secs(240), "no progress");
                    let claims = match store.claim_next(&req).await {
                        Ok(c) => c,
                        Err(_) => {
                            failures.fetch_add(1, Ordering::SeqCst);
                            continue;
                        }
                    };
                    if claims.is_empty() {
                        let stats = store.stats(&outbox_core::StatsRequest::new()).await;
                        if stats.is_ok_and(|s| s.count(EmissionStatus::Delivered) == ENTRIES as u64)
                        {
                            return;
                        }
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                    let reqs: Vec<_> = claims
                        .iter()
                        .map(|c| {
                            CompletionRequest::new(
                                c.clone(),
                                Completion::Delivered(EmissionResult::new()),
                            )
                        })
                        .collect();
                    // The same requests again until the server answers: a retry after a
                    // lost answer must recognise its own write, not write twice.
                    let results = loop {
                        match store.complete_batch(reqs.clone()).await {
                            Ok(r) => break r,
                            Err(_) => failures.fetch_add(1, Ordering::SeqCst),
                        };
                    };
                    let mut applied = applied.lock().unwrap();
                    for (c, r) in claims.iter().zip(results) {
                        if r.outcome == TransitionOutcome::Applied {
                            applied.entry(c.id().as_uuid()).or_default().push(c.token);
                        }
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
    stop.store(1, Ordering::SeqCst);
    let kills = kills.await.unwrap();
    let failures = failures.load(Ordering::SeqCst);
    println!("mariadb killed connections: {kills} kills, {failures} failed calls");
    assert!(kills > 0, "no connection was killed");
    let applied = std::mem::take(&mut *applied.lock().unwrap());
    assert_eq!(applied.len(), ENTRIES, "not every entry was delivered");
    for (id, tokens) in applied.iter() {
        let mut distinct = tokens.clone();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            1,
            "{id} was delivered under two claims: {tokens:?}"
        );
    }
    let stats = store
        .stats(&outbox_core::StatsRequest::new())
        .await
        .unwrap();
    assert_eq!(stats.count(EmissionStatus::Delivered), ENTRIES as u64);
}

/// A completion waiting for a row another session has locked is abandoned at its
/// deadline: the caller gets a timeout at once, the pool stays usable, and when the lock
/// goes the abandoned write finishes on its own; the same request again recognises it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_deadline_returns_and_its_write_finishes_alone() {
    let Some((store, db)) = fresh_store(MySqlStoreConfig::new()).await else {
        return;
    };
    let bounded = Bounded::new(store.clone(), Duration::from_millis(500)).unwrap();
    store
        .enqueue(NewEntry::new("t", b"x".to_vec()))
        .await
        .unwrap();
    let claim = store
        .claim_pending(&ClaimRequest::new("w", 1, TimeDelta::minutes(5)))
        .await
        .unwrap()
        .remove(0);
    let mut blocker = MySqlConnection::connect(&db.url).await.unwrap();
    let mut lock = blocker.begin().await.unwrap();
    sqlx::query("SELECT id FROM outbox WHERE id = ? FOR UPDATE")
        .bind(claim.id().as_uuid())
        .fetch_all(&mut *lock)
        .await
        .unwrap();

    let req = CompletionRequest::new(claim.clone(), Completion::Delivered(EmissionResult::new()));
    let started = Instant::now();
    let err = bounded.complete(req.clone()).await.unwrap_err();
    assert!(matches!(err, OutboxError::Connection { .. }), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // The pool still serves other calls while the abandoned write waits.
    assert!(store.get(claim.id()).await.unwrap().is_some());

    lock.commit().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let row = store.get(claim.id()).await.unwrap().unwrap();
        if row.status == EmissionStatus::Delivered {
            assert_eq!(row.stamp, req.stamp, "another write than the abandoned one");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the abandoned write never finished"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let again = bounded.complete(req).await.unwrap();
    assert_eq!(again.outcome, TransitionOutcome::Applied);
}
