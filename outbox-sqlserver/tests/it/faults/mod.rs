//! Faults a production outbox meets, against a real server.

mod cancelled_call;
mod conflicts_retried;
mod killed_connection;
mod stale_worker;
