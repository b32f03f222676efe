//! The MariaDB / MySQL engine: `mysql://` and `mariadb://` URLs; `--schema` names the
//! database holding the table (the URL's database when unset).

use std::sync::Arc;

use outbox_core::portable::PortableConfig;
use outbox_core::{AdminClaimStore, Result};
use outbox_mysql::{MySqlClaimStore, MySqlStoreConfig};

use crate::args::StoreKind;
use crate::backend::{observed_bounded, Engine, Fut, Target};

pub(crate) static ENGINE: Engine = Engine {
    schemes: &["mysql", "mariadb"],
    name: "MariaDB / MySQL",
    has_schemas: true,
    has_listener: false,
    has_pool: true,
    key_values: None,
    migrate,
    migrate_down_to,
    script,
    open,
};

fn config(target: &Target) -> MySqlStoreConfig {
    MySqlStoreConfig::new()
        .table(target.table.clone())
        .max_connections(target.pool.size())
}

// Every table of this engine is ready for claims in per-key order, so `ordered` adds
// nothing here.
fn migrate(target: &Target, _ordered: bool) -> Fut<'_, i64> {
    Box::pin(async move {
        let pool = MySqlClaimStore::open_pool(&target.url, &config(target)).await?;
        let version = outbox_mysql::migrate(&pool, &target.table).await;
        pool.close().await;
        version
    })
}

fn migrate_down_to(target: &Target, version: i64) -> Fut<'_, i64> {
    Box::pin(async move {
        let pool = MySqlClaimStore::open_pool(&target.url, &config(target)).await?;
        let done = outbox_mysql::migrate_down_to(&pool, &target.table, version).await;
        pool.close().await;
        done
    })
}

fn script(target: &Target, _ordered: bool) -> Result<String> {
    Ok(outbox_mysql::migration_script(&target.table))
}

fn open(target: &Target) -> Fut<'_, Arc<dyn AdminClaimStore>> {
    Box::pin(async move {
        match target.kind {
            StoreKind::Optimized => observed_bounded(
                MySqlClaimStore::open(&target.url, config(target)).await?,
                target,
            ),
            StoreKind::Portable => {
                let pool = MySqlClaimStore::open_pool(&target.url, &config(target)).await?;
                outbox_mysql::check_schema(&pool, &target.table).await?;
                let portable = PortableConfig::default().table(target.table.clone());
                observed_bounded(outbox_mysql::portable_store(pool, portable).await?, target)
            }
        }
    })
}
