//! The SQLite engine: `sqlite://PATH`.

use std::sync::Arc;

use outbox_core::portable::PortableConfig;
use outbox_core::{AdminClaimStore, OutboxError};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};

use crate::args::StoreKind;
use crate::backend::{observed, Engine, Fut, Target};

pub(crate) static ENGINE: Engine = Engine {
    schemes: &["sqlite"],
    name: "SQLite",
    has_schemas: false,
    has_listener: false,
    has_pool: false,
    key_values: None,
    migrate,
    migrate_down_to,
    script,
    open,
};

fn config(target: &Target) -> SqliteStoreConfig {
    SqliteStoreConfig::new()
        .table(target.table.clone())
        .read_only(target.reading)
}

/// The file behind a `sqlite://` URL, without its query string.
fn file_of(url: &str) -> &str {
    let rest = url.trim_start_matches("sqlite:").trim_start_matches("//");
    rest.split('?').next().unwrap_or(rest)
}

fn migrate(target: &Target, ordered: bool) -> Fut<'_, i64> {
    Box::pin(async move {
        let pool = SqliteClaimStore::open_pool(&target.url, &config(target)).await?;
        let mut version = outbox_sqlite::migrate(&pool, &target.table).await;
        if ordered && version.is_ok() {
            if let Err(e) = outbox_sqlite::enable_ordered_claims(&pool, &target.table).await {
                version = Err(e);
            }
        }
        pool.close().await;
        version
    })
}

fn migrate_down_to(target: &Target, version: i64) -> Fut<'_, i64> {
    Box::pin(async move {
        let pool = SqliteClaimStore::open_pool(&target.url, &config(target)).await?;
        let done = outbox_sqlite::migrate_down_to(&pool, &target.table, version).await;
        pool.close().await;
        done
    })
}

fn script(target: &Target, ordered: bool) -> outbox_core::Result<String> {
    let mut script = outbox_sqlite::migration_script(&target.table);
    if ordered {
        script.push_str(&outbox_sqlite::ordered_claims_script(&target.table));
    }
    Ok(script)
}

fn open(target: &Target) -> Fut<'_, Arc<dyn AdminClaimStore>> {
    Box::pin(async move {
        let file = file_of(&target.url);
        if file != ":memory:" && !std::path::Path::new(file).exists() {
            return Err(OutboxError::SchemaNotMigrated {
                detail: format!("the database file {file:?} does not exist"),
            });
        }
        match target.kind {
            StoreKind::Optimized => Ok(observed(
                SqliteClaimStore::open(&target.url, config(target)).await?,
            )),
            StoreKind::Portable => {
                let pool = SqliteClaimStore::open_pool(&target.url, &config(target)).await?;
                outbox_sqlite::check_schema(&pool, &target.table).await?;
                let portable = PortableConfig::default().table(target.table.clone());
                Ok(observed(
                    outbox_sqlite::portable_store(pool, portable).await?,
                ))
            }
        }
    })
}
