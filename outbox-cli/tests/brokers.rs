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
