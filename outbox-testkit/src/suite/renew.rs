//! Lease renewal: only claims still held are extended.

use outbox_core::{EmissionResult, EmissionStatus, RenewOutcome, RenewRequest, TransitionOutcome};

use crate::fixtures::*;

/// A held claim's lease is extended from the renewal time; the row stays out of reach
/// until the new expiry.
pub async fn renew_extends_held_claims(store: DynStore) {
    seed(&store, 2).await;
    let claims = store.claim_pending(&claim_req("w", 2, t0())).await.unwrap();
    let renewed = store
        .renew(&claims, &RenewRequest::new(lease()).at(at(20)))
        .await
        .unwrap();
    assert_eq!(renewed.len(), 2);
    for (outcome, claim) in renewed.iter().zip(&claims) {
        let r = outcome.renewed().expect("held claim was not renewed");
        assert_eq!(
            (r.id(), r.token, &r.owner),
            (claim.id(), claim.token, &claim.owner)
        );
        assert_eq!(r.expires_at, at(20) + lease());
        assert_eq!(durable(&store, claim.id()).await, *r.entry);
    }
    // Past the old expiry, before the new one: nobody else may claim.
    let between = claims[0].expires_at + chrono::TimeDelta::seconds(1);
    assert!(store
        .claim_pending(&claim_req("b", 10, between))
        .await
        .unwrap()
        .is_empty());
    let after = at(20) + lease();
    assert_eq!(
        store
            .claim_pending(&claim_req("b", 10, after))
            .await
            .unwrap()
            .len(),
        2
    );
}

/// Claims that were reclaimed, completed or deleted are reported lost, in input order,
/// and renewing them writes nothing.
pub async fn renew_reports_claims_no_longer_held(store: DynStore) {
    seed(&store, 3).await;
    let claims = store.claim_pending(&claim_req("a", 3, t0())).await.unwrap();
    // 0: completed; 1: reclaimed by b after expiry; 2: still held.
    store
        .mark_delivered(&claims[0], EmissionResult::new())
        .await
        .unwrap();
    let expiry = claims[1].expires_at;
    let reclaimed = store
        .claim_pending(&claim_req("b", 1, expiry))
        .await
        .unwrap();
    assert_eq!(claim_ids(&reclaimed), vec![claims[1].id()]);
    let outcomes = store
        .renew(&claims, &RenewRequest::new(lease()).at(expiry))
        .await
        .unwrap();
    match &outcomes[0] {
        RenewOutcome::Lost(r) => {
            assert_outcome(r, TransitionOutcome::Terminal, EmissionStatus::Delivered)
        }
        other => panic!("completed claim renewed: {other:?}"),
    }
    match &outcomes[1] {
        RenewOutcome::Lost(r) => {
            assert_outcome(r, TransitionOutcome::StaleClaim, EmissionStatus::Pending);
            assert_eq!(r.entry.claim_owner.as_deref(), Some("b"));
        }
        other => panic!("reclaimed claim renewed: {other:?}"),
    }
    assert!(
        outcomes[2].renewed().is_some(),
        "expired-but-unreclaimed claim is still held"
    );
    assert_eq!(
        durable(&store, claims[1].id()).await,
        *reclaimed[0].entry,
        "renewal touched b's lease"
    );
}
