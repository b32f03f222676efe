//! `outbox drain`: W workers in this process until a signal, or until the outbox is empty.

use std::sync::Arc;
use std::time::Instant;

use outbox_core::drain::{Drain, DrainOptions, DrainSummary, Emitter};
use outbox_core::{AdminClaimStore, EmissionStatus, Result};
use tokio::sync::watch;

use crate::args::DrainArgs;
use crate::backend::Target;

pub(crate) async fn run(target: &Target, args: DrainArgs) -> Result<()> {
    let store = target.open().await?;
    let mut emitter = crate::emitters::parse(&args.emitter)?;
    if let Some(delay) = args.emit_delay {
        let delay = delay.to_std().unwrap_or_default();
        emitter = Arc::new(crate::emitters::Delayed {
            inner: emitter,
            delay,
        });
    }
    let started = Instant::now();
    let summary = drain(store.clone(), emitter, &args).await?;
    print_summary(&summary, started.elapsed().as_secs_f64());
    Ok(())
}

/// Runs the workers and adds up what they did.
pub(crate) async fn drain(
    store: Arc<dyn AdminClaimStore>,
    emitter: Arc<dyn Emitter>,
    args: &DrainArgs,
) -> Result<DrainSummary> {
    let base = DrainOptions::new()
        .batch_size(args.batch)
        .lease(args.lease)
        .emit_concurrency(args.concurrency as usize)
        .max_attempts(args.max_attempts);
    let prefix = args
        .owner
        .clone()
        .unwrap_or_else(|| base.owner_name().to_owned());
    let mut drains = Vec::new();
    for i in 1..=args.workers {
        let options = base.clone().owner(format!("{prefix}-{i}"));
        drains.push(Drain::new(store.clone(), emitter.clone(), options)?);
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(forward_signals(stop_tx));
    let live = tokio::spawn(show_progress(store.clone(), stop_rx.clone()));
    let mut tasks = Vec::new();
    for d in drains {
        let mut stop = stop_rx.clone();
        let shutdown = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        let until_empty = args.until_empty;
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            if until_empty {
                let is_done = move || {
                    let store = store.clone();
                    async move {
                        store
                            .stats(None)
                            .await
                            .map(|s| s.is_drained())
                            .unwrap_or(false)
                    }
                };
                d.run_until(is_done, shutdown).await
            } else {
                d.run(shutdown).await
            }
        }));
    }
    let mut total = DrainSummary::default();
    for t in tasks {
        match t.await {
            Ok(s) => total.add(&s),
            Err(e) => tracing::error!(error = %e, "a drain worker failed"),
        }
    }
    live.abort();
    Ok(total)
}

/// Turns Ctrl-C or SIGTERM into a graceful stop.
async fn forward_signals(stop: watch::Sender<bool>) {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    let _ = stop.send(true);
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
    eprintln!("outbox: stopping: finishing running emissions, releasing the rest");
    let _ = stop.send(true);
}

/// A live line on a terminal: delivered, retried, dead-lettered, rate, backlog.
async fn show_progress(store: Arc<dyn AdminClaimStore>, stop: watch::Receiver<bool>) {
    let line = crate::progress::line();
    if line.is_hidden() {
        return;
    }
    let started = Instant::now();
    let first = store.stats(None).await.ok();
    let delivered_at_start = first
        .map(|s| s.count(EmissionStatus::Delivered))
        .unwrap_or(0);
    while !*stop.borrow() {
        if let Ok(s) = store.stats(None).await {
            let delivered = s
                .count(EmissionStatus::Delivered)
                .saturating_sub(delivered_at_start);
            let rate = delivered as f64 / started.elapsed().as_secs_f64().max(0.001);
            line.set_message(format!(
                "delivered {delivered}  retrying {}  dead-lettered {}  {rate:.0}/s  backlog {}",
                s.count(EmissionStatus::RetryableFailure) + s.count(EmissionStatus::Deferred),
                s.count(EmissionStatus::DeadLettered),
                s.count(EmissionStatus::Pending),
            ));
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    line.finish_and_clear();
}

/// The closing summary.
pub(crate) fn print_summary(s: &DrainSummary, elapsed_secs: f64) {
    let rate = s.delivered as f64 / elapsed_secs.max(0.001);
    out!(
        "emitted {}  delivered {}  retried {}  dead-lettered {}  released {}  not applied {}  elapsed {elapsed_secs:.2} s  {rate:.0} entries/s",
        s.emitted, s.delivered, s.retried, s.dead_lettered, s.released, s.not_applied
    );
}
