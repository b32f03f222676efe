//! Route failures: a destination that is missing or refuses every message.
//!
//! An entry's failure is counted against its attempts; a route's is not the entry's fault,
//! so the drain holds what it emitted there: each such entry is deferred (no attempt
//! counted, the drain's max age not applied) with a last error naming the route, the
//! batch's unstarted claims are released, and the drain backs off (the route policy:
//! bounded, with jitter), then probes with one emission at a time. The first emission
//! that is not a route failure ends the probing.
//!
//! Each destination has a streak of its own: it starts with the destination's first
//! failure (warned about once), holds its entries longer the more cycles it failed in,
//! and ends (summed up) when an entry held for it gets through, or once it has been quiet
//! for twice the longest hold and a minute at least (another worker delivered what this
//! one held). Healthy
//! destinations carrying meanwhile change none of that, so one missing topic among many
//! is told once, backs off on its own, and can reach the drain's limit. Every failure is
//! counted in [`crate::metric_names::ROUTE_FAILURES`]. Held entries keep their place: an
//! ordered drain's key waits behind its held head.

use std::collections::{BTreeMap, HashMap};
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

/// A drain's view of its routes (see the module comment).
#[derive(Debug, Default)]
pub(super) struct RouteWatch {
    state: Mutex<Watch>,
    /// One emission at a time until one is not a route failure (read per emission, so
    /// outside the lock).
    probing: AtomicBool,
    /// Whether any entry is held, so an emission that passes takes the lock only then.
    holding: AtomicBool,
}

#[derive(Debug, Default)]
struct Watch {
    /// The failing routes, by destination.
    streaks: BTreeMap<String, Streak>,
    /// Cycles in a row whose every emission met a failing route: the pause's step.
    held_cycles: u32,
    /// Cycles ended so far, so a destination's failing cycles are counted once each.
    cycle: u64,
    /// The entries this drain held, and the destination each was held for.
    held: HashMap<EntryId, String>,
}

/// The failures of one destination since it last carried.
#[derive(Debug, Clone)]
struct Streak {
    since: DateTime<Utc>,
    failures: u64,
    /// The cycles it failed in: its holds' step.
    cycles: u32,
    last_cycle: u64,
    last_at: DateTime<Utc>,
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

