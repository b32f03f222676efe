//! The handler's writes on tokio-postgres: the order and its event in one transaction of
//! a pooled deadpool-postgres client.

use outbox_postgres::deadpool_postgres::Pool;
use outbox_postgres::PgWriter;
use uuid::Uuid;

use crate::http::{PlaceOrder, Placed};
use crate::{Error, NewOrder, OrderPlaced};

/// Places orders through a deadpool-postgres pool.
pub(crate) struct TokioPostgresOrders {
    pub(crate) pool: Pool,
    pub(crate) writer: PgWriter,
    pub(crate) insert_order: String,
}

#[async_trait::async_trait]
impl PlaceOrder for TokioPostgresOrders {
    async fn place(&self, order: &NewOrder) -> Result<Placed, Error> {
        let order_id = Uuid::now_v7();
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let insert = tx.prepare_cached(&self.insert_order).await?;
        tx.execute(&insert, &[&order_id, &order.customer, &order.total_cents])
            .await?;
        let written = self
            .writer
            .enqueue_in(&*tx, vec![OrderPlaced::entry(order_id, order)])
            .await?;
        // The order, its event and the drains' wake-up commit together, or none of them.
        tx.commit().await?;
        Ok(Placed {
            order_id,
            event_id: written[0].id,
        })
    }
}
