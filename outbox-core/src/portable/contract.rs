//! [`PortableStore`] under the store contracts.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::{
    Capabilities, Claim, ClaimRequest, ClaimStore, CompletionRequest, EntryId, FindRequest,
    NewEntry, OutboxEntry, OutboxStore, PruneRequest, RenewOutcome, RenewRequest, Result,
    StoreLimits, TransitionResult,
};

use super::backend::PortableBackend;
use super::PortableStore;
use crate::store_kit::per_row::ClaimKind;

#[async_trait]
impl<B: PortableBackend> OutboxStore for PortableStore<B> {
    fn capabilities(&self) -> Capabilities {
        Self::capabilities_of()
    }

    fn limits(&self) -> &StoreLimits {
        &self.limits
    }

    async fn enqueue_batch(&self, entries: Vec<NewEntry>) -> Result<Vec<OutboxEntry>> {
        self.enqueue_all(entries).await
    }

    async fn get(&self, id: EntryId) -> Result<Option<OutboxEntry>> {
        self.get_entry(id).await
    }

    async fn find_pending(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.find(self.sql.find_pending.pick(false, req.slice.is_some()), req)
            .await
    }

    async fn find_retry_ready(&self, req: &FindRequest) -> Result<Vec<OutboxEntry>> {
        self.find(
            self.sql.find_retry_ready.pick(false, req.slice.is_some()),
            req,
        )
        .await
    }

    async fn save(
        &self,
        entry: &OutboxEntry,
        now: Option<DateTime<Utc>>,
    ) -> Result<TransitionResult> {
        self.save_entry(entry, now).await
    }

    async fn prune_delivered(&self, req: &PruneRequest) -> Result<u64> {
        self.prune(req).await
    }
}

#[async_trait]
impl<B: PortableBackend> ClaimStore for PortableStore<B> {
    async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, ClaimKind::Pending).await
    }

    async fn claim_retry_ready(&self, req: &ClaimRequest) -> Result<Vec<Claim>> {
        self.claim(req, ClaimKind::RetryReady).await
    }

    async fn complete_batch(&self, reqs: Vec<CompletionRequest>) -> Result<Vec<TransitionResult>> {
        self.complete_all(&reqs).await
    }

    async fn renew(&self, claims: &[Claim], req: &RenewRequest) -> Result<Vec<RenewOutcome>> {
        self.renew_all(claims, req).await
    }
}
