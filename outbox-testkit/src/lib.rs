//! The conformance suite every outbox store passes, and the race harness.
//!
//! A backend crate provides an async factory returning a fresh [`Subject`] and stamps out
//! one named test per case that applies to its store with [`store_suite!`], the one
//! invocation its test binary needs (factories for the operator, drain and upgrade cases
//! are optional):
//!
//! ```no_run
//! async fn subject() -> outbox_testkit::Subject {
//!     outbox_testkit::Subject::new(std::sync::Arc::new(outbox_core::MemoryClaimStore::new()))
//! }
//! outbox_testkit::store_suite! { store: subject }
//! # fn main() {}
//! ```

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub mod admin_cases;
pub mod child;
pub mod corrupt_rows;
pub mod drain_cases;
pub mod emitters;
pub mod engines;
pub mod faults;
pub mod fixtures;
#[cfg(feature = "kafka")]
pub mod kafka;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod pg_standby;
#[cfg(feature = "postgres")]
pub mod pgbouncer;
#[cfg(feature = "portable")]
pub mod portable_cases;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "postgres-tls")]
pub mod postgres_tls;
#[cfg(feature = "proxy")]
pub mod proxy;
pub mod race;
pub mod race_ordered;
pub mod scripted;
pub mod statement_log;
pub mod stored_hashes;
pub mod suite;
#[cfg(feature = "proxy")]
pub mod tcp_proxy;
pub mod upgrades;

pub use fixtures::DynStore;

/// A future the suite hands to a store to run at a chosen moment.
pub type HookFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Lets the suite run another writer between a completion's check and its write, for
/// stores whose check and write are separate steps (`atomic_completion == false`).
pub trait InterleaveHook: Send + Sync {
    /// Runs `writer` once, inside the next completion, after its check and before its write.
    fn before_next_write(&self, writer: HookFuture);
}

/// A fresh store for one case, and what the suite may need besides it.
pub struct Subject {
    /// The store, isolated from every other case.
    pub store: DynStore,
    /// The interleave hook, for stores that are not atomic.
    pub interleave: Option<Arc<dyn InterleaveHook>>,
    /// Dropped when the case ends (e.g. removes the case's schema or file).
    pub guard: Option<Box<dyn Any + Send>>,
}

impl Subject {
    /// A subject with no hook and nothing to clean up.
    pub fn new(store: DynStore) -> Self {
        Self {
            store,
            interleave: None,
            guard: None,
        }
    }

    /// Adds an interleave hook.
    pub fn with_interleave(mut self, hook: Arc<dyn InterleaveHook>) -> Self {
        self.interleave = Some(hook);
        self
    }

    /// Keeps `guard` alive for the case.
    pub fn with_guard(mut self, guard: impl Any + Send) -> Self {
        self.guard = Some(Box::new(guard));
        self
    }
}

/// What a conformance factory may return: a [`Subject`], or `Option<Subject>` for a
/// backend that may be unreachable (its factory reports that loudly, see
/// [`engines::unavailable`], and returns `None`; the case then ends without running).
pub trait IntoSubject {
    /// The subject, if there is one.
    fn into_subject(self) -> Option<Subject>;
}

impl IntoSubject for Subject {
    fn into_subject(self) -> Option<Subject> {
        Some(self)
    }
}

impl IntoSubject for Option<Subject> {
    fn into_subject(self) -> Option<Subject> {
        self
    }
}

