#![doc = include_str!("../README.md")]

mod admin;
mod admin_requests;
mod bounded;
mod claim_groups;
mod claim_start;
mod cleanup;
mod clock;
mod column_cursor;
mod conflict_retry;
mod detached;
pub mod drain;
pub mod duration;
mod entry_columns;
mod error;
mod ident;
mod limits;
mod listing;
mod memory;
pub mod metric_names;
mod migration;
mod migrator;
mod model;
mod observe;
mod outcomes;
pub mod portable;
mod redact;
mod store;
mod store_basics;
pub mod store_kit;
mod topics;
#[cfg(feature = "otel")]
pub mod trace_context;
mod writes;

pub use admin::{AdminClaimStore, ListRequest, OutboxAdmin, OutboxStats};
pub use admin_requests::{
    DeadLetterSelection, DeadLettersRequest, PurgeRequest, RequeueRequest, StatsRequest,
};
pub use bounded::{Bounded, MAX_CALL_TIMEOUT};
pub use claim_start::{DEFAULT_FULL_WALK_EVERY, MAX_FULL_WALK_EVERY};
pub use cleanup::{CleanupStats, CleanupThresholds, HeldSnapshot};
pub use clock::{Clock, ManualClock, ManualTimer, SystemClock, SystemTimer, Timer};
pub use conflict_retry::ConflictRetry;
pub use drain::{
    Drain, DrainOptions, DrainSummary, Emission, EmitOutcome, Emitter, HeadFailure, RetryPolicy,
};
pub use error::{error_chain, BoxError, OutboxError, Result};
pub use ident::{Quotes, TableName, MAX_IDENTIFIER_BYTES};
pub use limits::{StoreLimits, DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_PAYLOAD_BYTES, MAX_NAME_BYTES};
pub use memory::MemoryClaimStore;
pub use migration::{Migration, RecordedSchema};
pub use model::slice_hash;
pub use model::{
    Claim, ClaimRequest, Completion, CompletionRequest, EmissionError, EmissionResult,
    EmissionStatus, EntryId, Headers, NewEntry, OutboxEntry, RenewOutcome, RenewRequest, Slice,
    TargetState, TransitionOutcome, TransitionResult, MAX_SLICES,
};
pub use observe::Observed;
pub use redact::redact_url;
pub use store::{Capabilities, ClaimStore, FindRequest, OutboxStore, PruneRequest, WakeSignal};
pub use topics::{TopicStats, MAX_TOPICS};

pub use async_trait::async_trait;
pub use chrono;
pub use uuid;
