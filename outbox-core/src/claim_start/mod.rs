//! Where a claim's walk of the pending index starts: for store crates whose engine keeps
//! index entries of rows that are no longer pending while an old snapshot is held.
//!
//! PostgreSQL keeps the index entry of every row delivered since the oldest snapshot still
//! held (a forgotten `BEGIN`, a long report, a replication slot); SQL Server keeps ghost
//! index rows for snapshot transactions the same way. A walk from the beginning of the
//! pending index steps over every one of them. So a claim starts its walk at the oldest
//! pending key the store's previous claim of the same kind took: nothing before it was
//! claimable then. A row can become claimable behind that key (committed late with an
//! earlier creation time, requeued by an operator, its lease expired or released, its
//! `not_before` come due): a claim whose walk ahead comes up short walks the part behind
//! the key in the same statement (so on a queue that is not backlogged such a row is taken
//! at once), and while batches come back full the store walks from the beginning at
//! least every [`ClaimStarts::new`]'s interval.
//!
//! Both kinds of walk cover the whole index before the key, dead entries and all. One that
//! took more than [`COSTLY`] longer than the last claim that walked only ahead is costly
//! (before the store has timed such a claim, none is: its first calls also prepare their
//! statements), and the next is held back until twenty times its duration has passed: walks that step
//! over dead entries then take at most about a twentieth of the claims' time, and a row
//! behind the start waits at most that long. Without dead entries a walk from the
//! beginning costs what any claim does, and none is held back.
//!
//! Claims in per-key order keep starts of their own: they walk another index (each key's
//! head and the rows without a key). A key's next entry becomes its head when the one
//! before it is delivered, and that can be behind the start; it is taken as any row that
//! becomes claimable there is, by a claim that comes up short or by the next walk from
//! the beginning.
//!
//! The stores of one table share what they learned through the database (see
//! [`SharedStart`]): a new store takes, for its first claim of each kind, the newest view
//! another store shared, so a new process does not pay a walk over every dead entry to
//! learn what the running ones know.

mod shared;

pub use shared::{kind_label, Share, SharedStart, SHARE_EVERY};

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::clock::{SystemTimer, Timer};
use crate::{ClaimRequest, EmissionStatus, OutboxEntry, OutboxError, Result, Slice};

/// A key of the pending index: creation time, then id.
pub type PendingKey = (DateTime<Utc>, Uuid);

/// How often, by default, a claim walks the pending index from its beginning while
/// batches come back full: 1 second.
pub const DEFAULT_FULL_WALK_EVERY: Duration = Duration::from_secs(1);

/// The longest interval between walks from the beginning accepted.
pub const MAX_FULL_WALK_EVERY: Duration = Duration::from_secs(3600);

/// A store prunes a kind's old shares with its first share of the kind and every this
/// many after.
const PRUNE_EVERY: u64 = 64;

/// How many times its own duration a costly walk from the beginning is spaced out by.
const SPACING: u32 = 20;

/// How long a walk that took `took` holds the next one of its kind back: twenty
/// times its duration if it took longer than `cheap`, nothing otherwise. Walks held back
/// so take at most about a twentieth of the claims' time. For every store that spaces
/// out a costly walk (a walk from the beginning over dead index entries, a whole walk of a
/// backlog in key order).
pub fn hold_back(took: Duration, cheap: Duration) -> Duration {
    if took > cheap {
        took.saturating_mul(SPACING)
    } else {
        Duration::ZERO
    }
}

/// How much longer than a claim that walks only ahead a walk from the beginning must take
/// to count as costly.
pub const COSTLY: Duration = Duration::from_millis(10);

/// How a claim walks the pending index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WalkStart {
    /// The key the walk starts at (None: the beginning of the index).
    pub from: Option<PendingKey>,
    /// Whether a walk that comes up short walks the part behind `from` too.
    pub behind: bool,
}

/// Checks an interval between walks from the beginning (zero: every claim walks from the
/// beginning, as far as the spacing allows); more than [`MAX_FULL_WALK_EVERY`] fails with
/// [`OutboxError::InvalidInput`].
pub fn check_full_walk_every(every: Duration) -> Result<Duration> {
    if every > MAX_FULL_WALK_EVERY {
        return Err(OutboxError::invalid(
            "full walk interval",
            format!("{every:?} is more than an hour"),
        ));
    }
    Ok(every)
}

/// A kind of claim: its topic filter, its slice, and whether it is in per-key order (the
/// two orders walk different indexes).
type Kind = (Option<String>, Option<Slice>, bool);

