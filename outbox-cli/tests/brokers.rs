//! `outbox drain` into the local brokers: every entry arrives, and bad broker URLs are
//! usage errors.

use std::path::Path;
use std::process::Command;

use outbox_nats::async_nats;

mod common;

use common::{fails_with, ok, Db};

fn outbox(db: &Path) -> Command {
    Db::sqlite(db).cmd()
}

fn nats_url() -> String {
    std::env::var("OUTBOX_TEST_NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into())
}

#[test]
fn drain_into_nats_jetstream() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = match rt.block_on(async_nats::connect(nats_url())) {
        Ok(c) => c,
        Err(e) => return outbox_testkit::engines::unavailable("nats", &e.to_string()),
    };
    let js = {
        let _in_runtime = rt.enter();
        async_nats::jetstream::new(client)
    };
    let tag = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let stream = format!("OUTBOX_CLI_{tag}");

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("outbox.db");
    ok(outbox(&db).arg("migrate"));
    ok(outbox(&db).args(["enqueue", "--count", "500", "--batch", "500"]));
    let url = format!(
        "{}?subject=cli{tag}.{{topic}}&stream={stream}&create_stream=true",
        nats_url()
    );
    let out = ok(outbox(&db).args(["drain", "--until-empty", "--emitter", &url]));
    assert!(out.contains("delivered 500"), "{out}");
    assert_eq!(Db::sqlite(&db).stats()["counts"]["delivered"], 500);
    let held = rt.block_on(async {
        let mut s = js
            .get_stream(&stream)
            .await
            .expect("the stream was created");
        let held = s.info().await.expect("info").state.messages;
        js.delete_stream(&stream).await.expect("delete");
        held
    });
    assert_eq!(held, 500, "messages in the stream");

    fails_with(
        outbox(&db).args([
            "drain",
            "--until-empty",
            "--emitter",
            "nats://127.0.0.1:4222?subject=a.*",
        ]),
        2,
        "not a valid subject",
    );
    fails_with(
        outbox(&db).args([
            "drain",
            "--until-empty",
            "--emitter",
            &format!("{}?stream=OUTBOX_MISSING_{tag}", nats_url()),
        ]),
        1,
        "OUTBOX_MISSING",
    );
}

fn amqp_url() -> String {
    std::env::var("OUTBOX_TEST_RABBITMQ_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into())
}

#[test]
fn drain_into_rabbitmq() {
    use outbox_rabbitmq::lapin::options::{
        QueueBindOptions, QueueDeclareOptions, QueueDeleteOptions,
    };
    use outbox_rabbitmq::lapin::{types::FieldTable, Connection, ConnectionProperties};

    let rt = tokio::runtime::Runtime::new().unwrap();
    let tag = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let (exchange, queue) = (format!("outbox.cli.{tag}"), format!("outbox.cli.q.{tag}"));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("outbox.db");
    ok(outbox(&db).arg("migrate"));
    ok(outbox(&db).args(["enqueue", "--count", "200", "--topic", "orders.created"]));

    // The command declares the exchange; the queue is bound once it exists.
    let channel = match rt.block_on(async {
        let connection = Connection::connect(&amqp_url(), ConnectionProperties::default()).await?;
        let channel = connection.create_channel().await?;
        Ok::<_, outbox_rabbitmq::lapin::Error>((connection, channel))
    }) {
        Ok(pair) => pair,
        Err(e) => return outbox_testkit::engines::unavailable("rabbitmq", &e.to_string()),
    };
    let url = format!("{}?exchange={exchange}&declare_exchange=true", amqp_url());
    // Nothing bound yet: every entry is unroutable and dead-lettered with the reason.
    ok(outbox(&db).args(["enqueue", "--count", "1", "--topic", "nobody"]));
    rt.block_on(async {
        channel
            .1
            .queue_declare(
                queue.as_str().into(),
                QueueDeclareOptions::default(),
                FieldTable::default(),
            )
            .await?;
        channel
            .1
            .exchange_declare(
                exchange.as_str().into(),
                outbox_rabbitmq::lapin::ExchangeKind::Topic,
                outbox_rabbitmq::lapin::options::ExchangeDeclareOptions {
                    durable: true,
                    ..Default::default()
                },
                FieldTable::default(),
            )
            .await?;
        channel
            .1
            .queue_bind(
                queue.as_str().into(),
                exchange.as_str().into(),
                "orders.#".into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
    })
    .expect("queue bound to the exchange");
    let out = ok(outbox(&db).args(["drain", "--until-empty", "--emitter", &url]));
    assert!(out.contains("delivered 200"), "{out}");
    let stats = Db::sqlite(&db).stats();
    assert_eq!(stats["counts"]["delivered"], 200);
    assert_eq!(stats["counts"]["dead_lettered"], 1, "the unroutable entry");
    let held = rt.block_on(async {
        let held = channel
            .1
            .queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
            .await;
        let _ = channel
            .1
            .exchange_delete(exchange.as_str().into(), Default::default())
            .await;
        held
    });
    assert_eq!(held.expect("queue delete"), 200, "messages in the queue");

    fails_with(
        outbox(&db).args([
            "drain",
            "--until-empty",
            "--emitter",
            "amqp://h/%2f?declare_exchange=true",
        ]),
        2,
        "needs exchange",
    );
}
