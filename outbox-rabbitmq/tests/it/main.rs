//! The RabbitMQ emitter against the local broker: a drained backlog arrives once per
//! entry, re-emissions carry the same message id, unroutable messages and missing
//! exchanges dead-letter, and a broker that goes away costs retries, never entries.

mod delivery;
mod outages;
mod support;
