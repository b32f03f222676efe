//! The operator operations against the PostgreSQL store, each case in its own schema.

use std::sync::Arc;

use outbox_testkit::admin_cases::AdminStore;
use outbox_testkit::postgres::PgTestDb;

use crate::support;

pub(crate) async fn admin_subject() -> Option<(AdminStore, PgTestDb)> {
    let db = support::migrated_db().await?;
    let store = support::store(&db, 4).await;
    Some((Arc::new(store), db))
}

pub(crate) async fn ordered_admin_subject() -> Option<(AdminStore, PgTestDb)> {
    let db = support::ordered_db().await?;
    let store = support::store(&db, 4).await;
    Some((Arc::new(store), db))
}
