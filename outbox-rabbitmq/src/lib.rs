#![doc = include_str!("../README.md")]

mod emitter;
mod options;

pub use emitter::RabbitEmitter;
pub use options::{ExchangeSetup, RabbitOptions};

/// The client crate, re-exported so hosts use the same version.
pub use lapin;

/// Why the emitter could not be built.
#[derive(Debug, thiserror::Error)]
pub enum RabbitError {
    /// A bad URL or option.
    #[error("invalid RabbitMQ emitter configuration: {0}")]
    Config(String),
    /// The broker could not be reached.
    #[error("{0}")]
    Connect(String),
    /// The exchange to check is missing, or could not be declared.
    #[error("RabbitMQ: {0}")]
    Exchange(String),
}
