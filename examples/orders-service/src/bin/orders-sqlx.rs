//! The order service with its handler on sqlx. `DATABASE_URL`, `ORDERS_SCHEMA` and
//! `LISTEN` (default `127.0.0.1:3000`) configure it; Ctrl-C stops it.

use std::sync::Arc;

use outbox_example_orders::{PrintEmitter, Service, Settings, Stack};

#[tokio::main]
async fn main() -> Result<(), outbox_example_orders::Error> {
    let settings = Settings::from_env()?;
    let addr = std::env::var("LISTEN").unwrap_or_else(|_| "127.0.0.1:3000".into());
    let service = Service::start(&settings, Stack::Sqlx, Arc::new(PrintEmitter)).await?;
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("orders service (sqlx) on http://{addr}: POST /orders");
    let summary = service
        .serve(listener, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    eprintln!("stopped: {summary:?}");
    Ok(())
}
