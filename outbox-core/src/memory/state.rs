//! The data behind [`super::MemoryClaimStore`]: rows plus the two claim-order indexes.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, TimeDelta, Utc};
use uuid::Uuid;

use crate::{
    Claim, CompletionRequest, EmissionStatus, EntryId, NewEntry, OutboxEntry, OutboxError,
    RenewOutcome, Result, TargetState, TransitionOutcome, TransitionResult,
};

type OrderKey = (DateTime<Utc>, EntryId);

#[derive(Debug, Default)]
pub(super) struct State {
    rows: HashMap<EntryId, OutboxEntry>,
    /// Pending rows by (created, id): the pending claim order.
    pending: BTreeSet<OrderKey>,
    /// Deferred and retryable rows by (next retry ?? updated, id): the retry claim order.
    retry: BTreeSet<OrderKey>,
    /// Rows with a partition key that are not terminal, by (key, created, id): each key's
    /// first row is its head, the only one a claim in key order may take.
    keyed: BTreeSet<(String, DateTime<Utc>, EntryId)>,
}

/// What a claim takes beyond the plain eligibility rules.
#[derive(Debug, Clone, Copy)]
pub(super) struct Selection<'a> {
    pub(super) topic: Option<&'a str>,
    /// Skip rows under an unexpired lease (claims do; plain finds do not).
    pub(super) skip_leased: bool,
    /// Per-key order: only a key's head, and only while no row of the key is leased.
    pub(super) ordered: bool,
    /// In key order, how many consecutive rows of a key one claim takes (1: heads only).
    pub(super) run: usize,
    pub(super) slice: Option<crate::Slice>,
}

impl<'a> Selection<'a> {
    /// What a plain find selects: rows of its topic and slice, leased or not.
    pub(super) fn find(req: &'a crate::FindRequest) -> Self {
        Self {
            topic: req.topic.as_deref(),
            skip_leased: false,
            ordered: false,
            run: 1,
            slice: req.slice,
        }
    }

    /// What `req` claims.
    pub(super) fn claim(req: &'a crate::ClaimRequest) -> Self {
        Self {
            topic: req.topic.as_deref(),
            skip_leased: true,
            ordered: req.ordered,
            run: req.key_run as usize,
            slice: req.slice,
        }
    }
}

fn keyed_key(e: &OutboxEntry) -> Option<(String, DateTime<Utc>, EntryId)> {
    let key = e.partition_key.as_ref()?;
    (!e.status.is_terminal()).then(|| (key.clone(), e.created_at, e.id))
}

fn pending_key(e: &OutboxEntry) -> Option<OrderKey> {
    (e.status == EmissionStatus::Pending).then_some((e.created_at, e.id))
}

fn retry_key(e: &OutboxEntry) -> Option<OrderKey> {
    e.status
        .is_retry_wait()
        .then(|| (e.retry_order_time(), e.id))
}

