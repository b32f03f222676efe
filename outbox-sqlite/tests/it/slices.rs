//! Sliced claims on a real file: the hash each writer stores, and the hash the claim
//! computes in SQL (`sql/slice_hash.sql`) for rows that carry none, both agree with
//! `outbox_core::slice_hash`.

use outbox_core::OutboxStore;
use outbox_sqlite::SqliteStoreConfig;
use outbox_testkit::stored_hashes::{assert_slices_cover, entries, expected};
use uuid::Uuid;

use crate::support::fresh_store;

#[tokio::test]
async fn stored_and_computed_slice_hashes_agree_with_the_published_hash() {
    let (store, _dir) = fresh_store(SqliteStoreConfig::new()).await;
    // A batch goes through the JSON insert, a single entry through its own statement.
    let mut written = store.enqueue_batch(entries(300)).await.unwrap();
    written.extend(store.enqueue_batch(entries(2).split_off(1)).await.unwrap());

    let want = expected(&written);
    let stored: Vec<(Vec<u8>, Option<i64>)> = sqlx::query_as("SELECT id, slice_hash FROM outbox")
        .fetch_all(store.pool())
        .await
        .unwrap();
    assert_eq!(stored.len(), written.len());
    for (id, hash) in stored {
        let id = outbox_core::EntryId::from_uuid(Uuid::from_slice(&id).unwrap());
        assert_eq!(hash, Some(want[&id]));
    }

    // Half the rows lose their stored hash, as rows written without one have none.
    sqlx::query("UPDATE outbox SET slice_hash = NULL WHERE rowid % 2 = 0")
        .execute(store.pool())
        .await
        .unwrap();
    assert_slices_cover(&store, &written, 7).await;
}
