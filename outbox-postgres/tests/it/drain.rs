//! The drain scenarios against the PostgreSQL store. The store reads the database's clock,
//! so the drain stamps every request with the scenario's clock (`Drain::with_test_clock`);
//! entries enqueued at the database's time are already due at that clock's start.

use std::sync::Arc;

use outbox_core::{ManualClock, Observed};
use outbox_postgres::PgClaimStore;
use outbox_testkit::drain_cases::DrainSubject;
use outbox_testkit::postgres::PgTestDb;

use crate::support;

pub(crate) async fn drain_subject() -> Option<DrainSubject> {
    let db = support::ordered_db().await?;
    let store = support::store(&db, 4).await;
    Some(subject_of(store, db))
}

/// The drain scenarios' subject: `store`, observed, at the scenario's clock, keeping `db`.
pub(crate) fn subject_of(store: PgClaimStore, db: PgTestDb) -> DrainSubject {
    DrainSubject {
        store: Arc::new(Observed::new(store)),
        clock: Arc::new(ManualClock::new(outbox_testkit::fixtures::t0())),
        guard: Box::new(db),
    }
}
