//! The SQL Server engine: `sqlserver://` (or `mssql://`) URLs, ADO.NET strings
//! (`Server=…;Database=…`) and JDBC strings (`jdbc:sqlserver://…`).

use std::sync::Arc;

use outbox_core::{AdminClaimStore, Result};
use outbox_sqlserver::{
    connect, connect_pool, ConnectOptions, PortableSqlServerStore, SqlServerClaimStore,
    SqlServerStoreConfig,
};

use crate::args::StoreKind;
use crate::backend::{observed_bounded, Engine, Fut, KeyValues, Separator, Target};

pub(crate) static ENGINE: Engine = Engine {
    schemes: &["sqlserver", "mssql", "jdbc"],
    name: "SQL Server",
    has_schemas: true,
    has_listener: false,
    has_pool: true,
    key_values: Some(KeyValues {
        separator: Separator::Semicolon,
        keys: &[
            "server",
            "data source",
            "address",
            "addr",
            "network address",
            "database",
            "initial catalog",
            "user id",
            "uid",
            "user",
            "password",
            "pwd",
            "encrypt",
            "trustservercertificate",
            "trust server certificate",
            "integrated security",
            "trusted_connection",
            "application name",
            "app",
            "applicationintent",
            "application intent",
            "connect timeout",
            "connection timeout",
            "multisubnetfailover",
            "packet size",
            "instance name",
            "port",
        ],
        example: "Server=tcp:host,1433;Database=app;User Id=sa;Password=…",
    }),
    migrate,
    migrate_down_to,
    script,
    open,
};

fn options(target: &Target) -> Result<ConnectOptions> {
    let options = ConnectOptions::parse(&target.url)?.application_name("outbox-cli");
    if options.trusts_any_certificate() {
        // Said once per run, in the command's words; the driver's own warning on every
        // connection is filtered out (main.rs).
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            tracing::warn!(
                "trustServerCertificate=true: the connection to SQL Server is encrypted but the \
                 server's certificate is not checked; use it only against a test server"
            );
        });
    }
    Ok(options)
}

// The SQL Server schema's own migrations carry what claims in per-key order need (the
// key index of migration 2), so `ordered` adds nothing here.
fn migrate(target: &Target, _ordered: bool) -> Fut<'_, i64> {
    Box::pin(async move {
        let mut client = connect(&options(target)?).await?;
        outbox_sqlserver::migrate(&mut client, &target.table).await
    })
}

fn migrate_down_to(target: &Target, version: i64) -> Fut<'_, i64> {
    Box::pin(async move {
        let mut client = connect(&options(target)?).await?;
        outbox_sqlserver::migrate_down_to(&mut client, &target.table, version).await
    })
}

fn script(target: &Target, _ordered: bool) -> Result<String> {
    Ok(outbox_sqlserver::migration_script(&target.table))
}

fn open(target: &Target) -> Fut<'_, Arc<dyn AdminClaimStore>> {
    Box::pin(async move {
        // Fails fast, with the server's words, when the server or the schema is not there.
        let pool = connect_pool(options(target)?, target.pool.size() as usize).await?;
        let config = SqlServerStoreConfig::for_table(target.table.clone());
        let store = SqlServerClaimStore::new(pool, config).await?;
        match target.kind {
            StoreKind::Optimized => observed_bounded(store, target),
            StoreKind::Portable => observed_bounded(PortableSqlServerStore::new(store), target),
        }
    })
}
