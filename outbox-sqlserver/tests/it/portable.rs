//! The conformance suite against the portable per-row path on SQL Server.

use std::sync::Arc;

use outbox_sqlserver::PortableSqlServerStore;
use outbox_testkit::{HookFuture, InterleaveHook, Subject};

use crate::support::SqlServerTestDb;

struct Hook(PortableSqlServerStore);

impl InterleaveHook for Hook {
    fn before_next_write(&self, writer: HookFuture) {
        self.0.interleave_before_next_write(writer);
    }
}

async fn subject() -> Option<Subject> {
    let db = SqlServerTestDb::create().await?;
    let store = PortableSqlServerStore::new(db.store(4).await);
    Some(
        Subject::new(Arc::new(store.clone()))
            .with_interleave(Arc::new(Hook(store)))
            .with_guard(db),
    )
}

outbox_testkit::store_suite! {
    store: subject,
}
