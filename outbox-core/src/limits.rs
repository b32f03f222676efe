//! Input validation shared by every store: the same refusal, word for word, everywhere.

use std::collections::HashSet;

use chrono::TimeDelta;

use crate::{
    ClaimRequest, Completion, CompletionRequest, FindRequest, NewEntry, OutboxError, PruneRequest,
    RenewRequest, Result,
};

/// The largest batch any store accepts by default.
pub const DEFAULT_MAX_BATCH_SIZE: u32 = 1000;
/// The largest payload any store accepts by default (1 MiB).
pub const DEFAULT_MAX_PAYLOAD_BYTES: usize = 1024 * 1024;
/// The longest topic, partition key or owner name, in bytes.
pub const MAX_NAME_BYTES: usize = 255;

/// The bounds a store enforces on what it is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreLimits {
    /// Largest claim, find, enqueue or completion batch (at least 1).
    pub max_batch_size: u32,
    /// Largest payload in bytes.
    pub max_payload_bytes: usize,
}

impl Default for StoreLimits {
    fn default() -> Self {
        Self {
            max_batch_size: DEFAULT_MAX_BATCH_SIZE,
            max_payload_bytes: DEFAULT_MAX_PAYLOAD_BYTES,
        }
    }
}

impl StoreLimits {
    /// Sets the largest payload, checking it is at least one byte.
    pub fn with_max_payload_bytes(mut self, bytes: usize) -> Result<Self> {
        if bytes == 0 {
            return Err(OutboxError::invalid(
                "max payload bytes",
                "must be at least 1",
            ));
        }
        self.max_payload_bytes = bytes;
        Ok(self)
    }

    /// Sets the largest batch, checking it is at least 1.
    pub fn with_max_batch_size(mut self, size: u32) -> Result<Self> {
        if size == 0 {
            return Err(OutboxError::invalid("max batch size", "must be at least 1"));
        }
        self.max_batch_size = size;
        Ok(self)
    }

    /// Checks a batch size against `1..=max_batch_size`.
    pub fn check_batch_size(&self, field: &'static str, size: usize) -> Result<()> {
        if size == 0 {
            return Err(OutboxError::invalid(field, "must be at least 1"));
        }
        if size > self.max_batch_size as usize {
            return Err(OutboxError::invalid(
                field,
                format!(
                    "{size} is above this store's maximum of {}",
                    self.max_batch_size
                ),
            ));
        }
        Ok(())
    }

    /// Checks a claim request.
    pub fn check_claim(&self, req: &ClaimRequest) -> Result<()> {
        check_name("owner", &req.owner)?;
        self.check_batch_size("batch size", req.batch_size as usize)?;
        check_lease(req.lease)?;
        if let Some(topic) = &req.topic {
            check_name("topic", topic)?;
        }
        check_key_run(req)
    }

    /// Checks one new entry.
    pub fn check_new_entry(&self, entry: &NewEntry) -> Result<()> {
        check_name("topic", &entry.topic)?;
        if let Some(key) = &entry.partition_key {
            check_name("partition key", key)?;
        }
        if entry.payload.len() > self.max_payload_bytes {
            return Err(OutboxError::invalid(
                "payload",
                format!(
                    "{} bytes is above the configured maximum of {} bytes",
                    entry.payload.len(),
                    self.max_payload_bytes
                ),
            ));
        }
        for name in entry.headers.keys() {
            check_name("header name", name)?;
        }
        Ok(())
    }

    /// Checks a batch of new entries: each entry, the batch size, and distinct ids.
    pub fn check_new_entries(&self, entries: &[NewEntry]) -> Result<()> {
        self.check_batch_size("enqueue batch size", entries.len())?;
        let mut seen = HashSet::with_capacity(entries.len());
        for entry in entries {
            self.check_new_entry(entry)?;
            if !seen.insert(entry.id) {
                return Err(OutboxError::invalid(
                    "entries",
                    format!("id {} appears twice in one batch", entry.id),
                ));
            }
        }
        Ok(())
    }

    /// Checks a find request.
    pub fn check_find(&self, req: &FindRequest) -> Result<()> {
        self.check_batch_size("limit", req.limit as usize)?;
        if let Some(topic) = &req.topic {
            check_name("topic", topic)?;
        }
        Ok(())
    }

    /// Checks a batch of completions: each one, the batch size, one completion per claim.
    pub fn check_completions(&self, reqs: &[CompletionRequest]) -> Result<()> {
        self.check_batch_size("completion batch size", reqs.len())?;
        let mut seen = HashSet::with_capacity(reqs.len());
        for req in reqs {
            check_completion(req)?;
            if !seen.insert(req.claim.id()) {
                return Err(OutboxError::invalid(
                    "completions",
                    format!("entry {} is completed twice in one batch", req.claim.id()),
                ));
            }
        }
        Ok(())
    }

