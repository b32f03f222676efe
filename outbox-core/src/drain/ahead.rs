//! Claiming the next batch while the current one is emitted and recorded.
//!
//! The claim runs as its own task, started when a full batch begins. Its claims are held
//! from the moment they come back: renewed on the running batch's schedule, renewed again
//! before their own emission if they have aged past a renewal period, and released if the
//! drain stops before emitting them. A claim whose renewal reports it lost is dropped and
//! never emitted.

use std::collections::HashMap;
use std::time::Instant;

use tokio::task::JoinHandle;

use super::Drain;
use crate::{Claim, EntryId, Result};

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
    /// Renews the claims of `ahead`, dropping the lost ones. `false` when the store could
    /// not be asked (the leases are then unconfirmed).
    pub(super) async fn renew_ahead(&self, ahead: &mut Ahead) -> bool {
        let mut held: HashMap<EntryId, Claim> =
            ahead.claims.iter().map(|c| (c.id(), c.clone())).collect();
        let Some(lost) = self.renew(&mut held).await else {
            return false;
        };
        ahead.lost += lost.len() as u64;
        ahead.claims = ahead
            .claims
            .iter()
            .filter(|c| !lost.contains(&c.id()))
            .filter_map(|c| held.remove(&c.id()))
            .collect();
        ahead.leased_at = Instant::now();
        true
    }
}
