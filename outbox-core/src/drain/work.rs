//! What a cycle works on (claimed or found entries), and what recording part of it
//! gives back.

use std::sync::Arc;

use super::{DrainSummary, EmitOutcome};
use crate::{Claim, EntryId, OutboxEntry};

/// One entry the cycle works on: leased, or merely found (compatibility path). The entry
/// is shared either way, so handing it to an emission never copies its payload.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // One per entry in flight; boxing would only add an allocation.
pub(super) enum Work {
    Claimed(Claim),
    Found(Arc<OutboxEntry>),
}

impl Work {
    pub(super) fn entry(&self) -> &OutboxEntry {
        self.shared()
    }

    /// The entry, shared.
    pub(super) fn shared(&self) -> &Arc<OutboxEntry> {
        match self {
            Self::Claimed(c) => &c.entry,
            Self::Found(e) => e,
        }
    }
}

/// What recording a sub-batch gives back: the summary of what it wrote, or the error and
/// the outcomes it took (recorded again with the rest of the batch).
pub(super) type Recorded =
    std::result::Result<DrainSummary, (crate::OutboxError, Vec<(EntryId, EmitOutcome)>)>;

/// A sub-batch of finished emissions being recorded, with their ids.
pub(super) type Recording<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = (Vec<EntryId>, Recorded)> + Send + 'a>>;
