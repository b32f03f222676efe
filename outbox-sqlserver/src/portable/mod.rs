//! [`PortableSqlServerStore`]: the per-row claim path on SQL Server, the baseline the
//! optimized store is measured against (sqlx has no SQL Server driver, so the portable
//! store of `outbox-core` cannot run here; this is the same algorithm on tiberius).

mod commands;
mod rows;

#[cfg(feature = "test-hooks")]
use std::future::Future;
#[cfg(feature = "test-hooks")]
use std::pin::Pin;

use chrono::{DateTime, Utc};
use outbox_core::store_kit::per_row::{self, ClaimKind, Interleave};
use outbox_core::{
    async_trait, Capabilities, Claim, ClaimRequest, ClaimStore, CompletionRequest, EntryId,
    FindRequest, ListRequest, NewEntry, OutboxAdmin, OutboxEntry, OutboxStats, OutboxStore,
    PruneRequest, RenewOutcome, RenewRequest, Result, StoreLimits, TransitionResult,
};

use crate::pool::Checkout;
use crate::SqlServerClaimStore;
use commands::Pooled;
use rows::{PortableSql, Rows};

/// The portable claim path on SQL Server: a claim of N rows costs 1 + 2N commands (one
/// ordered candidate query, then a re-read and a stamp-checked update per row), a
/// completion 2 per claim, with no lock hints. Its completions check and write in
/// separate steps, so they can come back `ConcurrencyLost`.
///
/// It runs on the table and pool of a [`SqlServerClaimStore`], whose enqueue, reads,
/// save and prune it uses as they are; only claims, completions and renewals go row by
/// row. It exists to measure the optimized store against; hosts should use that one.
#[derive(Clone)]
pub struct PortableSqlServerStore {
    store: SqlServerClaimStore,
    sql: std::sync::Arc<PortableSql>,
    interleave: Interleave,
}

impl std::fmt::Debug for PortableSqlServerStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortableSqlServerStore")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl PortableSqlServerStore {
    /// The portable path on `store`'s table and pool.
    pub fn new(store: SqlServerClaimStore) -> Self {
        Self {
            sql: std::sync::Arc::new(PortableSql::render(store.table())),
            store,
            interleave: Interleave::default(),
        }
    }

    /// For tests only: runs `writer` once, inside the next claim or completion, after
    /// that row's check and before its guarded write (the window per-row concurrency
    /// leaves open). The writer may use this store if the pool has a second connection.
    #[cfg(feature = "test-hooks")]
    pub fn interleave_before_next_write(
        &self,
        writer: Pin<Box<dyn Future<Output = ()> + Send + 'static>>,
    ) {
        self.interleave.arm(writer);
    }

    async fn connection(&self) -> Result<Pooled> {
        Ok(Pooled::new(Checkout::get(self.store.pool()).await?))
    }

    async fn claim(&self, req: &ClaimRequest, kind: ClaimKind) -> Result<Vec<Claim>> {
        self.store.limits().check_claim(req)?;
        self.capabilities().check_claim(req)?;
        let mut conn = self.connection().await?;
        let mut rows = Rows {
            conn: &mut conn,
            sql: &self.sql,
        };
        let claims = per_row::claim(&mut rows, req, kind, &self.interleave).await?;
        conn.finish();
        Ok(claims)
    }
}

#[async_trait]
impl OutboxStore for PortableSqlServerStore {
    fn capabilities(&self) -> Capabilities {
        Capabilities::new("portable-sqlserver").with_concurrent_writes(true)
    }

    fn limits(&self) -> &StoreLimits {
        self.store.limits()
    }

    async fn enqueue_batch(&self, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>> {
        self.store.enqueue_batch(entries).await
    }

    async fn get(&self, id: EntryId) -> Result<Option<OutboxEntry>> {
        self.store.get(id).await
    }

    async fn find_pending(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.store.find_pending(req).await
    }

    async fn find_retry_ready(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.store.find_retry_ready(req).await
    }

    async fn save(
        &self,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        self.store.save(entry, now).await
    }

    async fn prune_delivered(&self, req: &PruneRequest) -> Result<u64> {
        self.store.prune_delivered(req).await
    }
}

/// The operator operations are the optimized store's: they are not part of the claim
/// path the portable store exists to measure.
#[async_trait]
impl OutboxAdmin for PortableSqlServerStore {
    async fn stats(&self, req: &outbox_core::StatsRequest) -> Result<OutboxStats> {
        self.store.stats(req).await
    }

