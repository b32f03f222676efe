//! The NATS emitter against the local NATS server with JetStream: a drained backlog
//! arrives once, duplicates collapse, a missing stream dead-letters, and a server that
//! goes away (at start, mid-drain) costs retries, never entries; a traced entry's
//! emission and message continue the trace that wrote it.

mod delivery;
mod outages;
mod support;
mod trace;
