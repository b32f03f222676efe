//! Route failures: a destination that is missing or refuses every message.
//!
//! An entry's failure is counted against its attempts; a route's is not the entry's fault,
//! so the drain holds what it emitted there: each such entry is deferred (no attempt
//! counted, the drain's max age not applied) with a last error naming the route, the
//! batch's unstarted claims are released, and the drain backs off (the route policy:
//! bounded, with jitter), then probes with one emission at a time. The first emission
//! that is not a route failure ends the probing; a cycle with none at all ends the
//! streak. A streak is warned about once per destination, summed up when it ends, and
//! every failure is counted in [`crate::metric_names::ROUTE_FAILURES`]. Held entries keep
//! their place: an ordered drain's key waits behind its held head.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};

use super::RetryPolicy;
use crate::{EmissionStatus, EntryId, OutboxEntry};

/// What kind of route failure an emitter saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RouteFault {
    /// The destination does not exist: no stream for the subject, no topic, no exchange,
    /// no queue bound for the routing key, no such webhook path.
    Missing,
    /// The destination refuses this client: authentication, authorization or TLS.
    Refused,
    /// The provider cannot be reached: connection refused, no such host, disconnected.
    Unreachable,
    /// The destination exists but takes nothing now: no leader, no responders, a
    /// receiver's gateway reporting it down.
    Unavailable,
}

impl RouteFault {
    /// Every kind, in label order.
    pub const ALL: [RouteFault; 4] = [
        Self::Missing,
        Self::Refused,
        Self::Unreachable,
        Self::Unavailable,
    ];

    /// The `kind` label of [`crate::metric_names::ROUTE_FAILURES`], and the word in a held
    /// entry's last error.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::Refused => "refused",
            Self::Unreachable => "unreachable",
            Self::Unavailable => "unavailable",
        }
    }

    fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == word)
    }
}

/// The last error written on an entry held for its route: `route missing (subject
/// "orders.created"): no stream captures it`. [`RouteHold::of`] reads it back.
pub fn hold_reason(fault: RouteFault, destination: &str, error: &str) -> String {
    format!("route {} ({destination}): {error}", fault.as_str())
}

/// A route that entries are held for, read back from their last errors.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RouteHold {
    /// What kind of failure held them.
    pub fault: RouteFault,
    /// The destination.
    pub destination: String,
}

impl RouteHold {
    /// The route `entry` is held for: a deferred entry whose last error a route failure
    /// wrote ([`hold_reason`]); `None` for every other entry.
    pub fn of(entry: &OutboxEntry) -> Option<Self> {
        if entry.status != EmissionStatus::Deferred {
            return None;
        }
        let rest = entry.last_error.as_deref()?.strip_prefix("route ")?;
        let (word, rest) = rest.split_once(" (")?;
        let (destination, _) = rest.split_once("): ")?;
        Some(Self {
            fault: RouteFault::parse(word)?,
            destination: destination.to_owned(),
        })
    }
}

/// The routes `entries` are held for, with how many of them each holds and the last error
/// of the latest one held, most entries first.
pub fn route_holds(entries: &[OutboxEntry]) -> Vec<(RouteHold, u64, String)> {
    let mut by_route: BTreeMap<RouteHold, (u64, DateTime<Utc>, String)> = BTreeMap::new();
    for entry in entries {
        let Some(hold) = RouteHold::of(entry) else {
            continue;
        };
        let error = entry.last_error.clone().unwrap_or_default();
        let seen = by_route
            .entry(hold)
            .or_insert((0, entry.updated_at, error.clone()));
        seen.0 += 1;
        if entry.updated_at > seen.1 {
            seen.1 = entry.updated_at;
            seen.2 = error;
        }
    }
    let mut holds: Vec<_> = by_route
        .into_iter()
        .map(|(hold, (n, _, error))| (hold, n, error))
        .collect();
    holds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    holds
}

/// The route policy's default: half a second, doubling, at most 30 s, spread ±20%.
pub(super) fn default_policy() -> RetryPolicy {
    RetryPolicy {
        initial: Duration::from_millis(500),
        multiplier: 2.0,
        max: Duration::from_secs(30),
        jitter: 0.2,
    }
}

/// A drain's view of its route (see the module comment).
#[derive(Debug, Default)]
pub(super) struct RouteWatch {
    state: Mutex<Watch>,
    /// One emission at a time until one is not a route failure (read per emission, so
    /// outside the lock).
    probing: AtomicBool,
}

