//! Engine-neutral steps of a store's batch writes, shared by the SQL stores: cutting an
//! enqueue into statements, checking an insert wrote everything, naming the duplicate id
//! that failed a batch, computing the rows a batch of completions writes, and deleting in
//! bounded batches.

use std::collections::HashSet;
use std::future::Future;

use chrono::{DateTime, Utc};

use crate::{CompletionRequest, EntryId, OutboxEntry, OutboxError, Result};

/// Entries per insert statement, at most: enough that a statement's fixed cost vanishes.
pub const INSERT_CHUNK_ENTRIES: usize = 500;

/// `entries` cut into runs of at most [`INSERT_CHUNK_ENTRIES`] entries and `max_bytes`
/// payload bytes (every run holds at least one entry, so a larger entry goes alone).
pub fn insert_chunks(entries: &[OutboxEntry], max_bytes: usize) -> Vec<&[OutboxEntry]> {
    let mut runs = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, e) in entries.iter().enumerate() {
        let full = i - start == INSERT_CHUNK_ENTRIES || bytes + e.payload.len() > max_bytes;
        if i > start && full {
            runs.push(&entries[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += e.payload.len();
    }
    if start < entries.len() {
        runs.push(&entries[start..]);
    }
    runs
}

/// An insert that reports fewer rows than it was given did not write them all: say so
/// rather than hand back entries that are not in the table.
pub fn wrote_all(written: u64, given: usize) -> Result<()> {
    if written == given as u64 {
        Ok(())
    } else {
        Err(OutboxError::Database {
            message: format!("an insert of {given} entries wrote {written}"),
            source: None,
        })
    }
}

/// The error naming the first entry of `chunk` whose id is already taken, earlier in the
/// chunk or in the table (`exists` reads the table), after an insert of the chunk failed
/// on a duplicate key.
pub async fn first_duplicate<F, Fut>(chunk: &[OutboxEntry], mut exists: F) -> OutboxError
where
    F: FnMut(EntryId) -> Fut,
    Fut: Future<Output = Result<bool>>,
{
    let mut seen = HashSet::new();
    for e in chunk {
        if !seen.insert(e.id) {
            return OutboxError::DuplicateId(e.id);
        }
        match exists(e.id).await {
            Ok(true) => return OutboxError::DuplicateId(e.id),
            Ok(false) => {}
            Err(err) => return err,
        }
    }
    OutboxError::Database {
        message: "a batch insert reported a duplicate id that no entry has".into(),
        source: None,
    }
}

/// The rows a batch of completions writes, in request order: each claimed entry with its
/// completion applied at the request's time (or `now()`'s) under the request's stamp.
pub fn completion_targets(
    reqs: &[CompletionRequest],
    now: impl Fn(Option<DateTime<Utc>>) -> DateTime<Utc>,
) -> Vec<OutboxEntry> {
    reqs.iter()
        .map(|req| {
            let mut entry = (*req.claim.entry).clone();
            req.completion
                .target(&req.claim.entry)
                .apply_to(&mut entry, now(req.now), req.stamp);
            entry
        })
        .collect()
}

/// Rows deleted per statement by [`delete_in_batches`]: few enough that no statement holds
/// many locks for long.
pub const DELETE_BATCH: u32 = 1000;

/// Runs `delete` (which deletes at most [`DELETE_BATCH`] rows and says how many) until a
/// call deletes fewer; returns the total.
pub async fn delete_in_batches<F, Fut>(mut delete: F) -> Result<u64>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<u64>>,
{
    let mut total = 0;
    loop {
        let deleted = delete().await?;
        total += deleted;
        if deleted < u64::from(DELETE_BATCH) {
            return Ok(total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewEntry;

    fn entries(sizes: &[usize]) -> Vec<OutboxEntry> {
        let now = Utc::now();
        sizes
            .iter()
            .map(|&n| OutboxEntry::from_new(NewEntry::new("t", vec![0u8; n]), now))
            .collect()
    }

    fn lengths(entries: &[OutboxEntry], max_bytes: usize) -> Vec<usize> {
        insert_chunks(entries, max_bytes)
            .iter()
            .map(|c| c.len())
            .collect()
    }

    #[test]
    fn chunks_cut_by_count_and_by_bytes() {
        let mb = 1024 * 1024;
        assert_eq!(lengths(&entries(&[]), 2 * mb), Vec::<usize>::new());
        assert_eq!(lengths(&entries(&[1; 1_200]), 2 * mb), [500, 500, 200]);
        assert_eq!(lengths(&entries(&[mb, mb, mb, 10]), 2 * mb), [2, 2]);
        assert_eq!(lengths(&entries(&[3 * mb, 1, 3 * mb]), 2 * mb), [1, 1, 1]);
    }

    #[tokio::test]
    async fn the_first_duplicate_is_named_in_the_chunk_or_the_table() {
        let chunk = entries(&[1, 1, 1]);
        let mut twice = chunk.clone();
        twice.push(chunk[1].clone());
        let none = |_| async { Ok(false) };
        assert!(matches!(first_duplicate(&twice, none).await,
            OutboxError::DuplicateId(id) if id == chunk[1].id));
        let taken = chunk[2].id;
        let in_table = move |id| async move { Ok(id == taken) };
        assert!(matches!(first_duplicate(&chunk, in_table).await,
            OutboxError::DuplicateId(id) if id == taken));
        assert!(wrote_all(3, 3).is_ok() && wrote_all(2, 3).is_err());
    }

    #[tokio::test]
    async fn deletes_run_until_a_batch_comes_back_short() {
        let mut left = 2500u64;
        let mut calls = 0;
        let total = delete_in_batches(|| {
            calls += 1;
            let n = left.min(u64::from(DELETE_BATCH));
            left -= n;
            async move { Ok(n) }
        })
        .await
        .unwrap();
        assert_eq!((total, calls), (2500, 3));
    }
}
