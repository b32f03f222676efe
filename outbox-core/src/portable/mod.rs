//! The portable per-row claim store on sqlx (work in progress).
