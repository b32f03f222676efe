//! Integration tests of the PostgreSQL store, against a real server.

mod migrations;
