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

/// A JetStream context on the test server, or `None` after a loud report (a failure
/// where NATS is required).
fn jetstream(rt: &tokio::runtime::Runtime) -> Option<async_nats::jetstream::Context> {
    match rt.block_on(async_nats::connect(nats_url())) {
        Ok(client) => {
            let _in_runtime = rt.enter();
            Some(async_nats::jetstream::new(client))
        }
        Err(e) => {
            outbox_testkit::engines::unavailable("nats", &e.to_string());
            None
        }
    }
}

/// A migrated SQLite outbox in `dir`.
fn migrated(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let db = dir.path().join("outbox.db");
    ok(outbox(&db).arg("migrate"));
    db
}

#[test]
fn drain_into_nats_jetstream() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(js) = jetstream(&rt) else { return };
    let tag = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let stream = format!("OUTBOX_CLI_{tag}");

    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
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
    let db = migrated(&dir);
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
    // No queue is bound for this one: unroutable, a route failure, so it is held, never
    // dead-lettered, and the drain gives up on the route after --route-down-limit. In an
    // outbox of its own: with routed and unroutable messages in flight together on one
    // channel, the client can hand a return to another message's confirm (see the note
    // of #45), which this test is not about.
    let lone = dir.path().join("nobody.db");
    ok(outbox(&lone).arg("migrate"));
    ok(outbox(&lone).args(["enqueue", "--count", "1", "--topic", "nobody"]));
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
    let (code, out, err) = run_bounded(
        outbox(&lone).args([
            "drain",
            "--until-empty",
            "--route-down-limit",
            "2s",
            "--emitter",
            &url,
        ]),
        std::time::Duration::from_secs(60),
    );
    assert_eq!(code, Some(4), "{out}\n{err}");
    assert!(err.contains("--route-down-limit"), "{err}");
    let stats = Db::sqlite(&lone).stats();
    assert_eq!(stats["counts"]["dead_lettered"], 0, "{stats}");
    assert_eq!(
        stats["counts"]["deferred"], 1,
        "the unroutable entry, held: {stats}"
    );
    let holds = &stats["route_holds"];
    assert_eq!(holds[0]["kind"], "missing", "{stats}");
    assert_eq!(
        holds[0]["destination"],
        format!("exchange \"{exchange}\", routing key \"nobody\""),
        "{stats}"
    );
    let out = ok(outbox(&db).args(["drain", "--until-empty", "--emitter", &url]));
    assert!(out.contains("delivered 200"), "{out}");
    let stats = Db::sqlite(&db).stats();
    assert_eq!(stats["counts"]["delivered"], 200, "{stats}");
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

/// Runs a drain that publishes, then holds each emission 400 ms before it is recorded,
/// and SIGKILLs it once `published()` reaches 40: entries it published but never recorded
/// stay leased, and a second drain emits them again once their 2 s leases run out.
/// Returns (published when killed, delivered when killed).
fn kill_mid_batch(db: &Path, emitter: &str, published: impl Fn() -> u64) -> (u64, u64) {
    let mut child = outbox(db)
        .args([
            "drain",
            "--emitter",
            emitter,
            "--emit-delay",
            "400ms",
            "--lease",
            "2s",
        ])
        .args(["--batch", "50", "--concurrency", "16"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let delivered = || {
        Db::sqlite(db).stats()["counts"]["delivered"]
            .as_u64()
            .unwrap()
    };
    // Killed once entries are seen published and not yet recorded. Reading a broker can
    // take longer than an emission's hold (Kafka's read of the whole topic under load), so
    // a kill timed on the published count alone could land after the batch was recorded.
    let started = std::time::Instant::now();
    loop {
        let (seen, recorded) = (published(), delivered());
        if seen >= 40 && seen > recorded {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "nothing published and left unrecorded within 60 s ({seen}, {recorded})"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL: no graceful stop, no release.
    child.wait().unwrap();
    (published(), delivered())
}

#[test]
fn a_worker_killed_mid_batch_leaves_nats_each_message_once() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(js) = jetstream(&rt) else { return };
    let tag = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let stream = format!("OUTBOX_KILL_{tag}");
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "300"]));
    let url = format!(
        "{}?subject=kill{tag}.{{topic}}&stream={stream}&create_stream=true",
        nats_url()
    );
    let held = || {
        rt.block_on(async {
            match js.get_stream(&stream).await {
                Ok(mut s) => s.info().await.map_or(0, |i| i.state.messages),
                Err(_) => 0,
            }
        })
    };
    let (published, delivered) = kill_mid_batch(&db, &url, held);
    assert!(
        published > delivered,
        "nothing was published and left unrecorded ({published}, {delivered})"
    );
    std::thread::sleep(std::time::Duration::from_millis(2_200)); // the leases run out
    let out = ok(outbox(&db).args(["drain", "--until-empty", "--emitter", &url]));
    assert!(out.contains("delivered"), "{out}");
    assert_eq!(Db::sqlite(&db).stats()["counts"]["delivered"], 300);
    // The re-emitted entries were collapsed by Nats-Msg-Id.
    assert_eq!(held(), 300, "messages in the stream");
    rt.block_on(js.delete_stream(&stream)).unwrap();
}

