//! The whole conformance suite against the SQL Server store, each case in its own schema.

use std::sync::Arc;

use outbox_testkit::Subject;

use crate::support::SqlServerTestDb;

pub(crate) async fn subject() -> Option<Subject> {
    let db = SqlServerTestDb::create().await?;
    let store = db.store(4).await;
    Some(Subject::new(Arc::new(store)).with_guard(db))
}
