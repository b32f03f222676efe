//! Integration tests of the SQLite store, against real database files.

mod migrations;
