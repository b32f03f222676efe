//! The portable store's own cases, once for every engine it runs on (feature
//! `portable`): the conformance, per-key order, slice and operator suites on it, its
//! command count from the driver's statement log, a claim contended mid-way, the race
//! harnesses, and a switch to and from the engine's optimized store on the same table.
//!
//! An engine's test binary implements [`PortableEngine`] and calls
//! [`portable_suite!`](crate::portable_suite) with it; the cases that need the engine's
//! own SQL (a host transaction, a server cut mid-call) stay in that binary.

use std::sync::Arc;

use outbox_core::async_trait;
use outbox_core::portable::{PortableBackend, PortableStore};
use outbox_core::{ClaimStore, EntryId, NewEntry, OutboxStore, Slice};

use crate::admin_cases::AdminStore;
use crate::fixtures::{boom, claim_ids, claim_req, ids, new_entry, seed, t0, DynStore};
use crate::race::{claim_and_complete, expiring_leases, ExpiryRaceConfig, RaceConfig};
use crate::{statement_log, HookFuture, InterleaveHook, Subject};

/// An engine the portable store runs on, as its tests see it.
#[async_trait]
pub trait PortableEngine: Send + Sync + 'static {
    /// The engine's portable backend.
    type Backend: PortableBackend;
    /// What keeps one test's database alive (a directory, a throwaway schema).
    type Guard: Send + Sync + 'static;
    /// The store's name in reports (`portable-sqlite`).
    const NAME: &'static str;
    /// The connections the race cases give their store (one per worker, and spares).
    const RACE_CONNECTIONS: u32;

    /// A fresh database; `None` when the engine cannot be reached (the engine reports it
    /// loudly, and fails when it is required).
    async fn database() -> Option<Self::Guard>;

    /// Migrates `table` in `db` and builds a portable store on it with a pool of up to
    /// `connections` connections.
    async fn store(db: &Self::Guard, table: &str, connections: u32)
        -> PortableStore<Self::Backend>;

    /// Prepares the store's table for claims in per-key order.
    async fn enable_ordered_claims(db: &Self::Guard, store: &PortableStore<Self::Backend>);

    /// Erases the stored slice hash of every row of the store's table, as rows written
    /// before the column existed (or by a host's own SQL) have none.
    async fn erase_slice_hashes(db: &Self::Guard, store: &PortableStore<Self::Backend>);

    /// The engine's optimized store on the same database and table.
    async fn optimized(db: &Self::Guard, store: &PortableStore<Self::Backend>) -> DynStore;
}

/// The suite's interleave hook: the store runs the writer inside its next claim or
/// completion, between that row's check and its write.
struct Hook<B: PortableBackend>(PortableStore<B>);

impl<B: PortableBackend> InterleaveHook for Hook<B> {
    fn before_next_write(&self, writer: HookFuture) {
        self.0.interleave_before_next_write(writer);
    }
}

/// A portable store on a fresh database, with its interleave hook.
pub async fn subject<E: PortableEngine>() -> Option<Subject> {
    let db = E::database().await?;
    let store = E::store(&db, "outbox", 4).await;
    Some(
        Subject::new(Arc::new(store.clone()))
            .with_interleave(Arc::new(Hook(store)))
            .with_guard(db),
    )
}

/// As [`subject`], on a table prepared for ordered claims.
pub async fn ordered_subject<E: PortableEngine>() -> Option<Subject> {
    let db = E::database().await?;
    let store = E::store(&db, "outbox", 4).await;
    E::enable_ordered_claims(&db, &store).await;
    Some(
        Subject::new(Arc::new(store.clone()))
            .with_interleave(Arc::new(Hook(store)))
            .with_guard(db),
    )
}

/// A portable store for the operator suite.
pub async fn admin<E: PortableEngine>() -> Option<(AdminStore, E::Guard)> {
    let db = E::database().await?;
    let store = E::store(&db, "outbox", 4).await;
    Some((Arc::new(store), db))
}

/// As [`admin`], on a table prepared for ordered claims.
pub async fn ordered_admin<E: PortableEngine>() -> Option<(AdminStore, E::Guard)> {
    let db = E::database().await?;
    let store = E::store(&db, "outbox", 4).await;
    E::enable_ordered_claims(&db, &store).await;
    Some((Arc::new(store), db))
}

/// The claim path costs exactly 1 + 2N statements for N uncontended winners, measured
/// from the driver's statement log, and every claim is persisted as returned.
pub async fn claim_costs_one_plus_two_statements_per_row<E: PortableEngine>() {
    const TABLE: &str = "count_outbox";
    let statements = statement_log::watch(TABLE);
    let Some(db) = E::database().await else {
        return;
    };
    let store: DynStore = Arc::new(E::store(&db, TABLE, 2).await);
    statement_log::assert_per_row_claim_cost(E::NAME, &store, &statements).await;
}

