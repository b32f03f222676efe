use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What a provider reported for an accepted emission.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmissionResult {
    /// The provider's own id for the message, when it has one.
    pub provider_message_id: Option<String>,
    /// When the provider accepted it; `None` records the store's current time.
    pub delivered_at: Option<DateTime<Utc>>,
}

impl EmissionResult {
    /// A delivery with no provider id, timed by the store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the provider's message id.
    pub fn provider_message_id(mut self, id: impl Into<String>) -> Self {
        self.provider_message_id = Some(id.into());
        self
    }
}

/// Why an emission failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmissionError {
    /// A human-readable description; must not be empty.
    pub message: String,
}

impl EmissionError {
    /// An error described by `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for EmissionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
