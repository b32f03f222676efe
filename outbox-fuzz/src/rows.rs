//! Targets on what the SQLite store reads and writes: rows edited by hand into any
//! shape the table's types and checks allow, and completion batches built from
//! arbitrary claims (real, stale, forged) and outcomes.

use std::sync::{Mutex, OnceLock};

use chrono::{DateTime, TimeDelta, Utc};
use outbox_core::{
    Claim, ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionError, EmissionResult,
    EmissionStatus, EntryId, ListRequest, NewEntry, OutboxAdmin, OutboxError, OutboxStore, Result,
    TableName,
};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};
use uuid::Uuid;

use crate::Input;

/// A store on a file of its own, kept for the whole process: each input starts by
/// emptying its table.
struct Bench {
    runtime: tokio::runtime::Runtime,
    store: SqliteClaimStore,
    _dir: tempfile::TempDir,
}

fn bench() -> &'static Bench {
    static BENCH: OnceLock<Bench> = OnceLock::new();
    BENCH.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("fuzz.db");
        let store = runtime.block_on(async {
            let config = SqliteStoreConfig::new();
            let url = path.to_str().expect("a UTF-8 path");
            let pool = SqliteClaimStore::open_pool(url, &config)
                .await
                .expect("open");
            outbox_sqlite::migrate(&pool, &TableName::default())
                .await
                .expect("migrate");
            SqliteClaimStore::new(pool, config).await.expect("store")
        });
        Bench {
            runtime,
            store,
            _dir: dir,
        }
    })
}

