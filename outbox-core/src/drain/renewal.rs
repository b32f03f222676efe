//! Keeping leases: every claim the drain holds is renewed a third of the way through its
//! lease until its outcome is recorded; one whose renewal reports it lost is never
//! emitted, and its outcome is not recorded.

use std::collections::HashMap;
use std::time::Instant;

use super::ahead::Ahead;
use super::Drain;
use crate::{Claim, EntryId, RenewOutcome, RenewRequest};

impl Drain {
    /// How often held leases are renewed: a third of the lease (at least 10 ms).
    pub(super) fn renew_period(&self) -> std::time::Duration {
        (self.options.lease / 3)
            .to_std()
            .unwrap_or_default()
            .max(std::time::Duration::from_millis(10))
    }

    /// Renews every claim in `held`, replacing each with its renewed form; returns the
    /// ids of the claims found lost (dropped from `held`), or `None` when the store could
    /// not be asked (the claims stay as they were, to be renewed at the next tick).
    pub(super) async fn renew(&self, held: &mut HashMap<EntryId, Claim>) -> Option<Vec<EntryId>> {
        if held.is_empty() {
            return Some(Vec::new());
        }
        let claims: Vec<Claim> = held.values().cloned().collect();
        let mut request = RenewRequest::new(self.options.lease);
        request.now = self.request_time();
        match self.store.renew(&claims, &request).await {
            Ok(outcomes) => Some(outcomes
                .into_iter()
                .filter_map(|o| match o {
                    RenewOutcome::Renewed(c) => {
                        held.insert(c.id(), c);
                        None
                    }
                    RenewOutcome::Lost(r) => {
                        metrics::counter!(crate::metric_names::LOST_RENEWALS).increment(1);
                        tracing::warn!(entry_id = %r.entry.id, outcome = %r.outcome, "lease lost while emitting");
                        held.remove(&r.entry.id);
                        Some(r.entry.id)
                    }
                })
                .collect()),
            Err(e) => {
                metrics::counter!(crate::metric_names::FAILED_RENEWALS, "kind" => e.kind())
                    .increment(1);
                tracing::warn!(owner = %self.options.owner, held = claims.len(), error = %e, "lease renewal failed; will try again");
                None
            }
        }
    }

    /// Renews the claims of `ahead`, dropping the lost ones. `false` when the store could
    /// not be asked (the leases are then unconfirmed).
    pub(super) async fn renew_ahead(&self, ahead: &mut Ahead) -> bool {
        let mut held: HashMap<EntryId, Claim> =
            ahead.claims.iter().map(|c| (c.id(), c.clone())).collect();
        let sent = Instant::now();
        let Some(lost) = self.renew(&mut held).await else {
            return false;
        };
        ahead.lost += lost.len() as u64;
        ahead.claims = ahead
            .claims
            .iter()
            .filter(|c| !lost.contains(&c.id()))
            .filter_map(|c| held.remove(&c.id()))
            .collect();
        ahead.leased_at = sent;
        true
    }
}
