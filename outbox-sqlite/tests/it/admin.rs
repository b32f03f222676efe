//! The operator operations against real SQLite files.

use std::sync::Arc;

use outbox_sqlite::SqliteStoreConfig;

use crate::support::fresh_ordered_store;

pub(crate) async fn ordered_admin_subject(
) -> Option<(outbox_testkit::admin_cases::AdminStore, tempfile::TempDir)> {
    let (store, dir) = fresh_ordered_store(SqliteStoreConfig::new()).await;
    Some((Arc::new(store), dir))
}