/// A second worker takes rows between this worker's candidate query and its writes: the
/// row it took first is lost at the stamp check, the next is skipped at the re-read, and
/// only the row this worker won comes back. The statement count shows what each costs.
pub async fn rows_taken_by_another_worker_mid_claim_are_skipped<E: PortableEngine>() {
    const TABLE: &str = "contended_outbox";
    let statements = statement_log::watch(TABLE);
    let Some(db) = E::database().await else {
        return;
    };
    let a = E::store(&db, TABLE, 2).await;
    let b = E::store(&db, TABLE, 2).await;
    let a_dyn: DynStore = Arc::new(a.clone());
    let written = seed(&a_dyn, 3).await;
    let (tx, rx) = tokio::sync::oneshot::channel();
    a.interleave_before_next_write(Box::pin(async move {
        let taken = b.claim_pending(&claim_req("b", 2, t0())).await.unwrap();
        tx.send(taken).unwrap();
    }));
    let before = statement_log::read(&statements);
    let won = a.claim_pending(&claim_req("a", 3, t0())).await.unwrap();
    let used = statement_log::read(&statements) - before;
    let taken = rx.await.expect("the interleaved worker ran");
    println!(
        "{} contended claim: {used} statements (worker a: 1 + 2 lost at the update + 1 \
         skipped at the re-read + 2 won = 6; worker b: 1 + 2x2 = 5)",
        E::NAME
    );
    assert_eq!(claim_ids(&taken), ids(&written[..2]));
    assert_eq!(claim_ids(&won), ids(&written[2..]));
    assert_eq!(used, 11);
    for claim in taken.iter().chain(&won) {
        let row = a.get(claim.id()).await.unwrap().unwrap();
        assert_eq!(row, *claim.entry, "the durable lease is not the winner's");
    }
}

/// Eight workers on one table: no entry is leased twice at once, and every entry is
/// delivered exactly once.
pub async fn race_eight_workers_ten_thousand_entries<E: PortableEngine>() {
    let Some(db) = E::database().await else {
        return;
    };
    let store = E::store(&db, "outbox", E::RACE_CONNECTIONS).await;
    let report = claim_and_complete(Arc::new(store), RaceConfig::default()).await;
    println!("{} race: {report:?}", E::NAME);
    assert_eq!(report.delivered, 10_000);
}

/// Eight workers drain 1,000 keys in per-key order through the per-row claim, some
/// emissions outliving their leases: every key's emissions come out in creation order.
pub async fn eight_workers_drain_a_thousand_keys_in_order<E: PortableEngine>() {
    let Some(db) = E::database().await else {
        return;
    };
    let store = E::store(&db, "outbox", E::RACE_CONNECTIONS).await;
    E::enable_ordered_claims(&db, &store).await;
    crate::race_ordered::eight_workers_a_thousand_keys(E::NAME, Arc::new(store)).await;
}

/// Leases shorter than some emissions: entries are reclaimed under slow holders and
/// renewals race the reclaims; the per-row store too applies only the last holder's
/// completion.
pub async fn leases_that_expire_under_slow_emissions_never_let_a_stale_holder_complete<
    E: PortableEngine,
>() {
    let Some(db) = E::database().await else {
        return;
    };
    let store = E::store(&db, "outbox", E::RACE_CONNECTIONS).await;
    let report = expiring_leases(Arc::new(store), ExpiryRaceConfig::default()).await;
    assert!(
        report.reclaimed > 0,
        "no lease ran out under a slow emission: {report:?}"
    );
}

/// Rows written by either store are read back identically by the other on the same
/// table, and work started by one can be finished by the other.
pub async fn rows_survive_a_switch_to_and_from_the_optimized_store<E: PortableEngine>() {
    let Some(db) = E::database().await else {
        return;
    };
    let portable = E::store(&db, "outbox", 4).await;
    let optimized = E::optimized(&db, &portable).await;
    let new = NewEntry::new("orders", vec![0u8, 255, 7])
        .partition_key("k")
        .header("h", "v")
        .not_before(t0() - chrono::TimeDelta::seconds(5))
        .created_at(t0() - chrono::TimeDelta::seconds(9));
    let written = portable.enqueue(new).await.unwrap();
    assert_eq!(
        optimized.get(written.id).await.unwrap(),
        Some(written.clone())
    );
    let claim = portable
        .claim_pending(&claim_req("p", 1, t0()))
        .await
        .unwrap()
        .remove(0);
    assert_eq!(
        optimized.get(claim.id()).await.unwrap(),
        Some((*claim.entry).clone())
    );
    let failed = optimized
        .mark_failed(&claim, boom(), Some(t0()))
        .await
        .unwrap();
    assert!(failed.is_applied(), "{failed:?}");
    assert_eq!(portable.get(claim.id()).await.unwrap(), Some(failed.entry));
    let retry = portable
        .claim_retry_ready(&claim_req("p", 1, t0()))
        .await
        .unwrap();
    assert_eq!(claim_ids(&retry), vec![claim.id()]);
    assert_eq!(
        optimized.get(claim.id()).await.unwrap(),
        Some((*retry[0].entry).clone())
    );
}

