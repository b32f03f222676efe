//! Where a bench's table is ([`Location`]): enough for another process to open a store on
//! it, and the preparation a table needs for claims in key order.

use outbox_core::TableName;
use serde::{Deserialize, Serialize};

use crate::results::Engine;

/// Where a table is: enough for another process to open a store on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Location {
    /// The engine.
    pub engine: Engine,
    /// `sqlite://FILE`, the PostgreSQL server's URL, or the MariaDB database's URL.
    pub url: String,
    /// The PostgreSQL schema or the MariaDB database, if any.
    pub schema: Option<String>,
    /// The table's name.
    pub table: String,
}

impl Location {
    /// Prepares the table for claims in per-key order (`outbox migrate --ordered`).
    pub async fn enable_ordered_claims(&self) {
        let table = self.table_name();
        match self.engine {
            Engine::Postgres => {
                let mut client = crate::pg::client(&self.url).await;
                outbox_postgres::enable_ordered_claims(&mut client, &table)
                    .await
                    .expect("enable ordered claims");
            }
            Engine::Sqlite => {
                let pool = outbox_sqlite::SqliteClaimStore::open_pool(
                    &self.url,
                    &outbox_sqlite::SqliteStoreConfig::new(),
                )
                .await
                .expect("open the bench file");
                outbox_sqlite::enable_ordered_claims(&pool, &table)
                    .await
                    .expect("enable ordered claims");
                pool.close().await;
            }
            // Every MariaDB table is ready for claims in key order: nothing to prepare.
            Engine::Mysql => {}
        }
    }

    /// The table as the stores name it.
    pub fn table_name(&self) -> TableName {
        match &self.schema {
            Some(s) => TableName::in_schema(s, &self.table),
            None => TableName::new(&self.table),
        }
        .expect("bench table names are valid")
    }
}
