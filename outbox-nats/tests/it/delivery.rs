//! What reaches the stream, and what the outbox records of it.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use outbox_core::drain::{Emission, EmitOutcome, Emitter};
use outbox_core::EmissionStatus;
use outbox_nats::{NatsEmitter, NatsOptions, StreamSetup, SubjectTemplate};

use crate::support::{drain_all, enqueue, outbox, rows, server, TestStream};
use outbox_testkit::emitters::{
    assert_delivered_once_in_key_order, drain_across_a_missing_destination, enqueue_keyed,
};

#[tokio::test]
async fn a_drained_backlog_arrives_once_as_committed() {
    let Some(client) = server().await else { return };
    let stream = TestStream::create(&client).await;
    let (store, _dir) = outbox().await;
    let entries = enqueue(&*store, "orders.created", 300).await;
    let url = stream.emitter_url();
    let emitter = Arc::new(NatsEmitter::connect(&url).await.expect("emitter"));

    let summary = drain_all(store.clone(), emitter, Duration::from_secs(60)).await;
    assert_eq!(summary.delivered, 300, "{summary:?}");

    let received = stream.read_all().await;
    assert_eq!(received.len(), 300, "messages in the stream");
    let ids: HashSet<_> = received.iter().map(|r| r.msg_id.clone()).collect();
    assert_eq!(ids.len(), 300, "each entry once");
    let by_id: std::collections::HashMap<_, _> =
        received.iter().map(|r| (r.msg_id.clone(), r)).collect();
    for row in rows(&*store, &entries).await {
        assert_eq!(row.status, EmissionStatus::Delivered);
        let got = by_id[&row.id.to_string()];
        assert_eq!(got.payload, row.payload);
        assert_eq!(got.headers, row.headers);
        assert_eq!(got.subject, format!("{}.orders.created", stream.prefix));
        // The provider id names the stored message: stream and sequence.
        assert_eq!(
            row.provider_message_id.as_deref(),
            Some(format!("{}:{}", stream.name, got.sequence).as_str())
        );
    }
    stream.delete().await;
}

#[tokio::test]
async fn an_entry_emitted_again_is_stored_once() {
    let Some(client) = server().await else { return };
    let stream = TestStream::create(&client).await;
    let (store, _dir) = outbox().await;
    let entry = enqueue(&*store, "orders.created", 1).await.remove(0);
    let mut options = NatsOptions::new();
    options.subject = SubjectTemplate::new(format!("{}.{{topic}}", stream.prefix)).unwrap();
    let emitter = NatsEmitter::new(client.clone(), options)
        .await
        .expect("emitter");
    // The first worker published, then died before recording; a second worker, after the
    // lease ran out, emits the same entry again.
    let emission = |attempt| Emission {
        entry: &entry,
        delivery_attempt: attempt,
        owner: "w",
    };
    let first = emitter.emit(emission(1)).await;
    let second = emitter.emit(emission(1)).await;
    assert!(matches!(first, EmitOutcome::Delivered { .. }), "{first:?}");
    assert_eq!(
        first, second,
        "a duplicate is acknowledged as the stored message"
    );
    assert_eq!(stream.count().await, 1);
    stream.delete().await;
}

#[tokio::test]
async fn a_drain_started_before_its_stream_holds_the_entries_then_delivers_them_in_key_order() {
    let Some(client) = server().await else { return };
    let (store, _dir) = outbox().await;
    let named = TestStream::named(&client);
    let entries = enqueue_keyed(&*store, "orders.created", 300, 5).await;
    let mut options = NatsOptions::new();
    options.subject = SubjectTemplate::new(format!("{}.{{topic}}", named.prefix)).unwrap();
    let emitter = NatsEmitter::new(client.clone(), options)
        .await
        .expect("an emitter without its stream");
    let (tx, rx) = tokio::sync::oneshot::channel();
    let create = async {
        let _ = tx.send(named.create_now().await);
    };
    let summary =
        drain_across_a_missing_destination(store.clone(), Arc::new(emitter), create).await;
    let stream = rx.await.expect("the stream");
    assert_eq!(summary.delivered, 300, "{summary:?}");
    let received = stream.read_all().await;
    let received: Vec<_> = received
        .iter()
        .map(|r| (r.msg_id.clone(), &r.headers))
        .collect();
    assert_delivered_once_in_key_order(&*store, &entries, &received).await;
    stream.delete().await;
}

#[tokio::test]
async fn an_entry_that_cannot_be_published_is_dead_lettered_with_the_reason() {
    let Some(client) = server().await else { return };
    let (store, _dir) = outbox().await;
    // A topic with a space gives no valid subject: the entry's fault, not the route's.
    let bad = enqueue(&*store, "two words", 1).await;
    let emitter = NatsEmitter::new(client, NatsOptions::new())
        .await
        .expect("emitter");
    let summary = drain_all(store.clone(), Arc::new(emitter), Duration::from_secs(30)).await;
    assert_eq!(
        (summary.dead_lettered, summary.route_failures),
        (1, 0),
        "{summary:?}"
    );
    let row = store.get(bad[0].id).await.unwrap().unwrap();
    assert_eq!(row.status, EmissionStatus::DeadLettered);
    assert!(
        row.last_error
            .unwrap_or_default()
            .contains("no valid subject"),
        "the reason names the topic"
    );
}

#[tokio::test]
async fn the_stream_is_created_or_checked_at_start_up() {
    let Some(client) = server().await else { return };
    let tag = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let name = format!("OUTBOX_C_{tag}");
    let js = async_nats::jetstream::new(client.clone());

    let mut options = NatsOptions::new();
    options.subject = SubjectTemplate::new(format!("c{tag}.{{topic}}")).unwrap();
    options.stream = StreamSetup::Check(name.clone());
    let err = NatsEmitter::new(client.clone(), options.clone())
        .await
        .unwrap_err();
    assert!(err.to_string().contains(&name), "{err}");

    options.stream = StreamSetup::Create(name.clone());
    let emitter = NatsEmitter::new(client.clone(), options.clone())
        .await
        .expect("created");
    let mut stream = js.get_stream(&name).await.expect("the stream exists now");
    let subjects = stream.info().await.unwrap().config.subjects.clone();
    assert_eq!(subjects, vec![format!("c{tag}.>")]);

    let (store, _dir) = outbox().await;
    enqueue(&*store, "x", 2).await;
    let summary = drain_all(store, Arc::new(emitter), Duration::from_secs(30)).await;
    assert_eq!(summary.delivered, 2);
    options.stream = StreamSetup::Check(name.clone());
    NatsEmitter::new(client, options)
        .await
        .expect("the check passes");
    js.delete_stream(&name).await.unwrap();
}
