//! The order service with its handler on sqlx. `DATABASE_URL`, `ORDERS_SCHEMA` and
//! `LISTEN` (default `127.0.0.1:3000`) configure it; Ctrl-C stops it.

#[tokio::main]
async fn main() -> Result<(), outbox_example_orders::Error> {
    outbox_example_orders::run_from_env(outbox_example_orders::Stack::Sqlx).await
}
