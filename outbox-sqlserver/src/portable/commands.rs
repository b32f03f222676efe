//! The one seam of the portable path: running a command on a connection. The store runs
//! on a pooled tiberius connection; the tests run it on a counting stub.

use async_trait::async_trait;
use outbox_core::Result;
use tiberius::Row;

use crate::error::map_err;
use crate::params::{refs, Params};
use crate::pool::{Checkout, ConnectionManager};

/// Runs commands on one connection, one round trip each.
#[async_trait]
pub(crate) trait Commands: Send {
    /// A query; its rows.
    async fn rows(&mut self, sql: &str, params: Params) -> Result<Vec<Row>>;
    /// A statement that ends by selecting its own `@@ROWCOUNT` as `n`; that count.
    async fn execute(&mut self, sql: &str, params: Params) -> Result<u64>;
}

/// A pooled connection held for a whole call. After a failed command the connection is
/// treated as broken and is not handed back (see `Checkout`).
pub(crate) struct Pooled {
    checkout: Checkout<ConnectionManager>,
    broken: bool,
}

impl Pooled {
    pub(crate) fn new(checkout: Checkout<ConnectionManager>) -> Self {
        Self {
            checkout,
            broken: false,
        }
    }

    /// Ends the call: the connection goes back to the pool unless a command failed.
    pub(crate) fn finish(self) {
        if !self.broken {
            self.checkout.done();
        }
    }
}

#[async_trait]
impl Commands for Pooled {
    async fn rows(&mut self, sql: &str, params: Params) -> Result<Vec<Row>> {
        let client = self.checkout.client();
        let result = match client.query(sql, &refs(&params)).await {
            Ok(stream) => stream.into_first_result().await,
            Err(e) => Err(e),
        };
        self.broken |= result.is_err();
        result.map_err(map_err)
    }

    async fn execute(&mut self, sql: &str, params: Params) -> Result<u64> {
        let rows = self.rows(sql, params).await?;
        let n = rows
            .first()
            .map(|r| r.try_get::<i32, _>("n"))
            .transpose()
            .map_err(map_err)?
            .flatten();
        n.and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| outbox_core::OutboxError::Database {
                message: "a portable write did not report its row count".into(),
                source: None,
            })
    }
}