impl State {
    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }

    pub(super) fn get(&self, id: EntryId) -> Option<&OutboxEntry> {
        self.rows.get(&id)
    }

    /// Replaces (or inserts) a row, keeping both indexes in step.
    fn put(&mut self, entry: OutboxEntry) {
        if let Some(old) = self.rows.get(&entry.id) {
            if let Some(k) = pending_key(old) {
                self.pending.remove(&k);
            }
            if let Some(k) = retry_key(old) {
                self.retry.remove(&k);
            }
            if let Some(k) = keyed_key(old) {
                self.keyed.remove(&k);
            }
        }
        if let Some(k) = keyed_key(&entry) {
            self.keyed.insert(k);
        }
        if let Some(k) = pending_key(&entry) {
            self.pending.insert(k);
        }
        if let Some(k) = retry_key(&entry) {
            self.retry.insert(k);
        }
        self.rows.insert(entry.id, entry);
    }

    pub(super) fn insert_all(
        &mut self,
        entries: Vec<NewEntry>,
        now: DateTime<Utc>,
    ) -> Result<Vec<OutboxEntry>> {
        if let Some(dup) = entries.iter().find(|e| self.rows.contains_key(&e.id)) {
            return Err(OutboxError::DuplicateId(dup.id));
        }
        let written: Vec<OutboxEntry> = entries
            .into_iter()
            .map(|e| OutboxEntry::from_new(e, now))
            .collect();
        for entry in &written {
            self.put(entry.clone());
        }
        Ok(written)
    }

    /// The first `limit` rows of `index` that `eligible` and `selection` accept; in key
    /// order each key's head brings the run behind it ([`State::run_behind`]).
    fn scan(
        &self,
        index: &BTreeSet<OrderKey>,
        limit: usize,
        selection: Selection<'_>,
        now: DateTime<Utc>,
        eligible: impl Fn(&OutboxEntry) -> bool,
    ) -> Vec<OutboxEntry> {
        let mut taken = Vec::new();
        let heads = index
            .iter()
            .filter_map(|(_, id)| self.rows.get(id))
            .filter(|e| selection.topic.is_none_or(|t| e.topic == t))
            .filter(|e| !(selection.skip_leased && e.is_claimed_at(now)))
            .filter(|e| {
                selection
                    .slice
                    .is_none_or(|s| s.contains(e.partition_key.as_deref(), e.id))
            })
            .filter(|e| !selection.ordered || self.is_free_head(e, now))
            .filter(|e| eligible(e));
        for head in heads {
            if taken.len() >= limit {
                break;
            }
            taken.push(head.clone());
            if selection.ordered && selection.run > 1 {
                let room = (limit - taken.len()).min(selection.run - 1);
                taken.extend(self.run_behind(head, room, selection.topic, now).cloned());
            }
        }
        taken
    }

    /// Up to `room` rows right behind `head` in its key's order, as long as each is
    /// pending, due and of the claim's topic: the rest of a run.
    fn run_behind<'s>(
        &'s self,
        head: &OutboxEntry,
        room: usize,
        topic: Option<&'s str>,
        now: DateTime<Utc>,
    ) -> impl Iterator<Item = &'s OutboxEntry> + 's {
        let key = head.partition_key.clone();
        let after = key.clone().map(|k| (k, head.created_at, head.id));
        after
            .into_iter()
            .flat_map(move |from| {
                self.keyed
                    .range((std::ops::Bound::Excluded(from), std::ops::Bound::Unbounded))
            })
            .take_while(move |(k, ..)| Some(k) == key.as_ref())
            .map(|(_, _, id)| &self.rows[id])
            .take_while(move |e| {
                e.status == EmissionStatus::Pending
                    && e.not_before.is_none_or(|t| t <= now)
                    && topic.is_none_or(|t| e.topic == t)
            })
            .take(room)
    }

    /// Whether `e` may be claimed in key order at `now`: it has no key, or it is the
    /// oldest row of its key not yet terminal and no row of its key is under a lease.
    fn is_free_head(&self, e: &OutboxEntry, now: DateTime<Utc>) -> bool {
        let Some(key) = e.partition_key.as_ref() else {
            return true;
        };
        let first = (
            key.clone(),
            DateTime::<Utc>::MIN_UTC,
            EntryId::from_uuid(Uuid::nil()),
        );
        let mut of_key = self
            .keyed
            .range(first..)
            .take_while(|(k, ..)| k == key)
            .map(|(_, _, id)| &self.rows[id]);
        of_key.clone().next().is_some_and(|head| head.id == e.id)
            && !of_key.any(|row| row.is_claimed_at(now))
    }

    pub(super) fn find_pending(
        &self,
        now: DateTime<Utc>,
        limit: usize,
        selection: Selection<'_>,
    ) -> Vec<OutboxEntry> {
        self.scan(&self.pending, limit, selection, now, |e| {
            e.not_before.is_none_or(|t| t <= now)
        })
    }

    pub(super) fn find_retry_ready(
        &self,
        now: DateTime<Utc>,
        limit: usize,
        selection: Selection<'_>,
    ) -> Vec<OutboxEntry> {
        self.scan(&self.retry, limit, selection, now, |e| {
            e.next_retry_at.is_none_or(|t| t <= now)
        })
    }

    pub(super) fn claim(
        &mut self,
        ids: &[EntryId],
        owner: &str,
        now: DateTime<Utc>,
        lease: TimeDelta,
    ) -> Vec<Claim> {
        let expires = crate::clock::normalize(now + lease);
        ids.iter()
            .filter_map(|id| {
                let mut entry = self.rows.get(id)?.clone();
                entry.claim_owner = Some(owner.to_owned());
                entry.claim_token = Some(Uuid::new_v4());
                entry.claimed_at = Some(now);
                entry.claim_expires_at = Some(expires);
                entry.claim_attempt_count = entry.claim_attempt_count.saturating_add(1);
                entry.stamp = Uuid::new_v4();
                self.put(entry.clone());
                Claim::from_claimed_entry(entry)
            })
            .collect()
    }

    pub(super) fn complete(
        &mut self,
        req: &CompletionRequest,
        now: DateTime<Utc>,
    ) -> TransitionResult {
        let current = self.rows.get(&req.claim.id());
        if let Some(outcome) = TransitionOutcome::precheck_completion(current, req) {
            let entry = current
                .cloned()
                .unwrap_or_else(|| (*req.claim.entry).clone());
            return TransitionResult::new(outcome, entry);
        }
        let target = req.completion.target(&req.claim.entry);
        let mut entry = current
            .cloned()
            .unwrap_or_else(|| (*req.claim.entry).clone());
        target.apply_to(&mut entry, now, req.stamp);
        self.put(entry.clone());
        TransitionResult::new(TransitionOutcome::Applied, entry)
    }

    pub(super) fn renew(
        &mut self,
        claim: &Claim,
        now: DateTime<Utc>,
        lease: TimeDelta,
    ) -> RenewOutcome {
        let current = self.rows.get(&claim.id());
        if let Some(outcome) = TransitionOutcome::precheck(current, claim) {
            let entry = current.cloned().unwrap_or_else(|| (*claim.entry).clone());
            return RenewOutcome::Lost(TransitionResult::new(outcome, entry));
        }
        let mut entry = current.cloned().unwrap_or_else(|| (*claim.entry).clone());
        entry.claim_expires_at = Some(crate::clock::normalize(now + lease));
        entry.stamp = Uuid::new_v4();
        self.put(entry.clone());
        match Claim::from_claimed_entry(entry) {
            Some(c) => RenewOutcome::Renewed(c),
            None => unreachable_claim(claim),
        }
    }

    pub(super) fn save(&mut self, entry: &OutboxEntry, now: DateTime<Utc>) -> TransitionResult {
        let Some(current) = self.rows.get(&entry.id) else {
            return TransitionResult::new(TransitionOutcome::Missing, entry.clone());
        };
        if current.status.is_terminal() {
            return TransitionResult::new(TransitionOutcome::Terminal, current.clone());
        }
        if current.stamp != entry.stamp {
            return TransitionResult::new(TransitionOutcome::ConcurrencyLost, current.clone());
        }
        let mut updated = current.clone();
        TargetState::from_entry(entry).apply_to(&mut updated, now, Uuid::new_v4());
        self.put(updated.clone());
        TransitionResult::new(TransitionOutcome::Applied, updated)
    }

    pub(super) fn prune_delivered(&mut self, before: DateTime<Utc>, limit: usize) -> u64 {
        let mut doomed: Vec<(DateTime<Utc>, EntryId)> = self
            .rows
            .values()
            .filter(|e| e.status == EmissionStatus::Delivered)
            .filter_map(|e| e.delivered_at.filter(|t| *t < before).map(|t| (t, e.id)))
            .collect();
        doomed.sort();
        doomed.truncate(limit);
        for (_, id) in &doomed {
            self.rows.remove(id);
        }
        doomed.len() as u64
    }
}

