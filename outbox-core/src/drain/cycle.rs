//! One drain cycle, top to bottom: take a batch (the one claimed ahead, or a fresh
//! claim: claim.rs, ahead.rs), emit it while renewing its leases (emission.rs,
//! renewal.rs), record what the emissions said (record.rs).

use std::time::Instant;

use tokio::sync::watch;

use super::ahead::{Ahead, Prefetch};
use super::failures::{CycleError, Step};
use super::work::Work;
use super::{Drain, DrainSummary};
use crate::Result;

impl Drain {
    /// One cycle: take a batch (the one claimed ahead, or a fresh claim), emit it, record
    /// it. With `look_ahead`, a full batch starts the claim of the next one, which comes
    /// back with the summary for the next cycle (also when this cycle fails), or the error
    /// that claim met (the caller tells it; this cycle's own summary stands).
    pub(super) async fn cycle(
        &self,
        stop: &watch::Receiver<bool>,
        ahead: Option<Ahead>,
        look_ahead: bool,
    ) -> (
        std::result::Result<DrainSummary, CycleError>,
        Result<Option<Ahead>>,
    ) {
        let mut summary = DrainSummary {
            cycles: 1,
            ..DrainSummary::default()
        };
        let work = match ahead {
            Some(ahead) => self.take_ahead(ahead, &mut summary).await,
            None => match self.acquire().await {
                Ok(work) => work,
                Err(error) => {
                    let step = Step::Claim;
                    return (Err(CycleError { step, error }), Ok(None));
                }
            },
        };
        metrics::histogram!(crate::metric_names::BATCH_SIZE).record(work.len() as f64);
        summary.claimed = work.len() as u64;
        if work.is_empty() {
            return (Ok(summary), Ok(None));
        }
        let full = work.len() >= self.options.batch_size as usize;
        let mut prefetch = if look_ahead && self.claims_ahead_now() && full && !*stop.borrow() {
            Prefetch::start(self)
        } else {
            Prefetch::Off
        };
        let emitted = self
            .emit_all(work.clone(), stop.clone(), &mut prefetch)
            .await;
        summary.claimed += emitted.absorbed.len() as u64;
        summary.emitted = emitted.finished;
        summary.not_applied += emitted.lost.len() as u64 + emitted.lost_ahead;
        summary.add(&emitted.recorded);
        let work: Vec<Work> = work
            .into_iter()
            .chain(emitted.absorbed.iter().cloned())
            .collect();
        let started = Instant::now();
        let record = self.record_batch(
            &work,
            &emitted.outcomes,
            &emitted.unstarted,
            &emitted.lost,
            &mut summary,
        );
        let recorded = if prefetch.is_running() {
            let (recorded, ()) = tokio::join!(record, prefetch.settle());
            recorded
        } else {
            record.await
        };
        metrics::histogram!(crate::metric_names::COMPLETE_LATENCY)
            .record(started.elapsed().as_secs_f64());
        let next = match prefetch {
            Prefetch::Back(Ok(ahead)) if !ahead.claims.is_empty() => Ok(Some(ahead)),
            Prefetch::Back(Ok(ahead)) => {
                summary.not_applied += ahead.lost;
                Ok(None)
            }
            Prefetch::Back(Err(e)) => Err(e),
            _ => Ok(None),
        };
        let recorded = recorded.map(|()| summary).map_err(|error| CycleError {
            step: Step::Complete,
            error,
        });
        (recorded, next)
    }
}
