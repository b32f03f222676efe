#![doc = include_str!("../README.md")]

mod emitter;
mod options;
mod partitioner;
mod producer;
mod topic;

pub use emitter::{KafkaEmitter, ENTRY_ID_HEADER};
pub use options::KafkaOptions;
pub use partitioner::{murmur2, partition_for};
pub use topic::TopicTemplate;

/// The client crate, re-exported so hosts (and tests) use the same version.
pub use rskafka;

/// Why the emitter could not be built.
#[derive(Debug, thiserror::Error)]
pub enum KafkaError {
    /// A bad URL, template or option.
    #[error("invalid Kafka emitter configuration: {0}")]
    Config(String),
}
