//! The drain scenarios against the SQLite store, on a file, with an injected clock.

use std::sync::Arc;

use outbox_core::{ManualClock, Observed};
use outbox_sqlite::SqliteStoreConfig;
use outbox_testkit::drain_cases::DrainSubject;

use crate::support::fresh_ordered_store;

pub(crate) async fn drain_subject() -> Option<DrainSubject> {
    let clock = Arc::new(ManualClock::new(outbox_testkit::fixtures::t0()));
    let (store, dir) = fresh_ordered_store(SqliteStoreConfig::new().clock(clock.clone())).await;
    Some(DrainSubject {
        store: Arc::new(Observed::new(store)),
        clock,
        guard: Box::new(dir),
    })
}