/// Every case that applies to a store, from one invocation: the test binary of an engine
/// names its factories and nothing else.
///
/// ```ignore
/// outbox_testkit::store_suite! {
///     store: subject,                        // conformance, per-key order, key runs, slices
///     admin: admin_subject,                  // optional: the operator cases
///     ordered_admin: ordered_admin_subject,  // optional: operator cases on an ordered table
///     drain: drain_subject,                  // optional: the drain, ordered drains too
///     upgrades: harness(),                   // optional: the upgrade cases
/// }
/// ```
///
/// The cases of a capability (`Capabilities::ordered_claims`, `slice_claims`) run on a
/// store that offers it; on one that does not, each of them checks instead that a request
/// needing it is refused with [`outbox_core::OutboxError::Unsupported`] and changes
/// nothing, and says so on standard error. Factories: `store` as for the conformance
/// cases ([`Subject`] or `Option<Subject>`, see [`IntoSubject`]), `admin` and
/// `ordered_admin` return `Option<(AdminStore, guard)>`, `drain` an
/// `Option<DrainSubject>`, `upgrades` an upgrade harness. The calling crate needs `tokio`
/// (macros, multi-thread runtime) as a dev-dependency.
#[macro_export]
macro_rules! store_suite {
    (
        store: $store:expr
        $(, admin: $admin:expr)?
        $(, ordered_admin: $ordered_admin:expr)?
        $(, drain: $drain:expr)?
        $(, upgrades: $upgrades:expr)?
        $(,)?
    ) => {
        $crate::conformance_suite!($store);
        $crate::ordered_suite!($store);
        $crate::slice_suite!($store);
        $( $crate::admin_suite!($admin); )?
        $( $crate::ordered_admin_suite!($ordered_admin); )?
        $(
            $crate::drain_suite!($drain);
            $crate::keyed_drain_suite!($drain);
        )?
        $( $crate::upgrade_suite!($upgrades); )?
    };
}

/// Stamps out one `#[tokio::test]` per conformance case, grouped in one module per area.
/// A part of [`store_suite!`], which engines invoke.
///
/// `$factory` is an async fn (or closure) returning a fresh [`Subject`] (or an
/// `Option<Subject>`, see [`IntoSubject`]); it is called once per case. The calling crate needs `tokio` (macros, multi-thread runtime) as a dev-dependency.
#[doc(hidden)]
#[macro_export]
macro_rules! conformance_suite {
    ($factory:expr) => {
        $crate::__conformance_cases! { $factory;
            store {
                ordering: pending_claims_follow_created_time, pending_ties_break_by_id,
                    consecutive_claims_take_the_next_oldest, retry_claims_follow_next_retry_time,
                    retry_ties_break_by_id, retry_without_next_retry_orders_by_update_time,
                    find_pending_uses_claim_order,
                    claim_next_takes_retry_ready_first;
                eligibility: terminal_rows_are_never_claimed, failed_rows_wait_for_an_operator,
                    pending_not_yet_due_is_not_claimed, retry_not_yet_due_is_not_claimed,
                    held_lease_is_not_claimed_again, expired_lease_is_reclaimable,
                    attempt_count_increments_once_per_acquisition, tokens_are_unique_per_acquisition,
                    claim_returns_only_rows_acquired, topic_filter_claims_only_that_topic,
                    persisted_claim_fields_equal_returned;
                outcomes: applied_returns_the_written_entry, wrong_token_is_stale, wrong_owner_is_stale,
                    stale_after_reclaim_by_another_worker, terminal_before_the_write,
                    missing_row_never_written, missing_after_the_row_was_pruned,
                    retried_request_recognises_its_own_write,
                    retried_request_after_a_newer_write_is_stale;
                transitions: delivered_clears_the_claim, failed_with_retry_becomes_retryable,
                    failed_without_retry_becomes_failed, dead_letter_records_the_reason,
                    deferred_sets_retry_time_without_counting, save_claim_writes_outcome_fields_only,
                    expired_unreclaimed_claim_may_still_complete;
                renew: renew_extends_held_claims, renew_reports_claims_no_longer_held;
                release: release_returns_row_without_counting_an_attempt, release_keeps_retry_state,
                    release_twice_is_stale;
                batch: batch_matches_one_by_one, batch_results_follow_input_order,
                    batch_with_a_claim_twice_is_refused;
                selection: find_does_not_claim, find_retry_ready_lists_due_rows,
                    save_with_current_stamp_applies, save_with_stale_stamp_is_concurrency_lost,
                    save_terminal_or_missing_writes_nothing, enqueue_round_trips_every_field,
                    duplicate_id_writes_nothing, prune_deletes_only_old_delivered_rows;
                validation: batch_size_zero_is_refused, batch_size_above_maximum_is_refused,
                    non_positive_lease_is_refused, empty_owner_is_refused,
                    oversized_payload_is_refused, empty_topic_is_refused,
                    find_and_renew_validate_their_input, keyed_claims_need_the_capability;
            }
            subject {
                concurrency: concurrency_lost_to_a_reclaim, concurrency_lost_to_a_terminal_winner;
            }
        }
    };
}

