//! Large batches go through the bulk copy, atomically.

use outbox_core::{NewEntry, OutboxError, OutboxStore};

use crate::support::SqlServerTestDb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_entries_are_bulk_copied_with_every_field() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let store = db.store(2).await;
    let entries: Vec<_> = (0..1000u32)
        .map(|i| {
            NewEntry::new("bulk", i.to_be_bytes().to_vec())
                .partition_key(format!("p{}", i % 7))
                .header("n", i.to_string())
        })
        .collect();
    let written = store.enqueue_batch(entries).await.unwrap();
    assert_eq!(written.len(), 1000);
    for e in [&written[0], &written[500], &written[999]] {
        assert_eq!(store.get(e.id).await.unwrap().as_ref(), Some(e));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_copy_with_a_duplicate_writes_nothing() {
    let Some(db) = SqlServerTestDb::create().await else {
        return;
    };
    let store = db.store(2).await;
    let existing = store
        .enqueue(NewEntry::new("t", b"x".to_vec()))
        .await
        .unwrap();
    let mut entries: Vec<_> = (0..1000u32)
        .map(|i| NewEntry::new("bulk", i.to_be_bytes().to_vec()))
        .collect();
    let first = entries[0].id;
    entries[999] = NewEntry::new("bulk", b"dup".to_vec()).with_id(existing.id);
    let err = store.enqueue_batch(entries).await.unwrap_err();
    assert!(matches!(err, OutboxError::DuplicateId(_)), "{err:?}");
    assert_eq!(
        store.get(first).await.unwrap(),
        None,
        "a failed bulk copy wrote rows"
    );
}
