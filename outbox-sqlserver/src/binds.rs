//! Values as the statements bind them (TDS column data), for the optimized batches and the
//! portable commands alike: one rule for each type, a number that does not fit refused.

use chrono::{DateTime, Utc};
use outbox_core::{EmissionStatus, EntryId, OutboxError, Result};
use tiberius::{ColumnData, IntoSql};

use crate::row::{id_bytes, naive};

/// A datetime2, UTC.
pub(crate) fn time(at: Option<DateTime<Utc>>) -> ColumnData<'static> {
    at.map(naive).into_sql()
}

/// An nvarchar.
pub(crate) fn text(s: Option<&str>) -> ColumnData<'static> {
    ColumnData::String(s.map(|s| s.to_owned().into()))
}

/// An int; a count above its range is refused, naming `field`.
pub(crate) fn int(field: &'static str, n: u32) -> Result<ColumnData<'static>> {
    let n = i32::try_from(n)
        .map_err(|_| OutboxError::invalid(field, format!("{n} does not fit an int")))?;
    Ok(ColumnData::I32(Some(n)))
}

/// An entry id as the table's binary(16).
pub(crate) fn id(id: EntryId) -> ColumnData<'static> {
    ColumnData::Binary(Some(id_bytes(id).into()))
}

/// A status code as the table's tinyint.
pub(crate) fn status(s: EmissionStatus) -> ColumnData<'static> {
    ColumnData::U8(Some(
        u8::try_from(s.code()).expect("status codes are 0 ..= 5"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_beyond_an_int_are_refused_by_name() {
        assert!(matches!(int("n", 5), Ok(ColumnData::I32(Some(5)))));
        let err = int("batch size", u32::MAX).unwrap_err();
        assert!(err.to_string().contains("batch size"), "{err}");
    }
}
