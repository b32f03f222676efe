//! Running a call again after the server rolled it back as a deadlock victim (error
//! 1205) or on a lock timeout (error 1222), by the store's [`ConflictRetry`]: a failed
//! try is judged on the driver's error, before it is mapped.

use std::future::Future;
use std::sync::atomic::AtomicU64;

use outbox_core::{ConflictRetry, OutboxError, Result};

/// Runs `call` by `policy`: a try the server rolled back is run again, any other error
/// returned at once; each retry is counted in `retried`.
pub(crate) async fn run<T, F, Fut>(
    policy: &ConflictRetry,
    retried: &AtomicU64,
    mut call: F,
) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = std::result::Result<T, CallError>>,
{
    policy
        .run(retried, || {
            let tried = call();
            async move { tried.await.map_err(CallError::into_outbox) }
        })
        .await
}

/// A failed try, as [`run`] judges it.
#[derive(Debug)]
pub(crate) enum CallError {
    /// Rolled back by the server; may be run again.
    Transient(tiberius::error::Error),
    /// Any other driver error.
    Final(tiberius::error::Error),
    /// Already in the core's terms (no connection, bad row, …).
    Mapped(OutboxError),
}

impl CallError {
    /// A failed insert of the entries `ids`: a rolled-back try runs again; any other
    /// error is final, a key violation naming the duplicate entry.
    pub(crate) fn of_insert(e: tiberius::error::Error, ids: &[outbox_core::EntryId]) -> Self {
        if crate::error::is_transient(&e) {
            Self::Transient(e)
        } else {
            Self::Mapped(crate::error::map_insert_err(e, ids))
        }
    }

    /// The error in the core's terms: a rolled-back try is a conflict, which the policy
    /// retries.
    fn into_outbox(self) -> OutboxError {
        match self {
            Self::Transient(e) => OutboxError::Conflict {
                message: e.to_string(),
                source: Some(Box::new(e)),
            },
            Self::Final(e) => crate::error::map_err(e),
            Self::Mapped(e) => e,
        }
    }
}

impl From<tiberius::error::Error> for CallError {
    fn from(e: tiberius::error::Error) -> Self {
        if crate::error::is_transient(&e) {
            Self::Transient(e)
        } else {
            Self::Final(e)
        }
    }
}

impl From<OutboxError> for CallError {
    fn from(e: OutboxError) -> Self {
        Self::Mapped(e)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn only_rolled_back_calls_are_tried_again_and_only_so_often() {
        let p =
            ConflictRetry::new(3, Duration::from_micros(10), Duration::from_micros(50)).unwrap();
        let io = || tiberius::error::Error::Io {
            kind: std::io::ErrorKind::BrokenPipe,
            message: "gone".into(),
        };
        let mut tries = 0;
        let result: Result<()> = run(&p, &AtomicU64::new(0), || {
            tries += 1;
            let e = io();
            async move { Err(CallError::from(e)) }
        })
        .await;
        assert!(matches!(result, Err(OutboxError::Connection { .. })));
        assert_eq!(tries, 1, "an I/O error is not retried");

        // A rolled-back call (what `CallError::from` makes of errors 1205 and 1222) is
        // tried again until the attempts run out, then reported as a conflict.
        let mut tries = 0;
        let result: Result<()> = run(&p, &AtomicU64::new(0), || {
            tries += 1;
            let e = io();
            async move { Err(CallError::Transient(e)) }
        })
        .await;
        assert!(matches!(result, Err(OutboxError::Conflict { .. })));
        assert_eq!(tries, 3);

        let mut tries = 0;
        let retried = AtomicU64::new(0);
        let result = run(&p, &retried, || {
            tries += 1;
            let outcome = if tries < 3 {
                Err(CallError::Transient(io()))
            } else {
                Ok(tries)
            };
            async move { outcome }
        })
        .await;
        assert_eq!(result.unwrap(), 3, "the third try succeeded");
        assert_eq!(retried.load(Ordering::Relaxed), 2);
    }
}
