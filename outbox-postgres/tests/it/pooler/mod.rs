//! The store through a transaction-mode pooler (PgBouncer, two server connections), the
//! way production reaches most PostgreSQL: statements in the unnamed mode, the schema
//! migrated through the pooler too, the listener on a direct connection.

mod conformance;
mod drain;
mod listener;
mod named;
mod race;
mod suite;
mod writer;

use deadpool_postgres::Pool;
use outbox_postgres::{PgClaimStore, PgStoreConfig, StatementMode};
use outbox_testkit::pgbouncer::{self, PgBouncer};
use outbox_testkit::postgres::PgTestDb;

use crate::support;

/// A test's schema, migrated (and prepared for per-key order) through the pooler, and
/// the pooler; `None` (reported loudly) without a server or a PgBouncer.
pub(crate) async fn pooled_db() -> Option<(PgTestDb, &'static PgBouncer)> {
    let db = PgTestDb::create().await?;
    let bouncer = pgbouncer::shared().await?;
    let mut client = outbox_testkit::postgres::connect(&bouncer.url)
        .await
        .expect("connect through the pooler");
    let table = support::table(&db);
    outbox_postgres::migrate(&mut client, &table)
        .await
        .expect("migrate through the pooler");
    outbox_postgres::enable_ordered_claims(&mut client, &table)
        .await
        .expect("enable ordered claims through the pooler");
    Some((db, bouncer))
}

/// A pool of `size` client connections to the pooler (which has two to the server).
pub(crate) fn pool_through(db: &PgTestDb, bouncer: &PgBouncer, size: usize) -> Pool {
    support::pool(
        support::pg_config_via(&db.url, &db.schema, bouncer.addr),
        size,
    )
}

/// A store through the pooler in the unnamed statement mode.
pub(crate) async fn store_through(db: &PgTestDb, bouncer: &PgBouncer, size: usize) -> PgClaimStore {
    support::store_with(
        db,
        pool_through(db, bouncer, size),
        PgStoreConfig::new().statement_mode(StatementMode::Unnamed),
    )
    .await
}
