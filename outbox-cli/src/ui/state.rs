//! What every handler of `outbox ui` shares.

use std::sync::{Arc, Mutex};

use metrics_exporter_prometheus::PrometheusHandle;
use outbox_core::AdminClaimStore;

use super::samples::Samples;

/// What every handler shares.
pub(super) struct Ui {
    pub(super) store: Arc<dyn AdminClaimStore>,
    pub(super) samples: Mutex<Samples>,
    pub(super) token: Option<String>,
    pub(super) metrics: PrometheusHandle,
    /// Present when the pages may requeue and purge (`--allow-writes`).
    pub(super) writes: Option<Writes>,
}

/// What the pages may write: present only with `--allow-writes`.
pub(super) struct Writes {
    /// The token every form carries, new at every start of the server.
    pub(super) token: String,
}

impl Writes {
    /// Writes allowed, under a fresh random form token.
    pub(super) fn new() -> Self {
        let token = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        Self { token }
    }
}
