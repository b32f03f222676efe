#![doc = include_str!("../README.md")]

mod emitter;
mod options;
mod secret;
mod status;

pub use emitter::{WebhookEmitter, ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER};
pub use options::WebhookOptions;
pub use secret::{WebhookSecret, MAX_SECRET_BYTES, MIN_SECRET_BYTES, SECRET_PREFIX};
pub use status::classify;

/// Why the emitter could not be built.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// A bad URL or option.
    #[error("invalid webhook emitter configuration: {0}")]
    Config(String),
    /// A secret that is not `whsec_` and a 24- to 64-byte key in base64.
    #[error("invalid webhook secret: {0}")]
    Secret(String),
}
