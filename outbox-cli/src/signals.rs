//! Ctrl-C and SIGTERM, as one future.

/// Completes at the next Ctrl-C or SIGTERM (at the next Ctrl-C where SIGTERM cannot be
/// listened for).
pub(crate) async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
