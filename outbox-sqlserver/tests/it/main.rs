//! Integration tests of the SQL Server store against a real server, found through
//! `OUTBOX_TEST_SQLSERVER_URL`. Without it every test reports itself skipped, loudly,
//! with the command that runs them (a skip is a failure where `OUTBOX_TEST_REQUIRE`
//! lists `sqlserver`).

mod admin;
mod bulk_enqueue;
mod conformance;
mod drain;
mod faults;
mod in_transaction;
mod migrations;
mod portable;
mod race;
mod suite;
mod support;
mod upgrades;
