//! `outbox drain`: W workers in this process until a signal, or until the outbox is empty.

use std::sync::Arc;
use std::time::Instant;

use outbox_core::drain::{Drain, DrainOptions, DrainSummary, Emitter, HeadFailure};
use outbox_core::{AdminClaimStore, EmissionStatus, OutboxError, OutboxStats, Result};
use tokio::sync::watch;

use crate::args::DrainArgs;
use crate::backend::Target;

pub(crate) async fn run(target: &Target, args: DrainArgs) -> Result<u8> {
    if let Some(delay) = args.emit_delay {
        // A lease that runs out before the emission ends hands the entry to the next
        // worker while it is still being sent: every entry would go out more than once.
        if delay >= args.lease {
            return Err(OutboxError::invalid(
                "--lease",
                format!(
                    "{} is not longer than --emit-delay {}: every lease would run out mid-emission (use a lease several times the emission time)",
                    outbox_core::duration::show(args.lease),
                    outbox_core::duration::show(delay)
                ),
            ));
        }
        if delay >= args.emit_timeout {
            return Err(OutboxError::invalid(
                "--emit-timeout",
                format!(
                    "{} is not longer than --emit-delay {}: every emission would be abandoned",
                    outbox_core::duration::show(args.emit_timeout),
                    outbox_core::duration::show(delay)
                ),
            ));
        }
    }
    let target = &sized_for(target, &args);
    if let Some(addr) = args.metrics_addr {
        crate::metrics::install(addr)?;
    }
    let store = target.open().await?;
    let sampler = args.metrics_addr.map(|_| {
        let every = args.stats_interval.to_std().unwrap_or_default();
        crate::metrics::serve(store.clone(), every)
    });
    let mut emitter = crate::emitters::parse(&args.emitter).await?;
    if let Some(delay) = args.emit_delay {
        let delay = delay.to_std().unwrap_or_default();
        emitter = Arc::new(crate::emitters::Delayed {
            inner: emitter,
            delay,
        });
    }
    let started = Instant::now();
    let summary = drain(store.clone(), emitter, &args).await?;
    // A refused schema is said before anything else reads it (the stats might fail on it).
    if summary.schema_refused {
        if let Some(sampler) = &sampler {
            sampler.abort();
        }
        eprintln!(
            "outbox: the store refused the schema while it drained (the log says why: migrated \
             past this release, or reverted below it); finish the rollout of the release \
             that migrated it, or migrate (exit code {})",
            crate::exit::SCHEMA_REFUSED
        );
        return Ok(crate::exit::SCHEMA_REFUSED);
    }
    let left = store.live_stats(&outbox_core::StatsRequest::new()).await?;
    if let Some(sampler) = sampler {
        sampler.abort();
        outbox_core::metric_names::record_stats(&left);
    }
    let report = Report {
        summary: &summary,
        elapsed_secs: started.elapsed().as_secs_f64(),
        left: &left,
    };
    // Entries on standard output stay a clean stream: the summary goes to standard error.
    let to_stderr = args.emitter == "stdout";
    if args.json {
        report.json(to_stderr);
    } else {
        report.text(to_stderr);
    }
    if summary.route_gave_up {
        eprintln!(
            "outbox: a route failed for longer than --route-down-limit (the log says which); \
             its entries stay held, no attempt counted (exit code {})",
            crate::exit::ROUTE_DOWN
        );
        return Ok(crate::exit::ROUTE_DOWN);
    }
    if args.fail_on_dead_letters && summary.dead_lettered > 0 {
        let n = summary.dead_lettered;
        let what = if n == 1 { "entry was" } else { "entries were" };
        eprintln!(
            "outbox: {n} {what} dead-lettered during this run (exit code {})",
            crate::exit::DEAD_LETTERS
        );
        return Ok(crate::exit::DEAD_LETTERS);
    }
    Ok(0)
}

