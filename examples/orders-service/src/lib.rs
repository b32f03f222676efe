//! An order service that uses the outbox the way a host does: each `POST /orders` writes
//! the order and its `orders.placed` event in one PostgreSQL transaction, and a drain in the
//! same process delivers the events to an [`Emitter`].
//!
//! Two variants differ only in the driver the handler writes with:
//! [`Stack::Sqlx`] (a sqlx pool, [`PgWriter::enqueue_in_sqlx`]) and
//! [`Stack::TokioPostgres`] (a deadpool-postgres pool, [`PgWriter::enqueue_in`]). Both
//! drain through the optimized PostgreSQL store, woken by the notification the writer's
//! insert raises when the transaction commits.
//!
//! ```no_run
//! # async fn run() -> Result<(), outbox_example_orders::Error> {
//! use std::sync::Arc;
//! use outbox_example_orders::{PrintEmitter, Service, Settings, Stack};
//!
//! let settings = Settings::from_env()?;
//! let service = Service::start(&settings, Stack::Sqlx, Arc::new(PrintEmitter)).await?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! let summary = service.serve(listener, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! println!("{summary:?}");
//! # Ok(()) }
//! ```
//!
//! [`Emitter`]: outbox_core::drain::Emitter
//! [`PgWriter::enqueue_in_sqlx`]: outbox_postgres::PgWriter::enqueue_in_sqlx
//! [`PgWriter::enqueue_in`]: outbox_postgres::PgWriter::enqueue_in

mod emitter;
mod http;
mod on_sqlx;
mod on_tokio_postgres;
mod order;
mod service;
mod settings;

pub use emitter::PrintEmitter;
pub use order::{NewOrder, OrderPlaced, EVENT_TOPIC};
pub use service::{run_from_env, Service, Stack};
pub use settings::Settings;

/// Any error of the service's set-up or run.
pub type Error = Box<dyn std::error::Error + Send + Sync>;
