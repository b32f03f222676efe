//! Which engine serves a database URL: the engines as a table of data, chosen by scheme.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use outbox_core::{AdminClaimStore, Observed, OutboxError, Result, TableName};

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

static ENGINES: &[&Engine] = &[
    &crate::engine_sqlite::ENGINE,
    &crate::engine_postgres::ENGINE,
    &crate::engine_sqlserver::ENGINE,
];

impl Target {
    /// The engine serving this URL's scheme; refuses options it has no use for.
    pub(crate) fn engine(&self) -> Result<&'static Engine> {
        let engine = self.engine_by_scheme()?;
        if self.table.schema().is_some() && !engine.has_schemas {
            return Err(OutboxError::invalid(
                "--schema",
                format!(
                    "{} has no schemas: drop --schema (the table lives in the database file)",
                    engine.name
                ),
            ));
        }
        Ok(engine)
    }

    fn engine_by_scheme(&self) -> Result<&'static Engine> {
        let scheme = self.url.split_once(':').map(|(s, _)| s).unwrap_or_default();
        // `Server=host;Database=db;…` has no scheme: the shape says what it is.
        let key_values = !self.url.contains("://") && self.url.contains('=');
        ENGINES
            .iter()
            .copied()
            .find(|e| {
                e.schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme))
                    || (key_values && e.connection_strings)
            })
            .ok_or_else(|| {
                let known: Vec<String> = ENGINES
                    .iter()
                    .flat_map(|e| e.schemes.iter().map(|s| format!("{s}://")))
                    .collect();
                OutboxError::invalid(
                    "database url",
                    format!(
                        "unsupported scheme {scheme:?} (expected one of: {}, or an ADO.NET string Server=…;Database=…)",
                        known.join(", ")
                    ),
                )
            })
    }

    /// Opens the store, observed (transition metric and warnings).
    pub(crate) async fn open(&self) -> Result<Arc<dyn AdminClaimStore>> {
        (self.engine()?.open)(self).await
    }

    /// Opens the store for commands that only read (stats, lists, show): a database the
    /// process cannot write can still be inspected.
    pub(crate) async fn open_for_reading(&self) -> Result<Arc<dyn AdminClaimStore>> {
        let reading = Self {
            reading: true,
            ..self.clone()
        };
        (self.engine()?.open)(&reading).await
    }
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
