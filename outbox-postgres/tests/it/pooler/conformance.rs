//! The whole conformance suite through the pooler, in the unnamed statement mode.

use std::sync::Arc;

use outbox_testkit::Subject;

pub(super) async fn subject() -> Option<Subject> {
    let (db, bouncer) = super::pooled_db().await?;
    let store = super::store_through(&db, bouncer, 4).await;
    Some(Subject::new(Arc::new(store)).with_guard(db))
}
