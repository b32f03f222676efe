//! Rows edited by hand on a real server: read back as `CorruptRow` errors naming the row.

use outbox_testkit::corrupt_rows::{hand_edited_rows_are_reported_by_id, HandEdit};

use crate::support;

/// What a hand edit can do to a row that the table's types and checks still allow.
const EDITS: [HandEdit; 7] = [
    HandEdit {
        what: "headers that are a JSON array",
        set: "headers = '[1, 2]'",
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
        what: "a negative claim count",
        set: "claim_attempt_count = -5",
        claimed: true,
    },
    HandEdit {
        what: "an infinite creation time",
        set: "created_at = 'infinity'",
        claimed: false,
    },
    HandEdit {
        what: "an infinite update time",
        set: "updated_at = '-infinity'",
        claimed: false,
    },
    HandEdit {
        what: "an infinite claim time",
        set: "claimed_at = 'infinity'",
        claimed: true,
    },
];

#[tokio::test]
async fn hand_edited_rows_are_reported_as_corrupt_by_id() {
    let Some(db) = support::migrated_db().await else {
        return;
    };
    let store = support::store(&db, 2).await;
    let client = db.connect().await;
    let table = support::table(&db).qualified();
    let client = &client;
    let table = &table;
    hand_edited_rows_are_reported_by_id(&store, &EDITS, |set, id| async move {
        client
            .execute(
                &format!("UPDATE {table} SET {set} WHERE id = $1"),
                &[&id.as_uuid()],
            )
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
    .await;
}
