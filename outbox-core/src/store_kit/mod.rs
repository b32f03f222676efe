//! What a store crate needs and a host does not, grouped by concern. A service that only
//! writes entries and runs drains never imports from here; an engine crate
//! (`outbox-sqlite`, `outbox-postgres`, `outbox-mysql`, `outbox-sqlserver`, or a store of
//! your own) builds on it, so every store judges a completion, a renewal and a schema
//! version the same way.
//!
//! - [`outcomes`]: what a guarded write found, as the outcome the contract reports.
//! - [`rows`]: one outbox row read into an entry, given how the engine reads each column.
//! - [`claims`]: which groups a claim takes, and where its walk of the pending index starts.
//! - [`writes`]: batch writes: enqueue chunks, completion targets, bounded deletes, calls
//!   a caller's cancellation cannot cut short.
//! - [`admin`]: operator reads and writes: validation, stats, topic stats, listing SQL.
//! - [`config`]: the settings of a store that opens its own pool (table, limits, clock,
//!   pool size).
//! - [`schema`]: migrations and the schema-version judge ([`schema::Migrator`]).
//! - [`sql`]: SQL templates and times as every store writes them, SQLSTATE mapping.
//! - [`per_row`]: the per-row algorithm of the portable path (a portable store on sqlx
//!   runs on `crate::portable::SqlxBackend`, given its engine's `SqlxEngine`).

pub mod outcomes {
    //! What a guarded write (a completion, renewal or save judged and written on a locked
    //! row) found, as the outcome the contract reports; claimed rows in claim order.
    pub use crate::observe::record_transition;
    pub use crate::outcomes::{
        claims_in_order, completion_result, completion_results, renewal_result, renewal_results,
        save_result, Guarded, GuardedRows,
    };
}

pub mod rows {
    //! One outbox row read into an entry: the engine says how it reads each kind of
    //! column; which columns an entry has and how a bad value is reported are shared.
    pub use crate::column_cursor::ColumnCursor;
    pub use crate::entry_columns::{
        clock, entry, entry_id, uuid_of, written, ColumnRead, EntryColumns,
    };
}

pub mod claims {
    //! Which groups a claim takes, and where its walk of the pending index starts (for
    //! engines that keep index entries of rows no longer pending while a snapshot is held).
    pub use crate::claim_groups::ClaimGroups;
    pub use crate::claim_start::{
        check_full_walk_every, hold_back, kind_label, ClaimStarts, PendingKey, Share, SharedStart,
        WalkStart, COSTLY, SHARE_EVERY,
    };
}

pub mod writes {
    //! Batch writes: an enqueue cut into statements, the rows a batch of completions
    //! writes, deletes in bounded batches, and calls run on a task of their own.
    pub use crate::detached::detached;
    pub use crate::writes::{
        completion_targets, delete_in_batches, first_duplicate, insert_chunks, wrote_all,
        DELETE_BATCH, INSERT_CHUNK_ENTRIES,
    };
}

pub mod admin {
    //! The operator calls: their validation, stats, topic stats and listing statements.
    pub use crate::admin::{check_list, requeued, stats_of, StatsColumns};
    pub use crate::admin_requests::{check_purge, check_requeue};
    pub use crate::listing::{
        ListStatements, STATUS_FLOOR_PLACEHOLDER, STATUS_GROUP_PLACEHOLDER, STATUS_PLACEHOLDER,
    };
    pub use crate::topics::{
        by_listing as topic_stats_by_listing, check_topic_limit, topic_stats_of, TopicGroup,
    };
}

pub mod config {
    //! The settings of a store that opens its own pool (SQLite, MariaDB).
    pub use crate::store_basics::{StoreBasics, DEFAULT_MAX_CONNECTIONS};
}

pub mod schema {
    //! Numbered migrations, their records, and the judge of a schema's version.
    pub use crate::migration::{
        checksum, latest_version, Definition, RecordedDefinition, RecordedSchema, IRREVERSIBLE,
    };
    pub use crate::migrator::{Bookkeeping, Definitions, Migrate, Migrator, ReadSchema};
}

pub mod sql {
    //! SQL templates rendered per table and filter, times at the precision every store
    //! keeps, and SQLSTATE codes in the core's error kinds.
    pub use crate::clock::normalize as normalize_time;
    pub use crate::error::from_sqlstate;
    pub use crate::ident::{without_lines_naming, FilterForms, SliceForms};
}

pub mod per_row;
