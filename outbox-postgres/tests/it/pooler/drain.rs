//! The drain scenarios through the pooler, in the unnamed statement mode.

use outbox_testkit::drain_cases::DrainSubject;

pub(super) async fn drain_subject() -> Option<DrainSubject> {
    let (db, bouncer) = super::pooled_db().await?;
    let store = super::store_through(&db, bouncer, 4).await;
    Some(crate::drain::subject_of(store, db))
}
