//! What a store that lacks a capability must do instead: refuse every request that needs
//! it, changing nothing. [`crate::store_suite!`] runs this in place of each case of a
//! capability the store does not offer, so a missing capability is checked, not skipped.

use outbox_core::{ClaimRequest, OutboxError, Slice};

use crate::fixtures::*;

/// A claim that needs `capability` (`ordered_claims`, `slice_claims`, `key_runs`), or
/// `None` for a capability no claim asks for by itself.
fn needing(capability: &str) -> Option<ClaimRequest> {
    let req = claim_req("w", 2, t0());
    match capability {
        "ordered_claims" => Some(req.in_key_order()),
        "slice_claims" => Some(req.slice(Slice::new(0, 1).expect("a slice of one"))),
        _ => None,
    }
}

/// Runs `case` when the store has `capability` (as `has` reads it from its
/// [`outbox_core::Capabilities`]); otherwise checks, in its place, that the store refuses
/// what needs the capability ([`refused_without`]).
pub async fn run_or_refused(
    store: DynStore,
    has: fn(&outbox_core::Capabilities) -> bool,
    capability: &str,
    name: &str,
    case: impl std::future::Future<Output = ()>,
) {
    if has(&store.capabilities()) {
        case.await;
    } else {
        refused_without(store, capability, name).await;
    }
}

/// `store` lacks `capability`: a claim that needs it fails with
/// [`OutboxError::Unsupported`] and takes nothing. Says on standard error which case ran
/// as this check, so the log shows what the store was not tested for.
pub async fn refused_without(store: DynStore, capability: &str, case: &str) {
    let caps = store.capabilities();
    eprintln!("{case}: the store has no {capability} ({caps:?}); checked that it refuses it");
    let Some(req) = needing(capability) else {
        panic!(
            "{case}: no claim needs {capability} by itself; the suite names the wrong capability"
        );
    };
    seed(&store, 3).await;
    match store.claim_pending(&req).await {
        Err(OutboxError::Unsupported(_)) => {}
        other => panic!("{case}: a claim that needs {capability} gave {other:?}"),
    }
    let plain = store.claim_pending(&claim_req("w", 3, t0())).await.unwrap();
    assert_eq!(plain.len(), 3, "{case}: the refused claim took entries");
}
