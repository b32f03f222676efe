//! Recording what the emissions said: completion requests from outcomes (with the retry
//! policy and the attempt and age limits), sent in calls the store takes, retried.

use std::collections::HashMap;

use super::emission::Emitted;
use super::work::{Recording, Work};
use super::{Drain, DrainSummary, EmitOutcome, HeadFailure};
use crate::{
    Claim, Completion, CompletionRequest, EmissionError, EmissionResult, EntryId, OutboxEntry,
    Result,
};

impl Drain {
    /// Starts recording the finished emissions `ids` (claims this worker holds), taking
    /// their outcomes out of `outcomes`; the future gives them back with its result.
    pub(super) fn record_finished(
        &self,
        ids: Vec<EntryId>,
        held: &HashMap<EntryId, Claim>,
        outcomes: &mut HashMap<EntryId, EmitOutcome>,
    ) -> Recording<'_> {
        let now = self.clock.now();
        let mut taken = Vec::with_capacity(ids.len());
        let mut requests = Vec::with_capacity(ids.len());
        for id in ids {
            let (Some(claim), Some(outcome)) = (held.get(&id), outcomes.remove(&id)) else {
                continue;
            };
            let completion = self.completion_for(&claim.entry, &outcome, now);
            let mut request = CompletionRequest::new(claim.clone(), completion);
            request.now = self.request_time();
            requests.push(request);
            taken.push((id, outcome));
        }
        Box::pin(async move {
            let result = self.send_completions(&requests).await;
            let ids: Vec<EntryId> = taken.iter().map(|(id, _)| *id).collect();
            match result {
                Ok(results) => {
                    let mut tallied = DrainSummary::default();
                    for (req, result) in requests.iter().zip(results) {
                        tallied.tally(&req.completion, result.outcome);
                    }
                    (ids, Ok(tallied))
                }
                Err(e) => (ids, Err((e, taken))),
            }
        })
    }

    /// Records every outcome in one batch call (claims) or stamp-checked saves (found).
    pub(super) async fn record_batch(
        &self,
        work: &[Work],
        emitted: &Emitted,
        summary: &mut DrainSummary,
    ) -> Result<()> {
        let Emitted {
            outcomes,
            unstarted,
            lost,
            route_held,
            behind_failure,
            ..
        } = emitted;
        let now = self.clock.now();
        let mut claimed = Vec::new();
        for item in work {
            let id = item.entry().id;
            if lost.contains(&id) {
                continue;
            }
            let completion = match (outcomes.get(&id), item) {
                (Some(outcome), _) => self.completion_for(item.entry(), outcome, now),
                (None, Work::Claimed(_)) if behind_failure.contains(&id) => Completion::Release {
                    reason: Some(super::BEHIND_FAILURE.into()),
                },
                (None, Work::Claimed(_)) if unstarted.contains(&id) => Completion::Release {
                    reason: Some(
                        if *route_held {
                            super::HELD
                        } else {
                            super::STOPPING
                        }
                        .into(),
                    ),
                },
                // A found entry holds no lease: one never emitted needs no write.
                (None, _) => continue,
            };
            match item {
                Work::Claimed(c) => {
                    let mut request = CompletionRequest::new(c.clone(), completion);
                    request.now = self.request_time();
                    claimed.push(request);
                }
                Work::Found(entry) => {
                    let mut next = OutboxEntry::clone(entry);
                    completion
                        .target(entry)
                        .apply_to(&mut next, now, entry.stamp);
                    match self.store.save(&next, self.request_time()).await {
                        Ok(result) => summary.tally(&completion, result.outcome),
                        Err(e) => {
                            tracing::error!(entry_id = %id, error = %e, "recording an emission failed; it will be emitted again");
                            summary.errors += 1;
                        }
                    }
                }
            }
        }
        if claimed.is_empty() {
            return Ok(());
        }
        let results = self.send_completions(&claimed).await?;
        for (req, result) in claimed.iter().zip(results) {
            summary.tally(&req.completion, result.outcome);
        }
        Ok(())
    }

    /// Sends completions in calls the store takes ([`Drain::record_chunk`] each), each
    /// tried again while its leases last (see `send_until_taken`): the emissions already
    /// happened, and losing their record means emitting them all again after the lease.
    /// The same requests are sent again, so a first attempt that committed before its
    /// reply was lost is recognised by the stores as this drain's write, not a refusal.
    pub(super) async fn send_completions(
        &self,
        reqs: &[CompletionRequest],
    ) -> Result<Vec<crate::TransitionResult>> {
        let mut results = Vec::with_capacity(reqs.len());
        for chunk in reqs.chunks(self.record_chunk()) {
            results.extend(self.send_until_taken(chunk).await?);
        }
        // A store the host did not wrap in `Observed` still has the drain's transitions
        // counted and the refused ones logged.
        if !self.store.observed() {
            for (req, result) in reqs.iter().zip(&results) {
                crate::store_kit::outcomes::record_transition(req, result);
            }
        }
        Ok(results)
    }

    /// The most completions one store call takes: the store's batch limit.
    pub(super) fn record_chunk(&self) -> usize {
        (self.store.limits().max_batch_size as usize).max(1)
    }

    /// How many sub-batches a batch may have in recording at once: two where the store
    /// takes writes side by side, so one recording's round trip does not hold the next
    /// back; one on a one-writer store, where a second would only wait for the lock.
    pub(super) fn recordings_at_once(&self) -> usize {
        if self.store.capabilities().concurrent_writes {
            2
        } else {
            1
        }
    }

    /// Sends `reqs` until the store takes them: three attempts at least (after 100 and
    /// 200 ms), then on, pausing up to a second, for as long as every lease in the batch
    /// has time left. The emissions already happened; each recording lost to an outage
    /// the store outlives (a server restart, a failover) would mean emitting the entry
    /// again once its lease ran out, while a recording that lands before then costs
    /// nothing. A lease past its end could be another worker's: then the error is the
    /// caller's.
    async fn send_until_taken(
        &self,
        reqs: &[CompletionRequest],
    ) -> Result<Vec<crate::TransitionResult>> {
        let mut pause = std::time::Duration::from_millis(100);
        let mut attempts = 0;
        // When the batch's first lease runs out, worked out at the first failure only (the
        // usual first attempt pays nothing for it). Measured on the monotonic clock from
        // the lease time left then, so a test clock that stands still cannot keep a
        // failing store retried for ever.
        let mut leases_end = None;
        loop {
            attempts += 1;
            let e = match self.store.complete_batch(reqs.to_vec()).await {
                Ok(results) => {
                    if attempts > 1 {
                        tracing::warn!(
                            attempts,
                            entries = reqs.len(),
                            "recorded the batch after {attempts} attempts"
                        );
                    }
                    return Ok(results);
                }
                Err(e) if e.is_invalid_input() => return Err(e),
                Err(e) => e,
            };
            let ends = *leases_end.get_or_insert_with(|| {
                let first = reqs.iter().map(|r| r.claim.expires_at).min();
                let left = first.and_then(|at| (at - self.clock.now()).to_std().ok());
                tokio::time::Instant::now() + left.unwrap_or_default()
            });
            // The next attempt must start, with a second to spare for its round trip,
            // before the first lease of the batch runs out.
            let next = tokio::time::Instant::now() + pause + std::time::Duration::from_secs(1);
            if attempts >= 3 && next >= ends {
                return Err(e);
            }
            // One line when the batch first fails, and one when it is recorded or given
            // up (the cycle's failure); the retries in between are only traced.
            if attempts == 1 {
                tracing::warn!(error = %e, entries = reqs.len(), "recording the batch failed; trying again while its leases last");
            } else {
                tracing::debug!(error = %e, attempts, "recording the batch failed again");
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(std::time::Duration::from_secs(1));
        }
    }

    /// Turns what the provider said into what the store records, applying the retry
    /// policy and the attempt limit.
    fn completion_for(
        &self,
        entry: &OutboxEntry,
        outcome: &EmitOutcome,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Completion {
        let attempts = entry.attempt_count.saturating_add(1);
        let too_old = self.options.max_age.filter(|max| {
            (now - entry.created_at)
                .to_std()
                .is_ok_and(|age| age > *max)
        });
        match outcome {
            // The route's fault, not the entry's: held whatever its age or attempts.
            EmitOutcome::RouteFailed {
                fault,
                destination,
                error,
            } => Completion::Deferred {
                until: self
                    .route
                    .hold(entry.id, destination, &self.options.route, now),
                reason: Some(super::hold_reason(*fault, destination, error)),
            },
            EmitOutcome::Delivered {
                provider_message_id,
            } => Completion::Delivered(EmissionResult {
                provider_message_id: provider_message_id.clone(),
                delivered_at: None,
            }),
            EmitOutcome::Deferred { reason, .. } if too_old.is_some() => Completion::DeadLettered {
                error: EmissionError::new(reason.clone().unwrap_or_else(|| "deferred".into())),
                reason: Some(format!(
                    "gave up: the entry is older than the drain's max age of {:?}",
                    too_old.unwrap_or_default()
                )),
            },
            EmitOutcome::Retryable { error, .. } if too_old.is_some() => Completion::DeadLettered {
                error: EmissionError::new(error.clone()),
                reason: Some(format!(
                    "gave up: the entry is older than the drain's max age of {:?}",
                    too_old.unwrap_or_default()
                )),
            },
            EmitOutcome::Retryable { error, .. }
                if self.options.ordered
                    && entry.partition_key.is_some()
                    && self.options.head_failure == HeadFailure::DeadLetter =>
            {
                Completion::DeadLettered {
                    error: EmissionError::new(error.clone()),
                    reason: Some(
                        "dead-lettered at its first failure so the later entries of its key move on (ordered drain, HeadFailure::DeadLetter)"
                            .into(),
                    ),
                }
            }
            EmitOutcome::Deferred { until, reason } => Completion::Deferred {
                until: *until,
                // Without a reason the last error would stay, and a route hold's would
                // still read as one.
                reason: reason.clone().or_else(|| {
                    super::RouteHold::of(entry).map(|_| "deferred by the provider".into())
                }),
            },
            EmitOutcome::Retryable { error, .. } if attempts >= self.options.max_attempts => {
                Completion::DeadLettered {
                    error: EmissionError::new(error.clone()),
                    reason: Some(format!("gave up after {attempts} attempts")),
                }
            }
            EmitOutcome::Retryable { error, retry_after } => Completion::Failed {
                error: EmissionError::new(error.clone()),
                next_retry: Some(
                    now + retry_after.unwrap_or_else(|| self.options.retry.delay(attempts)),
                ),
            },
            EmitOutcome::Permanent { error } => Completion::DeadLettered {
                error: EmissionError::new(error.clone()),
                reason: Some("permanent failure".into()),
            },
        }
    }
}

#[cfg(test)]
mod record_chunks {
    use std::sync::Arc;
    use std::time::Duration;

    use crate::drain::{Drain, DrainOptions, Emission, EmitOutcome, Emitter};
    use crate::{MemoryClaimStore, NewEntry, OutboxStore, StoreLimits};

    /// Finishes every emission at the same instant, so finished emissions pile up faster
    /// than one store call per linger records them.
    struct Together;

    #[async_trait::async_trait]
    impl Emitter for Together {
        async fn emit(&self, _: Emission<'_>) -> EmitOutcome {
            tokio::time::sleep(Duration::from_millis(5)).await;
            EmitOutcome::delivered()
        }
    }

    /// Emissions in flight (64) far above the store's batch limit (8): finished ones are
    /// recorded in calls the store takes, never refused as too large.
    #[tokio::test]
    async fn finished_emissions_are_recorded_in_calls_the_store_takes() {
        let limits = StoreLimits::default().with_max_batch_size(8).unwrap();
        let store = Arc::new(MemoryClaimStore::new().with_limits(limits));
        let entries = (0..400)
            .map(|_| NewEntry::new("t", b"x".to_vec()))
            .collect::<Vec<_>>();
        for chunk in entries.chunks(8) {
            store.enqueue_batch(chunk.to_vec()).await.unwrap();
        }
        let options = DrainOptions::new()
            .batch_size(8)
            .emit_concurrency(64)
            .claim_ahead(true);
        let drain = Drain::new(store, Arc::new(Together), options).unwrap();
        let summary = drain
            .run_until(|| std::future::ready(true), std::future::pending::<()>())
            .await;
        assert_eq!(summary.errors, 0, "{summary:?}");
        assert_eq!(summary.delivered, 400, "{summary:?}");
    }
}
