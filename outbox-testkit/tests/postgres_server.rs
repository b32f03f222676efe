//! The PostgreSQL test server can be had, and each test gets its own schema.
#![cfg(feature = "postgres")]

use outbox_testkit::postgres::PgTestDb;

#[tokio::test]
async fn each_test_gets_a_fresh_schema_that_is_dropped_after() {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let client = db.connect().await;
    let row = client
        .query_one(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1",
            &[&db.schema],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 1);
    let schema = db.schema.clone();
    drop(db);
    let row = client
        .query_one(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1",
            &[&schema],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 0);
}