    /// Whether it failed recently: within twice the longest hold, and at least a minute
    /// (the drain's idle waits come on top of the holds). A route quiet for longer carried
    /// for others (another worker delivered what this one held).
    fn is_live(&self, policy: &RetryPolicy, now: DateTime<Utc>) -> bool {
        let recent = (policy.max * 2).max(Duration::from_secs(60));
        (now - self.last_at)
            .to_std()
            .map_or(true, |quiet| quiet <= recent)
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
    /// A route has failed for longer than the drain's limit: stop.
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

    /// One emission met a failing route: counted, warned about when its destination's
    /// streak is new. Returns whether the batch should stop (it was a probe).
    pub(super) fn failed(
        &self,
        owner: &str,
        emitter: &'static str,
        (fault, destination, error): (RouteFault, &str, &str),
        policy: &RetryPolicy,
        now: DateTime<Utc>,
    ) -> bool {
        metrics::counter!(
            crate::metric_names::ROUTE_FAILURES,
            "emitter" => emitter,
            "kind" => fault.as_str(),
        )
        .increment(1);
        let mut w = self.lock();
        let cycle = w.cycle;
        if w.streaks
            .get(destination)
            .is_some_and(|s| !s.is_live(policy, now))
        {
            w.end(destination, true);
        }
        let streak = w.streaks.entry(destination.to_owned()).or_insert_with(|| {
            tracing::warn!(
                owner,
                emitter,
                kind = fault.as_str(),
                destination,
                error,
                "route {} ({destination}): {error}; holding its entries (no attempt \
                     counted) and backing off until it carries again (repeats are counted, \
                     not logged)",
                fault.as_str(),
            );
            Streak {
                since: now,
                failures: 0,
                cycles: 0,
                last_cycle: u64::MAX,
                last_at: now,
                last: String::new(),
            }
        });
        streak.failures += 1;
        streak.last_at = now;
        streak.last = hold_reason(fault, destination, error);
        if streak.last_cycle != cycle {
            streak.last_cycle = cycle;
            streak.cycles = streak.cycles.saturating_add(1);
        }
        self.probing.swap(true, Ordering::Relaxed)
    }

    /// The emission of `entry` got past the route (whatever the provider then said of the
    /// entry): probing ends, and if the entry was held, its destination carries again.
    pub(super) fn passed(&self, owner: &str, entry: EntryId) {
        if self.probing() {
            self.probing.store(false, Ordering::Relaxed);
        }
        if !self.holding.load(Ordering::Relaxed) {
            return;
        }
        let mut w = self.lock();
        if let Some(destination) = w.held.remove(&entry) {
            if let Some(ended) = w.end(&destination, false) {
                let failures = ended.failures;
                tracing::warn!(
                    owner,
                    failures,
                    destination,
                    "the route to {destination} carries again: {}",
                    ended.summary()
                );
            }
        }
        self.holding.store(!w.held.is_empty(), Ordering::Relaxed);
    }

    /// `entry` is held for `destination`: when it may be claimed again (later, the more
    /// cycles the destination failed in), and it is remembered until it gets through.
    pub(super) fn hold(
        &self,
        entry: EntryId,
        destination: &str,
        policy: &RetryPolicy,
        now: DateTime<Utc>,
    ) -> DateTime<Utc> {
        let mut w = self.lock();
        let step = w.streaks.get(destination).map_or(1, |s| s.cycles.max(1));
        w.held.insert(entry, destination.to_owned());
        self.holding.store(true, Ordering::Relaxed);
        now + policy.delay(step)
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
        let cycle = w.cycle;
        w.cycle += 1;
        if route_failures < emitted {
            // Something got past the routes: no pause.
            w.held_cycles = 0;
        }
        if route_failures == 0 {
            return AfterCycle::Go;
        }
        let over = limit.and_then(|limit| {
            w.streaks
                .values()
                .filter(|s| s.last_cycle == cycle)
                .find(|s| (now - s.since).to_std().is_ok_and(|down| down > limit))
                .map(|s| (limit, s.summary()))
        });
        if let Some((limit, summary)) = over {
            tracing::error!(
                owner,
                "a route has failed for longer than the drain's limit of {limit:?}: \
                 {summary}; stopping (its entries stay held, with no attempt counted)"
            );
            return AfterCycle::GiveUp;
        }
        if route_failures < emitted {
            return AfterCycle::Go;
        }
        w.held_cycles = w.held_cycles.saturating_add(1);
        AfterCycle::BackOff(policy.delay(w.held_cycles).to_std().unwrap_or_default())
    }

    /// The entries this drain held that may still be held, to look up before it calls the
    /// outbox done.
    pub(super) fn held(&self) -> Vec<EntryId> {
        self.lock().held.keys().copied().collect()
    }

    /// Forgets held entries that are held no longer.
    pub(super) fn released(&self, ids: &[EntryId]) {
        let mut w = self.lock();
        for id in ids {
            w.held.remove(id);
        }
        self.holding.store(!w.held.is_empty(), Ordering::Relaxed);
    }

    /// The drain stops: the routes still failing are summed up.
    pub(super) fn stopped(&self, owner: &str, policy: &RetryPolicy, now: DateTime<Utc>) {
        let mut w = self.lock();
        for (destination, s) in std::mem::take(&mut w.streaks) {
            if s.is_live(policy, now) {
                let failures = s.failures;
                tracing::warn!(
                    owner,
                    failures,
                    destination,
                    "still failing when the drain stopped: {}",
                    s.summary()
                );
            }
        }
    }
}

impl Watch {
    /// Ends `destination`'s streak. A streak gone quiet (`stale`) also forgets the entries
    /// held for it: their holds ran out long ago, so they are due, and any count of the
    /// outbox shows them. The other entries held for a route that carries again are kept,
    /// to be waited for: they may not be due yet.
    fn end(&mut self, destination: &str, stale: bool) -> Option<Streak> {
        let ended = self.streaks.remove(destination)?;
        if stale {
            self.held.retain(|_, d| d != destination);
        }
        Some(ended)
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

    fn policy() -> RetryPolicy {
        RetryPolicy {
            jitter: 0.0,
            ..default_policy()
        }
    }

    #[test]
    fn a_probe_that_fails_stops_the_batch_and_one_that_passes_ends_probing() {
        let watch = RouteWatch::default();
        let failure = (RouteFault::Missing, "topic \"t\"", "gone");
        let now = Utc::now();
        assert!(!watch.failed("w", "test", failure, &policy(), now));
        assert!(watch.probing());
        assert!(watch.failed("w", "test", failure, &policy(), now));
        watch.passed("w", EntryId::new());
        assert!(!watch.probing());
    }

    #[test]
    fn holds_grow_with_the_cycles_their_destination_failed_in_and_end_when_one_gets_through() {
        let watch = RouteWatch::default();
        let p = policy();
        let t0 = Utc::now();
        let a = (RouteFault::Missing, "topic \"a\"", "gone");
        let ids: Vec<EntryId> = (0..4).map(|_| EntryId::new()).collect();
        let mut until = Vec::new();
        for id in &ids {
            // One cycle each, topic a failing while others carry.
            watch.failed("w", "test", a, &p, t0);
            until.push(watch.hold(*id, "topic \"a\"", &p, t0) - t0);
            assert_eq!(watch.after_cycle("w", 5, 1, &p, None, t0), AfterCycle::Go);
        }
        let ms: Vec<i64> = until
            .iter()
            .map(chrono::TimeDelta::num_milliseconds)
            .collect();
        assert_eq!(
            ms,
            [500, 1_000, 2_000, 4_000],
            "healthy cycles do not reset it"
        );
        assert_eq!(watch.held().len(), 4);
        watch.passed("w", ids[0]);
        assert_eq!(
            watch.held().len(),
            3,
            "the others held for it are still waited for"
        );
        watch.failed("w", "test", a, &p, t0);
        assert_eq!(
            watch.hold(ids[1], "topic \"a\"", &p, t0) - t0,
            chrono::TimeDelta::milliseconds(500),
            "a new streak starts from the first step"
        );
    }

    #[test]
    fn cycles_back_off_while_all_fail_and_give_up_past_the_limit() {
        let watch = RouteWatch::default();
        let p = policy();
        let t0 = Utc::now();
        let limit = Some(Duration::from_secs(60));
        let down = (RouteFault::Unreachable, "broker", "refused");
        watch.failed("w", "test", down, &p, t0);
        let back_off = |ms| AfterCycle::BackOff(Duration::from_millis(ms));
        assert_eq!(watch.after_cycle("w", 8, 8, &p, limit, t0), back_off(500));
        watch.failed("w", "test", down, &p, t0);
        assert_eq!(watch.after_cycle("w", 1, 1, &p, limit, t0), back_off(1_000));
        watch.failed("w", "test", down, &p, t0);
        assert_eq!(
            watch.after_cycle("w", 5, 1, &p, limit, t0),
            AfterCycle::Go,
            "some got through: no pause"
        );
        let late = t0 + chrono::TimeDelta::seconds(50);
        watch.failed("w", "test", down, &p, late);
        assert_eq!(
            watch.after_cycle("w", 1, 1, &p, limit, late),
            back_off(500),
            "the pause starts over, the streak does not"
        );
        let later = t0 + chrono::TimeDelta::seconds(61);
        assert_eq!(
            watch.after_cycle("w", 0, 0, &p, limit, later),
            AfterCycle::Go,
            "only a route failing in the cycle is judged"
        );
        watch.failed("w", "test", down, &p, later);
        assert_eq!(
            watch.after_cycle("w", 3, 1, &p, limit, later),
            AfterCycle::GiveUp,
            "down past the limit, other routes carrying or not"
        );
        let quiet = later + chrono::TimeDelta::seconds(61);
        assert!(
            p.max * 2 <= Duration::from_secs(60),
            "the minute is the floor here"
        );
        watch.failed("w", "test", down, &p, quiet);
        assert_eq!(
            watch.after_cycle("w", 1, 1, &p, limit, quiet),
            back_off(500),
            "a route quiet for a minute (twice the longest hold, or more) starts a new streak"
        );
    }
}
