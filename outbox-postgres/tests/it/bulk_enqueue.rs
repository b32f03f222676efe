//! Large batches are copied (`COPY … FROM STDIN`), with the same meaning as the
//! one-statement insert: every field round-trips, all or nothing, one database clock.

use outbox_core::{EntryId, NewEntry, OutboxError, OutboxStore};

use crate::support;

fn entries(n: usize) -> Vec<NewEntry> {
    (0..n)
        .map(|i| {
            let mut e = NewEntry::new(
                format!("topic-{}", i % 3),
                vec![u8::try_from(i % 251).unwrap(); 64],
            );
            if i % 2 == 0 {
                e = e
                    .partition_key(format!("key-{i}"))
                    .header("n", i.to_string());
            }
            e
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_batch_round_trips_every_field() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let written = store.enqueue_batch(entries(1_000)).await.unwrap();
    assert_eq!(written.len(), 1_000);
    let created = written[0].created_at;
    for w in &written {
        assert_eq!(w.created_at, created, "one clock for the whole batch");
        assert_eq!(store.get(w.id).await.unwrap().as_ref(), Some(w));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_batch_with_an_existing_id_writes_nothing() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let taken = store
        .enqueue(NewEntry::new("t", b"x".to_vec()))
        .await
        .unwrap();
    let mut batch = entries(500);
    batch[250] = NewEntry::new("t", b"y".to_vec()).with_id(taken.id);
    let fresh: Vec<EntryId> = batch
        .iter()
        .map(|e| e.id)
        .filter(|id| *id != taken.id)
        .collect();
    let err = store.enqueue_batch(batch).await.unwrap_err();
    assert!(
        matches!(err, OutboxError::DuplicateId(id) if id == taken.id),
        "{err}"
    );
    for id in fresh {
        assert_eq!(store.get(id).await.unwrap(), None);
    }
    // The connection went back clean: the store keeps working.
    assert_eq!(store.enqueue_batch(entries(200)).await.unwrap().len(), 200);
}
