//! Enqueue inside the host's own transaction: entries commit or roll back with it.

use outbox_core::{NewEntry, OutboxError, OutboxStore};

use crate::support::{run, SqlServerTestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_commit_and_roll_back_with_the_hosts_transaction() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let store = db.store(2).await;
    let mut host = db.client().await;

    run(&mut host, "BEGIN TRANSACTION").await;
    let kept = store
        .writer()
        .enqueue_in(
            &mut host,
            vec![NewEntry::new("orders", b"1".to_vec()).header("k", "v")],
        )
        .await
        .unwrap();
    run(&mut host, "COMMIT TRANSACTION").await;
    assert_eq!(
        store.get(kept[0].id).await.unwrap().as_ref(),
        Some(&kept[0])
    );

    run(&mut host, "BEGIN TRANSACTION").await;
    let dropped = store
        .writer()
        .enqueue_one_in(&mut host, NewEntry::new("orders", b"2".to_vec()))
        .await
        .unwrap();
    run(&mut host, "ROLLBACK TRANSACTION").await;
    assert_eq!(store.get(dropped.id).await.unwrap(), None);

    // More entries than one statement carries, in one transaction.
    run(&mut host, "BEGIN TRANSACTION").await;
    let many: Vec<_> = (0..600)
        .map(|i| NewEntry::new("bulk", vec![(i % 251) as u8]))
        .collect();
    let written = store.writer().enqueue_in(&mut host, many).await.unwrap();
    run(&mut host, "COMMIT TRANSACTION").await;
    assert_eq!(written.len(), 600);
    for e in [&written[0], &written[299], &written[599]] {
        assert_eq!(store.get(e.id).await.unwrap().as_ref(), Some(e));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_id_is_named_and_nothing_of_its_statement_is_written() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let store = db.store(2).await;
    let first = store
        .enqueue(NewEntry::new("t", b"x".to_vec()))
        .await
        .unwrap();
    let fresh = NewEntry::new("t", b"y".to_vec());
    let fresh_id = fresh.id;
    let err = store
        .enqueue_batch(vec![
            fresh,
            NewEntry::new("t", b"z".to_vec()).with_id(first.id),
        ])
        .await
        .unwrap_err();
    assert!(
        matches!(err, OutboxError::DuplicateId(id) if id == first.id),
        "{err:?}"
    );
    assert_eq!(store.get(fresh_id).await.unwrap(), None);
}
