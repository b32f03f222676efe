//! The NATS emitter against the local NATS server with JetStream: a drained backlog
//! arrives once, duplicates collapse, a missing stream dead-letters, and a server that
//! goes away (at start, mid-drain) costs retries, never entries. (The trace test is a
//! binary of its own: tests/trace.rs.)

mod delivery;
mod outages;
mod support;