#[test]
fn a_worker_killed_mid_batch_leaves_rabbitmq_duplicates_with_the_same_message_id() {
    use outbox_rabbitmq::lapin::options::{
        BasicGetOptions, ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions,
    };
    use outbox_rabbitmq::lapin::{
        types::FieldTable, Connection, ConnectionProperties, ExchangeKind,
    };

    let rt = tokio::runtime::Runtime::new().unwrap();
    let tag = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let (exchange, queue) = (format!("outbox.kill.{tag}"), format!("outbox.kill.q.{tag}"));
    let channel = match rt.block_on(async {
        let connection = Connection::connect(&amqp_url(), ConnectionProperties::default()).await?;
        let channel = connection.create_channel().await?;
        let options = ExchangeDeclareOptions {
            durable: true,
            ..Default::default()
        };
        channel
            .exchange_declare(
                exchange.as_str().into(),
                ExchangeKind::Topic,
                options,
                FieldTable::default(),
            )
            .await?;
        channel
            .queue_declare(
                queue.as_str().into(),
                QueueDeclareOptions::default(),
                FieldTable::default(),
            )
            .await?;
        channel
            .queue_bind(
                queue.as_str().into(),
                exchange.as_str().into(),
                "#".into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await?;
        Ok::<_, outbox_rabbitmq::lapin::Error>((connection, channel))
    }) {
        Ok(pair) => pair,
        Err(e) => return outbox_testkit::engines::unavailable("rabbitmq", &e.to_string()),
    };
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "300"]));
    let url = format!("{}?exchange={exchange}", amqp_url());
    let queued = || {
        rt.block_on(async {
            let options = QueueDeclareOptions {
                passive: true,
                ..Default::default()
            };
            channel
                .1
                .queue_declare(queue.as_str().into(), options, FieldTable::default())
                .await
        })
        .map_or(0, |q| u64::from(q.message_count()))
    };
    let (published, delivered) = kill_mid_batch(&db, &url, queued);
    assert!(
        published > delivered,
        "nothing was published and left unrecorded ({published}, {delivered})"
    );
    std::thread::sleep(std::time::Duration::from_millis(2_200));
    ok(outbox(&db).args(["drain", "--until-empty", "--emitter", &url]));
    assert_eq!(Db::sqlite(&db).stats()["counts"]["delivered"], 300);

    let mut by_id: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    rt.block_on(async {
        while let Some(m) = channel
            .1
            .basic_get(queue.as_str().into(), BasicGetOptions { no_ack: true })
            .await
            .unwrap()
        {
            let id = m
                .delivery
                .properties
                .message_id()
                .as_ref()
                .map(|s| s.to_string())
                .unwrap_or_default();
            *by_id.entry(id).or_default() += 1;
        }
        let _ = channel
            .1
            .queue_delete(queue.as_str().into(), Default::default())
            .await;
        let _ = channel
            .1
            .exchange_delete(exchange.as_str().into(), Default::default())
            .await;
    });
    // Every entry arrived; the re-emitted ones twice, under the same message id, which is
    // what a consumer dedupes by.
    assert_eq!(by_id.len(), 300, "distinct message ids");
    let twice = by_id.values().filter(|n| **n > 1).count();
    assert!(twice > 0, "no entry was re-emitted");
    assert!(by_id.values().all(|n| *n <= 2), "{by_id:?}");
}

/// The Kafka test broker's client, or `None` after a loud report (a failure where Kafka
/// is required).
fn kafka(
    rt: &tokio::runtime::Runtime,
) -> Option<std::sync::Arc<outbox_kafka::rskafka::client::Client>> {
    rt.block_on(outbox_testkit::kafka::client())
}

#[test]
fn drain_into_kafka() {
    use outbox_testkit::kafka::{url, TestTopic};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(client) = kafka(&rt) else { return };
    let topic = rt.block_on(TestTopic::create(&client, "outbox-cli", 3));
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "300", "--partition-key", "order-7"]));
    let emitter = format!("{}?topic={}", url(), topic.name);
    let out = ok(outbox(&db).args(["drain", "--until-empty", "--emitter", &emitter]));
    assert!(out.contains("delivered 300"), "{out}");
    let received = rt.block_on(topic.read_all());
    assert_eq!(received.len(), 300, "records in the topic");
    // One key, so one partition.
    let partition = outbox_kafka::partition_for(b"order-7", 3);
    assert!(received.iter().all(|r| r.partition == partition));
    rt.block_on(topic.delete());

    fails_with(
        outbox(&db).args(["drain", "--until-empty", "--emitter", "kafka://h?topic=x"]),
        2,
        "has no port",
    );
}

