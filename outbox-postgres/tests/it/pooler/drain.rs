//! The drain scenarios through the pooler, in the unnamed statement mode.

use outbox_testkit::drain_cases::DrainSubject;

async fn drain_subject() -> Option<DrainSubject> {
    let (db, bouncer) = super::pooled_db().await?;
    let store = super::store_through(&db, bouncer, 4).await;
    Some(crate::drain::subject_of(store, db))
}

outbox_testkit::drain_suite!(drain_subject);
outbox_testkit::keyed_drain_suite!(drain_subject);
