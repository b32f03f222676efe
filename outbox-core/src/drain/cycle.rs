//! One drain cycle, top to bottom: take a batch (the oldest one claimed ahead, or a fresh
//! claim: claim.rs, ahead.rs), emit it while renewing its leases (emission.rs,
//! renewal.rs), record what the emissions said (record.rs).

use std::time::Instant;

use tokio::sync::watch;

use super::ahead::Prefetch;
use super::failures::{CycleError, Step};
use super::{Drain, DrainSummary};

impl Drain {
    /// One cycle: take a batch (the oldest claimed ahead, or a fresh claim), emit it,
    /// record it. A full batch fills `prefetch` up to the drain's depth; its claims outlive
    /// the cycle (also when this one fails), are renewed when they have aged, at the start
    /// of the cycle, while it emits, and while its last recording runs, and what they met
    /// (errors, lost claims) is taken from it by the caller.
    pub(super) async fn cycle(
        &self,
        stop: &watch::Receiver<bool>,
        prefetch: &mut Prefetch,
    ) -> std::result::Result<DrainSummary, CycleError> {
        let mut summary = DrainSummary {
            cycles: 1,
            ..DrainSummary::default()
        };
        let work = match prefetch.next().await {
            Some(ahead) => self.take_ahead(ahead, &mut summary).await,
            None => match self.acquire().await {
                Ok(work) => work,
                Err(error) => {
                    let step = Step::Claim;
                    return Err(CycleError {
                        step,
                        error,
                        done: summary,
                    });
                }
            },
        };
        metrics::histogram!(crate::metric_names::BATCH_SIZE).record(work.len() as f64);
        summary.claimed = work.len() as u64;
        self.renew_aged_ahead(prefetch).await;
        if work.is_empty() {
            return Ok(summary);
        }
        if work.len() >= self.options.batch_size as usize && !*stop.borrow() {
            prefetch.fill(self);
        }
        let emitted = self.emit_all(work.clone(), stop.clone(), prefetch).await;
        summary.claimed += emitted.absorbed.len() as u64;
        summary.emitted = emitted.finished;
        summary.route_failures = emitted.route_failures;
        summary.not_applied += emitted.lost.len() as u64 + emitted.lost_ahead;
        summary.add(&emitted.recorded);
        let work: Vec<_> = work
            .into_iter()
            .chain(emitted.absorbed.iter().cloned())
            .collect();
        let started = Instant::now();
        let recorded = {
            let record = self.record_batch(&work, &emitted, &mut summary);
            tokio::pin!(record);
            // A recording retried through an outage can take most of a lease: the batches
            // ahead are kept renewed meanwhile.
            loop {
                tokio::select! {
                    recorded = &mut record => break recorded,
                    () = tokio::time::sleep(self.renew_period()) => self.renew_aged_ahead(prefetch).await,
                }
            }
        };
        metrics::histogram!(crate::metric_names::COMPLETE_LATENCY)
            .record(started.elapsed().as_secs_f64());
        recorded.map(|()| summary).map_err(|error| CycleError {
            step: Step::Complete,
            error,
            done: summary,
        })
    }
}
