//! The handler's writes on sqlx: the order and its event in one sqlx transaction.

use outbox_postgres::PgWriter;
use sqlx::PgPool;
use uuid::Uuid;

use crate::http::{PlaceOrder, Placed};
use crate::{Error, NewOrder, OrderPlaced};

/// Places orders through a sqlx pool.
pub(crate) struct SqlxOrders {
    pub(crate) pool: PgPool,
    pub(crate) writer: PgWriter,
    pub(crate) insert_order: String,
}

#[async_trait::async_trait]
impl PlaceOrder for SqlxOrders {
    async fn place(&self, order: &NewOrder) -> Result<Placed, Error> {
        let order_id = Uuid::now_v7();
        let mut tx = self.pool.begin().await?;
        sqlx::query(&self.insert_order)
            .bind(order_id)
            .bind(&order.customer)
            .bind(order.total_cents)
            .execute(&mut *tx)
            .await?;
        let written = self
            .writer
            .enqueue_in_sqlx(&mut tx, vec![OrderPlaced::entry(order_id, order)])
            .await?;
        // The order, its event and the drains' wake-up commit together, or none of them.
        tx.commit().await?;
        Ok(Placed {
            order_id,
            event_id: written[0].id,
        })
    }
}
