//! An emitter driven by the entry's payload, recording every emission it makes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::TimeDelta;
use outbox_core::drain::{Emission, EmitOutcome, Emitter};
use outbox_core::{async_trait, Clock, EntryId};
use tokio::sync::Semaphore;

/// One recorded emission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emitted {
    /// The entry.
    pub id: EntryId,
    /// Its attempt number.
    pub delivery_attempt: u32,
    /// The worker that emitted it.
    pub owner: String,
}

/// Behaves as the payload says:
/// `ok` delivers; `defer` defers 10 s on the first attempt, then delivers; `flaky` fails
/// retryably twice, then delivers; `broken` always fails retryably; `poison` fails
/// permanently; `panic` panics on the first attempt, then delivers; `gate` delivers, but
/// when emitted by an owner whose name starts with `slow` it first waits for
/// [`ScriptedEmitter::open_gate`]; `missing` always fails at its route (destination
/// [`ScriptedEmitter::MISSING`]). While [`ScriptedEmitter::route_down`] is set, every
/// emission fails at the route instead ([`EmitOutcome::RouteFailed`], missing).
#[derive(Debug, Clone)]
pub struct ScriptedEmitter {
    clock: Arc<dyn Clock>,
    route_down: Arc<std::sync::atomic::AtomicBool>,
    log: Arc<Mutex<Vec<Emitted>>>,
    started: Arc<Semaphore>,
    gate: Arc<Semaphore>,
}

impl ScriptedEmitter {
    /// An emitter judging deferrals by `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self {
            clock,
            route_down: Arc::default(),
            log: Arc::default(),
            started: Arc::new(Semaphore::new(0)),
            gate: Arc::new(Semaphore::new(0)),
        }
    }

    /// Every emission so far, in order.
    pub fn emitted(&self) -> Vec<Emitted> {
        self.log.lock().unwrap().clone()
    }

    /// How many times each entry was emitted.
    pub fn counts(&self) -> HashMap<EntryId, usize> {
        let mut counts = HashMap::new();
        for e in self.emitted() {
            *counts.entry(e.id).or_default() += 1;
        }
        counts
    }

    /// Takes the route down (every emission fails at it) or brings it back.
    pub fn route_down(&self, down: bool) {
        self.route_down
            .store(down, std::sync::atomic::Ordering::SeqCst);
    }

    /// The destination the route failures name.
    pub const DESTINATION: &'static str = "scripted destination";

    /// The destination of `missing` entries, which never carries.
    pub const MISSING: &'static str = "scripted missing destination";

    /// Lets `n` waiting `gate` emissions finish.
    pub fn open_gate(&self, n: usize) {
        self.gate.add_permits(n);
    }

    /// Waits until a `gate` emission has started (each started one is counted once).
    pub async fn gate_started(&self) {
        self.started.acquire().await.expect("open").forget();
    }
}

#[async_trait]
impl Emitter for ScriptedEmitter {
    fn name(&self) -> &'static str {
        "scripted"
    }

    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        self.log.lock().unwrap().push(Emitted {
            id: emission.entry.id,
            delivery_attempt: emission.delivery_attempt,
            owner: emission.owner.to_owned(),
        });
        if self.route_down.load(std::sync::atomic::Ordering::SeqCst) {
            return EmitOutcome::route(
                outbox_core::drain::RouteFault::Missing,
                Self::DESTINATION,
                "no such destination",
            );
        }
        // Deferrals do not count as attempts, so "first" means first seen for `defer`.
        let first = match emission.entry.payload.as_slice() {
            b"defer" => {
                self.log
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|e| e.id == emission.entry.id)
                    .count()
                    == 1
            }
            _ => emission.delivery_attempt == 1,
        };
        match (emission.entry.payload.as_slice(), first) {
            (b"defer", true) => EmitOutcome::Deferred {
                until: self.clock.now() + TimeDelta::seconds(10),
                reason: Some("rate limited".into()),
            },
            (b"always-defer", _) => EmitOutcome::Deferred {
                until: self.clock.now() + TimeDelta::seconds(10),
                reason: Some("not now".into()),
            },
            (b"flaky", _) if emission.delivery_attempt <= 2 => {
                EmitOutcome::retryable("flaky provider")
            }
            (b"broken", _) => EmitOutcome::retryable("provider down"),
            (b"poison", _) => EmitOutcome::permanent("payload rejected"),
            (b"missing", _) => EmitOutcome::route(
                outbox_core::drain::RouteFault::Missing,
                Self::MISSING,
                "no such destination",
            ),
            (b"panic", true) => panic!("scripted emitter panic"),
            // A provider call that never returns (on its first attempt).
            (b"hang", true) => {
                self.started.add_permits(1);
                std::future::pending().await
            }
            (b"gate", _) if emission.owner.starts_with("slow") => {
                self.started.add_permits(1);
                let permit = tokio::time::timeout(Duration::from_secs(30), self.gate.acquire())
                    .await
                    .expect("the test never opened the gate");
                permit.expect("open").forget();
                EmitOutcome::delivered()
            }
            _ => EmitOutcome::delivered(),
        }
    }
}
