//! Fault tests: a worker killed mid-batch, its backend terminated mid-statement, the
//! server restarted mid-drain, a stale worker completing after a reclaim, a completion
//! whose reply was lost after it committed, a server that stops answering without
//! closing anything, an outage shorter than the lease while emissions are recorded.

mod black_hole;
mod killed_worker;
mod lost_reply;
mod proxied;
mod recording_outage;
mod server_restart;
mod stale_worker;
mod terminated_backend;
