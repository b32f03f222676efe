//! What a drain did.

use crate::{Completion, TransitionOutcome};

/// Counts of what a drain (or one of its cycles) did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DrainSummary {
    /// Cycles run, those that failed included.
    pub cycles: u64,
    /// Entries claimed (or found, without claim leases).
    pub claimed: u64,
    /// Emissions attempted.
    pub emitted: u64,
    /// Entries this drain recorded as delivered.
    pub delivered: u64,
    /// Entries deferred by the provider.
    pub deferred: u64,
    /// Entries scheduled for another attempt after a retryable failure.
    pub retried: u64,
    /// Entries this drain dead-lettered.
    pub dead_lettered: u64,
    /// Claims given back unemitted (shutdown).
    pub released: u64,
    /// Completions that were not applied (stale, terminal, lost, missing) and leases lost
    /// before completion.
    pub not_applied: u64,
    /// Cycles that failed with a store error (the drain backs off and goes on).
    pub errors: u64,
    /// Emissions that met a failing route ([`super::EmitOutcome::RouteFailed`]); their
    /// entries were held, counted in `deferred` when the hold was recorded.
    pub route_failures: u64,
    /// The drain stopped because a route failed for longer than
    /// [`super::DrainOptions::route_down_limit`].
    pub route_gave_up: bool,
    /// The drain stopped because the store refused the schema it found when it checked
    /// again ([`super::DrainOptions::schema_check_interval`]): contracted past this
    /// release's window, reverted below its version, or gone. The log says which.
    pub schema_refused: bool,
}

impl DrainSummary {
    /// Adds another summary's counts to this one.
    pub fn add(&mut self, other: &DrainSummary) {
        self.cycles += other.cycles;
        self.claimed += other.claimed;
        self.emitted += other.emitted;
        self.delivered += other.delivered;
        self.deferred += other.deferred;
        self.retried += other.retried;
        self.dead_lettered += other.dead_lettered;
        self.released += other.released;
        self.not_applied += other.not_applied;
        self.errors += other.errors;
        self.route_failures += other.route_failures;
        self.route_gave_up |= other.route_gave_up;
        self.schema_refused |= other.schema_refused;
    }

    /// Counts one recorded completion: by what it recorded when it was applied, as not
    /// applied otherwise.
    pub(super) fn tally(&mut self, completion: &Completion, outcome: TransitionOutcome) {
        if outcome != TransitionOutcome::Applied {
            self.not_applied += 1;
            return;
        }
        match completion {
            Completion::Delivered(_) => self.delivered += 1,
            Completion::Deferred { .. } => self.deferred += 1,
            Completion::Failed { .. } => self.retried += 1,
            Completion::DeadLettered { .. } => self.dead_lettered += 1,
            Completion::Release { .. } => self.released += 1,
            Completion::Save(_) => {}
        }
    }
}