    /// Checks a renewal of `claims`.
    pub fn check_renew(&self, claims: &[crate::Claim], req: &RenewRequest) -> Result<()> {
        self.check_batch_size("renew batch size", claims.len())?;
        check_lease(req.lease)?;
        let mut seen = HashSet::with_capacity(claims.len());
        for claim in claims {
            check_name("claim owner", &claim.owner)?;
            if !seen.insert(claim.id()) {
                return Err(OutboxError::invalid(
                    "claims",
                    format!("entry {} is renewed twice in one call", claim.id()),
                ));
            }
        }
        Ok(())
    }

    /// Checks a prune request.
    pub fn check_prune(&self, req: &PruneRequest) -> Result<()> {
        self.check_batch_size("prune batch size", req.batch_size as usize)
    }
}

/// A name the stores take: not blank, and at most [`MAX_NAME_BYTES`].
pub(crate) fn check_name(field: &'static str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(OutboxError::invalid(field, "must not be empty"));
    }
    if value.len() > MAX_NAME_BYTES {
        return Err(OutboxError::invalid(
            field,
            format!(
                "{} bytes is longer than the maximum of {MAX_NAME_BYTES}",
                value.len()
            ),
        ));
    }
    Ok(())
}

/// A lease the stores take: positive, and at most 365 days.
pub(crate) fn check_lease(lease: TimeDelta) -> Result<()> {
    if lease <= TimeDelta::zero() {
        return Err(OutboxError::invalid(
            "lease",
            format!("must be positive, got {lease}"),
        ));
    }
    if lease > TimeDelta::days(365) {
        return Err(OutboxError::invalid("lease", "must not exceed 365 days"));
    }
    Ok(())
}

fn check_completion(req: &CompletionRequest) -> Result<()> {
    check_name("claim owner", &req.claim.owner)?;
    match &req.completion {
        Completion::Failed { error, .. } | Completion::DeadLettered { error, .. } => {
            if error.message.trim().is_empty() {
                return Err(OutboxError::invalid(
                    "emission error",
                    "message must not be empty",
                ));
            }
        }
        Completion::Save(entry) => {
            if entry.id != req.claim.id() {
                return Err(OutboxError::invalid(
                    "saved entry",
                    format!(
                        "id {} is not the claimed entry {}",
                        entry.id,
                        req.claim.id()
                    ),
                ));
            }
        }
        Completion::Delivered(_) | Completion::Deferred { .. } | Completion::Release { .. } => {}
    }
    Ok(())
}

/// Refuses a run length of zero, one above the batch size, or one above 1 outside per-key
/// order (runs are of one key's consecutive entries).
fn check_key_run(req: &ClaimRequest) -> Result<()> {
    let problem = if req.key_run == 0 {
        "must be at least 1"
    } else if req.key_run > req.batch_size {
        "must not be above the batch size"
    } else if req.key_run > 1 && !req.ordered {
        "above 1 applies only to claims in per-key order"
    } else {
        return Ok(());
    };
    Err(OutboxError::invalid("key run", problem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_must_be_positive() {
        let limits = StoreLimits::default();
        for lease in [TimeDelta::zero(), TimeDelta::seconds(-1)] {
            let err = limits
                .check_claim(&ClaimRequest::new("w", 1, lease))
                .unwrap_err();
            assert!(err.to_string().contains("lease"), "{err}");
        }
        limits
            .check_claim(&ClaimRequest::new("w", 1, TimeDelta::milliseconds(1)))
            .unwrap();
    }

    #[test]
    fn key_runs_are_bounded_and_only_in_key_order() {
        let limits = StoreLimits::default();
        let req = || ClaimRequest::new("w", 10, TimeDelta::seconds(1));
        for (bad, why) in [
            (req().in_key_runs(0), "at least 1"),
            (req().in_key_runs(11), "batch size"),
            (
                ClaimRequest {
                    key_run: 2,
                    ..req()
                },
                "per-key order",
            ),
        ] {
            let err = limits.check_claim(&bad).unwrap_err();
            assert!(err.to_string().contains(why), "{err}");
        }
        limits.check_claim(&req().in_key_runs(10)).unwrap();
        limits.check_claim(&req().in_key_runs(1)).unwrap();
    }

    #[test]
    fn limits_themselves_are_validated() {
        assert!(StoreLimits::default().with_max_batch_size(0).is_err());
        assert!(StoreLimits::default().with_max_payload_bytes(0).is_err());
    }
}
