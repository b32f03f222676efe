//! Which groups of claimable rows a claim takes: the three claim calls of
//! [`crate::ClaimStore`] in one value that a store's single claim statement binds.

/// Retry-ready rows, pending rows, or both (retry-ready rows first, then pending ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimGroups {
    /// Rows waiting to be retried whose time has come.
    pub retry: bool,
    /// Pending rows.
    pub pending: bool,
}

impl ClaimGroups {
    /// [`crate::ClaimStore::claim_pending`]: pending rows only.
    pub const PENDING: Self = Self {
        retry: false,
        pending: true,
    };
    /// [`crate::ClaimStore::claim_retry_ready`]: retry-ready rows only.
    pub const RETRY_READY: Self = Self {
        retry: true,
        pending: false,
    };
    /// [`crate::ClaimStore::claim_next`]: both, retry-ready rows first.
    pub const NEXT: Self = Self {
        retry: true,
        pending: true,
    };
}
