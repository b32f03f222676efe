//! The whole conformance suite against the PostgreSQL store, each case in its own schema.

use std::sync::Arc;

use outbox_testkit::Subject;

use crate::support;

pub(crate) async fn subject() -> Option<Subject> {
    let db = support::ordered_db().await?;
    let store = support::store(&db, 4).await;
    Some(Subject::new(Arc::new(store)).with_guard(db))
}
