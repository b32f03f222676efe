//! Rows edited by hand on a real file: read back as `CorruptRow` errors naming the row.

use outbox_sqlite::SqliteStoreConfig;
use outbox_testkit::corrupt_rows::{hand_edited_rows_are_reported_by_id, HandEdit};

use crate::support::fresh_store;

/// What a hand edit can do to a row that the table's types and checks still allow.
const EDITS: [HandEdit; 9] = [
    HandEdit {
        what: "a claim token of 3 bytes",
        set: "claim_token = x'010203'",
        claimed: true,
    },
    HandEdit {
        what: "a stamp of 2 bytes",
        set: "stamp = x'0102'",
        claimed: false,
    },
    HandEdit {
        what: "headers that are a JSON array",
        set: "headers = '[1, 2]'",
        claimed: false,
    },
    HandEdit {
        what: "headers that are not JSON",
        set: "headers = 'not json'",
        claimed: false,
    },
    HandEdit {
        what: "a header value that is a number",
        set: "headers = '{\"a\": 1}'",
        claimed: false,
    },
    HandEdit {
        what: "a negative attempt count",
        set: "attempt_count = -1",
        claimed: false,
    },
    HandEdit {
        what: "an attempt count past u32",
        set: "attempt_count = 4294967296",
        claimed: false,
    },
    HandEdit {
        what: "a creation time past the calendar",
        set: "created_at = 9223372036854775807",
        claimed: false,
    },
    // The claim adds one to it: capped, the statement cannot overflow.
    HandEdit {
        what: "a claim count at the integer limit",
        set: "claim_attempt_count = 9223372036854775807",
        claimed: false,
    },
];

#[tokio::test]
async fn hand_edited_rows_are_reported_as_corrupt_by_id() {
    let (store, _dir) = fresh_store(SqliteStoreConfig::new()).await;
    let pool = store.pool().clone();
    hand_edited_rows_are_reported_by_id(&store, &EDITS, |set, id| {
        let pool = pool.clone();
        async move {
            sqlx::query(&format!("UPDATE outbox SET {set} WHERE id = ?1"))
                .bind(id.as_uuid().as_bytes().to_vec())
                .execute(&pool)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
    })
    .await;
}

/// A claim is committed whatever its rows decode to: the row that cannot be read stays
/// leased and is reported, and the next claim takes the rows behind it instead of meeting
/// it again (a drain does not stall on it).
#[tokio::test]
async fn a_row_that_cannot_be_read_stays_leased_and_the_next_claim_goes_past_it() {
    use outbox_core::{ClaimStore, OutboxError, OutboxStore};
    use outbox_testkit::fixtures::{claim_req, new_entry, t0};

    let (store, _dir) = fresh_store(SqliteStoreConfig::new()).await;
    let written = store
        .enqueue_batch(vec![new_entry(-2), new_entry(-1)])
        .await
        .unwrap();
    sqlx::query("UPDATE outbox SET headers = 'not json' WHERE id = ?1")
        .bind(written[0].id.as_uuid().as_bytes().to_vec())
        .execute(store.pool())
        .await
        .unwrap();
    let err = store
        .claim_pending(&claim_req("worker", 1, t0()))
        .await
        .unwrap_err();
    assert!(matches!(err, OutboxError::CorruptRow { .. }), "{err:?}");
    let next = store
        .claim_pending(&claim_req("worker", 1, t0()))
        .await
        .expect("the claim after a corrupt row");
    assert_eq!(next.len(), 1, "the next claim met the corrupt row again");
    assert_eq!(next[0].id(), written[1].id);
}
