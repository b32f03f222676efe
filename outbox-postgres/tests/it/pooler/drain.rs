//! The drain scenarios through the pooler, in the unnamed statement mode.

use std::sync::Arc;

use outbox_core::{ManualClock, Observed};
use outbox_testkit::drain_cases::DrainSubject;

async fn drain_subject() -> Option<DrainSubject> {
    let (db, bouncer) = super::pooled_db().await?;
    let store = super::store_through(&db, bouncer, 4).await;
    Some(DrainSubject {
        store: Arc::new(Observed::new(store)),
        clock: Arc::new(ManualClock::new(outbox_testkit::fixtures::t0())),
        guard: Box::new(db),
    })
}

outbox_testkit::drain_suite!(drain_subject);
outbox_testkit::keyed_drain_suite!(drain_subject);
