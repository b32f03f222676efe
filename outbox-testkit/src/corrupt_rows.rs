//! Rows edited by hand into shapes the store never writes: every way the store reads
//! one back gives a `CorruptRow` error naming the row's id (or, for a claim that writes
//! the broken fields afresh, the claim), never another error and never a panic. Each
//! engine gives its edits as data (SQL assignments) and a way to apply one.

use std::future::Future;

use chrono::TimeDelta;
use outbox_core::{
    AdminClaimStore, ClaimRequest, EmissionStatus, EntryId, ListRequest, NewEntry, OutboxError,
    Result,
};

/// One hand edit.
#[derive(Debug, Clone, Copy)]
pub struct HandEdit {
    /// What the edit breaks, for failure messages.
    pub what: &'static str,
    /// The SQL assignments (`attempt_count = -1`), applied to the one row.
    pub set: &'static str,
    /// Whether the row is claimed before the edit.
    pub claimed: bool,
}

/// Applies every edit in `edits` to a fresh entry of its own, through `apply(set, id)`
/// (which runs `UPDATE table SET {set} WHERE id = {id}`), and reads each row back with
/// `get`, `list` and a claim of its topic.
pub async fn hand_edited_rows_are_reported_by_id<F, Fut>(
    store: &dyn AdminClaimStore,
    edits: &[HandEdit],
    apply: F,
) where
    F: Fn(&'static str, EntryId) -> Fut,
    Fut: Future<Output = std::result::Result<(), String>>,
{
    for (n, edit) in edits.iter().enumerate() {
        let topic = format!("hand-edit-{n}");
        let entry = store
            .enqueue(NewEntry::new(&topic, b"{}".to_vec()))
            .await
            .expect("enqueue");
        let lease = TimeDelta::milliseconds(1);
        if edit.claimed {
            let claim = ClaimRequest::new("editor", 1, lease).topic(&topic);
            let claims = store.claim_pending(&claim).await.expect("claim");
            assert_eq!(claims.len(), 1, "{}: the row was not claimed", edit.what);
            // Let the lease run out, so the row can be claimed again below.
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        if let Err(e) = apply(edit.set, entry.id).await {
            panic!("{}: the edit {:?} was refused: {e}", edit.what, edit.set);
        }
        let id = entry.id;
        corrupt(edit, id, "get", store.get(id).await);
        let mut list = ListRequest::new(EmissionStatus::Pending, 10);
        list.topic = Some(topic.clone());
        corrupt(edit, id, "list", store.list(&list).await);
        let claim = ClaimRequest::new("reader", 10, TimeDelta::seconds(30)).topic(&topic);
        match store.claim_pending(&claim).await {
            Ok(_) => {}
            result => corrupt(edit, id, "claim", result),
        }
    }
}

fn corrupt<T: std::fmt::Debug>(edit: &HandEdit, id: EntryId, read: &str, result: Result<T>) {
    match result {
        Err(OutboxError::CorruptRow { id: named, reason }) => assert_eq!(
            named,
            id.to_string(),
            "{}: {read} named the wrong row ({reason})",
            edit.what
        ),
        other => panic!(
            "{}: {read} of the edited row gave {other:?}, not CorruptRow",
            edit.what
        ),
    }
}
