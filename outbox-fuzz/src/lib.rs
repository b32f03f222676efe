//! Fuzz targets for every boundary of the outbox that takes outside input. Each target
//! takes arbitrary bytes and panics only when it finds a bug: a panic in the code under
//! test, or a broken promise (an accepted name that is not a safe identifier, a password
//! left in a redacted URL, a hand-edited row read back as anything but a clean value or a
//! `CorruptRow` error naming its id, a completion batch that errs with other than an
//! input error).
//!
//! The targets run two ways: briefly on stable Rust by this crate's tests (the seeds in
//! `seeds/` plus a bounded number of mutations of them), and at length under libFuzzer
//! with `cargo fuzz` (the `cargo-fuzz/` directory; see its README).

mod input;
pub mod rows;
pub mod text;

pub use input::Input;

/// A fuzz target: panics on a bug, returns otherwise.
pub type Target = fn(&[u8]);

/// Every target by name, for the drivers.
pub const TARGETS: [(&str, Target); 7] = [
    ("identifier", text::identifier),
    ("duration", text::duration),
    ("slice", text::slice),
    ("store_url", text::store_url),
    ("emitter_url", text::emitter_url),
    ("sqlite_row", rows::sqlite_row),
    ("completions", rows::completions),
];
