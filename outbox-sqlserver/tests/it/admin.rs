//! The operator operations against the SQL Server store, each case in its own schema.

use std::sync::Arc;

use outbox_testkit::admin_cases::AdminStore;

use crate::support::SqlServerTestDb;

pub(crate) async fn admin_subject() -> Option<(AdminStore, SqlServerTestDb)> {
    let db = SqlServerTestDb::create().await?;
    let store = db.store(4).await;
    Some((Arc::new(store), db))
}
