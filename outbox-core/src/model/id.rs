use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The identity of an outbox entry, and the idempotency key handed to providers.
///
/// New ids are UUID version 7: time-ordered, so freshly written rows land at the end of
/// the primary-key index instead of scattering across it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EntryId(Uuid);

impl EntryId {
    /// A fresh, time-ordered id.
    pub fn new() -> Self {
        Self(Uuid::now_v7())
    }

    /// Wraps an existing UUID (for ids chosen by the host, e.g. a business key).
    pub const fn from_uuid(id: Uuid) -> Self {
        Self(id)
    }

    /// The underlying UUID.
    pub const fn as_uuid(&self) -> Uuid {
        self.0
    }
}

impl Default for EntryId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EntryId({})", self.0)
    }
}

impl From<Uuid> for EntryId {
    fn from(id: Uuid) -> Self {
        Self(id)
    }
}

impl FromStr for EntryId {
    type Err = crate::OutboxError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Uuid::parse_str(s.trim()).map(Self).map_err(|e| {
            crate::OutboxError::invalid("entry id", format!("{s:?} is not a UUID: {e}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_are_time_ordered_and_distinct() {
        let a = EntryId::new();
        let b = EntryId::new();
        assert_ne!(a, b);
        assert_eq!(a.as_uuid().get_version_num(), 7);
    }

    #[test]
    fn parse_rejects_garbage_with_a_clear_error() {
        let err = "not-a-uuid".parse::<EntryId>().unwrap_err();
        assert!(err.to_string().contains("not a UUID"), "{err}");
        let id = EntryId::new();
        assert_eq!(id.to_string().parse::<EntryId>().unwrap(), id);
    }
}
