#![doc = include_str!("../README.md")]

mod admin;
mod bounded;
mod claim_start;
mod cleanup;
mod clock;
pub mod drain;
pub mod duration;
mod error;
mod guarded;
mod ident;
mod limits;
mod memory;
pub mod metric_names;
mod migration;
mod migrator;
mod model;
mod observe;
#[cfg(any(feature = "portable-sqlite", feature = "portable-postgres"))]
pub mod portable;
#[cfg(feature = "portable-sqlite")]
pub mod sqlite_format;
mod store;

pub use admin::{
    check_list, check_requeue, requeued, stats_of, AdminClaimStore, DeadLetterSelection,
    ListRequest, OutboxAdmin, OutboxStats,
};
pub use bounded::{Bounded, MAX_CALL_TIMEOUT};
pub use claim_start::{
    check_full_walk_every, ClaimStarts, PendingKey, WalkStart, COSTLY, DEFAULT_FULL_WALK_EVERY,
    MAX_FULL_WALK_EVERY,
};
pub use cleanup::{CleanupStats, CleanupThresholds, HeldSnapshot};
pub use clock::{normalize as normalize_time, Clock, ManualClock, SystemClock};
pub use error::{from_sqlstate, BoxError, OutboxError, Result};
pub use guarded::{
    claims_in_order, completion_result, completion_results, delete_in_batches,
    judge_schema_version, renewal_result, renewal_results, save_result, Guarded, GuardedRows,
    DELETE_BATCH,
};
pub use ident::{without_lines_naming, SliceForms, TableName, MAX_IDENTIFIER_BYTES};
pub use limits::{StoreLimits, DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_PAYLOAD_BYTES, MAX_NAME_BYTES};
pub use memory::MemoryClaimStore;
pub use migration::{latest_version, Migration};
pub use migrator::{Migrate, Migrator};
pub use model::slice_hash;
pub use model::{
    Claim, ClaimRequest, Completion, CompletionRequest, EmissionError, EmissionResult,
    EmissionStatus, EntryId, Headers, NewEntry, OutboxEntry, RenewOutcome, RenewRequest, Slice,
    TargetState, TransitionOutcome, TransitionResult, MAX_SLICES,
};
pub use observe::{record_transition, Observed};
pub use store::{Capabilities, ClaimStore, FindRequest, OutboxStore, PruneRequest, WakeSignal};

pub use async_trait::async_trait;
pub use chrono;
pub use uuid;
