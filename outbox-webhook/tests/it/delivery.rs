//! What arrives: every entry once, verified by the receiver, with its id, payload and
//! headers; rotated keys; a wrong key and no key refused by the receiver.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use outbox_core::drain::EmitOutcome;
use outbox_core::EmissionStatus;
use outbox_webhook::{WebhookEmitter, WebhookOptions};

use crate::support::{drain_all, emit_once, enqueue, one_entry, outbox, secret, Receiver};

#[tokio::test]
async fn a_drained_backlog_arrives_once_each_verified_by_the_receiver() {
    let key = secret(7);
    let Some(receiver) = Receiver::start(&[&key]).await else {
        return;
    };
    let store = outbox();
    let entries = enqueue(&*store, "orders.created", 300).await;
    let emitter = WebhookEmitter::new(WebhookOptions::new(receiver.url("/hook")).secret(key))
        .expect("emitter");
    let summary = drain_all(store.clone(), Arc::new(emitter), Duration::from_secs(60)).await;
    assert_eq!(summary.delivered, 300, "{summary:?}");

    let received = receiver.received().await;
    assert_eq!(received.len(), 300, "one request per entry, none repeated");
    let by_id: HashMap<&str, _> = received
        .iter()
        .map(|r| (r.header("webhook-id"), r))
        .collect();
    for entry in &entries {
        let id = entry.id.to_string();
        let got = by_id.get(id.as_str()).expect("each entry arrived");
        assert!(got.verified, "the receiver verified {id}");
        assert_eq!(got.body, entry.payload);
        assert_eq!(got.header("idempotency-key"), id);
        assert_eq!(got.header("x-outbox-topic"), "orders.created");
        assert_eq!(got.header("x-outbox-attempt"), "1");
        assert_eq!(got.header("content-type"), "application/json");
        assert_eq!(got.header("x-seq"), entry.headers["x-seq"]);
        let signed_at: i64 = got.header("webhook-timestamp").parse().expect("seconds");
        assert!((chrono::Utc::now().timestamp() - signed_at).abs() < 120);
    }
    for entry in &entries {
        let row = store.get(entry.id).await.expect("get").expect("row");
        assert_eq!(row.status, EmissionStatus::Delivered);
    }
}

#[tokio::test]
async fn while_a_key_rotates_a_receiver_holding_either_key_verifies() {
    let (old, new) = (secret(1), secret(2));
    let Some(on_old) = Receiver::start(&[&old]).await else {
        return;
    };
    let Some(on_new) = Receiver::start(&[&new]).await else {
        return;
    };
    let entry = one_entry().await;
    for receiver in [&on_old, &on_new] {
        let options = WebhookOptions::new(receiver.url("/hook"))
            .secret(old.clone())
            .secret(new.clone());
        let emitter = WebhookEmitter::new(options).expect("emitter");
        assert_eq!(emit_once(&emitter, &entry).await, EmitOutcome::delivered());
        let got = receiver.received().await;
        assert!(got[0].verified);
        assert_eq!(got[0].header("webhook-signature").split(' ').count(), 2);
    }
}

#[tokio::test]
async fn a_wrong_key_or_none_is_refused_by_the_receiver_as_a_route_failure() {
    let Some(receiver) = Receiver::start(&[&secret(3)]).await else {
        return;
    };
    let entry = one_entry().await;
    let wrong = WebhookEmitter::new(WebhookOptions::new(receiver.url("/hook")).secret(secret(4)))
        .expect("emitter");
    let unsigned =
        WebhookEmitter::new(WebhookOptions::new(receiver.url("/hook"))).expect("emitter");
    for emitter in [&wrong, &unsigned] {
        // A key the receiver does not hold fails every entry alike: the route's fault,
        // so the entries wait for the key to be fixed instead of being dead-lettered.
        match emit_once(emitter, &entry).await {
            EmitOutcome::RouteFailed { fault, error, .. } => {
                assert_eq!(fault, outbox_core::drain::RouteFault::Refused);
                assert!(error.starts_with("HTTP 401: signature refused"), "{error}")
            }
            other => panic!("expected a route failure, got {other:?}"),
        }
    }
    let got = receiver.received().await;
    assert_eq!(got.len(), 2);
    assert!(got.iter().all(|r| !r.verified));
    assert_eq!(
        got[1].header("webhook-signature"),
        "",
        "unsigned sends no signature"
    );
}

#[tokio::test]
async fn entry_headers_named_like_the_signing_headers_are_not_sent() {
    let key = secret(5);
    let Some(receiver) = Receiver::start(&[&key]).await else {
        return;
    };
    let mut entry = one_entry().await;
    entry.headers.insert("Webhook-Id".into(), "forged".into());
    entry
        .headers
        .insert("webhook-signature".into(), "v1,Zm9yZ2Vk".into());
    let emitter = WebhookEmitter::new(WebhookOptions::new(receiver.url("/hook")).secret(key))
        .expect("emitter");
    assert_eq!(emit_once(&emitter, &entry).await, EmitOutcome::delivered());
    let got = receiver.received().await;
    assert!(got[0].verified);
    assert_eq!(got[0].header("webhook-id"), entry.id.to_string());
}

#[tokio::test]
async fn a_header_http_cannot_carry_dead_letters_with_its_name() {
    let mut entry = one_entry().await;
    entry.headers.insert("bad name".into(), "x".into());
    // Nothing listens here: the header is refused before any connection.
    let emitter =
        WebhookEmitter::new(WebhookOptions::new("http://127.0.0.1:9/hook")).expect("emitter");
    match emit_once(&emitter, &entry).await {
        EmitOutcome::Permanent { error } => assert!(error.contains("\"bad name\""), "{error}"),
        other => panic!("expected a permanent failure, got {other:?}"),
    }
}
