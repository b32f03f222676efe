//! Upgrades and rollbacks, written once for every engine: a store runs on a schema one
//! expanding migration newer than it knows and drains on it, refuses a schema contracted
//! past its window, `migrate` refuses an edited migration, completes the records an
//! earlier release left, and every migration goes down and up again with the rows kept.
//!
//! A later release is played by this build's [`Migrator`] with migrations added to it:
//! the engine's own bookkeeping, lock and statements apply them, exactly as the later
//! release's `migrate` would.

use std::sync::Arc;

use chrono::TimeDelta;
use outbox_core::store_kit::schema::Migrator;
use outbox_core::{
    async_trait, Claim, ClaimRequest, ClaimStore, Completion, CompletionRequest, EmissionResult,
    EmissionStatus, FindRequest, Migration, NewEntry, OutboxError, RenewRequest, Result,
    TransitionOutcome,
};

fn lease() -> TimeDelta {
    TimeDelta::seconds(60)
}

fn delivered(claims: &[Claim]) -> Vec<CompletionRequest> {
    claims
        .iter()
        .map(|c| CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new())))
        .collect()
}

/// One engine's schema under test: its migrator, how to run one on the test's table, and
/// how to build a store on it. Each method works on one table of one database the harness
/// made for the case.
#[async_trait]
pub trait SchemaHarness: Send + Sync {
    /// The engine's migrator, as this build ships it.
    fn migrator(&self) -> &'static Migrator;
    /// Applies `migrator`'s migrations to the table.
    async fn migrate_with(&self, migrator: &Migrator) -> Result<i64>;
    /// Reverts `migrator`'s migrations newer than `version`.
    async fn migrate_down_with(&self, migrator: &Migrator, version: i64) -> Result<()>;
    /// Builds the engine's store on the table.
    async fn open(&self) -> Result<Arc<dyn ClaimStore>>;
    /// Runs a rendered script on the table's database (`{table}` and the rest replaced).
    async fn run(&self, sql: &str) -> Result<()>;
    /// An expanding migration for this engine: adds a nullable column and drops it.
    fn expanding_sql(&self) -> (&'static str, &'static str);
    /// Turns the bookkeeping table into the shape a release before compatibility windows
    /// left (without the `oldest_compatible` and `checksum` columns).
    fn earlier_bookkeeping_sql(&self) -> &'static str;
}

