//! Bad input: a clear error naming the problem, and nothing written.

use chrono::TimeDelta;
use outbox_core::{ClaimRequest, FindRequest, NewEntry, OutboxError, RenewRequest};

use crate::fixtures::*;

fn assert_invalid(err: OutboxError, field: &str) {
    match &err {
        OutboxError::InvalidInput { field: f, .. } => assert_eq!(*f, field, "{err}"),
        other => panic!("expected invalid {field}, got {other}"),
    }
    assert!(
        err.to_string().contains(field),
        "message does not name {field}: {err}"
    );
}

/// Claims with nothing claimed leave every row as it was.
async fn assert_untouched(store: &DynStore, written: &[outbox_core::OutboxEntry]) {
    for e in written {
        assert_eq!(&durable(store, e.id).await, e, "a refused call wrote");
    }
}

/// A batch size of 0 is refused.
pub async fn batch_size_zero_is_refused(store: DynStore) {
    let written = seed(&store, 1).await;
    let err = store
        .claim_pending(&claim_req("w", 0, t0()))
        .await
        .unwrap_err();
    assert_invalid(err, "batch size");
    let err = store
        .claim_retry_ready(&claim_req("w", 0, t0()))
        .await
        .unwrap_err();
    assert_invalid(err, "batch size");
    assert_untouched(&store, &written).await;
}

/// A batch size above the store's maximum is refused; the maximum itself is accepted.
pub async fn batch_size_above_maximum_is_refused(store: DynStore) {
    let max = store.limits().max_batch_size;
    assert!(
        max >= 1000,
        "the maximum batch size must be at least 1000, is {max}"
    );
    let written = seed(&store, 1).await;
    let err = store
        .claim_pending(&claim_req("w", max + 1, t0()))
        .await
        .unwrap_err();
    assert_invalid(err, "batch size");
    assert_untouched(&store, &written).await;
    assert_eq!(
        store
            .claim_pending(&claim_req("w", max, t0()))
            .await
            .unwrap()
            .len(),
        1
    );
}

/// A lease of zero or negative length is refused.
pub async fn non_positive_lease_is_refused(store: DynStore) {
    let written = seed(&store, 1).await;
    for lease in [TimeDelta::zero(), TimeDelta::seconds(-5)] {
        let err = store
            .claim_pending(&ClaimRequest::new("w", 1, lease).at(t0()))
            .await
            .unwrap_err();
        assert_invalid(err, "lease");
    }
    assert_untouched(&store, &written).await;
}

/// An empty (or blank) owner is refused.
pub async fn empty_owner_is_refused(store: DynStore) {
    let written = seed(&store, 1).await;
    for owner in ["", "   "] {
        let err = store
            .claim_pending(&claim_req(owner, 1, t0()))
            .await
            .unwrap_err();
        assert_invalid(err, "owner");
    }
    assert_untouched(&store, &written).await;
}

/// A payload above the configured maximum is refused and nothing of its batch is written.
pub async fn oversized_payload_is_refused(store: DynStore) {
    let max = store.limits().max_payload_bytes;
    let ok = new_entry(-2);
    let ok_id = ok.id;
    let big = NewEntry::new("t", vec![7u8; max + 1]);
    let err = store.enqueue_batch(vec![ok, big]).await.unwrap_err();
    assert_invalid(err, "payload");
    assert!(
        store.get(ok_id).await.unwrap().is_none(),
        "half a batch was written"
    );
    let exact = store
        .enqueue(NewEntry::new("t", vec![7u8; max]))
        .await
        .unwrap();
    assert_eq!(exact.payload.len(), max);
}

/// An empty topic is refused.
pub async fn empty_topic_is_refused(store: DynStore) {
    let entry = NewEntry::new("", b"x".to_vec());
    let id = entry.id;
    assert_invalid(store.enqueue(entry).await.unwrap_err(), "topic");
    assert!(store.get(id).await.unwrap().is_none());
}

/// Find and renew validate their sizes and leases too.
pub async fn find_and_renew_validate_their_input(store: DynStore) {
    let written = seed(&store, 1).await;
    assert_invalid(
        store.find_pending(&FindRequest::new(0)).await.unwrap_err(),
        "limit",
    );
    let claim = claim_one(&store, "w", t0()).await;
    let err = store
        .renew(
            std::slice::from_ref(&claim),
            &RenewRequest::new(TimeDelta::zero()),
        )
        .await
        .unwrap_err();
    assert_invalid(err, "lease");
    assert_eq!(
        durable(&store, written[0].id).await,
        *claim.entry,
        "refused renewal wrote"
    );
}

/// Per-key order and slices are taken where the store has them and refused, changing
/// nothing, where it does not (never silently ignored).
pub async fn keyed_claims_need_the_capability(store: DynStore) {
    seed(&store, 4).await;
    let caps = store.capabilities();
    let ordered = claim_req("w", 2, t0()).in_key_order();
    let sliced = claim_req("w", 2, t0()).slice(outbox_core::Slice::new(0, 1).unwrap());
    let mut taken = 0;
    for (req, has) in [(ordered, caps.ordered_claims), (sliced, caps.slice_claims)] {
        match store.claim_pending(&req).await {
            Ok(claims) if has => taken += claims.len(),
            Err(outbox_core::OutboxError::Unsupported(_)) if !has => {}
            other => panic!("{req:?} on a store that has it: {has}: {other:?}"),
        }
    }
    let plain = store.claim_pending(&claim_req("w", 4, t0())).await.unwrap();
    assert_eq!(plain.len() + taken, 4, "a refused claim took entries");
}
