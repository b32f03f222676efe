//! The listener behind a transaction-mode pooler hears nothing and knows it: it connects,
//! fails its proof, and never reports a session. On a direct connection beside a store that goes through the
//! pooler, it wakes the store's drains.

use std::time::Duration;

use outbox_core::{NewEntry, OutboxStore};
use outbox_postgres::{PgListener, PgStoreConfig, StatementMode};

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_through_the_pooler_never_claims_to_listen() {
    let Some((db, bouncer)) = super::pooled_db().await else {
        return;
    };
    let listener = PgListener::start(
        support::pg_config_via(&db.url, &format!("{}-listen", db.schema), bouncer.addr),
        tokio_postgres::NoTls,
        &support::table(&db),
    );
    // A first attempt takes at most the connect, the check and the probe's 5 s.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while listener.refused_sessions() == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the listener made no session through the pooler to judge"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        listener.session().is_none(),
        "the listener claimed to listen through a transaction-mode pooler: {:?}",
        listener.session()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_listener_wakes_a_store_that_goes_through_the_pooler() {
    let Some((db, bouncer)) = super::pooled_db().await else {
        return;
    };
    let (listener, _) = support::listening(&db).await;
    let store = support::store_with(
        &db,
        super::pool_through(&db, bouncer, 2),
        PgStoreConfig::new()
            .statement_mode(StatementMode::Unnamed)
            .listener(listener),
    )
    .await;
    let wake = store.wake_signal().expect("a wake signal");
    while wake.wait(Duration::ZERO).await {}
    store
        .enqueue_batch(vec![NewEntry::new("t", b"through the pooler".to_vec())])
        .await
        .unwrap();
    assert!(
        wake.wait(Duration::from_secs(10)).await,
        "an enqueue through the pooler did not wake the direct listener"
    );
}
