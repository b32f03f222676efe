//! The drain scenarios against the SQL Server store. The store reads the server's clock,
//! so the drain stamps every request with the scenario's clock (`Drain::with_test_clock`).

use std::sync::Arc;

use outbox_core::{ManualClock, Observed};
use outbox_testkit::drain_cases::DrainSubject;

use crate::support::SqlServerTestDb;

pub(crate) async fn drain_subject() -> Option<DrainSubject> {
    let db = SqlServerTestDb::create().await?;
    let store = db.store(4).await;
    Some(DrainSubject {
        store: Arc::new(Observed::new(store)),
        clock: Arc::new(ManualClock::new(outbox_testkit::fixtures::t0())),
        guard: Box::new(db),
    })
}
