//! What the drain's calls cost in statements, counted from the statement log outside the
//! store (`outbox_testkit::statement_log`): a claim batch is one statement, a batch
//! completion one, and each refused completion or renewal one more read.

use outbox_core::{Claim, ClaimStore, OutboxStore, RenewRequest, TableName};
use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};
use outbox_testkit::fixtures::{claim_req, delivered_at, lease, new_entry, t0};
use outbox_testkit::statement_log;

/// Its own name, so the log counts only this test's statements.
const TABLE: &str = "counted_outbox";

#[tokio::test]
async fn a_claim_batch_and_its_completion_are_one_statement_each() {
    let statements = statement_log::watch(TABLE);
    let dir = tempfile::tempdir().unwrap();
    let config = SqliteStoreConfig::new().table(TableName::new(TABLE).unwrap());
    let path = dir.path().join("outbox.db");
    let pool = SqliteClaimStore::open_pool(path.to_str().unwrap(), &config)
        .await
        .unwrap();
    outbox_sqlite::migrate(&pool, &TableName::new(TABLE).unwrap())
        .await
        .unwrap();
    let store = SqliteClaimStore::new(pool, config).await.unwrap();
    store
        .enqueue_batch((0..30).map(|i| new_entry(i - 30)).collect())
        .await
        .unwrap();
    let counted = |before: usize| statement_log::read(&statements) - before;

    for batch in [1, 10, 19] {
        let before = statement_log::read(&statements);
        let claims = store
            .claim_pending(&claim_req("worker", batch, t0()))
            .await
            .unwrap();
        assert_eq!(claims.len(), batch as usize);
        assert_eq!(
            counted(before),
            1,
            "statements for a claim batch of {batch}"
        );

        let before = statement_log::read(&statements);
        let renewed = store
            .renew(&claims, &RenewRequest::new(lease()).at(t0()))
            .await
            .unwrap();
        assert!(renewed.iter().all(|r| r.renewed().is_some()), "{renewed:?}");
        assert_eq!(counted(before), claims.len(), "one statement a renewal");

        let renewed: Vec<Claim> = renewed
            .iter()
            .filter_map(|r| r.renewed())
            .cloned()
            .collect();
        let before = statement_log::read(&statements);
        let done = store
            .complete_batch(delivered_at(&renewed, t0()))
            .await
            .unwrap();
        assert!(done.iter().all(|r| r.is_applied()), "{done:?}");
        assert_eq!(counted(before), 1, "statements for a completion of {batch}");

        // The same completions again: each is refused and read back to say why.
        let before = statement_log::read(&statements);
        let again = store
            .complete_batch(delivered_at(&renewed, t0()))
            .await
            .unwrap();
        assert!(again.iter().all(|r| !r.is_applied()), "{again:?}");
        assert_eq!(counted(before), 1 + claims.len(), "one read a refused row");
    }
}