/// Stamps out one `#[tokio::test]` per per-key order case ([`suite::keyed`]), for a
/// store whose `Capabilities::ordered_claims` is true; `$factory` as for
/// [`conformance_suite!`].
#[doc(hidden)]
#[macro_export]
macro_rules! ordered_suite {
    ($factory:expr) => {
        $crate::__keyed_cases! { $factory; ordered; ordered_claims;
            ordered_claims_take_the_head_of_each_key,
            a_retry_holds_back_the_later_entries_of_its_key,
            a_dead_letter_frees_its_key_and_a_failure_for_an_operator_holds_it,
            an_expired_head_is_reclaimed_before_later_entries,
            entries_without_a_key_are_claimed_as_usual,
            workers_taking_turns_follow_each_keys_order,
            a_late_entry_older_than_the_head_takes_its_place
        }
        $crate::__keyed_cases! { $factory; key_runs; ordered_claims; runs;
            key_runs_take_consecutive_entries_of_each_key,
            a_run_stops_at_the_first_entry_it_may_not_take,
            a_run_never_exceeds_the_batch,
            a_retried_head_leads_its_run
        }
    };
}

/// Stamps out one `#[tokio::test]` per slice case ([`suite::keyed`]), for a store whose
/// `Capabilities::slice_claims` is true (and `ordered_claims`, for the case that combines
/// both); `$factory` as for [`conformance_suite!`].
#[doc(hidden)]
#[macro_export]
macro_rules! slice_suite {
    ($factory:expr) => {
        $crate::__keyed_cases! { $factory; slices; slice_claims;
            slices_take_every_entry_exactly_once,
            slice_finds_split_the_entries,
            ordered_slices_combine
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __keyed_cases {
    ($factory:expr; $module:ident; $capability:ident; $($case:ident),+) => {
        $crate::__keyed_cases! { $factory; $module; $capability; keyed; $($case),+ }
    };
    ($factory:expr; $module:ident; $capability:ident; $file:ident; $($case:ident),+) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(subject) = $crate::IntoSubject::into_subject(($factory)().await)
                    else {
                        return;
                    };
                    $crate::suite::capability::run_or_refused(
                        subject.store.clone(),
                        |c| c.$capability,
                        stringify!($capability),
                        stringify!($case),
                        $crate::suite::$file::$case(subject.store.clone()),
                    )
                    .await;
                    drop(subject);
                }
            )+
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_cases {
    ($factory:expr;
     store { $($area:ident : $($case:ident),+ ;)+ }
     subject { $($sarea:ident : $($scase:ident),+ ;)+ }) => {
        $(
            mod $area {
                #[allow(unused_imports)]
                use super::*;
                $(
                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    async fn $case() {
                        let Some(subject) = $crate::IntoSubject::into_subject(($factory)().await)
                        else {
                            return;
                        };
                        $crate::suite::$area::$case(subject.store.clone()).await;
                        drop(subject);
                    }
                )+
            }
        )+
        $(
            mod $sarea {
                #[allow(unused_imports)]
                use super::*;
                $(
                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    async fn $scase() {
                        let Some(subject) = $crate::IntoSubject::into_subject(($factory)().await)
                        else {
                            return;
                        };
                        $crate::suite::$sarea::$scase(subject).await;
                    }
                )+
            }
        )+
    };
}
