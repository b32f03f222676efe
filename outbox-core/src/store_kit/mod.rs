//! What a store crate needs and a host does not: the shared judgement of rows and
//! outcomes, the migration loop ([`Migrator`]), the claim-start bookkeeping, SQL template
//! helpers, error mapping, and the per-row algorithm of the portable path ([`portable`];
//! a portable store on sqlx implements [`crate::portable::PortableBackend`], most of it
//! with [`crate::sqlx_portable_backend!`]). A service that only writes entries and runs
//! drains never imports from here; an engine crate (`outbox-sqlite`, `outbox-postgres`,
//! `outbox-sqlserver`, or a store of your own) builds on it, so every store judges a
//! completion, a renewal and a schema version the same way.

pub use crate::admin::{check_list, check_purge, check_requeue, requeued, stats_of, StatsColumns};
pub use crate::batches::{
    completion_targets, detached, first_duplicate, insert_chunks, wrote_all, INSERT_CHUNK_ENTRIES,
};
pub use crate::claim_groups::ClaimGroups;
pub use crate::claim_start::{
    check_full_walk_every, hold_back, kind_label, ClaimStarts, PendingKey, Share, SharedStart,
    WalkStart, COSTLY, SHARE_EVERY,
};
pub use crate::clock::normalize as normalize_time;
pub use crate::error::from_sqlstate;
pub use crate::guarded::{
    claims_in_order, completion_result, completion_results, delete_in_batches, renewal_result,
    renewal_results, save_result, Guarded, GuardedRows, DELETE_BATCH,
};
pub use crate::ident::{without_lines_naming, FilterForms, SliceForms};
pub use crate::listing::{
    ListStatements, STATUS_FLOOR_PLACEHOLDER, STATUS_GROUP_PLACEHOLDER, STATUS_PLACEHOLDER,
};
pub use crate::migration::{
    checksum, latest_version, Definition, RecordedDefinition, RecordedSchema, IRREVERSIBLE,
};
pub use crate::migrator::{Bookkeeping, Definitions, Migrate, Migrator, ReadSchema};
pub use crate::observe::record_transition;
pub use crate::topics::{
    by_listing as topic_stats_by_listing, check_topic_limit, topic_stats_of, TopicGroup,
};

pub mod portable;
