//! Drain settings, as a builder with defaults.

use std::time::Duration;

use chrono::TimeDelta;

use super::retry::RetryPolicy;
use crate::{OutboxError, Result};

/// The most batches a drain may hold claimed ahead ([`DrainOptions::batches_ahead`]).
const MAX_BATCHES_AHEAD: usize = 8;

/// How a [`super::Drain`] works.
#[derive(Debug, Clone)]
pub struct DrainOptions {
    pub(crate) use_claim_leases: bool,
    pub(crate) owner: String,
    pub(crate) batch_size: u32,
    pub(crate) lease: TimeDelta,
    pub(crate) emit_concurrency: usize,
    pub(crate) poll_interval: Duration,
    pub(crate) schema_check_interval: Duration,
    pub(crate) max_idle_interval: Duration,
    pub(crate) retry: RetryPolicy,
    pub(crate) max_attempts: u32,
    pub(crate) topic: Option<String>,
    pub(crate) claim_ahead: Option<bool>,
    pub(crate) batches_ahead: usize,
    pub(crate) emit_timeout: Duration,
    pub(crate) shutdown_grace: Duration,
    pub(crate) max_age: Option<Duration>,
    pub(crate) ordered: bool,
    pub(crate) key_run: u32,
    pub(crate) head_failure: HeadFailure,
    pub(crate) slice: Option<crate::Slice>,
    pub(crate) route: RetryPolicy,
    pub(crate) route_down_limit: Option<Duration>,
}

/// How many consecutive entries of one key an ordered drain's claim takes by default.
pub const DEFAULT_KEY_RUN: u32 = 10;

/// What an ordered drain does when the entry at the head of a key fails and could be
/// retried: the later entries of the key wait behind it either way until it is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeadFailure {
    /// Retry it as any entry is retried (the retry policy, up to the attempt limit): the
    /// key waits, and its order is kept whole.
    #[default]
    Block,
    /// Dead-letter it at once, so the key moves on; an operator can requeue it later (it
    /// is then delivered after the entries that overtook it).
    DeadLetter,
}

impl Default for DrainOptions {
    fn default() -> Self {
        Self {
            use_claim_leases: true,
            owner: default_owner(),
            batch_size: 50,
            lease: TimeDelta::seconds(30),
            emit_concurrency: 8,
            poll_interval: Duration::from_millis(250),
            schema_check_interval: Duration::from_secs(30),
            max_idle_interval: Duration::from_secs(5),
            retry: RetryPolicy::default(),
            max_attempts: 10,
            topic: None,
            claim_ahead: None,
            batches_ahead: 2,
            emit_timeout: Duration::from_secs(60),
            shutdown_grace: Duration::from_secs(30),
            max_age: Some(Duration::from_secs(7 * 86_400)),
            ordered: false,
            key_run: DEFAULT_KEY_RUN,
            head_failure: HeadFailure::Block,
            slice: None,
            route: super::route::default_policy(),
            route_down_limit: None,
        }
    }
}

/// `host-pid-xxxx`: stable enough to read in logs, unique per process start.
fn default_owner() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".to_owned());
    let suffix = &uuid::Uuid::new_v4().simple().to_string()[..6];
    format!("{host}-{}-{suffix}", std::process::id())
}

impl DrainOptions {
    /// The defaults: claim leases on, owner `host-pid-random`, batches of 50, 30 s leases,
    /// 8 concurrent emissions, polling every 250 ms backing off to 5 s when idle, the
    /// default [`RetryPolicy`], dead-lettering after 10 attempts, every topic, claiming
    /// two batches ahead where the store can overlap writes.
    pub fn new() -> Self {
        Self::default()
    }

    /// `false` selects the non-claiming compatibility path: plain finds and stamp-checked
    /// saves, with no leases. It is only safe for ONE worker, or workers on disjoint
    /// partitions (topic filters): two workers reading the same rows will both emit them.
    pub fn use_claim_leases(mut self, on: bool) -> Self {
        self.use_claim_leases = on;
        self
    }

