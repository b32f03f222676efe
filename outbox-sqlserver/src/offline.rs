//! The store's statements and the parameters it binds to them, as the server would
//! receive them, for the offline checks in this crate's `offline` test binary (no SQL
//! Server runs on most machines the project is built on). Not part of the API: it may
//! change in any release.

/// The parameter lists each statement is bound with, and the kinds of their values.
pub mod params {
    pub use crate::params::*;
}

/// Every statement's template, its declared parameters, and the set rendered per table.
pub mod statements {
    pub use crate::statements::*;
}

pub use crate::portable::rendered_for_checks as portable_statements;
pub use crate::table::render;