/// The pending walks of one kind of claim.
#[derive(Debug, Clone, Copy, Default)]
struct Walks {
    /// The oldest pending key the last claim that took pending rows took.
    from: Option<PendingKey>,
    /// When the last walk that covered the beginning started, and how long it took (zero
    /// for a walk another store told of).
    last_full: Option<(Instant, Duration)>,
    /// Whether that walk was the store's first claim of the kind, with nothing told: not
    /// judged, as a store's first calls also prepare their statements.
    first: bool,
    /// How long after its start a walk another store told of holds the next back (zero
    /// once this store walks from the beginning itself).
    told_hold_back: Duration,
    /// How long the last claim that walked only ahead of its start took, once one has.
    ahead_only: Option<Duration>,
    /// When this store last shared its view of the kind, and the start it shared.
    shared: Option<(Instant, PendingKey)>,
    /// Whether the last claim was a costly walk from the beginning, not shared yet.
    costly_unshared: bool,
    /// How many views of the kind this store has shared.
    shares: u64,
}

impl Walks {
    /// How long after the last walk that covered the beginning the next may run: twenty
    /// times its duration if it was costly, judged against the latest claim that walked
    /// only ahead (against nothing before one was timed; so a costly judgment made while
    /// the machine was slow is undone once plain claims are slow too), and no less than
    /// another store told of.
    fn spacing(&self) -> Duration {
        let own = match self.last_full {
            Some((_, took)) if !self.first => {
                hold_back(took, self.ahead_only.unwrap_or_default() + COSTLY)
            }
            _ => Duration::ZERO,
        };
        own.max(self.told_hold_back)
    }
}

/// The start of each kind of claim's next pending walk, for one store (share it between
/// the store's clones).
#[derive(Debug)]
pub struct ClaimStarts {
    /// Names the views this store shares.
    id: Uuid,
    every: Duration,
    kinds: Mutex<HashMap<Kind, Walks>>,
    /// Views other stores shared, by kind label, with when their walk from the beginning
    /// started: each is taken by this store's first claim of its kind.
    told: Mutex<HashMap<String, (SharedStart, Instant)>>,
    /// Where the store reads the time its walks are timed and spaced by.
    timer: Arc<dyn Timer>,
}

impl ClaimStarts {
    /// Walks from the beginning at least every `every` (checked by
    /// [`check_full_walk_every`]) while batches come back full.
    pub fn new(every: Duration) -> Self {
        Self::with_timer(every, Arc::new(SystemTimer))
    }

    /// As [`ClaimStarts::new`], with walks timed and spaced by `timer`.
    pub fn with_timer(every: Duration, timer: Arc<dyn Timer>) -> Self {
        Self {
            id: Uuid::now_v7(),
            every,
            kinds: Mutex::new(HashMap::new()),
            told: Mutex::new(HashMap::new()),
            timer,
        }
    }

    /// The time since `at`, by this store's timer.
    fn since(&self, at: Instant) -> Duration {
        self.timer.now().saturating_duration_since(at)
    }

    fn kind(req: &ClaimRequest) -> Kind {
        (req.topic.clone(), req.slice, req.ordered)
    }

    /// Takes the views the table's stores shared, read when the store is built (the newest
    /// of each kind, by kind label): each stands for this store's first claim of its kind,
    /// unless its walk from the beginning is older than the store's clock reaches.
    pub fn told(&self, views: impl IntoIterator<Item = (String, SharedStart)>) {
        let now = self.timer.now();
        let mut told = self.told.lock().unwrap_or_else(|p| p.into_inner());
        for (kind, view) in views {
            if view.sharer == self.id {
                continue;
            }
            if let Some(full_started) = now.checked_sub(view.full_age) {
                told.insert(kind, (view, full_started));
            }
        }
    }

    /// Runs one claim: `claim` is given how to walk the pending index, and the view of
    /// this store to share in the same statement when one is due, and returns the rows it
    /// claimed; what it took is then learned. `pending` says whether the claim takes
    /// pending rows at all. A view counts as shared once its claim succeeded: after a
    /// failed claim it is still due.
    pub async fn walk<F, Fut>(
        &self,
        req: &ClaimRequest,
        pending: bool,
        claim: F,
    ) -> Result<Vec<OutboxEntry>>
    where
        F: FnOnce(WalkStart, Option<Share>) -> Fut,
        Fut: Future<Output = Result<Vec<OutboxEntry>>>,
    {
        let start = self.start(req, pending);
        let share = if pending {
            self.to_share(req).map(|(view, prune)| Share {
                kind: kind_label(req),
                view,
                prune,
            })
        } else {
            None
        };
        let shared = share.as_ref().map(|s| (s.view.from, s.view.hold_back));
        let started = self.timer.now();
        let entries = claim(start, share).await?;
        let took = self.since(started);
        if let Some(view) = shared {
            self.shared(req, view);
        }
        self.learn(req, pending, start, (started, took), &entries);
        Ok(entries)
    }

