//! `drain --metrics-addr`: the drain's metrics in Prometheus text, and the outbox's counts
//! sampled into gauges.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use metrics_exporter_prometheus::PrometheusBuilder;
use outbox_core::{AdminClaimStore, OutboxError, Result};

/// Serves `http://addr/metrics` from now on: installed before the store opens, so what the
/// store records while it starts (its listener's first session) is served too.
pub(crate) fn install(addr: SocketAddr) -> Result<()> {
    PrometheusBuilder::new()
        .with_http_listener(addr)
        .install()
        .map_err(|e| OutboxError::Connection {
            message: format!("cannot serve metrics on {addr}: {e}"),
            source: None,
        })?;
    // Shown at zero from the start rather than only once something was lost.
    metrics::counter!(outbox_core::metric_names::LOST_RENEWALS).increment(0);
    metrics::counter!(outbox_core::metric_names::FAILED_RENEWALS).increment(0);
    metrics::counter!(outbox_core::metric_names::FAILED_CYCLES).increment(0);
    metrics::counter!(outbox_core::metric_names::ROUTE_FAILURES).increment(0);
    Ok(())
}

/// Refreshes the sampled gauges from `store` every `every`, until the returned task is
/// aborted (or the process ends).
pub(crate) fn serve(
    store: Arc<dyn AdminClaimStore>,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(sample(store, every, |_| {}))
}

/// Samples `store`'s live stats (what is live, exactly; delivered possibly estimated:
/// [`outbox_core::OutboxAdmin::live_stats`]) every `every` into the gauges, and hands each sample to
/// `also`, until the task is dropped.
pub(crate) async fn sample(
    store: Arc<dyn AdminClaimStore>,
    every: Duration,
    mut also: impl FnMut(&outbox_core::OutboxStats) + Send,
) {
    loop {
        match store.live_stats(&outbox_core::StatsRequest::new()).await {
            Ok(stats) => {
                outbox_core::metric_names::record_stats(&stats);
                also(&stats);
            }
            Err(e) => tracing::warn!(error = %e, "sampling the outbox's stats failed"),
        }
        tokio::time::sleep(every).await;
    }
}
