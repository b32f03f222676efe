//! The operator operations against real SQLite files.

use std::sync::Arc;

use outbox_sqlite::SqliteStoreConfig;

use crate::support::{admin_subject, fresh_ordered_store};

outbox_testkit::admin_suite!(admin_subject);

async fn ordered_admin_subject(
) -> Option<(outbox_testkit::admin_cases::AdminStore, tempfile::TempDir)> {
    let (store, dir) = fresh_ordered_store(SqliteStoreConfig::new()).await;
    Some((Arc::new(store), dir))
}

outbox_testkit::ordered_admin_suite!(ordered_admin_subject);