impl State {
    pub(super) fn stats(&self, now: DateTime<Utc>) -> crate::OutboxStats {
        crate::store_kit::admin::stats_of(self.rows.values(), now)
    }

    fn selected_ids(
        &self,
        status: EmissionStatus,
        which: &crate::DeadLetterSelection,
    ) -> Vec<EntryId> {
        self.rows
            .values()
            .filter(|e| e.status == status)
            .filter(|e| which.id().is_none_or(|id| e.id == id))
            .filter(|e| which.topic().is_none_or(|topic| e.topic == topic))
            .map(|e| e.id)
            .collect()
    }

    pub(super) fn dead_letters(&self, limit: usize) -> Vec<OutboxEntry> {
        let mut rows: Vec<OutboxEntry> = self
            .rows
            .values()
            .filter(|e| e.status == EmissionStatus::DeadLettered)
            .cloned()
            .collect();
        rows.sort_by_key(|e| std::cmp::Reverse((e.updated_at, e.id)));
        rows.truncate(limit);
        rows
    }

    pub(super) fn list(&self, req: &crate::ListRequest) -> Vec<OutboxEntry> {
        // The listing's order: creation order for a live status, newest delivery first
        // for delivered.
        let delivered = req.status == EmissionStatus::Delivered;
        let order = |a: &OutboxEntry, b: &OutboxEntry| {
            if delivered {
                (b.delivered_at, b.id).cmp(&(a.delivered_at, a.id))
            } else {
                (a.created_at, a.id).cmp(&(b.created_at, b.id))
            }
        };
        let after = match req.after.map(|id| self.rows.get(&id)) {
            Some(Some(e)) if !delivered || e.status == EmissionStatus::Delivered => Some(e),
            Some(_) => return Vec::new(),
            None => None,
        };
        let mut rows: Vec<OutboxEntry> = self
            .rows
            .values()
            .filter(|e| e.status == req.status)
            .filter(|e| req.topic.as_deref().is_none_or(|t| e.topic == t))
            .filter(|e| {
                req.partition_key
                    .as_deref()
                    .is_none_or(|k| e.partition_key.as_deref() == Some(k))
            })
            .filter(|e| after.is_none_or(|a| order(e, a).is_gt()))
            .cloned()
            .collect();
        rows.sort_by(order);
        rows.truncate(req.limit as usize);
        rows
    }

