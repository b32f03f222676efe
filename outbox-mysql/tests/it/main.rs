//! Integration tests of the MariaDB / MySQL store, against the test server.

#[path = "../common/mod.rs"]
mod common;

mod drain;
mod faults;
mod migrations;
mod ordered_plans;
mod plans;
mod races;
mod server_restart;
mod statements;
mod suite;
mod upgrades;
mod writer;
mod writers;
