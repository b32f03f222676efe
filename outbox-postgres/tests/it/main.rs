//! Integration tests of the PostgreSQL store, against a real server.

mod admin;
mod bulk_enqueue;
mod cancellation;
mod child;
mod commands;
mod conformance;
mod corrupt_rows;
mod drain;
mod failover;
mod faults;
mod head_walks;
mod in_transaction;
mod key_heads;
mod listener;
mod migrations;
mod ordered_plans;
mod plan_bounds;
mod pooler;
mod race;
mod race_processes;
mod skip_locked;
mod slices;
mod store_build;
mod support;
mod tls;
mod writer;
