//! Slices over rows with and without a stored slice hash. Stores keep each row's
//! `outbox_core::slice_hash` in a column written with the row; rows written before that
//! column existed, or by a host's own SQL, have none, and a sliced claim must place them
//! by the same hash. An engine's test writes [`entries`] through the store, checks the
//! stored hashes against [`expected`], erases some with its own SQL, then calls
//! [`assert_slices_cover`].

use std::collections::HashMap;

use chrono::TimeDelta;
use outbox_core::{ClaimRequest, ClaimStore, EntryId, NewEntry, OutboxEntry, Slice};

/// Entries with keys of one, two, three and four UTF-8 bytes per character, one-byte
/// keys, and no key; `n` of them.
pub fn entries(n: usize) -> Vec<NewEntry> {
    (0..n)
        .map(|i| {
            let e = NewEntry::new("t", vec![1]);
            match i % 6 {
                0 => e,
                1 => e.partition_key(format!("order-{i}")),
                2 => e.partition_key(format!("заказ-{i}")),
                3 => e.partition_key(format!("注文{i}")),
                4 => e.partition_key(format!("📦{i}")),
                _ => e.partition_key("-"),
            }
        })
        .collect()
}

/// Each written entry's id and the slice hash its row must store, as the store's
/// column type holds it.
pub fn expected(written: &[OutboxEntry]) -> HashMap<EntryId, i64> {
    written
        .iter()
        .map(|e| (e.id, i64::from(e.slice_hash())))
        .collect()
}

/// Claims `written` (all pending, nothing else in the table) slice by slice, `count`
/// slices: each claim is in the slice its key's hash names, none twice, none left over.
pub async fn assert_slices_cover(store: &dyn ClaimStore, written: &[OutboxEntry], count: u32) {
    let mut taken: HashMap<EntryId, u32> = HashMap::new();
    for index in 0..count {
        let slice = Slice::new(index, count).expect("a valid slice");
        let req = ClaimRequest::new("slices", 1000, TimeDelta::seconds(60)).slice(slice);
        for claim in store.claim_pending(&req).await.expect("sliced claim") {
            assert!(
                slice.contains(claim.entry.partition_key.as_deref(), claim.id()),
                "{slice} took key {:?} (hash {})",
                claim.entry.partition_key,
                claim.entry.slice_hash()
            );
            assert!(taken.insert(claim.id(), index).is_none(), "taken twice");
        }
    }
    assert_eq!(taken.len(), written.len(), "every row is in some slice");
}
