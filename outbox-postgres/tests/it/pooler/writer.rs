//! The writer through the pooler, unnamed: on tokio-postgres clients outside any
//! transaction, and on sqlx connections inside the host's transactions (where sqlx's two
//! exchanges per statement stay on one server connection), many clients at once.

use outbox_core::{NewEntry, OutboxStore};
use outbox_postgres::{PgWriter, StatementMode};
use sqlx::{Connection, PgConnection};

use crate::support;

const CLIENTS: usize = 4;
const ROUNDS: usize = 25;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_writers_through_the_pooler_write_every_entry() {
    let Some((db, bouncer)) = super::pooled_db().await else {
        return;
    };
    let writer = PgWriter::new(&support::table(&db)).statement_mode(StatementMode::Unnamed);
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (writer, url) = (writer.clone(), bouncer.url.clone());
            tokio::spawn(async move {
                let client = outbox_testkit::postgres::connect(&url).await.unwrap();
                let mut sqlx = PgConnection::connect(&url)
                    .await
                    .expect("sqlx through the pooler");
                let mut ids = Vec::new();
                for r in 0..ROUNDS {
                    let entry = || NewEntry::new("t", format!("{c}/{r}").into_bytes());
                    ids.extend(writer.enqueue_in(&client, vec![entry()]).await.unwrap());
                    let mut tx = sqlx.begin().await.unwrap();
                    ids.extend(
                        writer
                            .enqueue_in_sqlx(&mut tx, vec![entry(), entry()])
                            .await
                            .unwrap(),
                    );
                    tx.commit().await.unwrap();
                }
                ids
            })
        })
        .collect();
    let store = support::store(&db, 2).await;
    let mut written = 0;
    for task in tasks {
        for entry in task.await.expect("a writer") {
            assert!(
                store.get(entry.id).await.unwrap().is_some(),
                "{} was not written",
                entry.id
            );
            written += 1;
        }
    }
    assert_eq!(written, CLIENTS * ROUNDS * 3);
}