/// A backlog of rows of another slice without a stored hash at the head of the queue:
/// a sliced claim stores their hashes as it meets them, so within a few claims its own
/// rows behind them come up, and no row is claimed by the wrong slice.
pub async fn hashless_rows_of_another_slice_do_not_starve_a_slice<E: PortableEngine>() {
    let Some(db) = E::database().await else {
        return;
    };
    let store = E::store(&db, "outbox", 2).await;
    let slices = [Slice::new(0, 2).unwrap(), Slice::new(1, 2).unwrap()];
    let keys_of = |slice: Slice| {
        (0..)
            .map(|n| format!("key-{n}"))
            .filter(move |k: &String| slice.contains(Some(k.as_str()), EntryId::new()))
    };
    // Twenty rows of slice 1 first, then five of slice 0.
    let others: Vec<NewEntry> = keys_of(slices[1])
        .take(20)
        .enumerate()
        .map(|(i, k)| new_entry(i64::try_from(i).unwrap() - 100).partition_key(k))
        .collect();
    let own: Vec<NewEntry> = keys_of(slices[0])
        .take(5)
        .enumerate()
        .map(|(i, k)| new_entry(i64::try_from(i).unwrap() - 50).partition_key(k))
        .collect();
    let others = store.enqueue_batch(others).await.unwrap();
    let own = store.enqueue_batch(own).await.unwrap();
    E::erase_slice_hashes(&db, &store).await;

    let mut claimed = Vec::new();
    for _ in 0..8 {
        let req = claim_req("w0", 5, t0()).slice(slices[0]);
        claimed.extend(store.claim_pending(&req).await.unwrap());
        if claimed.len() == own.len() {
            break;
        }
    }
    assert_eq!(
        claim_ids(&claimed),
        ids(&own),
        "slice 0 did not get its own rows, in order, from behind the other slice's"
    );
    let rest = store
        .claim_pending(&claim_req("w1", 50, t0()).slice(slices[1]))
        .await
        .unwrap();
    assert_eq!(claim_ids(&rest), ids(&others));
}

/// Stamps out the portable store's suites and cases for `$engine` (a type implementing
/// [`PortableEngine`]): the conformance, per-key order, slice and operator suites (the
/// parts of [`crate::store_suite!`], the keyed ones on a table prepared for them), then
/// one `#[tokio::test]` per case of this module, in a module `portable`. The one suite
/// invocation of an engine's portable test binary.
#[macro_export]
macro_rules! portable_suite {
    ($engine:ty) => {
        async fn portable_subject() -> Option<$crate::Subject> {
            $crate::portable_cases::subject::<$engine>().await
        }
        async fn portable_ordered_subject() -> Option<$crate::Subject> {
            $crate::portable_cases::ordered_subject::<$engine>().await
        }
        async fn portable_admin() -> Option<(
            $crate::admin_cases::AdminStore,
            <$engine as $crate::portable_cases::PortableEngine>::Guard,
        )> {
            $crate::portable_cases::admin::<$engine>().await
        }
        async fn portable_ordered_admin() -> Option<(
            $crate::admin_cases::AdminStore,
            <$engine as $crate::portable_cases::PortableEngine>::Guard,
        )> {
            $crate::portable_cases::ordered_admin::<$engine>().await
        }
        $crate::conformance_suite!(portable_subject);
        $crate::ordered_suite!(portable_ordered_subject);
        $crate::slice_suite!(portable_ordered_subject);
        $crate::admin_suite!(portable_admin);
        $crate::ordered_admin_suite!(portable_ordered_admin);
        $crate::__portable_cases!($engine;
            claim_costs_one_plus_two_statements_per_row,
            rows_taken_by_another_worker_mid_claim_are_skipped,
            race_eight_workers_ten_thousand_entries,
            eight_workers_drain_a_thousand_keys_in_order,
            leases_that_expire_under_slow_emissions_never_let_a_stale_holder_complete,
            rows_survive_a_switch_to_and_from_the_optimized_store,
            hashless_rows_of_another_slice_do_not_starve_a_slice
        );
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __portable_cases {
    ($engine:ty; $($case:ident),+ $(,)?) => {
        mod portable {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    $crate::portable_cases::$case::<$engine>().await;
                }
            )+
        }
    };
}
