#![doc = include_str!("../README.md")]

mod emitter;
mod options;
mod subject;

pub use emitter::{NatsEmitter, MSG_ID_HEADER};
pub use options::{NatsOptions, StreamSetup};
pub use subject::SubjectTemplate;

/// The client crate, re-exported so hosts use the same version.
pub use async_nats;

/// Why the emitter could not be built.
#[derive(Debug, thiserror::Error)]
pub enum NatsError {
    /// A bad URL, template or option.
    #[error("invalid NATS emitter configuration: {0}")]
    Config(String),
    /// The server could not be reached.
    #[error("{0}")]
    Connect(String),
    /// The stream to check is missing, or could not be created.
    #[error("JetStream: {0}")]
    Stream(String),
}
