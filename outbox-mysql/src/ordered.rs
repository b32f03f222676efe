//! A claim in key order: the heads chosen without locking (claim_retry.sql and
//! claim_pending.sql in their key order forms, bounded by walks.rs, as many as the last
//! claim's runs say fill the batch: run_lengths.rs), the rows of their key runs found
//! behind them (run_rows.sql), then all of them locked where still free and claimable
//! (lock_candidates.sql). Each head comes with its run, in claim order, up to the batch;
//! a head that could not be locked drops its run, and a run ends at its first row that
//! could not.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use chrono::{DateTime, Utc};
use outbox_core::store_kit::sql::normalize_time;
use outbox_core::{ClaimRequest, Result};
use sqlx::mysql::MySqlRow;
use sqlx::MySqlConnection;

use crate::batch_params;
use outbox_core::store_kit::claims::ClaimGroups;

use crate::claims::{count, read_rows, Walk};
use crate::error::map_err;
use crate::row::{clock, seq};
use crate::run_lengths::RunLengths;
use crate::{walks, MySqlClaimStore};

/// One row a claim in key order chose: its head's place in claim order, its step behind
/// the head (0: the head), its clustered key. A run's rows follow their head in step order.
type Chosen = (usize, i64, i64);

impl MySqlClaimStore {
    /// The rows of a claim in key order, locked, heads each followed by its run.
    pub(crate) async fn lock_in_key_order(
        &self,
        tx: &mut MySqlConnection,
        groups: ClaimGroups,
        req: &ClaimRequest,
    ) -> Result<Vec<MySqlRow>> {
        let Some((now, chosen)) = self.choose(tx, groups, req).await? else {
            return Ok(Vec::new());
        };
        let seqs: Vec<i64> = chosen.iter().map(|(_, _, seq)| *seq).collect();
        let locked = sqlx::query(&self.sql.lock_candidates)
            .bind(now)
            .bind(req.topic.clone())
            .bind(batch_params::array(&seqs)?)
            .fetch_all(&mut *tx)
            .await
            .map_err(map_err)?;
        let mut locked: HashMap<i64, MySqlRow> = locked
            .into_iter()
            .map(|row| Ok((seq(&row)?, row)))
            .collect::<Result<_>>()?;
        let mut kept = Vec::with_capacity(locked.len());
        let mut broken = None;
        for (head, _, seq) in chosen {
            if broken == Some(head) {
                continue;
            }
            match locked.remove(&seq) {
                Some(row) => kept.push(row),
                None => broken = Some(head),
            }
        }
        Ok(kept)
    }

    /// The rows a claim in key order chooses, with the clock it judged them at: as many
    /// heads as the store's last runs say fill the batch (run_lengths.rs), their runs,
    /// and, when that guess fell short and more heads may exist, more heads and theirs.
    async fn choose(
        &self,
        tx: &mut MySqlConnection,
        groups: ClaimGroups,
        req: &ClaimRequest,
    ) -> Result<Option<(DateTime<Utc>, Vec<Chosen>)>> {
        let batch = req.batch_size as usize;
        let per_head = self.run_lengths.expected(req.key_run);
        let wanted = RunLengths::heads_for(req.batch_size, per_head);
        let found = self
            .choose_heads(tx, groups, req, req.now.map(normalize_time), wanted)
            .await?;
        let Some(first) = found.first() else {
            return Ok(None);
        };
        let now = clock(first)?;
        let heads = found.iter().map(seq).collect::<Result<Vec<i64>>>()?;
        let mut chosen = self.with_runs(tx, &heads, 0, batch, req).await?;
        if chosen.len() < batch && heads.len() == wanted as usize && per_head > 1 {
            // Fewer rows behind the heads than the last claim's: the heads after these,
            // found by a choice for as many more as there is room (the ones already
            // chosen come back first and are left out).
            let room = batch - chosen.len();
            let more = wanted.saturating_add(u32::try_from(room).unwrap_or(u32::MAX));
            let again = self.choose_heads(tx, groups, req, Some(now), more).await?;
            let known: HashSet<i64> = heads.iter().copied().collect();
            let fresh: Vec<i64> = again
                .iter()
                .map(seq)
                .filter(|s| s.as_ref().map_or(true, |s| !known.contains(s)))
                .collect::<Result<_>>()?;
            chosen.extend(self.with_runs(tx, &fresh, heads.len(), room, req).await?);
        }
        let taken = chosen.iter().filter(|(_, step, _)| *step == 0).count();
        self.run_lengths.saw(chosen.len(), taken);
        Ok(Some((now, chosen)))
    }

