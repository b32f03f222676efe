//! The conformance cases, one file per area. Each case takes a fresh store and injects
//! every time it uses; none sleeps.

pub mod batch;
pub mod capability;
pub mod concurrency;
pub mod eligibility;
pub mod keyed;
pub mod ordering;
pub mod outcomes;
pub mod release;
pub mod renew;
pub mod runs;
pub mod selection;
pub mod transitions;
pub mod validation;
