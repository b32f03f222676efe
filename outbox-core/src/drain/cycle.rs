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
    /// the cycle (also when this one fails), and what they met is taken from it by the
    /// caller.
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
                    return Err(CycleError { step, error });
                }
            },
        };
        metrics::histogram!(crate::metric_names::BATCH_SIZE).record(work.len() as f64);
        summary.claimed = work.len() as u64;
        if work.is_empty() {
            summary.not_applied += prefetch.take_lost();
            return Ok(summary);
        }
        if work.len() >= self.options.batch_size as usize && !*stop.borrow() {
            prefetch.fill(self);
        }
        let emitted = self.emit_all(work.clone(), stop.clone(), prefetch).await;
        summary.claimed += emitted.absorbed.len() as u64;
        summary.emitted = emitted.finished;
        summary.not_applied += emitted.lost.len() as u64 + emitted.lost_ahead;
        summary.add(&emitted.recorded);
        let work: Vec<_> = work
            .into_iter()
            .chain(emitted.absorbed.iter().cloned())
            .collect();
        let started = Instant::now();
        let recorded = self
            .record_batch(
                &work,
                &emitted.outcomes,
                &emitted.unstarted,
                &emitted.lost,
                &mut summary,
            )
            .await;
        metrics::histogram!(crate::metric_names::COMPLETE_LATENCY)
            .record(started.elapsed().as_secs_f64());
        summary.not_applied += prefetch.take_lost();
        recorded.map(|()| summary).map_err(|error| CycleError {
            step: Step::Complete,
            error,
        })
    }
}
