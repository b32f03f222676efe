//! The domain model. Nothing here knows about SQL.

mod claim;
mod completion;
mod emission;
mod entry;
mod id;
mod outcome;
mod status;

pub use claim::{Claim, ClaimRequest, RenewOutcome, RenewRequest};
pub use completion::{Completion, CompletionRequest, TargetState};
pub use emission::{EmissionError, EmissionResult};
pub use entry::{Headers, NewEntry, OutboxEntry};
pub use id::EntryId;
pub use outcome::{TransitionOutcome, TransitionResult};
pub use status::EmissionStatus;
