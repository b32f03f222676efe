//! Taking a batch: claims (retry-ready entries first, then pending ones), or, without
//! claim leases, finds.

use std::sync::Arc;
use std::time::Instant;

use super::work::Work;
use super::Drain;
use crate::{Claim, ClaimRequest, FindRequest, Result};

impl Drain {
    /// Claims retry-ready entries first (they have waited longest), then pending ones.
    pub(super) async fn acquire(&self) -> Result<Vec<Work>> {
        let o = &self.options;
        if o.use_claim_leases {
            let claims = self.claim_batch().await?;
            Ok(claims.into_iter().map(Work::Claimed).collect())
        } else {
            let started = Instant::now();
            let mut req = FindRequest::new(o.batch_size);
            req.topic = o.topic.clone();
            req.slice = o.slice;
            let mut found = self.store.find_retry_ready(&req).await?;
            let room = o.batch_size - u32::try_from(found.len()).unwrap_or(o.batch_size);
            if room > 0 {
                req.limit = room;
                found.extend(self.store.find_pending(&req).await?);
            }
            metrics::histogram!(crate::metric_names::CLAIM_LATENCY)
                .record(started.elapsed().as_secs_f64());
            Ok(found
                .into_iter()
                .map(|e| Work::Found(Arc::new(e)))
                .collect())
        }
    }

    /// One claim of a batch: retry-ready entries first, then pending ones.
    pub(super) async fn claim_batch(&self) -> Result<Vec<Claim>> {
        let o = &self.options;
        let started = Instant::now();
        let mut req = ClaimRequest::new(o.owner.clone(), o.batch_size, o.lease);
        req.topic = o.topic.clone();
        req.ordered = o.ordered;
        if o.ordered {
            req.key_run = o.key_run.min(o.batch_size);
        }
        req.slice = o.slice;
        req.now = self.request_time();
        let claims = self.store.claim_next(&req).await?;
        metrics::histogram!(crate::metric_names::CLAIM_LATENCY)
            .record(started.elapsed().as_secs_f64());
        Ok(claims)
    }
}
