//! Drain scenarios about claiming ahead: the batches claimed while one is emitted are
//! held, renewed with it, never emitted once lost, and released at shutdown, one batch
//! ahead or several.

use chrono::TimeDelta;
use outbox_core::drain::{DrainOptions, DrainSummary};
use outbox_core::{Clock, EmissionStatus, EntryId};

use super::{delivered, drain, enqueue, eventually, options, row, run_until_stopped, DrainSubject};
use crate::scripted::ScriptedEmitter;

/// Batches of two, one emission at a time, `depth` batches claimed ahead: the second
/// entry of a batch waits behind a `gate` in the first while the next ones are claimed.
fn ahead_options(owner: &str, depth: usize) -> DrainOptions {
    options(owner)
        .batch_size(2)
        .emit_concurrency(1)
        .claim_ahead(true)
        .batches_ahead(depth)
}

/// `gate`, `ok`, then `2 × depth` more entries and `extra` beyond them.
async fn gate_and_batches(s: &DrainSubject, depth: usize, extra: usize) -> Vec<EntryId> {
    let mut payloads = vec!["gate", "ok"];
    payloads.extend(std::iter::repeat_n("ok", 2 * depth + extra));
    enqueue(s, &payloads).await
}

/// Waits until `owner` holds `n` of `ids`; returns those it holds.
async fn held_by(s: &DrainSubject, ids: &[EntryId], owner: &str, n: usize) -> Vec<EntryId> {
    let holds = || async {
        let mut held = Vec::new();
        for id in ids {
            if row(s, *id).await.claim_owner.as_deref() == Some(owner) {
                held.push(*id);
            }
        }
        held
    };
    eventually(&format!("{owner} holds {n} claimed ahead"), || async {
        holds().await.len() == n
    })
    .await;
    holds().await
}

/// A drain ("slow-a", 600 ms leases, `depth` batches of two ahead) whose first batch hangs
/// on a gate while it holds every other entry, claimed ahead.
async fn slow_batch_with_ahead(
    s: &DrainSubject,
    depth: usize,
) -> (
    Vec<EntryId>,
    ScriptedEmitter,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<DrainSummary>,
) {
    let ids = gate_and_batches(s, depth, 0).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let slow = drain(
        s,
        &emitter,
        ahead_options("slow-a", depth).lease(TimeDelta::milliseconds(600)),
    );
    let (stop, task) = run_until_stopped(slow);
    emitter.gate_started().await;
    held_by(s, &ids[2..], "slow-a", 2 * depth).await;
    (ids, emitter, stop, task)
}

/// While a full batch emits, the next one is claimed ahead and held: another drain cannot
/// take it, and at shutdown it is released unemitted, claimable again at once.
pub async fn claims_ahead_are_held_then_released_at_shutdown(s: DrainSubject) {
    held_then_released(s, 1).await;
}

/// As [`claims_ahead_are_held_then_released_at_shutdown`], with two batches claimed
/// ahead: both are held, and both released.
pub async fn two_batches_ahead_are_held_then_released_at_shutdown(s: DrainSubject) {
    held_then_released(s, 2).await;
}

/// A drain `depth` batches ahead holds them while its first batch hangs; another drain
/// takes only the one entry beyond them; at shutdown every held one goes back unemitted.
async fn held_then_released(s: DrainSubject, depth: usize) {
    let ids = gate_and_batches(&s, depth, 1).await;
    let emitter = ScriptedEmitter::new(s.clock.clone());
    let d = drain(&s, &emitter, ahead_options("slow-a", depth));
    let (stop, task) = run_until_stopped(d);
    emitter.gate_started().await;
    let ahead = held_by(&s, &ids[2..], "slow-a", 2 * depth).await;
    let other = drain(&s, &emitter, options("fast-b"))
        .run_once()
        .await
        .unwrap();
    assert_eq!(
        (other.claimed, other.delivered),
        (1, 1),
        "another drain took a claim held ahead, or missed the free one"
    );
    stop.send(()).unwrap();
    emitter.open_gate(1);
    let summary = task.await.unwrap();
    let held = 2 * depth as u64;
    assert_eq!(
        (
            summary.claimed,
            summary.emitted,
            summary.delivered,
            summary.released
        ),
        (2 + held, 1, 1, 1 + held),
        "{summary:?}"
    );
    let counts = emitter.counts();
    for id in ahead.iter().chain(&ids[1..2]) {
        let r = row(&s, *id).await;
        assert_eq!(
            (r.status, r.claim_owner.clone(), r.attempt_count),
            (EmissionStatus::Pending, None, 0)
        );
        assert_eq!(counts.get(id), None, "a released claim was emitted");
    }
}