    async fn live_stats(&self, req: &outbox_core::StatsRequest) -> Result<OutboxStats> {
        self.store.live_stats(req).await
    }

    async fn topic_stats(&self, limit: u32) -> Result<Vec<outbox_core::TopicStats>> {
        self.store.topic_stats(limit).await
    }

    async fn dead_letters(
        &self,
        req: &outbox_core::DeadLettersRequest,
    ) -> Result<Vec<OutboxEntry>> {
        self.store.dead_letters(req).await
    }

    async fn list(&self, req: &ListRequest) -> Result<Vec<OutboxEntry>> {
        self.store.list(req).await
    }

    async fn count_delivered_before(&self, before: DateTime<Utc>) -> Result<u64> {
        self.store.count_delivered_before(before).await
    }

    async fn requeue(&self, req: &outbox_core::RequeueRequest) -> Result<u64> {
        self.store.requeue(req).await
    }

    async fn purge(&self, req: &outbox_core::PurgeRequest) -> Result<u64> {
        self.store.purge(req).await
    }
}

#[async_trait]
impl ClaimStore for PortableSqlServerStore {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, ClaimKind::Pending).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, ClaimKind::RetryReady).await
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        self.store.limits().check_completions(&reqs)?;
        let mut conn = self.connection().await?;
        let mut rows = Rows {
            conn: &mut conn,
            sql: &self.sql,
        };
        let results = per_row::complete_all(&mut rows, &reqs, &self.interleave).await?;
        conn.finish();
        Ok(results)
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.store.limits().check_renew(claims, req)?;
        let mut conn = self.connection().await?;
        let mut rows = Rows {
            conn: &mut conn,
            sql: &self.sql,
        };
        let outcomes = per_row::renew(&mut rows, claims, req).await?;
        conn.finish();
        Ok(outcomes)
    }
}

