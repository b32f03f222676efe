use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Claim, OutboxEntry};

/// Whether one call applied the transition it asked for, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransitionOutcome {
    /// This call wrote the requested transition; the entry is what it wrote. For a
    /// completion, "this call" is the request: sent again after an attempt whose reply
    /// was lost, it is still `Applied` if that attempt wrote it (see
    /// [`crate::CompletionRequest`]).
    Applied,
    /// The row exists and is not terminal, but the claim's owner or token no longer
    /// matches (released, completed and requeued, or reclaimed by another worker after the
    /// lease expired). Nothing was written; the entry is the durable one.
    StaleClaim,
    /// The row was already delivered or dead-lettered before this call tried to write.
    /// Nothing was written; the entry is the durable terminal one.
    Terminal,
    /// The claim was valid when checked, but another writer changed the row before this
    /// call's write. Nothing was written; the entry is the durable winner, which may be
    /// terminal and must still not be credited to this caller. Stores whose check and
    /// write are one atomic step never report it (see [`crate::Capabilities`]).
    ConcurrencyLost,
    /// There is no such row. The entry is the caller's own last snapshot, returned only so
    /// the caller keeps its id and context; it is not durable state.
    Missing,
}

impl TransitionOutcome {
    /// Every outcome.
    pub const ALL: [TransitionOutcome; 5] = [
        Self::Applied,
        Self::StaleClaim,
        Self::Terminal,
        Self::ConcurrencyLost,
        Self::Missing,
    ];

    /// The stable name used in metric tags and logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::StaleClaim => "stale_claim",
            Self::Terminal => "terminal",
            Self::ConcurrencyLost => "concurrency_lost",
            Self::Missing => "missing",
        }
    }

    /// Judges a claim against the durable row before a write: `None` when the claim is
    /// still held and the row may be written, otherwise the outcome to report.
    ///
    /// A lease that ran out but was not reclaimed is still held: its token still matches,
    /// so its holder may complete it. A reclaim replaces the token, which is what ends it.
    pub fn precheck(current: Option<&OutboxEntry>, claim: &Claim) -> Option<Self> {
        let Some(row) = current else {
            return Some(Self::Missing);
        };
        if row.status.is_terminal() {
            return Some(Self::Terminal);
        }
        let held = row.claim_token == Some(claim.token)
            && row.claim_owner.as_deref() == Some(claim.owner.as_str());
        if held {
            None
        } else {
            Some(Self::StaleClaim)
        }
    }

    /// Judges a completion request against the durable row before a write, like
    /// [`TransitionOutcome::precheck`], except that a row already carrying the request's
    /// own stamp reports `Applied`: an earlier attempt of this same request wrote it (its
    /// reply was lost), so there is nothing left to write and the write is this caller's.
    pub fn precheck_completion(
        current: Option<&OutboxEntry>,
        req: &crate::CompletionRequest,
    ) -> Option<Self> {
        match current {
            Some(row) if row.stamp == req.stamp => Some(Self::Applied),
            _ => Self::precheck(current, &req.claim),
        }
    }
}

impl fmt::Display for TransitionOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The answer to a claimed transition: what this call achieved, and the durable entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransitionResult {
    /// Whether this call applied the transition.
    pub outcome: TransitionOutcome,
    /// The entry after the call (see [`TransitionOutcome`] for what it means per outcome).
    pub entry: OutboxEntry,
}

impl TransitionResult {
    /// True only when this call wrote the transition.
    pub fn is_applied(&self) -> bool {
        self.outcome == TransitionOutcome::Applied
    }

    /// Builds a result.
    pub fn new(outcome: TransitionOutcome, entry: OutboxEntry) -> Self {
        Self { outcome, entry }
    }
}