    pub(super) fn count_delivered_before(&self, before: DateTime<Utc>) -> u64 {
        self.rows
            .values()
            .filter(|e| e.status == EmissionStatus::Delivered)
            .filter(|e| e.delivered_at.is_some_and(|t| t < before))
            .count() as u64
    }

    pub(super) fn requeue(
        &mut self,
        from: EmissionStatus,
        which: crate::DeadLetterSelection,
        now: DateTime<Utc>,
    ) -> u64 {
        let ids = self.selected_ids(from, &which);
        for id in &ids {
            let entry = crate::store_kit::admin::requeued(&self.rows[id], now);
            self.put(entry);
        }
        ids.len() as u64
    }

    pub(super) fn purge(&mut self, from: EmissionStatus, which: crate::DeadLetterSelection) -> u64 {
        let ids = self.selected_ids(from, &which);
        for id in &ids {
            self.rows.remove(id);
        }
        ids.len() as u64
    }
}

/// The precheck proved the row holds this claim's owner and token, and renewal keeps
/// them, so the renewed row always yields a claim.
fn unreachable_claim(claim: &Claim) -> RenewOutcome {
    RenewOutcome::Lost(TransitionResult::new(
        TransitionOutcome::StaleClaim,
        (*claim.entry).clone(),
    ))
}