/// Claims taken ahead, two batches of them, are renewed with the running batch: past
/// their first lease, another drain still cannot take them, and each entry is emitted
/// once.
pub async fn claims_ahead_keep_their_leases(s: DrainSubject) {
    let (ids, emitter, stop, task) = slow_batch_with_ahead(&s, 2).await;
    let mut first_expiry = Vec::new();
    for id in &ids[2..] {
        first_expiry.push(row(&s, *id).await.claim_expires_at);
    }
    s.clock.advance(TimeDelta::milliseconds(400));
    eventually("both batches claimed ahead were renewed", || async {
        for (id, first) in ids[2..].iter().zip(&first_expiry) {
            if row(&s, *id).await.claim_expires_at == *first {
                return false;
            }
        }
        true
    })
    .await;
    s.clock.advance(TimeDelta::milliseconds(400));
    let other = drain(&s, &emitter, options("fast-b"))
        .run_once()
        .await
        .unwrap();
    assert_eq!(other.claimed, 0, "another drain took a claim held ahead");
    emitter.open_gate(1);
    delivered(&s, &ids, "every entry was delivered").await;
    stop.send(()).unwrap();
    let summary = task.await.unwrap();
    assert_eq!(
        (summary.delivered, summary.not_applied),
        (6, 0),
        "{summary:?}"
    );
    assert!(
        emitter.counts().values().all(|n| *n == 1),
        "an entry was emitted twice"
    );
}

/// A claim taken ahead (two batches of them) that a renewal reports lost is dropped and
/// never emitted; the rest is emitted as usual.
pub async fn a_claim_ahead_that_was_lost_is_never_emitted(s: DrainSubject) {
    let (ids, emitter, stop, task) = slow_batch_with_ahead(&s, 2).await;
    // Take one claim away, as an operator forcing a release would, and claim it elsewhere.
    let held = outbox_core::Claim::from_claimed_entry(row(&s, ids[2]).await).expect("claimed");
    assert!(s.store.release(&held, None).await.unwrap().is_applied());
    let taken = s
        .store
        .claim_pending(
            &outbox_core::ClaimRequest::new("thief", 1, TimeDelta::seconds(30)).at(s.clock.now()),
        )
        .await
        .unwrap();
    assert_eq!(crate::fixtures::claim_ids(&taken), [ids[2]]);
    // Two renewals of the running batch: the first one's renewal of the claims ahead has
    // finished by the time the second begins.
    for _ in 0..2 {
        let stamp = row(&s, ids[1]).await.stamp;
        eventually("the running batch was renewed", || async {
            row(&s, ids[1]).await.stamp != stamp
        })
        .await;
    }
    emitter.open_gate(1);
    delivered(&s, &ids[3..], "the rest was delivered").await;
    stop.send(()).unwrap();
    let summary = task.await.unwrap();
    assert_eq!(summary.delivered, 5, "{summary:?}");
    assert!(
        summary.not_applied >= 1,
        "the lost claim was not counted: {summary:?}"
    );
    assert_eq!(
        emitter.counts().get(&ids[2]),
        None,
        "a lost claim was emitted"
    );
    assert_eq!(
        row(&s, ids[2]).await.claim_owner.as_deref(),
        Some("thief"),
        "the new holder's claim was touched"
    );
}