/// `target` with its pool sized for the drain's workers: each holds up to
/// `--batches-ahead` claims in flight while its batch's completion and a lease renewal
/// run, and the progress line and the metrics sampler read the stats beside them. A pool
/// capped below that (`--pool-size`) still works, its workers waiting for one another's
/// connections; the drain says so at start.
fn sized_for(target: &Target, args: &DrainArgs) -> Target {
    let per_worker = args.batches_ahead + 2;
    let readers = 1 + u32::from(args.metrics_addr.is_some());
    let needed = args
        .workers
        .saturating_mul(per_worker)
        .saturating_add(readers);
    let mut sized = target.clone();
    sized.pool.needed = needed;
    if let Some(cap) = target.pool.cap.filter(|&cap| cap < needed) {
        tracing::warn!(
            "--pool-size {cap} cannot serve {} workers at once: each uses up to {per_worker} \
             connections (--batches-ahead {} claims, a completion and a renewal), and the \
             stats {readers} more ({needed} in all); workers will wait for connections",
            args.workers,
            args.batches_ahead
        );
    }
    sized
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
        .batches_ahead(args.batches_ahead as usize)
        .max_attempts(args.max_attempts)
        .max_age(Some(args.max_age.to_std().unwrap_or_default()))
        .route_down_limit(
            args.route_down_limit
                .map(|l| l.to_std().unwrap_or_default()),
        )
        .schema_check_interval(args.schema_check_interval.to_std().unwrap_or_default())
        .emit_timeout(args.emit_timeout.to_std().unwrap_or_default())
        .shutdown_grace(args.shutdown_grace.to_std().unwrap_or_default())
        .ordered(args.ordered)
        .key_run(args.key_run)
        .head_failure(if args.dead_letter_failing_heads {
            HeadFailure::DeadLetter
        } else {
            HeadFailure::Block
        });
    let base = match args.slice {
        Some(slice) => base.slice(slice),
        None => base,
    };
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
    // Said once per run: the drain is waiting out leases other workers hold.
    let waiting_said = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for d in drains {
        let mut stop = stop_rx.clone();
        let shutdown = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        let until_empty = args.until_empty;
        let slice = args.slice;
        let store = store.clone();
        let waiting_said = waiting_said.clone();
        tasks.push(tokio::spawn(async move {
            if until_empty {
                let is_done = move || {
                    let store = store.clone();
                    let waiting_said = waiting_said.clone();
                    async move {
                        if let Some(slice) = slice {
                            return slice_is_drained(&*store, slice).await;
                        }
                        let Ok(s) = store.live_stats(&outbox_core::StatsRequest::new()).await
                        else {
                            return false;
                        };
                        let only_leases = s.count(EmissionStatus::Pending) == s.claims_in_flight
                            && s.retry_ready == 0
                            && s.claims_in_flight > 0;
                        if only_leases
                            && !waiting_said.swap(true, std::sync::atomic::Ordering::Relaxed)
                        {
                            let n = s.claims_in_flight;
                            let noun = if n == 1 { "entry" } else { "entries" };
                            eprintln!(
                                "outbox: waiting for {n} leased {noun} held by other workers: \
                                 their holders emit them, or this drain claims them once the \
                                 leases run out"
                            );
                        }
                        s.is_drained()
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

/// Whether `slice` has nothing pending or retry-ready left, leased or not (the table's
/// counts would wait for the other slices' drains too).
async fn slice_is_drained(store: &dyn AdminClaimStore, slice: outbox_core::Slice) -> bool {
    let req = outbox_core::FindRequest::new(1).slice(slice);
    matches!(
        (store.find_pending(&req).await, store.find_retry_ready(&req).await),
        (Ok(pending), Ok(retry)) if pending.is_empty() && retry.is_empty()
    )
}

/// Turns Ctrl-C or SIGTERM into a graceful stop; a second one ends the process at once.
async fn forward_signals(stop: watch::Sender<bool>) {
    crate::signals::stop_signal().await;
    eprintln!("outbox: stopping: finishing running emissions, releasing the rest (again to force)");
    let _ = stop.send(true);
    // A second signal ends the process now; unfinished leases run out and are retried.
    crate::signals::stop_signal().await;
    eprintln!("outbox: forced to stop; unfinished leases will run out and be retried");
    std::process::exit(crate::exit::FORCED);
}

/// A live line on a terminal: delivered, retried, dead-lettered, rate, backlog.
async fn show_progress(store: Arc<dyn AdminClaimStore>, stop: watch::Receiver<bool>) {
    let line = crate::progress::line();
    if line.is_hidden() {
        return;
    }
    let started = Instant::now();
    let first = store
        .live_stats(&outbox_core::StatsRequest::new())
        .await
        .ok();
    let delivered_at_start = first
        .map(|s| s.count(EmissionStatus::Delivered))
        .unwrap_or(0);
    while !*stop.borrow() {
        if let Ok(s) = store.live_stats(&outbox_core::StatsRequest::new()).await {
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

/// What a drain run did, and what it left in the outbox.
pub(crate) struct Report<'a> {
    pub(crate) summary: &'a DrainSummary,
    pub(crate) elapsed_secs: f64,
    pub(crate) left: &'a OutboxStats,
}

impl Report<'_> {
    fn rate(&self) -> f64 {
        self.summary.delivered as f64 / self.elapsed_secs.max(0.001)
    }

    /// Two lines: what was done, and what is left.
    pub(crate) fn text(&self, to_stderr: bool) {
        let s = self.summary;
        let l = self.left;
        let done = format!(
            "emitted {}  delivered {}  retried {}  dead-lettered {}  route failures {}  released {}  not applied {}  elapsed {:.2} s  {:.0} delivered/s",
            s.emitted, s.delivered, s.retried, s.dead_lettered, s.route_failures, s.released,
            s.not_applied, self.elapsed_secs, self.rate()
        );
        let left = format!(
            "left: pending {}  retrying {}  deferred {}  failed {}  dead letters {}  leased {}",
            l.count(EmissionStatus::Pending),
            l.count(EmissionStatus::RetryableFailure),
            l.count(EmissionStatus::Deferred),
            l.count(EmissionStatus::Failed),
            l.count(EmissionStatus::DeadLettered),
            l.claims_in_flight,
        );
        if to_stderr {
            eprintln!("{done}\n{left}");
        } else {
            out!("{done}\n{left}");
        }
    }

    /// One JSON object.
    pub(crate) fn json(&self, to_stderr: bool) {
        let s = self.summary;
        let l = self.left;
        let value = serde_json::json!({
            "emitted": s.emitted,
            "delivered": s.delivered,
            "retried": s.retried,
            "deferred": s.deferred,
            "dead_lettered": s.dead_lettered,
            "released": s.released,
            "not_applied": s.not_applied,
            "errors": s.errors,
            "route_failures": s.route_failures,
            "route_gave_up": s.route_gave_up,
            "schema_refused": s.schema_refused,
            "elapsed_seconds": self.elapsed_secs,
            "delivered_per_second": self.rate(),
            "left": {
                "pending": l.count(EmissionStatus::Pending),
                "retryable_failure": l.count(EmissionStatus::RetryableFailure),
                "deferred": l.count(EmissionStatus::Deferred),
                "failed": l.count(EmissionStatus::Failed),
                "dead_lettered": l.count(EmissionStatus::DeadLettered),
                "leased": l.claims_in_flight,
            },
        });
        if to_stderr {
            eprintln!("{value}");
        } else {
            out!("{value}");
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::sized_for;
    use crate::args::{Cli, Command};
    use crate::backend::{Listen, PoolSize, Target};

    fn sized(args: &[&str], cap: Option<u32>) -> u32 {
        let cli = Cli::try_parse_from(["outbox", "drain", "--emitter", "noop"].iter().chain(args))
            .expect("drain arguments");
        let Command::Drain(drain) = cli.command else {
            panic!("not a drain");
        };
        let target = Target {
            url: "sqlserver://db/x".into(),
            kind: cli.store,
            table: outbox_core::TableName::new("outbox").unwrap(),
            reading: false,
            call_timeout: std::time::Duration::from_secs(10),
            statement_mode: None,
            listen: Listen::NotDraining,
            pool: PoolSize {
                needed: PoolSize::ONE_CALL_AT_A_TIME,
                cap,
            },
        };
        sized_for(&target, &drain).pool.size()
    }

    #[test]
    fn the_pool_serves_every_worker_and_the_sampler_unless_capped() {
        // Each worker: two batches claimed ahead, a completion and a renewal; one stats reader.
        assert_eq!(sized(&[], None), 5);
        assert_eq!(sized(&["--workers", "8"], None), 8 * 4 + 1);
        assert_eq!(
            sized(&["--workers", "8", "--batches-ahead", "1"], None),
            8 * 3 + 1
        );
        assert_eq!(
            sized(&["--workers", "2", "--metrics-addr", "127.0.0.1:0"], None),
            2 * 4 + 2
        );
        assert_eq!(sized(&["--workers", "8"], Some(3)), 3);
        assert_eq!(sized(&["--workers", "1"], Some(64)), 64);
    }
}
