//! The domain model. Nothing here knows about SQL.

mod claim;
mod completion;
mod emission;
mod entry;
mod id;
mod outcome;
mod slice;
mod status;

pub use claim::{Claim, ClaimRequest, RenewOutcome, RenewRequest};
pub use completion::{Completion, CompletionRequest, TargetState};
pub use emission::{EmissionError, EmissionResult};
pub use entry::{Headers, NewEntry, OutboxEntry};
pub use id::EntryId;
pub use outcome::{TransitionOutcome, TransitionResult};
pub use slice::{slice_hash, Slice, MAX_SLICES};
pub use status::EmissionStatus;
