//! The Kafka emitter against a real Kafka-protocol broker (tansu): a drained backlog
//! arrives once with its keys, headers and payloads, keyed entries keep their order in
//! their partition, what cannot be produced is dead-lettered with the reason, and a
//! broker that goes away (at start, mid-drain) costs retries, never entries.

mod delivery;
mod order;
mod outages;
mod support;
