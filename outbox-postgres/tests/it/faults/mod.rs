//! Fault tests: a worker killed mid-batch, its backend terminated mid-statement, the
//! server restarted mid-drain, a stale worker completing after a reclaim.

mod killed_worker;
mod server_restart;
mod stale_worker;
mod terminated_backend;