#[derive(Debug, Default)]
struct Watch {
    streak: Option<Streak>,
    /// Cycles with a route failure in this streak: the backoff's step.
    held_cycles: u32,
    /// The entries this drain held, while they may still be held.
    held: HashSet<EntryId>,
}

/// Route failures in a row.
#[derive(Debug, Clone)]
struct Streak {
    since: DateTime<Utc>,
    failures: u64,
    destinations: BTreeSet<String>,
    last: String,
}

impl Streak {
    /// `12 route failures since 2026-12-04T20:00:00Z (route missing (…): …)`.
    fn summary(&self) -> String {
        format!(
            "{} route failures since {} ({})",
            self.failures,
            self.since.to_rfc3339_opts(SecondsFormat::Secs, true),
            self.last,
        )
    }
}

/// What the drain does after a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AfterCycle {
    /// Go on as usual.
    Go,
    /// Everything emitted met a failing route: release what is claimed ahead and wait this
    /// long before the next claim.
    BackOff(Duration),
    /// The route has failed for longer than the drain's limit: stop.
    GiveUp,
}

impl RouteWatch {
    /// Whether emissions go one at a time (a route failed and nothing has got through
    /// since).
    pub(super) fn probing(&self) -> bool {
        self.probing.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Watch> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One emission met a failing route: counted, warned about when the streak or its
    /// destination is new. Returns whether the batch should stop (it was a probe).
    pub(super) fn failed(
        &self,
        owner: &str,
        emitter: &'static str,
        (fault, destination, error): (RouteFault, &str, &str),
        now: DateTime<Utc>,
    ) -> bool {
        metrics::counter!(
            crate::metric_names::ROUTE_FAILURES,
            "emitter" => emitter,
            "kind" => fault.as_str(),
        )
        .increment(1);
        let mut w = self.lock();
        let streak = w.streak.get_or_insert_with(|| Streak {
            since: now,
            failures: 0,
            destinations: BTreeSet::new(),
            last: String::new(),
        });
        streak.failures += 1;
        streak.last = hold_reason(fault, destination, error);
        if streak.destinations.insert(destination.to_owned()) {
            tracing::warn!(
                owner,
                emitter,
                kind = fault.as_str(),
                destination,
                error,
                "route {} ({destination}): {error}; holding its entries (no attempt counted) \
                 and backing off until it carries again (repeats are counted, not logged)",
                fault.as_str(),
            );
        }
        self.probing.swap(true, Ordering::Relaxed)
    }

    /// One emission got past the route (whatever the provider then said of the entry).
    pub(super) fn passed(&self) {
        if self.probing() {
            self.probing.store(false, Ordering::Relaxed);
        }
    }

    /// `entry` is held: when it may be claimed again, and it is remembered until then.
    pub(super) fn hold(
        &self,
        entry: EntryId,
        policy: &RetryPolicy,
        now: DateTime<Utc>,
    ) -> DateTime<Utc> {
        let mut w = self.lock();
        w.held.insert(entry);
        now + policy.delay(w.held_cycles.saturating_add(1))
    }

    /// Takes in how a cycle's emissions went: `route_failures` of `emitted`.
    pub(super) fn after_cycle(
        &self,
        owner: &str,
        emitted: u64,
        route_failures: u64,
        policy: &RetryPolicy,
        limit: Option<Duration>,
        now: DateTime<Utc>,
    ) -> AfterCycle {
        let mut w = self.lock();
        if route_failures == 0 {
            if emitted > 0 {
                if let Some(ended) = w.streak.take() {
                    let failures = ended.failures;
                    tracing::warn!(
                        owner,
                        failures,
                        "the route carries again: {}",
                        ended.summary()
                    );
                }
                w.held_cycles = 0;
                self.probing.store(false, Ordering::Relaxed);
            }
            return AfterCycle::Go;
        }
        w.held_cycles = w.held_cycles.saturating_add(1);
        let down_for = w
            .streak
            .as_ref()
            .and_then(|s| (now - s.since).to_std().ok())
            .unwrap_or_default();
        if let Some(limit) = limit.filter(|l| down_for > *l) {
            let last = w
                .streak
                .as_ref()
                .map(|s| s.last.clone())
                .unwrap_or_default();
            tracing::error!(
                owner,
                "the route has failed for {down_for:.0?}, over the drain's limit of {limit:?} \
                 ({last}); stopping (its entries stay held, with no attempt counted)"
            );
            return AfterCycle::GiveUp;
        }
        if route_failures < emitted {
            return AfterCycle::Go;
        }
        let pause = policy.delay(w.held_cycles).to_std().unwrap_or_default();
        AfterCycle::BackOff(pause)
    }

    /// The entries this drain held that may still be held, to look up before it calls the
    /// outbox done.
    pub(super) fn held(&self) -> Vec<EntryId> {
        self.lock().held.iter().copied().collect()
    }

    /// Forgets held entries that are held no longer.
    pub(super) fn released(&self, ids: &[EntryId]) {
        let mut w = self.lock();
        for id in ids {
            w.held.remove(id);
        }
    }

    /// The drain stops: a streak still running is summed up.
    pub(super) fn stopped(&self, owner: &str) {
        if let Some(s) = self.lock().streak.take() {
            let failures = s.failures;
            tracing::warn!(
                owner,
                failures,
                "still failing when the drain stopped: {}",
                s.summary()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewEntry;

    fn held(error: &str) -> OutboxEntry {
        let mut e = OutboxEntry::from_new(NewEntry::new("t", b"x".to_vec()), Utc::now());
        e.status = EmissionStatus::Deferred;
        e.last_error = Some(error.to_owned());
        e
    }

    #[test]
    fn a_hold_reason_reads_back_as_its_route() {
        let reason = hold_reason(
            RouteFault::Missing,
            "subject \"orders.created\"",
            "no stream: (it said so)",
        );
        assert_eq!(
            RouteHold::of(&held(&reason)),
            Some(RouteHold {
                fault: RouteFault::Missing,
                destination: "subject \"orders.created\"".into(),
            })
        );
        for other in ["HTTP 429, retry after then", "route nonsense (x): y", ""] {
            assert_eq!(RouteHold::of(&held(other)), None, "{other}");
        }
        let mut pending = held(&reason);
        pending.status = EmissionStatus::Pending;
        assert_eq!(
            RouteHold::of(&pending),
            None,
            "only deferred entries are held"
        );
    }

    #[test]
    fn holds_are_grouped_by_route_most_entries_first() {
        let a = hold_reason(RouteFault::Missing, "topic \"a\"", "gone");
        let b = hold_reason(RouteFault::Refused, "topic \"b\"", "denied");
        let entries = vec![held(&a), held(&b), held(&b), held("HTTP 429")];
        let holds = route_holds(&entries);
        let seen: Vec<(&str, u64)> = holds
            .iter()
            .map(|(h, n, _)| (h.destination.as_str(), *n))
            .collect();
        assert_eq!(seen, [("topic \"b\"", 2), ("topic \"a\"", 1)]);
        assert_eq!(holds[0].2, b);
    }

    #[test]
    fn a_probe_that_fails_stops_the_batch_and_one_that_passes_ends_probing() {
        let watch = RouteWatch::default();
        let failure = (RouteFault::Missing, "topic \"t\"", "gone");
        assert!(!watch.failed("w", "test", failure, Utc::now()));
        assert!(watch.probing());
        assert!(watch.failed("w", "test", failure, Utc::now()));
        watch.passed();
        assert!(!watch.probing());
    }

    #[test]
    fn cycles_back_off_while_all_fail_and_give_up_past_the_limit() {
        let watch = RouteWatch::default();
        let policy = RetryPolicy {
            jitter: 0.0,
            ..default_policy()
        };
        let t0 = Utc::now();
        let failure = (RouteFault::Unreachable, "broker", "refused");
        watch.failed("w", "test", failure, t0);
        let after = |emitted, failed, at| {
            watch.after_cycle(
                "w",
                emitted,
                failed,
                &policy,
                Some(Duration::from_secs(60)),
                at,
            )
        };
        assert_eq!(
            after(8, 8, t0),
            AfterCycle::BackOff(Duration::from_millis(500))
        );
        assert_eq!(after(1, 1, t0), AfterCycle::BackOff(Duration::from_secs(1)));
        assert_eq!(after(5, 1, t0), AfterCycle::Go, "some got through");
        let late = t0 + chrono::TimeDelta::seconds(61);
        assert_eq!(after(1, 1, late), AfterCycle::GiveUp);
        assert_eq!(after(3, 0, late), AfterCycle::Go);
        assert_eq!(
            after(1, 1, late),
            AfterCycle::BackOff(Duration::from_millis(500)),
            "a new streak starts from the first step, and without the old one's age"
        );
    }
}
