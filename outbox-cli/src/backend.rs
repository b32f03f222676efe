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
    /// How PostgreSQL statements are sent, when the command line says.
    pub(crate) statement_mode: Option<crate::args::StatementModeArg>,
    /// Where a store's listener connects.
    pub(crate) listen: Listen,
    /// How many connections the command's pool opens at most.
    pub(crate) pool: PoolSize,
}

/// Where a store's listener connects (engines with one: PostgreSQL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Listen {
    /// On the database URL.
    Same,
    /// On a URL of its own (a direct connection past a transaction pooler).
    Url(String),
    /// No listener: drains poll (`--no-listen`).
    Off,
    /// No listener, since the command does not drain.
    NotDraining,
}

/// The command's pool: what its work needs, and the operator's cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PoolSize {
    /// Connections the command's work uses at once.
    pub(crate) needed: u32,
    /// `--pool-size`, when given.
    pub(crate) cap: Option<u32>,
}

impl PoolSize {
    /// Connections for commands other than drain: one call at a time, and a spare.
    pub(crate) const ONE_CALL_AT_A_TIME: u32 = 2;

    /// The pool's size: the cap when given, what is needed otherwise.
    pub(crate) fn size(self) -> u32 {
        self.cap.unwrap_or(self.needed).max(1)
    }
}

/// One engine: how it applies or prints its schema and how it opens a store.
pub(crate) struct Engine {
    /// URL schemes it serves.
    pub(crate) schemes: &'static [&'static str],
    /// Its name in messages.
    pub(crate) name: &'static str,
    /// Whether `--schema` means anything to it.
    pub(crate) has_schemas: bool,
    /// Whether it has a listener (`--listen-url`, `--no-listen`) and statement modes
    /// (`--statement-mode`).
    pub(crate) has_listener: bool,
    /// Whether `--pool-size` means anything to it (a database server's pool).
    pub(crate) has_pool: bool,
    /// The `key=value` connection strings it also takes, which have no scheme.
    pub(crate) key_values: Option<KeyValues>,
    /// Applies the schema, and with `ordered` prepares the table for claims in per-key
    /// order; returns the resulting version.
    pub(crate) migrate: for<'a> fn(&'a Target, bool) -> Fut<'a, i64>,
    /// Reverts the migrations newer than a version, keeping the rows (0: everything);
    /// returns the version the schema is then at.
    pub(crate) migrate_down_to: for<'a> fn(&'a Target, i64) -> Fut<'a, i64>,
    /// The schema as SQL (with `ordered`, the preparation for per-key order after it).
    pub(crate) script: fn(&Target, bool) -> Result<String>,
    /// Opens a store of the requested kind on a migrated database.
    pub(crate) open: for<'a> fn(&'a Target) -> Fut<'a, Arc<dyn AdminClaimStore>>,
}

/// An engine's `key=value` connection string form: how pairs are separated and the keys
/// it knows. A string is the engine's when every key in it is one of these.
pub(crate) struct KeyValues {
    /// What separates the pairs.
    pub(crate) separator: Separator,
    /// The keys the engine's driver takes, lowercase.
    pub(crate) keys: &'static [&'static str],
    /// An example, for messages.
    pub(crate) example: &'static str,
}

/// What separates the pairs of a `key=value` connection string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Separator {
    /// Spaces (libpq: `host=h port=5432 dbname=app`); a value may be single-quoted.
    Whitespace,
    /// Semicolons (ADO.NET: `Server=h;Database=app`).
    Semicolon,
}

impl KeyValues {
    /// Whether `s` is a string of this form: at least one pair, every pair `key=value`
    /// with a key this engine knows.
    pub(crate) fn matches(&self, s: &str) -> bool {
        let pairs = split_pairs(s, self.separator);
        !pairs.is_empty()
            && pairs.iter().all(|pair| {
                pair.split_once('=').is_some_and(|(key, _)| {
                    let key = key.trim().to_ascii_lowercase();
                    self.keys.contains(&key.as_str())
                })
            })
    }
}

/// The non-empty pairs of `s`, split at `separator` outside single quotes.
fn split_pairs(s: &str, separator: Separator) -> Vec<String> {
    let mut pairs = Vec::new();
    let (mut current, mut quoted) = (String::new(), false);
    for c in s.chars() {
        let splits = match separator {
            Separator::Whitespace => c.is_whitespace(),
            Separator::Semicolon => c == ';',
        };
        if c == '\'' {
            quoted = !quoted;
        }
        if splits && !quoted {
            if !current.trim().is_empty() {
                pairs.push(std::mem::take(&mut current));
            }
            current.clear();
        } else {
            current.push(c);
        }
    }
    if !current.trim().is_empty() {
        pairs.push(current);
    }
    pairs
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
