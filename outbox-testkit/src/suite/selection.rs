//! The selection-only path: find without claiming, save with a stamp check, enqueue, prune.

use outbox_core::{
    Completion, CompletionRequest, EmissionResult, EmissionStatus, FindRequest, NewEntry,
    PruneRequest, TransitionOutcome,
};

use crate::fixtures::*;

/// Finding entries neither claims nor writes them.
pub async fn find_does_not_claim(store: DynStore) {
    let written = seed(&store, 3).await;
    let found = store
        .find_pending(&FindRequest::new(10).at(t0()))
        .await
        .unwrap();
    assert_eq!(found, written);
    let claims = store
        .claim_pending(&claim_req("w", 10, t0()))
        .await
        .unwrap();
    assert_eq!(claims.len(), 3);
}

/// Find-retry-ready lists due deferred and retryable rows only.
pub async fn find_retry_ready_lists_due_rows(store: DynStore) {
    seed(&store, 3).await;
    let claims = store.claim_pending(&claim_req("w", 3, t0())).await.unwrap();
    store
        .mark_failed(&claims[0], boom(), Some(at(10)))
        .await
        .unwrap();
    store
        .complete(CompletionRequest::new(
            claims[1].clone(),
            Completion::Deferred {
                until: at(100),
                reason: None,
            },
        ))
        .await
        .unwrap();
    store.mark_failed(&claims[2], boom(), None).await.unwrap();
    let due = store
        .find_retry_ready(&FindRequest::new(10).at(at(50)))
        .await
        .unwrap();
    assert_eq!(ids(&due), vec![claims[0].id()]);
}

/// Save with the current stamp applies and replaces the stamp.
pub async fn save_with_current_stamp_applies(store: DynStore) {
    let written = seed(&store, 1).await;
    let mut entry = written[0].clone();
    entry.status = EmissionStatus::Delivered;
    entry.delivered_at = Some(at(3));
    let saved = store.save(&entry, Some(at(3))).await.unwrap();
    assert_outcome(
        &saved,
        TransitionOutcome::Applied,
        EmissionStatus::Delivered,
    );
    assert_ne!(saved.entry.stamp, written[0].stamp);
    assert_eq!(saved.entry, durable(&store, entry.id).await);
}

/// Save with a stamp that changed since the read is refused as a lost race.
pub async fn save_with_stale_stamp_is_concurrency_lost(store: DynStore) {
    let written = seed(&store, 1).await;
    // A claim writes the row, so the snapshot from enqueue is now stale.
    let claim = claim_one(&store, "w", t0()).await;
    let mut stale = written[0].clone();
    stale.status = EmissionStatus::Delivered;
    let result = store.save(&stale, Some(at(1))).await.unwrap();
    assert_outcome(
        &result,
        TransitionOutcome::ConcurrencyLost,
        EmissionStatus::Pending,
    );
    assert_eq!(result.entry, *claim.entry);
    assert_eq!(
        durable(&store, claim.id()).await,
        *claim.entry,
        "stale save wrote"
    );
}

/// Saving over a terminal row, or a row that does not exist, writes nothing.
pub async fn save_terminal_or_missing_writes_nothing(store: DynStore) {
    seed(&store, 1).await;
    let claim = claim_one(&store, "w", t0()).await;
    let done = store
        .mark_delivered(&claim, EmissionResult::new())
        .await
        .unwrap();
    let mut again = done.entry.clone();
    again.status = EmissionStatus::Pending;
    let result = store.save(&again, None).await.unwrap();
    assert_outcome(
        &result,
        TransitionOutcome::Terminal,
        EmissionStatus::Delivered,
    );
    let mut ghost = done.entry.clone();
    ghost.id = outbox_core::EntryId::new();
    let result = store.save(&ghost, None).await.unwrap();
    assert_eq!(result.outcome, TransitionOutcome::Missing);
    assert!(store.get(ghost.id).await.unwrap().is_none());
}

/// Every field of a new entry survives the round trip through the store.
pub async fn enqueue_round_trips_every_field(store: DynStore) {
    let new = NewEntry::new("orders.created", vec![0u8, 159, 146, 150, 255])
        .partition_key("customer-7")
        .header("content-type", "application/octet-stream")
        .header("trace", "abc")
        .not_before(at(5))
        .created_at(at(-1));
    let written = store.enqueue(new.clone()).await.unwrap();
    assert_eq!(written.id, new.id);
    assert_eq!(written.payload, new.payload);
    assert_eq!(written.headers, new.headers);
    assert_eq!(written.partition_key.as_deref(), Some("customer-7"));
    assert_eq!(written.not_before, Some(at(5)));
    assert_eq!(written.created_at, at(-1));
    assert_eq!(written.status, EmissionStatus::Pending);
    assert_eq!((written.attempt_count, written.claim_attempt_count), (0, 0));
    assert_eq!(durable(&store, new.id).await, written);
}

/// An id that already exists fails the whole batch; nothing in it is written.
pub async fn duplicate_id_writes_nothing(store: DynStore) {
    let existing = seed(&store, 1).await.remove(0);
    let fresh = new_entry(-1);
    let fresh_id = fresh.id;
    let err = store
        .enqueue_batch(vec![fresh, new_entry(-2).with_id(existing.id)])
        .await
        .unwrap_err();
    assert!(
        matches!(err, outbox_core::OutboxError::DuplicateId(id) if id == existing.id),
        "{err}"
    );
    assert!(
        store.get(fresh_id).await.unwrap().is_none(),
        "half a batch was written"
    );
    assert_eq!(durable(&store, existing.id).await, existing);
}

/// Prune deletes delivered rows older than the cut-off, a bounded batch at a time, and
/// nothing else.
pub async fn prune_deletes_only_old_delivered_rows(store: DynStore) {
    seed(&store, 5).await;
    let claims = store.claim_pending(&claim_req("w", 5, t0())).await.unwrap();
    for (i, c) in claims.iter().take(3).enumerate() {
        let secs = i64::try_from(i).unwrap();
        store
            .complete(
                CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new()))
                    .at(at(secs)),
            )
            .await
            .unwrap();
    }
    store
        .mark_dead_lettered(&claims[3], boom(), None)
        .await
        .unwrap();
    let req = PruneRequest {
        delivered_before: at(2),
        batch_size: 1,
    };
    assert_eq!(store.prune_delivered(&req).await.unwrap(), 1);
    assert_eq!(store.prune_delivered(&req).await.unwrap(), 1);
    assert_eq!(store.prune_delivered(&req).await.unwrap(), 0);
    assert!(store.get(claims[0].id()).await.unwrap().is_none());
    assert!(store.get(claims[1].id()).await.unwrap().is_none());
    for c in &claims[2..] {
        assert!(
            store.get(c.id()).await.unwrap().is_some(),
            "pruned a row it must keep"
        );
    }
}
