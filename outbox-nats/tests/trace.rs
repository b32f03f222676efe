//! Trace context through the outbox (`outbox-core`'s `otel` feature): the span that
//! enqueued an entry, the drain's emission span and the headers that reached the stream
//! are one trace, the emission a child of the enqueuing span.
//!
//! A test binary of its own, with the span exporter as the process's global subscriber:
//! `tracing` caches per call site whether anyone listens, and a test on another thread
//! hitting the drain's call sites while no subscriber was set there could leave them
//! silent for this one (it happened in CI, with the other NATS tests in one binary).

#[allow(dead_code, unused_imports)] // The shared helpers of the NATS tests; this one uses a few.
#[path = "it/support.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::{TraceContextExt, TraceId, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use outbox_core::trace_context::TRACEPARENT;
use outbox_core::NewEntry;
use outbox_nats::NatsEmitter;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

use support::{drain_all, outbox, server, TestStream};

/// The finished span named `name`; fails the test when there is not exactly one.
fn only<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let named: Vec<&SpanData> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(named.len(), 1, "spans named {name}: {spans:#?}");
    named[0]
}

#[tokio::test]
async fn the_enqueuing_span_the_emission_and_the_message_share_one_trace() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("outbox-test")));
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    let Some(client) = server().await else { return };

    let stream = TestStream::create(&client).await;
    let (store, _dir) = outbox().await;
    let plain = NewEntry::new("orders.created", b"{\"traced\":false}".to_vec());
    // Outside any span nothing is captured.
    assert!(!plain
        .clone()
        .with_trace_context()
        .headers
        .contains_key(TRACEPARENT));
    let request = tracing::info_span!("place_order");
    let (traced, trace_id) = request.in_scope(|| {
        let trace_id = tracing::Span::current()
            .context()
            .span()
            .span_context()
            .trace_id();
        let entry = NewEntry::new("orders.created", b"{\"traced\":true}".to_vec())
            .header("content-type", "application/json")
            .with_trace_context();
        (entry, trace_id)
    });
    drop(request);
    assert_ne!(trace_id, TraceId::INVALID);
    store
        .enqueue_batch(vec![traced.clone(), plain.clone()])
        .await
        .expect("enqueue");

    let url = stream.emitter_url();
    let emitter = Arc::new(NatsEmitter::connect(&url).await.expect("emitter"));
    let summary = drain_all(store.clone(), emitter, Duration::from_secs(60)).await;
    assert_eq!(summary.delivered, 2, "{summary:?}");

    let received = stream.read_all().await;
    let message = |id: outbox_core::EntryId| {
        received
            .iter()
            .find(|r| r.msg_id == id.to_string())
            .expect("the entry's message")
    };
    let carried = message(traced.id)
        .headers
        .get(TRACEPARENT)
        .expect("traceparent");
    assert!(
        carried.contains(&trace_id.to_string()),
        "{carried} does not carry trace {trace_id}"
    );
    assert_eq!(
        message(traced.id)
            .headers
            .get("content-type")
            .map(String::as_str),
        Some("application/json")
    );
    assert!(!message(plain.id).headers.contains_key(TRACEPARENT));

    provider.force_flush().expect("flush the spans");
    let spans = exporter.get_finished_spans().expect("the finished spans");
    let enqueuing = only(&spans, "place_order");
    assert_eq!(enqueuing.span_context.trace_id(), trace_id);
    let emissions: Vec<&SpanData> = spans.iter().filter(|s| s.name == "outbox.emit").collect();
    assert_eq!(emissions.len(), 2, "{spans:#?}");
    let emission = emissions
        .iter()
        .find(|s| s.span_context.trace_id() == trace_id)
        .expect("an emission span in the enqueuing span's trace");
    assert_eq!(emission.parent_span_id, enqueuing.span_context.span_id());
    assert!(emission.parent_span_is_remote, "{emission:#?}");
    let untraced = emissions
        .iter()
        .find(|s| s.span_context.trace_id() != trace_id)
        .expect("the other emission");
    assert_eq!(
        untraced.parent_span_id,
        opentelemetry::trace::SpanId::INVALID
    );
    stream.delete().await;
}
