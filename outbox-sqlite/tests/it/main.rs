//! Integration tests of the SQLite store, against real database files.

mod cancellation;
mod conformance;
mod migrations;
mod opening;
mod races;
mod support;
mod transactions;
