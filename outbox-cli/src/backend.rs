//! What an engine is to the command: a target (URL, table, options), and the engine
//! as a table of data (its schemes, how it migrates and opens a store). Which engine
//! serves a target is chosen in `engines.rs`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use outbox_core::{AdminClaimStore, Observed, Result, TableName};

use crate::args::StoreKind;

/// A boxed future borrowed for `'a`.
pub(crate) type Fut<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// Where the outbox is and how to serve it.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) url: String,
    pub(crate) kind: StoreKind,
    pub(crate) table: TableName,
    /// Only reads will follow (an engine may then open the database read-only).
    pub(crate) reading: bool,
    /// Each store call's deadline on a database server.
    pub(crate) call_timeout: std::time::Duration,
}

/// One engine: how it applies or prints its schema and how it opens a store.
pub(crate) struct Engine {
    /// URL schemes it serves.
    pub(crate) schemes: &'static [&'static str],
    /// Its name in messages.
    pub(crate) name: &'static str,
    /// Whether `--schema` means anything to it.
    pub(crate) has_schemas: bool,
    /// Whether it also takes `key=value;…` connection strings, which have no scheme.
    pub(crate) connection_strings: bool,
    /// Applies the schema, and with `ordered` prepares the table for claims in per-key
    /// order; returns the resulting version.
    pub(crate) migrate: for<'a> fn(&'a Target, bool) -> Fut<'a, i64>,
    /// The schema as SQL (with `ordered`, the preparation for per-key order after it).
    pub(crate) script: fn(&Target, bool) -> Result<String>,
    /// Opens a store of the requested kind on a migrated database.
    pub(crate) open: for<'a> fn(&'a Target) -> Fut<'a, Arc<dyn AdminClaimStore>>,
}

/// Wraps a store so its transitions are counted and the ones not applied are logged.
pub(crate) fn observed<S: AdminClaimStore + 'static>(store: S) -> Arc<dyn AdminClaimStore> {
    Arc::new(Observed::new(store))
}

/// Like [`observed`], for a store on a server that has no call deadline of its own:
/// every call is given the target's.
pub(crate) fn observed_bounded<S: AdminClaimStore + 'static>(
    store: S,
    target: &Target,
) -> Result<Arc<dyn AdminClaimStore>> {
    Ok(observed(outbox_core::Bounded::new(
        store,
        target.call_timeout,
    )?))
}
