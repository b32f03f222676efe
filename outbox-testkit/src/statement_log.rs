//! Counting the statements a store executes, from the drivers' tracing events: sqlx logs
//! every statement under `sqlx::query`, and the SQLite store's own connection logs its
//! statements under `outbox_sqlite::statement`. A measure of a store's commands taken
//! outside the store. Install once per test binary; each watcher counts the statements
//! naming its table.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::TimeDelta;
use outbox_core::{ClaimRequest, NewEntry, Quotes};

use crate::fixtures::{claim_ids, ids};
use std::sync::{Arc, Mutex, Once};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};

/// Tests run in parallel in this process, so each watcher counts only the statements
/// that name its own table.
static WATCHERS: Mutex<Vec<(String, Arc<AtomicUsize>)>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

/// The targets whose events are executed statements: sqlx's, and the SQLite store's own
/// connection's (`outbox_sqlite::STATEMENT_TARGET`).
const STATEMENT_TARGETS: [&str; 2] = ["sqlx::query", "outbox_sqlite::statement"];

struct SqlLog;

#[derive(Default)]
struct SqlText(String);

impl Visit for SqlText {
    fn record_str(&mut self, field: &Field, value: &str) {
        if matches!(field.name(), "summary" | "db.statement") {
            self.0.push_str(value);
            self.0.push('\n');
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl Subscriber for SqlLog {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if self.enabled(meta) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        STATEMENT_TARGETS.contains(&meta.target())
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut sql = SqlText::default();
        event.record(&mut sql);
        for (table, count) in WATCHERS.lock().unwrap().iter() {
            let quoted = [Quotes::DOUBLE, Quotes::BACKTICKS, Quotes::BRACKETS];
            if quoted.iter().any(|q| sql.0.contains(&q.quote(table))) {
                count.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// A counter of the executed statements that name `table` (quoted, in any engine's quotes,
/// as stores render it).
pub fn watch(table: &str) -> Arc<AtomicUsize> {
    INSTALL.call_once(|| {
        tracing::subscriber::set_global_default(SqlLog)
            .expect("no other global subscriber in this test binary");
    });
    let count = Arc::new(AtomicUsize::new(0));
    WATCHERS
        .lock()
        .unwrap()
        .push((table.to_owned(), Arc::clone(&count)));
    count
}

/// The current count.
pub fn read(count: &AtomicUsize) -> usize {
    count.load(Ordering::SeqCst)
}

/// Claims batches of 1, 10, 50 and 100 fresh entries and asserts the per-row store's cost
/// table: exactly 1 + 2N statements (as counted by `statements`, from the driver's log), all
/// new rows claimed in order, unique tokens, attempt count 1, claim and expiry times from the
/// database clock, and the persisted rows equal to the returned claims. Prints the measured
/// table beside the expected one under `label`.
pub async fn assert_per_row_claim_cost(
    label: &str,
    store: &crate::DynStore,
    statements: &AtomicUsize,
) {
    let mut report = vec![format!(
        "{label} claim_pending, statements per batch (sqlx statement log)\n\
         {:>6} | {:>14} | {:>8} | {:>7}",
        "batch", "expected 1+2N", "measured", "claimed"
    )];
    let mut measured = Vec::new();
    for n in [1u32, 10, 50, 100] {
        let entries = (0..n)
            .map(|i| NewEntry::new("count", i.to_le_bytes().to_vec()))
            .collect();
        let written = store.enqueue_batch(entries).await.unwrap();
        let before = read(statements);
        // The database's clock: the rows claimed by earlier rounds are still leased.
        let claims = store
            .claim_pending(&ClaimRequest::new(
                format!("w{n}"),
                n,
                TimeDelta::seconds(60),
            ))
            .await
            .unwrap();
        let used = read(statements) - before;
        report.push(format!(
            "{n:>6} | {:>14} | {used:>8} | {:>7}",
            1 + 2 * n,
            claims.len()
        ));
        measured.push((n, used, ids(&written), claims));
    }
    let report = report.join("\n");
    println!("{report}");
    for (n, used, written, claims) in &measured {
        assert_eq!(*used, 1 + 2 * *n as usize, "{report}");
        assert_eq!(
            &claim_ids(claims),
            written,
            "not exactly the new rows, in order"
        );
        // Both the claim time and the expiry come from the database's clock.
        let drift = (claims[0].claimed_at - chrono::Utc::now()).abs();
        assert!(
            drift < TimeDelta::seconds(30),
            "database clock read as {}",
            claims[0].claimed_at
        );
        let tokens: HashSet<_> = claims.iter().map(|c| c.token).collect();
        assert_eq!(tokens.len(), claims.len(), "tokens are not unique");
        for claim in claims {
            assert_eq!(claim.acquisition, 1);
            assert_eq!(claim.expires_at - claim.claimed_at, TimeDelta::seconds(60));
            let row = store.get(claim.id()).await.unwrap().unwrap();
            assert_eq!(row, *claim.entry, "persisted row differs from the claim");
            assert_eq!(row.claim_owner.as_deref(), Some(claim.owner.as_str()));
            assert_eq!(row.claim_token, Some(claim.token));
            assert_eq!(row.claimed_at, Some(claim.claimed_at));
            assert_eq!(row.claim_expires_at, Some(claim.expires_at));
            assert_eq!(row.claim_attempt_count, 1);
        }
    }
}
