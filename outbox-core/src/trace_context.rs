//! OpenTelemetry trace context carried through the outbox (feature `otel`).
//!
//! The request that writes an entry and the message the entry becomes are one trace: the
//! writer captures the current span's context into the entry's headers as W3C Trace
//! Context (`traceparent`, and `tracestate` when there is one) with
//! [`NewEntry::with_trace_context`]; the headers are stored with the entry and every
//! emitter hands them to the broker with the payload, so a consumer that reads them
//! continues the trace; and the drain opens each emission's `outbox.emit` span as a child
//! of the context the entry carries, so the emission shows under the request that wrote
//! it.
//!
//! It works through the `tracing` crate's spans: the host installs
//! `tracing-opentelemetry`'s layer (0.34, on `opentelemetry` 0.33) in its subscriber, as
//! it does to export any of its spans. Without that layer, or outside any span, nothing is
//! captured and emission spans have no remote parent.

use std::collections::BTreeMap;

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::{NewEntry, OutboxEntry};

/// The header that carries the W3C trace parent (trace id, parent span id, flags).
pub const TRACEPARENT: &str = "traceparent";
/// The header that carries the W3C trace state (vendor data), when there is any.
pub const TRACESTATE: &str = "tracestate";

impl NewEntry {
    /// Captures the OpenTelemetry context of the current `tracing` span into the entry's
    /// headers (`traceparent`, `tracestate`), replacing any it had. Outside a span the
    /// OpenTelemetry layer knows, the entry is returned as it was.
    #[must_use]
    pub fn with_trace_context(mut self) -> Self {
        let cx = tracing::Span::current().context();
        if cx.span().span_context().is_valid() {
            self.headers.remove(TRACESTATE);
            TraceContextPropagator::new().inject_context(&cx, &mut HeaderMap(&mut self.headers));
        }
        self
    }
}

/// Makes `span` (not entered yet) a child of the context `entry`'s headers carry, if they
/// carry a valid one.
pub(crate) fn adopt(span: &tracing::Span, entry: &OutboxEntry) {
    let cx = TraceContextPropagator::new().extract(&HeaderView(&entry.headers));
    if cx.span().span_context().is_valid() {
        // Fails only when the layer is absent or the span already started: then the
        // emission is traced without its remote parent, and nothing else changes.
        let _ = span.set_parent(cx);
    }
}

/// Entry headers, written by a propagator.
struct HeaderMap<'a>(&'a mut BTreeMap<String, String>);

impl Injector for HeaderMap<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), value);
    }
}

/// Entry headers, read by a propagator.
struct HeaderView<'a>(&'a BTreeMap<String, String>);

impl Extractor for HeaderView<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}