    /// The owner name written on claims (and in warnings).
    pub fn owner(mut self, owner: impl Into<String>) -> Self {
        self.owner = owner.into();
        self
    }

    /// Entries claimed per cycle (pending and retry-ready together).
    pub fn batch_size(mut self, n: u32) -> Self {
        self.batch_size = n;
        self
    }

    /// How long each claim is leased; emissions still running are renewed before it ends.
    pub fn lease(mut self, lease: TimeDelta) -> Self {
        self.lease = lease;
        self
    }

    /// How many emissions run at once.
    pub fn emit_concurrency(mut self, n: usize) -> Self {
        self.emit_concurrency = n;
        self
    }

    /// The wait after an empty cycle; doubled after each further empty cycle up to `max`.
    pub fn poll_interval(mut self, first: Duration, max: Duration) -> Self {
        self.poll_interval = first;
        self.max_idle_interval = max;
        self
    }

    /// The backoff after retryable failures.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// After this many attempts that did not deliver, the entry is dead-lettered.
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n;
        self
    }

    /// `true`: while a full batch is emitted and recorded, claim the next one, so neither
    /// the database nor the emitter waits on the other at steady state. The claims taken
    /// ahead are renewed with the running batch's, renewed again before their emission
    /// starts if they have aged, and released at shutdown. A worker then holds up to
    /// [`DrainOptions::batches_ahead`] batches claimed ahead besides the ones it emits and
    /// records. `false`: one batch at a time. Unset (the default), the store decides: on
    /// where it serves concurrent writes ([`crate::Capabilities::concurrent_writes`]); on
    /// one-writer engines, while emissions take a millisecond or more (the database is
    /// then mostly idle) or while the store has not had to wait for another writer lately
    /// ([`crate::OutboxStore::writers_beside`]). `true` on a one-writer engine claims
    /// ahead even beside other writers: the store then writes back to back, and their
    /// transactions find the write lock free less often (the SQLite store still leaves
    /// it free a ninth of the time).
    pub fn claim_ahead(mut self, on: bool) -> Self {
        self.claim_ahead = Some(on);
        self
    }

    /// How many batches a drain that claims ahead holds claimed (in flight or back)
    /// beside the one it emits: 1 to 8, default 2. Through a slow link a claim costs a
    /// round trip plus the server's time; with two under way, one is always coming back
    /// while the batch before it is emitted and recorded, so a worker spends about one
    /// round trip of wall time per batch instead of two. Each claims a full batch, so a
    /// deeper drain holds more entries other workers cannot take, and uses more of the
    /// pool: at steady state a worker has a claim in flight per batch ahead and two
    /// recordings, so give the store's pool `batches_ahead + 2` connections per worker
    /// (one more spares its lease renewals, every third of a lease, a wait). A one-writer
    /// store left to decide holds one, when it claims ahead at all.
    pub fn batches_ahead(mut self, n: usize) -> Self {
        self.batches_ahead = n;
        self
    }

    /// How long one emission may run (default 60 s). An emission still running then is
    /// abandoned (its future dropped) and recorded as a retryable failure, so a provider
    /// call that never returns cannot hold its lease, its batch or a shutdown forever.
    pub fn emit_timeout(mut self, timeout: Duration) -> Self {
        self.emit_timeout = timeout;
        self
    }

    /// How long a graceful stop waits for emissions already running (default 30 s).
    /// Emissions still running then are abandoned and their claims released, so another
    /// worker emits them again (at-least-once); the stop never waits longer than this.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Gives up on an entry older than `max_age` (default 7 days) the next time it is
    /// deferred or fails: it is dead-lettered instead, where an operator can requeue it.
    /// Deferrals count no attempts, so without this a provider that always defers would
    /// keep an entry cycling forever. `None` never gives up on age.
    pub fn max_age(mut self, max_age: Option<Duration>) -> Self {
        self.max_age = max_age;
        self
    }

    /// Only drain this topic.
    pub fn topic(mut self, topic: impl Into<String>) -> Self {
        self.topic = Some(topic.into());
        self
    }

    /// Drains in per-key order (see [`crate::ClaimRequest::ordered`]): of the entries
    /// sharing a partition key, one at a time, oldest first, across every worker that
    /// drains in order; entries without a key as usual. Needs claim leases, and a store
    /// whose [`crate::Capabilities::ordered_claims`] is true ([`super::Drain::new`]
    /// refuses otherwise).
    pub fn ordered(mut self, on: bool) -> Self {
        self.ordered = on;
        self
    }

    /// In per-key order, how many consecutive entries of one key a claim may take at once
    /// (see [`crate::ClaimRequest::key_run`]; default 10, capped by the batch size): with
    /// few keys a batch still fills. The drain emits a key's run one entry after the
    /// other, in key order, and at the run's first failure (or lost lease) releases the
    /// rest untouched, so they wait behind the entry that failed. Entries of different
    /// keys are emitted side by side as usual. 1 takes each key's head alone.
    pub fn key_run(mut self, run: u32) -> Self {
        self.key_run = run;
        self
    }

    /// What an ordered drain does with a key's head that fails and could be retried
    /// (default [`HeadFailure::Block`]).
    pub fn head_failure(mut self, policy: HeadFailure) -> Self {
        self.head_failure = policy;
        self
    }

    /// Only drain the entries of one slice of the table (see [`crate::Slice`]); N
    /// drains over the N slices take every entry exactly once between them. Needs a
    /// store whose [`crate::Capabilities::slice_claims`] is true. Without claim leases,
    /// N single-worker drains over N slices never find the same entry.
    pub fn slice(mut self, slice: crate::Slice) -> Self {
        self.slice = Some(slice);
        self
    }

    /// The backoff while a route fails ([`super::EmitOutcome::RouteFailed`]): the pause
    /// before the next claim after a cycle whose every emission met the failing route, and
    /// how long each entry emitted there is held, growing with each such cycle in a row
    /// (default: 500 ms, doubling, at most 30 s, spread ±20%). The first emission that
    /// gets through starts it over.
    pub fn route_backoff(mut self, policy: RetryPolicy) -> Self {
        self.route = policy;
        self
    }

    /// Stops the drain once a route has failed for longer than `limit`: a destination
    /// whose failures go back further than that, none of the entries held for it having
    /// got through since, fails again (default `None`: wait for it however long). Other
    /// destinations carrying meanwhile do not reset it. Its
    /// [`super::DrainSummary::route_gave_up`] is then set, for deployments that would
    /// rather crash-loop visibly than wait. The held entries stay held, no attempt
    /// counted; the next drain takes them.
    pub fn route_down_limit(mut self, limit: Option<Duration>) -> Self {
        self.route_down_limit = limit;
        self
    }

    /// How often the drain asks the store to judge the schema again
    /// ([`crate::OutboxStore::check_schema`]; default 30 s): when a contracting migration
    /// moved the schema's compatibility window past this release, the drain stops
    /// claiming, finishes and records what it emits, releases the rest and returns with
    /// [`super::DrainSummary::schema_refused`] set, instead of failing statement by
    /// statement once the old schema objects are gone.
    pub fn schema_check_interval(mut self, every: Duration) -> Self {
        self.schema_check_interval = every;
        self
    }

    /// Checks every setting; the store checks owner, batch size and lease again per call.
    pub fn validate(&self) -> Result<()> {
        if self.owner.trim().is_empty() {
            return Err(OutboxError::invalid("owner", "must not be empty"));
        }
        crate::limits::check_name("owner", &self.owner)?;
        if self.batch_size == 0 {
            return Err(OutboxError::invalid("batch size", "must be at least 1"));
        }
        // The stores' own bound, so that options that validate make claims they take.
        crate::limits::check_lease(self.lease)?;
        if self.emit_concurrency == 0 {
            return Err(OutboxError::invalid(
                "emit concurrency",
                "must be at least 1",
            ));
        }
        let day = Duration::from_secs(86_400);
        if self.poll_interval.is_zero()
            || self.max_idle_interval < self.poll_interval
            || self.max_idle_interval > day
        {
            return Err(OutboxError::invalid(
                "poll interval",
                "must be positive, and the idle maximum not below it nor above 1 day",
            ));
        }
        if !(1..=MAX_BATCHES_AHEAD).contains(&self.batches_ahead) {
            return Err(OutboxError::invalid(
                "batches ahead",
                format!(
                    "must be between 1 and {MAX_BATCHES_AHEAD}, got {} (claim_ahead(false) claims none)",
                    self.batches_ahead
                ),
            ));
        }
        if self.max_attempts == 0 {
            return Err(OutboxError::invalid("max attempts", "must be at least 1"));
        }
        if self.emit_timeout < Duration::from_millis(1) || self.emit_timeout > day {
            return Err(OutboxError::invalid(
                "emit timeout",
                format!("must be between 1ms and 1 day, got {:?}", self.emit_timeout),
            ));
        }
        if self.max_age.is_some_and(|a| a.is_zero()) {
            return Err(OutboxError::invalid(
                "max age",
                "must be positive (or None)",
            ));
        }
        if self.schema_check_interval < Duration::from_secs(1) || self.schema_check_interval > day {
            return Err(OutboxError::invalid(
                "schema check interval",
                format!(
                    "must be between 1s and 1 day, got {:?}",
                    self.schema_check_interval
                ),
            ));
        }
        if self.shutdown_grace > day {
            return Err(OutboxError::invalid(
                "shutdown grace",
                format!("must not exceed 1 day, got {:?}", self.shutdown_grace),
            ));
        }
        if self.key_run == 0 {
            return Err(OutboxError::invalid("key run", "must be at least 1"));
        }
        if !self.use_claim_leases && self.ordered {
            return Err(OutboxError::invalid(
                "ordered",
                "per-key order needs claim leases (use_claim_leases(true))",
            ));
        }
        if self
            .route_down_limit
            .is_some_and(|l| l.is_zero() || l > day * 365)
        {
            return Err(OutboxError::invalid(
                "route down limit",
                "must be positive and at most a year (or None)",
            ));
        }
        self.route
            .validate()
            .map_err(|e| OutboxError::invalid("route backoff", e.to_string()))?;
        self.retry.validate()
    }

    /// The owner name claims are written under.
    pub fn owner_name(&self) -> &str {
        &self.owner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Options that validate make requests the stores take (found by the duration fuzz
    /// target: a 100-year lease passed here, then every claim was refused).
    #[test]
    fn options_the_stores_would_refuse_are_refused_here() {
        let limits = crate::StoreLimits::default();
        for lease in [TimeDelta::days(366), TimeDelta::MAX] {
            let err = DrainOptions::new().lease(lease).validate().unwrap_err();
            assert!(
                err.is_invalid_input() && err.to_string().contains("lease"),
                "{err}"
            );
            let claim = crate::ClaimRequest::new("w", 1, lease);
            assert!(limits.check_claim(&claim).is_err());
        }
        let long = "w".repeat(crate::MAX_NAME_BYTES + 1);
        let err = DrainOptions::new().owner(long).validate().unwrap_err();
        assert!(err.to_string().contains("owner"), "{err}");
        let year = DrainOptions::new().lease(TimeDelta::days(365));
        assert!(year.validate().is_ok());
        let never = Duration::from_secs(2 * 86_400);
        let err = DrainOptions::new().poll_interval(never, never).validate();
        assert!(err.unwrap_err().to_string().contains("poll interval"));
        for depth in [0, MAX_BATCHES_AHEAD + 1] {
            let err = DrainOptions::new().batches_ahead(depth).validate();
            assert!(err.unwrap_err().to_string().contains("batches ahead"));
        }
        assert!(DrainOptions::new()
            .batches_ahead(MAX_BATCHES_AHEAD)
            .validate()
            .is_ok());
    }
}
