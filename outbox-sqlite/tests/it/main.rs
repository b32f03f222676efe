//! Integration tests of the SQLite store, against real database files.

mod admin;
mod cancellation;
mod corrupt_rows;
mod drain;
mod ext4;
mod full_disk;
mod full_disk_drain;
mod heads;
mod killed_mid_write;
mod lock_held;
mod metrics_seen;
mod migrations;
mod opening;
mod own_connection;
mod plans;
mod races;
mod read_only_disk;
mod shared_locks;
mod slices;
mod statements;
mod suite;
mod support;
mod tmpfs;
mod transactions;
mod upgrades;
mod writers_beside;
