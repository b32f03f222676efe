//! Worker processes on the parent's PostgreSQL schema (see `outbox_testkit::child`): the
//! variables they read, and their store.

pub(crate) use outbox_testkit::child::{command, is, var};

/// The server URL a child connects to.
pub(crate) const URL: &str = "OUTBOX_IT_CHILD_URL";
/// The schema whose outbox table the child works on.
pub(crate) const SCHEMA: &str = "OUTBOX_IT_CHILD_SCHEMA";
/// The owner name the child claims under.
pub(crate) const OWNER: &str = "OUTBOX_IT_CHILD_OWNER";
/// Where the child writes its records.
pub(crate) const LOG: &str = "OUTBOX_IT_CHILD_LOG";

/// A store for a child process on the parent's schema.
pub(crate) async fn store() -> outbox_postgres::PgClaimStore {
    let schema = var(SCHEMA);
    let table = outbox_core::TableName::in_schema(&schema, "outbox").unwrap();
    let pool = crate::support::pool(crate::support::pg_config(&var(URL), &var(OWNER)), 2);
    outbox_postgres::PgClaimStore::new(pool, outbox_postgres::PgStoreConfig::new().table(table))
        .await
        .expect("worker store")
}