/// Runs `f` on the shared store, its table emptied first, one input at a time.
fn with_store<F>(f: impl FnOnce(&'static SqliteClaimStore) -> F)
where
    F: std::future::Future<Output = ()>,
{
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    // A panic in an earlier input leaves nothing to distrust: the table is emptied.
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let bench = bench();
    bench.runtime.block_on(async {
        sqlx::query("DELETE FROM outbox")
            .execute(bench.store.pool())
            .await
            .expect("empty the table");
        f(&bench.store).await;
    });
}

/// Every column a hand edit may touch (the id stays: errors must name it).
const COLUMNS: [&str; 20] = [
    "topic",
    "partition_key",
    "payload",
    "headers",
    "status",
    "created_at",
    "updated_at",
    "not_before",
    "next_retry_at",
    "attempt_count",
    "last_error",
    "dead_letter_reason",
    "delivered_at",
    "provider_message_id",
    "claim_owner",
    "claim_token",
    "claimed_at",
    "claim_expires_at",
    "claim_attempt_count",
    "stamp",
];

/// Integers that sit on the edges of what the store reads.
const EDGES: [i64; 10] = [
    -1,
    0,
    1,
    6,
    i64::MAX,
    i64::MIN,
    1 << 32,
    -(1 << 53),
    253_402_300_800_000_000, // 10000-01-01 in microseconds
    -62_135_596_800_000_001, // one microsecond before year 1
];

/// A row edited by hand: one entry (claimed or not), then up to three columns set to
/// whatever the table takes. Every way the store reads it back gives the entry, or a
/// `CorruptRow` error naming its id; nothing panics.
pub fn sqlite_row(data: &[u8]) {
    let mut input = Input::new(data);
    with_store(|store| async move {
        let entry = store
            .enqueue(NewEntry::new("fuzz", b"{}".to_vec()))
            .await
            .expect("enqueue");
        if input.byte() & 1 == 1 {
            let claim = ClaimRequest::new("fuzz", 1, TimeDelta::seconds(60));
            store.claim_pending(&claim).await.expect("claim");
        }
        for _ in 0..=input.choose(3) {
            let column = COLUMNS[input.choose(COLUMNS.len())];
            let sql = format!("UPDATE outbox SET {column} = ?1");
            let query = sqlx::query(&sql);
            let query = match input.choose(5) {
                0 => query.bind(None::<i64>),
                1 => query.bind(input.i64()),
                2 => query.bind(EDGES[input.choose(EDGES.len())]),
                3 => query.bind(input.text(64)),
                _ => query.bind(input.bytes(40).to_vec()),
            };
            // A value the table's types or checks refuse never gets in: nothing to read.
            let _ = query.execute(store.pool()).await;
        }
        let id = entry.id;
        named(id, store.get(id).await);
        for status in EmissionStatus::ALL {
            named(id, store.list(&ListRequest::new(status, 10)).await);
        }
        named(
            id,
            store
                .dead_letters(&outbox_core::DeadLettersRequest::new(10))
                .await,
        );
        named(id, store.stats(&outbox_core::StatsRequest::new()).await);
        let claim = ClaimRequest::new("reader", 10, TimeDelta::seconds(60));
        named(id, store.claim_pending(&claim).await);
    });
}

/// Passes a result that is a value or a `CorruptRow` error naming `id`.
fn named<T>(id: EntryId, result: Result<T>) {
    match result {
        Ok(_) => {}
        Err(OutboxError::CorruptRow { id: named, reason }) => {
            assert_eq!(
                named,
                id.to_string(),
                "a corrupt row named wrongly: {reason}"
            );
        }
        Err(e) => panic!("reading a hand-edited row gave {e:?}, not CorruptRow"),
    }
}

/// A completion batch from arbitrary claims and outcomes: live claims, stale ones, forged
/// tokens, ids that do not exist, owners of any length, times at the edges of the
/// calendar. The batch is recorded with one result per request, or refused as bad input;
/// either way every row reads back afterwards.
pub fn completions(data: &[u8]) {
    let mut input = Input::new(data);
    with_store(|store| async move {
        let entries: Vec<_> = (0..4u8).map(|i| NewEntry::new("fuzz", vec![i])).collect();
        let entries = store.enqueue_batch(entries).await.expect("enqueue");
        let mut claims = Vec::new();
        for owner in ["a", "b"] {
            let lease = TimeDelta::milliseconds(1 + i64::from(input.byte()) * 500);
            let request = ClaimRequest::new(owner, 2, lease);
            claims.extend(store.claim_pending(&request).await.expect("claim"));
        }
        let n = 1 + input.choose(8);
        let requests: Vec<CompletionRequest> = (0..n)
            .map(|_| request(&mut input, &claims, &entries[0]))
            .collect();
        match store.complete_batch(requests).await {
            Ok(results) => assert_eq!(results.len(), n, "one result per request"),
            Err(e) => assert!(e.is_invalid_input(), "a batch failed with {e:?}"),
        }
        for entry in &entries {
            let read = store.get(entry.id).await;
            assert!(
                matches!(read, Ok(Some(_))),
                "{} reads back as {read:?}",
                entry.id
            );
        }
    });
}

/// One completion request: a claim (as taken, or tampered with) and an outcome.
fn request(
    input: &mut Input<'_>,
    claims: &[Claim],
    any: &outbox_core::OutboxEntry,
) -> CompletionRequest {
    let mut claim = match claims.get(input.choose(claims.len() + 1)) {
        Some(c) => c.clone(),
        None => Claim::from_claimed_entry({
            let mut e = any.clone();
            e.claim_owner = Some("nobody".into());
            e.claim_token = Some(Uuid::new_v4());
            e.claimed_at = Some(Utc::now());
            e.claim_expires_at = Some(Utc::now());
            e
        })
        .expect("a claimed entry"),
    };
    match input.choose(6) {
        0 => {}
        1 => claim.token = uuid(input),
        2 => {
            let mut e = (*claim.entry).clone();
            e.id = EntryId::from_uuid(uuid(input));
            claim.entry = e.into();
        }
        3 => claim.owner = input.text(300),
        4 => claim.expires_at = time(input),
        _ => claim.acquisition = u32::from(input.byte()),
    }
    let text = |input: &mut Input<'_>| input.text(200);
    let completion = match input.choose(6) {
        0 => Completion::Delivered(match input.byte() & 1 {
            0 => EmissionResult::new(),
            _ => EmissionResult::new().provider_message_id(text(input)),
        }),
        1 => Completion::Deferred {
            until: time(input),
            reason: Some(text(input)),
        },
        2 => Completion::Failed {
            error: EmissionError::new(text(input)),
            next_retry: (input.byte() & 1 == 1).then(|| time(input)),
        },
        3 => Completion::DeadLettered {
            error: EmissionError::new(text(input)),
            reason: Some(text(input)),
        },
        4 => Completion::Release {
            reason: Some(text(input)),
        },
        _ => {
            let mut saved = (*claim.entry).clone();
            saved.status = EmissionStatus::ALL[input.choose(EmissionStatus::ALL.len())];
            saved.attempt_count = u32::from(input.byte());
            saved.next_retry_at = Some(time(input));
            saved.last_error = Some(text(input));
            Completion::Save(Box::new(saved))
        }
    };
    let mut request = CompletionRequest::new(claim, completion);
    if input.byte() & 1 == 1 {
        request.now = Some(time(input));
    }
    request
}

fn uuid(input: &mut Input<'_>) -> Uuid {
    let (a, b) = (input.i64(), input.i64());
    Uuid::from_u64_pair(a as u64, b as u64)
}

/// A time anywhere the calendar allows, now, or near now.
fn time(input: &mut Input<'_>) -> DateTime<Utc> {
    let now = Utc::now();
    match input.choose(4) {
        0 => now,
        1 => now + TimeDelta::milliseconds(i64::from(input.byte()) * 100 - 12_800),
        2 => DateTime::<Utc>::MAX_UTC,
        _ => DateTime::from_timestamp_micros(input.i64()).unwrap_or(DateTime::<Utc>::MIN_UTC),
    }
}