/// `base`'s migrations followed by `extra`, numbered on from them, as a later release's.
fn later_release(
    base: &Migrator,
    extra: &[(&'static str, &'static str, &'static str, i64)],
) -> Migrator {
    let mut migrations = base.migrations.to_vec();
    for (name, up, down, oldest) in extra {
        let version = i64::try_from(migrations.len()).expect("few") + 1;
        migrations.push(Migration::new(version, name, up, down).compatible_from(*oldest));
    }
    base.with_migrations(Box::leak(migrations.into_boxed_slice()))
}

/// A later release that expands the schema, then contracts it past this build: its second
/// migration raises the window to its first one's version.
fn contracted<H: SchemaHarness>(h: &H) -> Migrator {
    let ours = h.migrator();
    let v = ours.required_version();
    let (up, down) = h.expanding_sql();
    later_release(
        ours,
        &[
            ("add_a_note", up, down, v),
            ("stop_old_stores", "SELECT 1;", "SELECT 1;", v + 1),
        ],
    )
}

/// `base` with the migration at `index` edited after the fact (a comment added to its
/// SQL), as a careless later commit would.
fn with_edited(base: &Migrator, index: usize) -> Migrator {
    let mut migrations = base.migrations.to_vec();
    let m = migrations[index];
    let up: &'static str = Box::leak(format!("{}\n-- an edit\n", m.up).into_boxed_str());
    migrations[index] = Migration { up, ..m };
    base.with_migrations(Box::leak(migrations.into_boxed_slice()))
}

/// Writes `n` entries and delivers the first `deliver` of them.
async fn write_and_deliver(store: &Arc<dyn ClaimStore>, n: usize, deliver: usize) -> Vec<NewEntry> {
    let entries: Vec<NewEntry> = (0..n)
        .map(|i| {
            NewEntry::new("upgrades", vec![u8::try_from(i % 250).expect("small")])
                .partition_key(format!("k{i}"))
        })
        .collect();
    store.enqueue_batch(entries.clone()).await.expect("enqueue");
    if deliver == 0 {
        return entries;
    }
    let claims = store
        .claim_pending(&ClaimRequest::new(
            "upgrades",
            u32::try_from(deliver).expect("small"),
            lease(),
        ))
        .await
        .expect("claim");
    assert_eq!(claims.len(), deliver);
    let results = store
        .complete_batch(delivered(&claims))
        .await
        .expect("complete");
    assert!(results
        .iter()
        .all(|r| r.outcome == TransitionOutcome::Applied));
    entries
}

/// Drains every pending entry with `store`, as a drain of its release would; returns how
/// many it delivered.
async fn drain(store: &Arc<dyn ClaimStore>) -> usize {
    let mut total = 0;
    loop {
        let claims = store
            .claim_pending(&ClaimRequest::new("upgrades-drain", 100, lease()))
            .await
            .expect("claim");
        if claims.is_empty() {
            return total;
        }
        let renewed = store
            .renew(&claims, &RenewRequest::new(lease()))
            .await
            .expect("renew");
        assert_eq!(renewed.len(), claims.len());
        let results = store
            .complete_batch(delivered(&claims))
            .await
            .expect("complete");
        assert!(results
            .iter()
            .all(|r| r.outcome == TransitionOutcome::Applied));
        total += claims.len();
    }
}

async fn status(store: &Arc<dyn ClaimStore>, id: outbox_core::EntryId) -> Option<EmissionStatus> {
    store.get(id).await.expect("get").map(|e| e.status)
}

/// This build's store opens on a schema one expanding migration newer than it knows (the
/// previous release during a rollout, or after a rollback) and drains on it; this build's
/// `migrate` leaves that schema as it is.
pub async fn a_store_drains_on_a_schema_one_expanding_migration_newer<H: SchemaHarness>(h: &H) {
    let ours = h.migrator();
    let (up, down) = h.expanding_sql();
    let next = later_release(ours, &[("add_a_note", up, down, ours.required_version())]);
    let newer = h
        .migrate_with(&next)
        .await
        .expect("the later release migrates");
    assert_eq!(newer, ours.required_version() + 1);
    let store = h
        .open()
        .await
        .expect("this build's store opens inside its window");
    let written = write_and_deliver(&store, 30, 10).await;
    assert_eq!(drain(&store).await, written.len() - 10);
    assert_eq!(
        h.migrate_with(ours)
            .await
            .expect("this build's migrate leaves it"),
        newer,
        "this build's migrate reports the newer version and applies nothing"
    );
    h.open().await.expect("still opens");
}

/// A schema contracted past this build (a migration since removed what its stores use) is
/// refused at open and by `migrate`, with the error that names both versions and says to
/// finish the rollout; nothing is changed.
pub async fn a_schema_contracted_past_the_window_is_refused<H: SchemaHarness>(h: &H) {
    let ours = h.migrator();
    let v = ours.required_version();
    let next = contracted(h);
    h.migrate_with(&next)
        .await
        .expect("the later release migrates");
    let err = h.open().await.err().expect("refused");
    assert!(
        matches!(err, OutboxError::SchemaPastWindow { store, found, oldest_compatible }
            if store == v && found == v + 2 && oldest_compatible == v + 1),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains(&format!("version {}", v + 2))
            && message.contains(&format!("version {v}")),
        "{message}"
    );
    assert!(message.contains("finish the rollout"), "{message}");
    let err = h.migrate_with(ours).await.unwrap_err();
    assert!(matches!(err, OutboxError::SchemaPastWindow { .. }), "{err}");
    // The later release's store still opens: nothing was changed.
    h.migrate_with(&next)
        .await
        .expect("the later release's migrate is a no-op");
}

/// A migration edited after it was applied is refused by `migrate`, naming its file, and
/// nothing is applied.
pub async fn an_edited_migration_is_refused_naming_its_file<H: SchemaHarness>(h: &H) {
    let ours = h.migrator();
    h.migrate_with(ours).await.expect("migrate");
    // The first migration edited, and a new one after it that must not be applied.
    let (up, down) = h.expanding_sql();
    let next = later_release(ours, &[("add_a_note", up, down, ours.required_version())]);
    let edited = with_edited(&next, 0);
    let first = ours.migrations[0];
    let err = h.migrate_with(&edited).await.unwrap_err();
    assert!(
        matches!(&err, OutboxError::MigrationChecksumMismatch { version: 1, file, .. }
            if *file == first.file_name()),
        "{err}"
    );
    assert!(err.to_string().contains(&first.file_name()), "{err}");
    // Nothing applied: this build's store still runs on it, at its own version.
    assert_eq!(h.migrate_with(ours).await.unwrap(), ours.required_version());
    h.open().await.expect("opens");
}

/// The bookkeeping an earlier release left (no window, no checksums): this build's store
/// opens on it at the same version, and `migrate` adds the columns and completes every
/// record, after which an edit is caught.
pub async fn records_of_an_earlier_release_are_completed<H: SchemaHarness>(h: &H) {
    let ours = h.migrator();
    h.migrate_with(ours).await.expect("migrate");
    h.run(h.earlier_bookkeeping_sql())
        .await
        .expect("the earlier shape");
    let store = h.open().await.expect("opens on the earlier bookkeeping");
    write_and_deliver(&store, 3, 1).await;
    assert_eq!(h.migrate_with(ours).await.unwrap(), ours.required_version());
    h.open().await.expect("opens");
    // Every record now carries its checksum: an edit of any migration is caught.
    let edited = with_edited(ours, ours.migrations.len() - 1);
    assert!(matches!(
        h.migrate_with(&edited).await,
        Err(OutboxError::MigrationChecksumMismatch { .. })
    ));
}

/// Every migration goes down and up again with the rows kept: from the newest, down to
/// each earlier version in turn and back up, the entries written before are all there
/// and a store drains them. A later release's expanding migration goes down and up too.
pub async fn every_migration_goes_down_and_up_keeping_the_rows<H: SchemaHarness>(h: &H) {
    let ours = h.migrator();
    let (up, down) = h.expanding_sql();
    let next = later_release(ours, &[("add_a_note", up, down, ours.required_version())]);
    let latest = next.required_version();
    h.migrate_with(&next).await.expect("migrate");
    let store = h.open().await.expect("opens");
    let written = write_and_deliver(&store, 20, 5).await;
    drop(store);
    for target in (1..latest).rev() {
        h.migrate_down_with(&next, target)
            .await
            .unwrap_or_else(|e| panic!("down to {target}: {e}"));
        assert_eq!(
            h.migrate_with(&next).await.unwrap(),
            latest,
            "up again from {target}"
        );
    }
    let store = h.open().await.expect("opens after the round trips");
    let ids: Vec<_> = store
        .find_pending(&FindRequest::new(100))
        .await
        .expect("find")
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids.len(), written.len() - 5, "the pending entries are kept");
    for id in &ids {
        assert_eq!(status(&store, *id).await, Some(EmissionStatus::Pending));
    }
    assert_eq!(drain(&store).await, written.len() - 5);
    // Down to this build's own version: its store runs on what is left.
    h.migrate_down_with(&next, ours.required_version())
        .await
        .expect("down one");
    h.migrate_with(ours).await.expect("this build's migrate");
    h.open().await.expect("opens");
}

/// A migration whose down script says it cannot be reverted makes `migrate --down` refuse
/// with its reason before anything is reverted, even the reversible migrations newer than
/// it.
pub async fn an_irreversible_migration_refuses_to_go_down<H: SchemaHarness>(h: &H) {
    let ours = h.migrator();
    let v = ours.required_version();
    let (up, down) = h.expanding_sql();
    let next = later_release(
        ours,
        &[
            (
                "rewrite_rows",
                "SELECT 1;",
                "-- Back to the version before.\n-- irreversible: the rows were rewritten in place\n",
                v,
            ),
            ("add_a_note", up, down, v),
        ],
    );
    h.migrate_with(&next).await.expect("migrate");
    let err = h.migrate_down_with(&next, v).await.unwrap_err();
    assert!(
        matches!(&err, OutboxError::IrreversibleMigration { version, reason, .. }
            if *version == v + 1 && reason == "the rows were rewritten in place"),
        "{err}"
    );
    // Nothing reverted, the newest (reversible) migration included: it is still recorded,
    // and its down (which drops its column) still runs, once.
    assert_eq!(h.migrate_with(&next).await.unwrap(), v + 2);
    h.migrate_down_with(&next, v + 1)
        .await
        .expect("the newest migration was still applied");
    assert_eq!(h.migrate_with(&next).await.unwrap(), v + 2, "and is back");
    h.open().await.expect("this build's store opens");
}

/// A drain running while a later release contracts the schema past this build learns of
/// it at its next schema check and stops, its summary saying why.
pub async fn a_running_drain_stops_when_the_schema_contracts_past_it<H: SchemaHarness>(h: &H) {
    let ours = h.migrator();
    h.migrate_with(ours).await.expect("migrate");
    let store = h.open().await.expect("opens");
    write_and_deliver(&store, 5, 0).await;
    let emitter = Arc::new(crate::emitters::PerEntry::default());
    let drain = outbox_core::Drain::new(
        store.clone(),
        emitter.clone(),
        outbox_core::DrainOptions::new()
            .owner("before-the-contraction")
            .schema_check_interval(std::time::Duration::from_secs(1)),
    )
    .expect("drain");
    let running = tokio::spawn(async move { drain.run(std::future::pending()).await });
    // The drain delivers what there is, then idles.
    let started = std::time::Instant::now();
    while emitter.emissions().len() < 5 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "not drained"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let next = contracted(h);
    h.migrate_with(&next)
        .await
        .expect("the later release migrates");
    let summary = tokio::time::timeout(std::time::Duration::from_secs(30), running)
        .await
        .expect("the drain stops within its check interval")
        .expect("the drain's task");
    assert!(summary.schema_refused, "{summary:?}");
    assert_eq!(summary.delivered, 5);
}

/// Runs every upgrade case against fresh tables made by `harness`.
#[doc(hidden)]
#[macro_export]
macro_rules! upgrade_suite {
    ($harness:expr) => {
        $crate::upgrade_suite!(@case $harness,
            a_store_drains_on_a_schema_one_expanding_migration_newer,
            a_schema_contracted_past_the_window_is_refused,
            an_edited_migration_is_refused_naming_its_file,
            records_of_an_earlier_release_are_completed,
            every_migration_goes_down_and_up_keeping_the_rows,
            an_irreversible_migration_refuses_to_go_down,
            a_running_drain_stops_when_the_schema_contracts_past_it
        );
    };
    (@case $harness:expr, $($case:ident),+) => {
        mod upgrade_cases {
        #[allow(unused_imports)]
        use super::*;
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let Some(h) = $harness.await else { return };
                $crate::upgrades::$case(&h).await;
            }
        )+
        }
    };
}