/// Every portable statement rendered for `table`, for the offline checks.
pub fn rendered_for_checks(table: &outbox_core::TableName) -> Vec<(&'static str, String)> {
    let s = PortableSql::render(table);
    vec![
        (
            "portable/claim_pending_candidates.sql",
            s.claim_pending_candidates,
        ),
        (
            "portable/claim_retry_candidates.sql",
            s.claim_retry_candidates,
        ),
        ("portable/read_entry.sql", s.read_entry),
        ("portable/claim_row.sql", s.claim_row),
        ("portable/complete_row.sql", s.complete_row),
        ("portable/renew_row.sql", s.renew_row),
        ("portable/store_slice_hash.sql", s.store_slice_hash),
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use chrono::TimeDelta;
    use outbox_core::{Completion, EmissionResult, EmissionStatus, TableName, TransitionOutcome};
    use tiberius::Row;

    use super::commands::Commands;
    use super::*;
    use crate::fixtures::{recorded_candidate, recorded_clocked, sample};
    use crate::params::Params;

    /// A connection that answers from an in-memory table and counts every command.
    struct Counting {
        sql: PortableSql,
        rows: HashMap<Vec<u8>, OutboxEntry>,
        now: DateTime<Utc>,
        commands: Vec<&'static str>,
    }

    impl Counting {
        fn with(entries: Vec<OutboxEntry>, now: DateTime<Utc>) -> Self {
            Self {
                sql: PortableSql::render(&TableName::default()),
                rows: entries
                    .into_iter()
                    .map(|e| (crate::row::id_bytes(e.id), e))
                    .collect(),
                now,
                commands: Vec::new(),
            }
        }

        fn name(&self, sql: &str) -> &'static str {
            let s = &self.sql;
            [
                (&s.claim_pending_candidates, "candidates"),
                (&s.claim_retry_candidates, "candidates"),
                (&s.read_entry, "read"),
                (&s.claim_row, "claim_row"),
                (&s.complete_row, "complete_row"),
                (&s.renew_row, "renew_row"),
                (&s.clock, "clock"),
            ]
            .into_iter()
            .find(|(text, _)| text.as_str() == sql)
            .map(|(_, name)| name)
            .unwrap_or_else(|| panic!("an unknown command: {sql}"))
        }

        fn id_at(params: &Params, i: usize) -> Vec<u8> {
            match &params[i] {
                tiberius::ColumnData::Binary(Some(b)) => b.to_vec(),
                other => panic!("parameter {i} is not an id: {other:?}"),
            }
        }
    }

    #[async_trait]
    impl Commands for Counting {
        async fn rows(&mut self, sql: &str, params: Params) -> Result<Vec<Row>> {
            let name = self.name(sql);
            self.commands.push(name);
            Ok(match name {
                "candidates" => {
                    let mut pending: Vec<_> = self
                        .rows
                        .values()
                        .filter(|e| e.is_pending_claimable(self.now))
                        .collect();
                    pending.sort_by_key(|e| (e.created_at, e.id));
                    pending
                        .iter()
                        .map(|e| recorded_candidate(e.id, self.now))
                        .collect()
                }
                "read" => self
                    .rows
                    .get(&Self::id_at(&params, 1))
                    .map(|e| recorded_clocked(e, self.now))
                    .into_iter()
                    .collect(),
                other => panic!("{other} returns no rows"),
            })
        }

        async fn execute(&mut self, sql: &str, params: Params) -> Result<u64> {
            let name = self.name(sql);
            self.commands.push(name);
            // Apply just enough of each write for the next read to see it.
            let (id_param, token) = match name {
                "claim_row" => (6, Some(&params[1])),
                "complete_row" => (9, None),
                "renew_row" => (2, None),
                other => panic!("{other} is not a write"),
            };
            let row = self
                .rows
                .get_mut(&Self::id_at(&params, id_param))
                .expect("a known row");
            match (name, token) {
                ("claim_row", Some(tiberius::ColumnData::Guid(t))) => {
                    row.claim_owner = Some("w".into());
                    row.claim_token = *t;
                }
                ("complete_row", _) => {
                    row.status = EmissionStatus::Delivered;
                    row.claim_owner = None;
                    row.claim_token = None;
                }
                _ => {}
            }
            Ok(1)
        }
    }

    fn pending(n: usize, now: DateTime<Utc>) -> Vec<OutboxEntry> {
        (0..n)
            .map(|i| {
                let mut e = sample();
                e.id = EntryId::new();
                e.created_at = now - TimeDelta::seconds(100 - i as i64);
                e.claim_owner = None;
                e.claim_token = None;
                e.claimed_at = None;
                e.claim_expires_at = None;
                e
            })
            .collect()
    }

    #[tokio::test]
    async fn a_claim_of_n_rows_costs_one_plus_two_n_commands_and_completing_them_two_each() {
        let now = sample().created_at + TimeDelta::hours(1);
        for n in [1usize, 10, 50] {
            let mut conn = Counting::with(pending(n, now), now);
            let interleave = Interleave::default();
            let req = ClaimRequest::new("w", 100, TimeDelta::seconds(30));
            let sql = PortableSql::render(&TableName::default());
            let mut rows = Rows {
                conn: &mut conn,
                sql: &sql,
            };
            let claims = per_row::claim(&mut rows, &req, ClaimKind::Pending, &interleave)
                .await
                .unwrap();
            assert_eq!(claims.len(), n);
            assert_eq!(
                conn.commands.len(),
                1 + 2 * n,
                "claim of {n}: {:?}",
                conn.commands
            );
            assert_eq!(conn.commands[0], "candidates");
            assert!(conn.commands[1..]
                .chunks(2)
                .all(|p| p == ["read", "claim_row"]));

            conn.commands.clear();
            for claim in &claims {
                let req = CompletionRequest::new(
                    claim.clone(),
                    Completion::Delivered(EmissionResult::new()),
                );
                let mut rows = Rows {
                    conn: &mut conn,
                    sql: &sql,
                };
                let done = per_row::complete(&mut rows, &req, &interleave)
                    .await
                    .unwrap();
                assert_eq!(done.outcome, TransitionOutcome::Applied);
            }
            assert_eq!(
                conn.commands.len(),
                2 * n,
                "completion of {n}: {:?}",
                conn.commands
            );
        }
    }

    #[tokio::test]
    async fn an_empty_claim_costs_one_command() {
        let now = sample().created_at;
        let mut conn = Counting::with(Vec::new(), now);
        let sql = PortableSql::render(&TableName::default());
        let req = ClaimRequest::new("w", 10, TimeDelta::seconds(30));
        let mut rows = Rows {
            conn: &mut conn,
            sql: &sql,
        };
        let claims = per_row::claim(&mut rows, &req, ClaimKind::Pending, &Interleave::default())
            .await
            .unwrap();
        assert!(claims.is_empty());
        assert_eq!(conn.commands, ["candidates"]);
    }
}
