//! What the receiver's answers mean for the entry, over real HTTP.

use std::time::Duration;

use outbox_core::drain::{EmitOutcome, RouteFault};
use outbox_webhook::{WebhookEmitter, WebhookOptions};

use crate::support::{emit_once, one_entry, secret, Receiver};

async fn outcome_of(receiver: &Receiver, path: &str) -> EmitOutcome {
    let emitter = WebhookEmitter::new(WebhookOptions::new(receiver.url(path)).secret(secret(9)))
        .expect("emitter");
    emit_once(&emitter, &one_entry().await).await
}

#[tokio::test]
async fn answers_map_to_deferred_retryable_and_permanent() {
    let Some(receiver) = Receiver::start(&[&secret(9)]).await else {
        return;
    };
    let before = chrono::Utc::now();
    match outcome_of(&receiver, "/status/429?retry-after=120").await {
        EmitOutcome::Deferred { until, .. } => {
            let wait = until - before;
            assert!(
                wait.num_seconds() >= 119 && wait.num_seconds() <= 125,
                "{wait}"
            );
        }
        other => panic!("429 with Retry-After: {other:?}"),
    }
    assert!(matches!(
        outcome_of(&receiver, "/status/503?retry-after=5").await,
        EmitOutcome::Deferred { .. }
    ));
    for path in ["/status/500", "/status/429"] {
        match outcome_of(&receiver, path).await {
            EmitOutcome::Retryable { error, .. } => {
                assert!(error.contains("status as asked"), "{path}: {error}")
            }
            other => panic!("{path}: {other:?}"),
        }
    }
    for (path, fault) in [
        ("/status/503", RouteFault::Unavailable),
        ("/status/502", RouteFault::Unavailable),
        ("/status/404", RouteFault::Missing),
        ("/status/401", RouteFault::Refused),
    ] {
        match outcome_of(&receiver, path).await {
            EmitOutcome::RouteFailed {
                fault: seen,
                destination,
                error,
            } => {
                assert_eq!(seen, fault, "{path}");
                assert!(error.contains("status as asked"), "{path}: {error}");
                assert!(
                    destination.starts_with("webhook http://127.0.0.1:")
                        && !destination.contains("status"),
                    "{destination}"
                );
            }
            other => panic!("{path}: {other:?}"),
        }
    }
    for (path, says) in [
        ("/status/302", "redirects are not followed"),
        ("/status/400", "HTTP 400"),
        ("/status/422", "HTTP 422"),
    ] {
        match outcome_of(&receiver, path).await {
            EmitOutcome::Permanent { error } => assert!(error.contains(says), "{path}: {error}"),
            other => panic!("{path}: {other:?}"),
        }
    }
    assert_eq!(
        outcome_of(&receiver, "/hook").await,
        EmitOutcome::delivered()
    );
}

#[tokio::test]
async fn nobody_listening_is_the_route() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = free.local_addr().expect("addr").port();
    drop(free);
    let emitter = WebhookEmitter::new(
        WebhookOptions::new(format!("http://127.0.0.1:{port}/hook/t0ken?sig=s3cret"))
            .connect_timeout(Duration::from_secs(2)),
    )
    .expect("emitter");
    match emit_once(&emitter, &one_entry().await).await {
        EmitOutcome::RouteFailed {
            fault,
            destination,
            error,
        } => {
            assert_eq!(fault, RouteFault::Unreachable);
            assert!(error.contains("cannot connect"), "{error}");
            for said in [&error, &destination] {
                assert!(
                    !said.contains("t0ken") && !said.contains("s3cret"),
                    "{said}"
                );
            }
        }
        other => panic!("expected a route failure, got {other:?}"),
    }
}