    /// Marks the view `req`'s claim shared, `(from, hold_back)`, as shared now.
    fn shared(&self, req: &ClaimRequest, (from, hold_back): (PendingKey, Duration)) {
        let mut kinds = self.kinds.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(walks) = kinds.get_mut(&Self::kind(req)) {
            walks.shared = Some((self.timer.now(), from));
            walks.shares += 1;
            if walks.spacing() == hold_back {
                walks.costly_unshared = false;
            }
        }
    }

    /// The walks of `req`'s kind as another store told them, if this store has none yet.
    fn told_walks(&self, req: &ClaimRequest) -> Option<Walks> {
        let told = self.told.lock().unwrap_or_else(|p| p.into_inner());
        let (view, full_started) = told.get(&kind_label(req))?;
        Some(Walks {
            from: Some(view.from),
            last_full: Some((*full_started, Duration::ZERO)),
            told_hold_back: view.hold_back,
            // What it was told is in the table already: nothing to share until it moves.
            shared: Some((self.timer.now(), view.from)),
            ..Walks::default()
        })
    }

    /// The store's view of `req`'s kind, if it is due to be shared: after a costly walk
    /// from the beginning, or when its start has moved and [`SHARE_EVERY`] has passed since
    /// the last share (so a drain that finds nothing to claim writes nothing). It prunes
    /// the kind's old shares if it is the store's first share of the kind or every
    /// [`PRUNE_EVERY`]th after.
    fn to_share(&self, req: &ClaimRequest) -> Option<(SharedStart, bool)> {
        let mut kinds = self.kinds.lock().unwrap_or_else(|p| p.into_inner());
        let walks = kinds.get_mut(&Self::kind(req))?;
        let (from, (full_started, _)) = (walks.from?, walks.last_full?);
        let hold_back = walks.spacing();
        let moved = walks
            .shared
            .is_none_or(|(at, shared)| shared != from && self.since(at) >= SHARE_EVERY);
        if !(moved || walks.costly_unshared) {
            return None;
        }
        let view = SharedStart {
            sharer: self.id,
            from,
            full_age: self.since(full_started),
            hold_back,
        };
        Some((view, walks.shares % PRUNE_EVERY == 0))
    }

    /// How `req`'s claim walks the pending index. `pending` says whether the claim takes
    /// pending rows at all.
    pub fn start(&self, req: &ClaimRequest, pending: bool) -> WalkStart {
        let beginning = WalkStart::default();
        if !pending {
            return beginning;
        }
        let mut kinds = self.kinds.lock().unwrap_or_else(|p| p.into_inner());
        let walks = match kinds.entry(Self::kind(req)) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => match self.told_walks(req) {
                Some(walks) => new.insert(walks),
                None => return beginning,
            },
        };
        let (Some(from), Some((started, _))) = (walks.from, walks.last_full) else {
            return beginning;
        };
        let since = self.since(started);
        let spacing = walks.spacing();
        if since >= spacing.max(self.every) {
            return beginning;
        }
        WalkStart {
            from: Some(from),
            behind: since >= spacing,
        }
    }

    /// Learns from `req`'s claim, which walked as `start` (what [`ClaimStarts::start`]
    /// gave), started at `walk.0`, took `walk.1`, and claimed `claimed`.
    pub fn learn(
        &self,
        req: &ClaimRequest,
        pending: bool,
        start: WalkStart,
        walk: (Instant, Duration),
        claimed: &[OutboxEntry],
    ) {
        if !pending {
            return;
        }
        let mut kinds = self.kinds.lock().unwrap_or_else(|p| p.into_inner());
        let walks = kinds.entry(Self::kind(req)).or_default();
        // A claim that came up short and could walk behind its start did.
        let asked = usize::try_from(req.batch_size).unwrap_or(usize::MAX);
        let short = claimed.len() < asked;
        if start.from.is_none() || (start.behind && short) {
            walks.first = walks.last_full.is_none() && walks.ahead_only.is_none();
            walks.told_hold_back = Duration::ZERO;
            walks.last_full = Some(walk);
            walks.costly_unshared = !walks.spacing().is_zero();
        } else {
            walks.ahead_only = Some(walk.1);
        }
        let oldest = claimed
            .iter()
            .filter(|e| e.status == EmissionStatus::Pending)
            .map(|e| (e.created_at, e.id.as_uuid()))
            .min();
        if oldest.is_some() {
            walks.from = oldest;
        }
    }
}

#[cfg(test)]
mod tests;