#[test]
fn a_worker_killed_mid_batch_leaves_kafka_copies_with_the_same_entry_id() {
    use outbox_testkit::kafka::{url, TestTopic};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(client) = kafka(&rt) else { return };
    let topic = rt.block_on(TestTopic::create(&client, "outbox-kill", 2));
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "300"]));
    let emitter = format!("{}?topic={}", url(), topic.name);
    let stored = || rt.block_on(topic.read_all()).len() as u64;
    let (published, delivered) = kill_mid_batch(&db, &emitter, stored);
    assert!(
        published > delivered,
        "nothing was published and left unrecorded ({published}, {delivered})"
    );
    std::thread::sleep(std::time::Duration::from_millis(2_200)); // the leases run out
    ok(outbox(&db).args(["drain", "--until-empty", "--emitter", &emitter]));
    assert_eq!(Db::sqlite(&db).stats()["counts"]["delivered"], 300);

    let mut by_id: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    for record in rt.block_on(topic.read_all()) {
        *by_id
            .entry(record.headers[outbox_kafka::ENTRY_ID_HEADER].clone())
            .or_default() += 1;
    }
    // Every entry arrived; the re-emitted ones twice, under the same entry id, which is
    // what a consumer dedupes by.
    assert_eq!(by_id.len(), 300, "distinct entry ids");
    let twice = by_id.values().filter(|n| **n > 1).count();
    assert!(twice > 0, "no entry was re-emitted");
    assert!(by_id.values().all(|n| *n <= 2), "{by_id:?}");
    rt.block_on(topic.delete());
}

/// Runs `cmd` to its end, killing it after `limit`; returns its exit code and outputs.
fn run_bounded(cmd: &mut Command, limit: std::time::Duration) -> (Option<i32>, String, String) {
    use std::io::Read;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status.code(), out, err)
}

/// A drain started before its JetStream stream exists holds the entries (no dead
/// letter, `outbox stats` names the route), and delivers every one once after the
/// stream is created 4 s later, in the same run.
#[test]
fn a_drain_started_before_its_stream_delivers_every_entry_once_it_exists() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(js) = jetstream(&rt) else { return };
    let tag = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let stream = format!("OUTBOX_CLI_LATE_{tag}");
    let dir = tempfile::tempdir().unwrap();
    let db = migrated(&dir);
    ok(outbox(&db).args(["enqueue", "--count", "2000", "--batch", "500"]));
    let url = format!("{}?subject=late{tag}.{{topic}}", nats_url());
    let db_drain = db.clone();
    let drain = std::thread::spawn(move || {
        run_bounded(
            outbox(&db_drain).args(["drain", "--until-empty", "--emitter", &url]),
            std::time::Duration::from_secs(120),
        )
    });
    std::thread::sleep(std::time::Duration::from_millis(3_000));
    let stats = Db::sqlite(&db).stats();
    assert_eq!(stats["counts"]["dead_lettered"], 0, "{stats}");
    let holds = stats["route_holds"].as_array().expect("route holds");
    assert_eq!(holds.len(), 1, "{stats}");
    assert_eq!(holds[0]["kind"], "missing");
    assert_eq!(
        holds[0]["destination"],
        format!("subject \"late{tag}.outbox.test\""),
        "{stats}"
    );
    let text = ok(outbox(&db).arg("stats"));
    assert!(text.contains("held for a route"), "{text}");
    std::thread::sleep(std::time::Duration::from_millis(1_000));
    rt.block_on(async {
        js.create_stream(async_nats::jetstream::stream::Config {
            name: stream.clone(),
            subjects: vec![format!("late{tag}.>")],
            storage: async_nats::jetstream::stream::StorageType::Memory,
            ..Default::default()
        })
        .await
        .expect("create the stream")
    });
    let (code, out, err) = drain.join().expect("the drain's thread");
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("delivered 2000"), "{out}");
    assert!(out.contains("dead-lettered 0"), "{out}");
    assert!(err.contains("route missing"), "warned once: {err}");
    assert_eq!(
        err.matches("holding its entries").count(),
        1,
        "one warning for the streak: {err}"
    );
    let stats = Db::sqlite(&db).stats();
    assert_eq!(stats["counts"]["delivered"], 2000, "{stats}");
    assert_eq!(stats["route_holds"], serde_json::json!([]), "{stats}");
    let held = rt.block_on(async {
        let mut s = js.get_stream(&stream).await.expect("the stream");
        let held = s.info().await.expect("info").state.messages;
        js.delete_stream(&stream).await.expect("delete");
        held
    });
    assert_eq!(held, 2000, "messages in the stream");
}
