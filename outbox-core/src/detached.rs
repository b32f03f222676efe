//! Running a store's call on a task of its own, so that a caller's cancellation cannot
//! cut a transaction short.

use std::future::Future;

use crate::{OutboxError, Result};

/// Runs `work` on `store`'s clone on a task of its own and waits for it. A caller that
/// drops the returned future (a timeout, a shutdown) cancels only its wait: the
/// transaction inside still commits or rolls back on its own, so no connection goes back
/// to its pool in the middle of a statement and no lock outlives the call.
pub async fn detached<S, T, Fut>(store: &S, work: impl FnOnce(S) -> Fut) -> Result<T>
where
    S: Clone,
    T: Send + 'static,
    Fut: Future<Output = Result<T>> + Send + 'static,
{
    tokio::spawn(work(store.clone()))
        .await
        .map_err(|e| OutboxError::Database {
            message: format!("the store's task failed: {e}"),
            source: Some(Box::new(e)),
        })?
}
