//! Sliced claims on a real server: the hash each writer stores (the one-statement insert,
//! the bulk copy, the host's transaction), and the hash the claim computes with the
//! table's `_slice_hash` function for rows written without one, all agree with
//! `outbox_core::slice_hash`.

use outbox_core::{OutboxStore, TableName};
use outbox_testkit::stored_hashes::{assert_slices_cover, entries, expected};

use crate::migrations::write_as_before_slices;
use crate::support;

#[tokio::test]
async fn stored_and_computed_slice_hashes_agree_with_the_published_hash() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let table: TableName = support::table(&db);
    let client = db.connect().await;
    let store = support::store(&db, 2).await;
    // 300 go through the bulk copy, 30 through the one-statement insert, 6 through the
    // writer in the host's transaction.
    let mut written = store.enqueue_batch(entries(300)).await.unwrap();
    written.extend(store.enqueue_batch(entries(30)).await.unwrap());
    written.extend(
        outbox_postgres::PgWriter::new(&table)
            .enqueue_in(&client, entries(6))
            .await
            .unwrap(),
    );

    let want = expected(&written);
    let stored = client
        .query(&table.render("SELECT id, slice_hash FROM {table}"), &[])
        .await
        .unwrap();
    assert_eq!(stored.len(), written.len());
    for row in stored {
        let id = outbox_core::EntryId::from_uuid(row.get(0));
        assert_eq!(row.get::<_, Option<i64>>(1), Some(want[&id]));
    }

    // Rows written without a stored hash, as before migration 5 or by the host's own SQL.
    let before = entries(120);
    write_as_before_slices(&client, &table, before).await;
    let all = store
        .find_pending(&outbox_core::FindRequest::new(1000))
        .await
        .unwrap();
    assert_eq!(all.len(), written.len() + 120);
    assert_slices_cover(&store, &all, 7).await;
}
