//! Small builders the suite cases share. Time is always injected from [`t0`].

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use outbox_core::{
    Claim, ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionError, EmissionResult,
    EmissionStatus, EntryId, NewEntry, OutboxEntry, TransitionOutcome,
};

/// The store under test, as the suite sees it.
pub type DynStore = Arc<dyn ClaimStore>;

/// The fixed instant every case counts from (2030-01-01T00:00:00Z): later than any
/// database clock, so rows enqueued at the database's time are already due.
pub fn t0() -> DateTime<Utc> {
    DateTime::from_timestamp(1_893_456_000, 0).expect("valid constant")
}

/// `t0` plus `secs` seconds.
pub fn at(secs: i64) -> DateTime<Utc> {
    t0() + TimeDelta::seconds(secs)
}

/// The lease the cases use: 30 seconds.
pub fn lease() -> TimeDelta {
    TimeDelta::seconds(30)
}

/// A claim request by `owner` for `n` entries at `now`.
pub fn claim_req(owner: &str, n: u32, now: DateTime<Utc>) -> ClaimRequest {
    ClaimRequest::new(owner, n, lease()).at(now)
}

/// A new entry on topic "t" created at `at(created_secs)`.
pub fn new_entry(created_secs: i64) -> NewEntry {
    NewEntry::new("t", format!("payload-{created_secs}").into_bytes()).created_at(at(created_secs))
}

/// Enqueues `n` entries created one second apart, oldest first, ending one second
/// before `t0`; returns them oldest first.
pub async fn seed(store: &DynStore, n: usize) -> Vec<OutboxEntry> {
    let n = i64::try_from(n).expect("small n");
    let entries = (0..n).map(|i| new_entry(i - n)).collect::<Vec<_>>();
    store.enqueue_batch(entries).await.expect("seed enqueue")
}

/// Claims exactly one pending entry at `now`; panics when none is claimable.
pub async fn claim_one(store: &DynStore, owner: &str, now: DateTime<Utc>) -> Claim {
    let mut claims = store
        .claim_pending(&claim_req(owner, 1, now))
        .await
        .expect("claim");
    assert_eq!(claims.len(), 1, "expected one claimable entry at {now}");
    claims.remove(0)
}

/// Ids of `entries`, in order.
pub fn ids<'a>(entries: impl IntoIterator<Item = &'a OutboxEntry>) -> Vec<EntryId> {
    entries.into_iter().map(|e| e.id).collect()
}

/// Ids of `claims`, in order.
pub fn claim_ids(claims: &[Claim]) -> Vec<EntryId> {
    claims.iter().map(Claim::id).collect()
}

/// A delivered completion for each of `claims`, recorded at `at`.
pub fn delivered_at(claims: &[Claim], at: DateTime<Utc>) -> Vec<CompletionRequest> {
    claims
        .iter()
        .map(|c| {
            CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new())).at(at)
        })
        .collect()
}

/// The durable entry; panics if it is gone.
pub async fn durable(store: &DynStore, id: EntryId) -> OutboxEntry {
    store.get(id).await.expect("get").expect("entry exists")
}

/// An emission error for failure transitions.
pub fn boom() -> EmissionError {
    EmissionError::new("provider said no")
}

/// Asserts an outcome with the durable status, naming both on failure.
pub fn assert_outcome(
    result: &outbox_core::TransitionResult,
    outcome: TransitionOutcome,
    status: EmissionStatus,
) {
    assert_eq!(
        (result.outcome, result.entry.status),
        (outcome, status),
        "unexpected outcome for entry {}",
        result.entry.id
    );
}

/// Asserts the claim fields of `entry` are all cleared.
pub fn assert_unclaimed(entry: &OutboxEntry) {
    assert_eq!(entry.claim_owner, None, "owner not cleared");
    assert_eq!(entry.claim_token, None, "token not cleared");
    assert_eq!(entry.claimed_at, None, "claimed_at not cleared");
    assert_eq!(entry.claim_expires_at, None, "expiry not cleared");
}