    /// Up to `wanted` heads (and keyless rows) a claim in key order may take, retry-ready
    /// ones first, read without locking, judged at `now` (the server's clock when `None`);
    /// each walk examines a bounded number of rows but now and then (walks.rs).
    async fn choose_heads(
        &self,
        tx: &mut MySqlConnection,
        groups: ClaimGroups,
        req: &ClaimRequest,
        mut now: Option<DateTime<Utc>>,
        wanted: u32,
    ) -> Result<Vec<MySqlRow>> {
        let started = Instant::now();
        let whole = self.whole_walks.due(started);
        let examined = if whole {
            walks::UNBOUNDED
        } else {
            walks::examined_bound(req.batch_size)
        };
        let sliced = req.slice.is_some();
        let mut heads = Vec::new();
        if groups.retry {
            let form = self.sql.heads_retry.pick(true, sliced);
            let walk = Walk {
                limit: wanted,
                examined,
            };
            heads = read_rows(tx, form, req, now, walk).await?;
        }
        let room = wanted.saturating_sub(count(&heads));
        if groups.pending && room > 0 {
            if let Some(first) = heads.first() {
                now = Some(clock(first)?);
            }
            let form = self.sql.heads_pending.pick(true, sliced);
            let walk = Walk {
                limit: room,
                examined,
            };
            heads.extend(read_rows(tx, form, req, now, walk).await?);
        }
        if whole {
            self.whole_walks.walked(started, started.elapsed());
        }
        Ok(heads)
    }

    /// `heads` in claim order (the first at place `first` of the claim's heads), each
    /// followed by the rows of its run behind it (none with runs of one), up to `room`
    /// rows. The runs are looked for behind as many heads as full runs would fill the
    /// room with, then, if those had rows behind them and room is left, behind as many
    /// more heads as there is room: at most two reads, and no run is looked for behind a
    /// head there is no room for.
    async fn with_runs(
        &self,
        tx: &mut MySqlConnection,
        heads: &[i64],
        first: usize,
        room: usize,
        req: &ClaimRequest,
    ) -> Result<Vec<Chosen>> {
        let mut chosen = Vec::with_capacity(room);
        let mut next = 0;
        let mut looking = req.key_run > 1;
        let mut span = room.div_ceil(req.key_run as usize);
        while next < heads.len() && chosen.len() < room {
            let left = room - chosen.len();
            let these = &heads[next..heads.len().min(next + if looking { span } else { left })];
            let mut runs = if looking {
                self.runs_behind(tx, these, req).await?
            } else {
                HashMap::new()
            };
            looking = looking && !runs.is_empty();
            for (at, seq) in these.iter().enumerate() {
                let head = first + next + at;
                chosen.push((head, 0, *seq));
                let mut run = runs.remove(&at).unwrap_or_default();
                run.sort_unstable();
                chosen.extend(
                    (1..)
                        .zip(run)
                        .take_while(|(expected, (step, _))| step == expected)
                        .map(|(_, (step, seq))| (head, step, seq)),
                );
            }
            next += these.len();
            span = room.saturating_sub(chosen.len());
        }
        chosen.truncate(room);
        Ok(chosen)
    }

    /// The rows behind each of `heads` (run_rows.sql): by the head's place in `heads`,
    /// each row's step and clustered key.
    async fn runs_behind(
        &self,
        tx: &mut MySqlConnection,
        heads: &[i64],
        req: &ClaimRequest,
    ) -> Result<HashMap<usize, Vec<(i64, i64)>>> {
        let found: Vec<(i64, i64, i64)> = sqlx::query_as(&self.sql.run_rows)
            .bind(batch_params::array(heads)?)
            .bind(i64::from(req.key_run))
            .fetch_all(&mut *tx)
            .await
            .map_err(map_err)?;
        let mut runs: HashMap<usize, Vec<(i64, i64)>> = HashMap::new();
        for (pos, step, seq) in found {
            let head = usize::try_from(pos - 1).unwrap_or(usize::MAX);
            runs.entry(head).or_default().push((step, seq));
        }
        Ok(runs)
    }
}
