//! The webhook emitter against a real local receiver that verifies every signature with
//! an implementation of Standard Webhooks apart from ours (the `standardwebhooks` package
//! from PyPI): a drained backlog arrives once and verified, rotated keys verify, a wrong
//! key is refused, statuses map to outcomes, and a dropped emission closes its request.

mod cancel;
mod delivery;
mod statuses;
mod support;
