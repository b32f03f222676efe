//! The primary crashes mid-drain and its synchronous standby is promoted: the drain, on a
//! URL that lists both hosts with `target_session_attrs=read-write`, carries on against
//! the new primary in the same process, and every entry is delivered.

use std::sync::Arc;
use std::time::Duration;

use outbox_testkit::emitters::PerEntry;
use outbox_testkit::pg_standby::{PrimaryAndStandby, ENGINE};

use super::{
    drain_to_the_end, everything_delivered, migrate_and_enqueue, store_on, until_emitted, ENTRIES,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_standby_promoted_after_the_primary_crashed_takes_over_the_drain() {
    let pair = match tokio::task::spawn_blocking(PrimaryAndStandby::start)
        .await
        .unwrap()
    {
        Ok(pair) => Arc::new(pair),
        Err(why) => {
            outbox_testkit::engines::unavailable(ENGINE, &why);
            return;
        }
    };
    migrate_and_enqueue(&pair.primary_url()).await;
    let store = Arc::new(store_on(&pair.both_hosts_url(), "failover-drain", 4).await);
    let emitter = Arc::new(PerEntry::default());
    let drain = tokio::spawn(drain_to_the_end(
        store.clone(),
        emitter.clone(),
        Duration::from_secs(120),
    ));
    until_emitted(&emitter, ENTRIES / 3).await;
    let failing_over = pair.clone();
    tokio::task::spawn_blocking(move || {
        failing_over.stop_primary()?;
        failing_over.promote_standby()
    })
    .await
    .unwrap()
    .expect("stop the primary and promote the standby");
    eprintln!(
        "failover: promoted after {} entries emitted",
        emitter.emissions().len()
    );
    let summary = drain.await.expect("the drain");
    assert!(
        summary.errors > 0,
        "the drain never saw the primary go: {summary:?}"
    );
    let twice = everything_delivered(&store, &emitter).await;
    eprintln!(
        "failover: all {ENTRIES} delivered; {twice} emitted twice; {} failed cycles",
        summary.errors
    );
}
