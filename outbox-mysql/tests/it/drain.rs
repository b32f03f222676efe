//! The drain scenarios against the MariaDB / MySQL store, with an injected clock.

use std::sync::Arc;

use outbox_core::{ManualClock, Observed};
use outbox_mysql::MySqlStoreConfig;
use outbox_testkit::drain_cases::DrainSubject;

use crate::common::fresh_store;

pub(crate) async fn drain_subject() -> Option<DrainSubject> {
    let clock = Arc::new(ManualClock::new(outbox_testkit::fixtures::t0()));
    let (store, db) = fresh_store(MySqlStoreConfig::new().clock(clock.clone())).await?;
    Some(DrainSubject {
        store: Arc::new(Observed::new(store)),
        clock,
        guard: Box::new(db),
    })
}
