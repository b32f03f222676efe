//! The memory store against a model of the claim/lease state machine: any sequence of
//! enqueues, claims, completions, renewals, releases and clock advances by several
//! workers keeps every rule of the contract.
//!
//! - A claim returns only entries that are claimable in the model (not terminal, not
//!   under another live lease, due), as many as the batch allows of those.
//! - A claim token is never handed out twice.
//! - A completion or renewal applies exactly when its claim still holds the entry's
//!   current token and the entry is not terminal; otherwise it reports `Terminal` or
//!   `StaleClaim` and changes nothing.
//! - Delivered and dead-lettered entries never change again.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, TimeDelta, Utc};
use outbox_core::{
    Claim, ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionError, EmissionResult,
    EntryId, MemoryClaimStore, NewEntry, OutboxStore, RenewOutcome, RenewRequest,
    TransitionOutcome,
};
use proptest::prelude::*;
use uuid::Uuid;

const WORKERS: usize = 3;
const LEASE_SECS: i64 = 30;

#[derive(Debug, Clone)]
enum Op {
    Enqueue,
    Claim {
        worker: usize,
        batch: u32,
    },
    Complete {
        worker: usize,
        pick: usize,
        kind: u8,
    },
    Renew {
        worker: usize,
    },
    Advance {
        secs: i64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Enqueue),
        3 => (0..WORKERS, 1u32..4).prop_map(|(worker, batch)| Op::Claim { worker, batch }),
        4 => (0..WORKERS, any::<usize>(), 0u8..4)
            .prop_map(|(worker, pick, kind)| Op::Complete { worker, pick, kind }),
        1 => (0..WORKERS).prop_map(|worker| Op::Renew { worker }),
        2 => (1i64..45).prop_map(|secs| Op::Advance { secs }),
    ]
}

/// What the model knows of one entry.
#[derive(Debug, Clone, Default)]
struct Row {
    terminal: bool,
    token: Option<Uuid>,
    expires: Option<DateTime<Utc>>,
    due: Option<DateTime<Utc>>,
}

impl Row {
    fn claimable(&self, now: DateTime<Utc>) -> bool {
        !self.terminal && self.expires.is_none_or(|e| e <= now) && self.due.is_none_or(|d| d <= now)
    }
}

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2030-01-01T00:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn completion(kind: u8, now: DateTime<Utc>) -> (Completion, bool) {
    match kind {
        0 => (Completion::Delivered(EmissionResult::new()), true),
        1 => (
            Completion::Failed {
                error: EmissionError::new("flaky"),
                next_retry: Some(now + TimeDelta::seconds(5)),
            },
            false,
        ),
        2 => (Completion::Release { reason: None }, false),
        _ => (
            Completion::DeadLettered {
                error: EmissionError::new("gone"),
                reason: None,
            },
            true,
        ),
    }
}

async fn run(ops: Vec<Op>) {
    let clock = std::sync::Arc::new(outbox_core::ManualClock::new(t0()));
    let store = MemoryClaimStore::new().with_clock(clock.clone());
    let mut now = t0();
    let mut rows: HashMap<EntryId, Row> = HashMap::new();
    let mut held: Vec<Vec<Claim>> = vec![Vec::new(); WORKERS];
    let mut tokens: HashSet<Uuid> = HashSet::new();
    let mut finals: HashMap<EntryId, outbox_core::OutboxEntry> = HashMap::new();

    for op in ops {
        match op {
            Op::Enqueue => {
                let e = store
                    .enqueue(NewEntry::new("t", b"x".to_vec()))
                    .await
                    .unwrap();
                rows.insert(e.id, Row::default());
            }
            Op::Advance { secs } => {
                now += TimeDelta::seconds(secs);
                clock.set(now);
            }
            Op::Claim { worker, batch } => {
                let req =
                    ClaimRequest::new(format!("w{worker}"), batch, TimeDelta::seconds(LEASE_SECS))
                        .at(now);
                let claimable = rows.values().filter(|r| r.claimable(now)).count();
                let claims = store.claim_next(&req).await.unwrap();
                assert_eq!(
                    claims.len(),
                    claimable.min(batch as usize),
                    "claimed what was claimable"
                );
                for c in &claims {
                    let row = rows.get_mut(&c.id()).expect("a known entry");
                    assert!(
                        row.claimable(now),
                        "claimed an entry not claimable: {row:?}"
                    );
                    assert!(tokens.insert(c.token), "a claim token was handed out twice");
                    row.token = Some(c.token);
                    row.expires = Some(now + TimeDelta::seconds(LEASE_SECS));
                    row.due = None;
                }
                held[worker].extend(claims);
            }
            Op::Complete { worker, pick, kind } => {
                if held[worker].is_empty() {
                    continue;
                }
                let at = pick % held[worker].len();
                let claim = held[worker].remove(at);
                let (what, terminal) = completion(kind, now);
                let row = rows[&claim.id()].clone();
                let expected = if row.terminal {
                    TransitionOutcome::Terminal
                } else if row.token == Some(claim.token) {
                    TransitionOutcome::Applied
                } else {
                    TransitionOutcome::StaleClaim
                };
                let before = store.get(claim.id()).await.unwrap().unwrap();
                let result = store
                    .complete(CompletionRequest::new(claim.clone(), what.clone()).at(now))
                    .await
                    .unwrap();
                assert_eq!(
                    result.outcome, expected,
                    "{what:?} by {} on {row:?}",
                    claim.owner
                );
                let after = store.get(claim.id()).await.unwrap().unwrap();
                if expected == TransitionOutcome::Applied {
                    let row = rows.get_mut(&claim.id()).unwrap();
                    row.token = None;
                    row.expires = None;
                    row.terminal = terminal;
                    if let Completion::Failed { next_retry, .. } = what {
                        row.due = next_retry;
                    }
                    if terminal {
                        finals.insert(claim.id(), after);
                    }
                } else {
                    assert_eq!(after, before, "a refused completion changed the row");
                }
            }
            Op::Renew { worker } => {
                if held[worker].is_empty() {
                    continue;
                }
                let claims = std::mem::take(&mut held[worker]);
                let req = RenewRequest::new(TimeDelta::seconds(LEASE_SECS)).at(now);
                // One call per claim: a worker may hold an old claim and a newer one on the
                // same entry, and one call may not name an entry twice.
                for claim in &claims {
                    let outcome = store
                        .renew(std::slice::from_ref(claim), &req)
                        .await
                        .unwrap()
                        .remove(0);
                    let row = rows.get_mut(&claim.id()).unwrap();
                    let holds = !row.terminal && row.token == Some(claim.token);
                    match outcome {
                        RenewOutcome::Renewed(renewed) => {
                            assert!(holds, "renewed a lease it did not hold: {row:?}");
                            assert_eq!(renewed.token, claim.token, "a renewal keeps the token");
                            row.expires = Some(now + TimeDelta::seconds(LEASE_SECS));
                            held[worker].push(renewed);
                        }
                        RenewOutcome::Lost(r) => {
                            assert!(!holds, "lost a lease it held: {:?}", r.outcome);
                            held[worker].push(claim.clone());
                        }
                    }
                }
            }
        }
        // Terminal rows stay exactly as they were written.
        for (id, written) in &finals {
            assert_eq!(
                &store.get(*id).await.unwrap().unwrap(),
                written,
                "a terminal row changed"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_memory_store_keeps_the_lease_rules(ops in proptest::collection::vec(op(), 1..80)) {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(run(ops));
    }
}
