//! The listener wakes a waiting drain when entries are enqueued (only on commit), and
//! reconnects after its server process is terminated, and after a reconnection attempt
//! met a server that stopped answering.

use std::sync::Arc;
use std::time::Duration;

use outbox_core::{NewEntry, OutboxStore, WakeSignal};
use outbox_postgres::{PgListener, PgStoreConfig};
use outbox_testkit::tcp_proxy::TcpProxy;

use crate::support;

const WITHIN: Duration = Duration::from_secs(10);
/// How long a wake-up that should not come is waited for.
const QUIET: Duration = Duration::from_millis(200);

async fn drain_wakeups(wake: &Arc<dyn WakeSignal>) {
    while wake.wait(Duration::ZERO).await {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enqueue_wakes_the_listener_which_survives_its_backend_being_killed() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let (listener, first) = support::listening(&db).await;
    let pool = support::pool(support::pg_config(&db.url, &db.schema), 2);
    let store =
        support::store_with(&db, pool, PgStoreConfig::new().listener(listener.clone())).await;
    assert!(store.capabilities().notifications);
    let wake = store.wake_signal().expect("a wake signal");

    drain_wakeups(&wake).await;
    assert!(!wake.wait(QUIET).await, "woken with nothing enqueued");
    store
        .enqueue_batch((0..100u8).map(|i| NewEntry::new("t", vec![i])).collect())
        .await
        .unwrap();
    assert!(
        wake.wait(WITHIN).await,
        "the enqueue did not wake the listener"
    );

    // A rolled-back enqueue wakes nobody; a committed one does.
    let mut client = db.connect().await;
    let tx = client.transaction().await.unwrap();
    store
        .writer()
        .enqueue_one_in(&tx, NewEntry::new("t", b"x".to_vec()))
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert!(
        !wake.wait(QUIET).await,
        "a rolled-back enqueue woke the listener"
    );
    let tx = client.transaction().await.unwrap();
    store
        .writer()
        .enqueue_one_in(&tx, NewEntry::new("t", b"y".to_vec()))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert!(
        wake.wait(WITHIN).await,
        "a committed enqueue did not wake the listener"
    );

    // Kill the listener's connection: it reconnects, listens again, and wakes again.
    let killed: bool = client
        .query_one("SELECT pg_terminate_backend($1)", &[&first.backend_pid])
        .await
        .unwrap()
        .get(0);
    assert!(killed);
    let second = listener
        .wait_for_session(first.number, WITHIN)
        .await
        .expect("the listener did not reconnect");
    assert_ne!(second.backend_pid, first.backend_pid);
    drain_wakeups(&wake).await;
    store
        .enqueue(NewEntry::new("t", b"z".to_vec()))
        .await
        .unwrap();
    assert!(wake.wait(WITHIN).await, "no wake-up after reconnecting");
}

/// The path to the server goes dark (a black hole: connections accepted, never answered)
/// and the listener's session is closed under it, so its next attempt hangs on a server
/// that never answers. The attempt gives up within its bound, and once the path heals the
/// listener listens again and wakes waiters on enqueue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listener_comes_back_after_a_reconnection_attempt_into_a_black_hole() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let proxy = TcpProxy::start(support::server_addr(&db.url))
        .await
        .expect("start proxy");
    let name = format!("{}-listen", db.schema);
    let config = support::pg_config_via(&db.url, &name, proxy.local_addr());
    let listener = Arc::new(PgListener::start(
        config,
        tokio_postgres::NoTls,
        &support::table(&db),
    ));
    let first = listener
        .wait_for_session(0, WITHIN)
        .await
        .expect("listening");

    proxy.black_hole();
    proxy.cut();
    // Noticed when the connection's task sees the close: soon, but later on a busy machine.
    let cut_at = std::time::Instant::now();
    while listener.session().is_some() {
        assert!(
            cut_at.elapsed() < WITHIN,
            "still listening on a closed connection"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Time for an attempt to start and hang in the black hole.
    tokio::time::sleep(Duration::from_secs(2)).await;
    proxy.restore();
    let again = listener
        .wait_for_session(first.number, Duration::from_secs(40))
        .await
        .expect("the listener never came back after the black hole");

    let pool = support::pool(support::pg_config(&db.url, &db.schema), 2);
    let store =
        support::store_with(&db, pool, PgStoreConfig::new().listener(listener.clone())).await;
    let wake = store.wake_signal().expect("a wake signal");
    drain_wakeups(&wake).await;
    store
        .enqueue_batch(vec![NewEntry::new("t", b"after".to_vec())])
        .await
        .unwrap();
    assert!(
        wake.wait(WITHIN).await,
        "session {} did not wake on enqueue",
        again.number
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copied_batch_wakes_the_listener_once_its_rows_are_visible() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let (listener, _) = support::listening(&db).await;
    let store = support::store_with(
        &db,
        support::pool(support::pg_config(&db.url, &db.schema), 2),
        PgStoreConfig::new().listener(listener),
    )
    .await;
    let wake = store.wake_signal().expect("a wake signal");
    let count = support::table(&db).render("SELECT count(*) FROM {table}");
    let reader = db.connect().await;
    for round in 1..=3i64 {
        drain_wakeups(&wake).await;
        // At least `COPY_FROM` entries: the batch is copied, and its wake-up travels
        // in the same pipeline as the copy's end.
        let enqueue = store.enqueue_batch(
            (0..500)
                .map(|i: u32| NewEntry::new("t", i.to_le_bytes().to_vec()))
                .collect(),
        );
        // The rows are counted the moment the wake-up comes, whether or not the
        // enqueue call has returned yet.
        let woken = async {
            let woken = wake.wait(WITHIN).await;
            let rows: i64 = reader.query_one(&count, &[]).await.unwrap().get(0);
            (woken, rows)
        };
        let (written, (woken, rows)) = tokio::join!(enqueue, woken);
        assert_eq!(written.unwrap().len(), 500);
        assert!(woken, "round {round}: the copy did not wake the listener");
        assert_eq!(
            rows,
            500 * round,
            "round {round}: woken before its rows were visible"
        );
    }
}
