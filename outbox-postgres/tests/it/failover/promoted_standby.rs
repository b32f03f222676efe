//! The primary crashes mid-drain and its synchronous standby is promoted: the drain, on a
//! URL that lists both hosts with `target_session_attrs=read-write`, carries on against
//! the new primary in the same process, and every entry is delivered.

use super::{drain_a_third, primary_and_standby, ENTRIES};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_standby_promoted_after_the_primary_crashed_takes_over_the_drain() {
    let Some(pair) = primary_and_standby().await else {
        return;
    };
    let running = drain_a_third(
        &pair.primary_url(),
        &pair.both_hosts_url(),
        "failover-drain",
    )
    .await;
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
        running.emitted()
    );
    let (twice, failed) = running.finish().await;
    eprintln!("failover: all {ENTRIES} delivered; {twice} emitted twice; {failed} failed cycles");
}
