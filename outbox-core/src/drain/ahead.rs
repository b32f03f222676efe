//! Claiming the next batch while the current one is emitted and recorded.
//!
//! The claim runs as its own task, started when a full batch begins. Its claims are held
//! from the moment they come back: renewed on the running batch's schedule, renewed again
//! before their own emission if they have aged past a renewal period, and released if the
//! drain stops before emitting them. A claim whose renewal reports it lost is dropped and
//! never emitted.

use std::time::Instant;

use tokio::task::JoinHandle;

use super::work::Work;
use super::{Drain, DrainSummary};
use crate::{Claim, Completion, CompletionRequest, Result};

/// A batch claimed ahead of its turn.
#[derive(Debug)]
pub(super) struct Ahead {
    /// The claims still held, in claim order.
    pub(super) claims: Vec<Claim>,
    /// When their leases were last set (claimed or renewed).
    pub(super) leased_at: Instant,
    /// Claims dropped because a renewal reported them lost.
    pub(super) lost: u64,
}

/// The claim of the next batch: not asked for, in flight, or back.
#[derive(Debug)]
pub(super) enum Prefetch {
    /// No claim ahead in this cycle.
    Off,
    /// The claim is running.
    Running(JoinHandle<Result<Vec<Claim>>>),
    /// The claim came back (an error is logged and counted by the cycle).
    Back(Result<Ahead>),
}

impl Prefetch {
    /// Starts claiming the next batch on its own task.
    pub(super) fn start(drain: &Drain) -> Self {
        let drain = drain.clone();
        Self::Running(tokio::spawn(async move { drain.claim_batch().await }))
    }

    /// True while the claim is in flight.
    pub(super) fn is_running(&self) -> bool {
        matches!(self, Self::Running(_))
    }

    /// Waits for the claim in flight (forever if there is none: guard with
    /// [`Prefetch::is_running`]). Cancel-safe: the task keeps running if the wait is dropped.
    pub(super) async fn settle(&mut self) {
        if let Self::Running(handle) = self {
            let result = match handle.await {
                Ok(Ok(claims)) => Ok(Ahead {
                    claims,
                    leased_at: Instant::now(),
                    lost: 0,
                }),
                Ok(Err(e)) => Err(e),
                Err(join) => Err(crate::OutboxError::Database {
                    message: format!("the claim ahead did not finish: {join}"),
                    source: None,
                }),
            };
            *self = Self::Back(result);
        } else {
            std::future::pending::<()>().await;
        }
    }

    /// The claims that came back and are held, if any.
    /// The batch claimed ahead, if it is back with claims in it; it is taken out.
    pub(super) fn take_claims(&mut self) -> Option<Ahead> {
        match self {
            Self::Back(Ok(ahead)) if !ahead.claims.is_empty() => {
                match std::mem::replace(self, Self::Off) {
                    Self::Back(Ok(ahead)) => Some(ahead),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    pub(super) fn held_mut(&mut self) -> Option<&mut Ahead> {
        match self {
            Self::Back(Ok(ahead)) if !ahead.claims.is_empty() => Some(ahead),
            _ => None,
        }
    }
}

impl Drain {
    /// The batch claimed ahead, its leases renewed first if they have aged past a renewal
    /// period. If the renewal cannot be made the batch is not emitted: its leases are left
    /// to run out, and the entries are claimed again after them.
    pub(super) async fn take_ahead(
        &self,
        mut ahead: Ahead,
        summary: &mut DrainSummary,
    ) -> Vec<Work> {
        let confirmed =
            ahead.leased_at.elapsed() < self.renew_period() || self.renew_ahead(&mut ahead).await;
        summary.not_applied += ahead.lost;
        if !confirmed {
            tracing::error!(owner = %self.options.owner, held = ahead.claims.len(), "could not renew the batch claimed ahead; leaving it to its leases");
            summary.errors += 1;
            return Vec::new();
        }
        ahead.claims.into_iter().map(Work::Claimed).collect()
    }

    /// Gives back the claims of a batch claimed ahead that will not be emitted.
    pub(super) async fn release_ahead(&self, ahead: Ahead) -> DrainSummary {
        let mut summary = DrainSummary {
            claimed: ahead.claims.len() as u64,
            not_applied: ahead.lost,
            ..DrainSummary::default()
        };
        let requests: Vec<CompletionRequest> = ahead
            .claims
            .into_iter()
            .map(|c| {
                let mut request = CompletionRequest::new(
                    c,
                    Completion::Release {
                        reason: Some("drain shutting down".into()),
                    },
                );
                request.now = self.request_time();
                request
            })
            .collect();
        match self.send_completions(requests.clone()).await {
            Ok(results) => {
                for (req, result) in requests.iter().zip(results) {
                    summary.tally(&req.completion, result.outcome);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "releasing the batch claimed ahead failed; its leases will run out");
                summary.errors += 1;
            }
        }
        summary
    }
}
