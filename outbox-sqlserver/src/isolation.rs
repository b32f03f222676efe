//! The start-up check that claims are safe on a connection: its isolation level lets
//! READPAST work, and the database understands the JSON the batch statements pass.

use outbox_core::{OutboxError, Result};
use tiberius::Row;

/// What the server says about a session (see `sql/isolation.sql`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionFacts {
    /// `sys.dm_exec_sessions.transaction_isolation_level`.
    pub(crate) isolation_level: i16,
    /// Whether the database serves READ COMMITTED from row versions (RCSI).
    pub(crate) read_committed_snapshot: bool,
    /// The database's compatibility level.
    pub(crate) compatibility_level: i32,
    /// The server's version, for the log.
    pub(crate) product_version: String,
}

/// The lowest compatibility level with `OPENJSON` (SQL Server 2016).
const MIN_COMPATIBILITY_LEVEL: i32 = 130;

impl SessionFacts {
    /// Reads the row `sql/isolation.sql` returns.
    pub(crate) fn from_row(row: &Row) -> Result<Self> {
        let bad = |what: &str| OutboxError::Database {
            message: format!("the isolation check returned no {what}"),
            source: None,
        };
        Ok(Self {
            isolation_level: row
                .try_get::<i16, _>("isolation_level")
                .map_err(crate::error::map_err)?
                .ok_or_else(|| bad("isolation level"))?,
            read_committed_snapshot: row
                .try_get::<i32, _>("read_committed_snapshot")
                .map_err(crate::error::map_err)?
                .ok_or_else(|| bad("RCSI flag"))?
                != 0,
            compatibility_level: row
                .try_get::<i32, _>("compatibility_level")
                .map_err(crate::error::map_err)?
                .ok_or_else(|| bad("compatibility level"))?,
            product_version: row
                .try_get::<&str, _>("product_version")
                .map_err(crate::error::map_err)?
                .unwrap_or("unknown")
                .to_owned(),
        })
    }

    /// Refuses a session where claims would not be safe, with what to change.
    ///
    /// READPAST is honoured only under READ COMMITTED and REPEATABLE READ: SNAPSHOT and
    /// SERIALIZABLE refuse it (error 650), and under READ UNCOMMITTED a claim could take
    /// rows another transaction has not committed. Under RCSI the claim stays safe
    /// because it reads WITH (READCOMMITTEDLOCK); that is logged, not refused.
    pub(crate) fn judge(&self) -> Result<()> {
        let level = match self.isolation_level {
            2 | 3 => None,
            1 => Some("READ UNCOMMITTED"),
            4 => Some("SERIALIZABLE"),
            5 => Some("SNAPSHOT"),
            _ => Some("an unknown isolation level"),
        };
        if let Some(level) = level {
            return Err(OutboxError::Unsupported(format!(
                "the session runs under {level} (level {}): outbox claims skip locked rows with READPAST, which SQL Server honours only under READ COMMITTED or REPEATABLE READ (error 650 otherwise); do not change the isolation level of the store's connections",
                self.isolation_level
            )));
        }
        if self.compatibility_level < MIN_COMPATIBILITY_LEVEL {
            return Err(OutboxError::Unsupported(format!(
                "the database's compatibility level is {}; the store passes batches as JSON read with OPENJSON, which needs level {MIN_COMPATIBILITY_LEVEL} (SQL Server 2016) or later: ALTER DATABASE … SET COMPATIBILITY_LEVEL = {MIN_COMPATIBILITY_LEVEL}",
                self.compatibility_level
            )));
        }
        if self.read_committed_snapshot {
            tracing::debug!(
                version = %self.product_version,
                "READ_COMMITTED_SNAPSHOT is on; claims read WITH (READCOMMITTEDLOCK), so they still lock"
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use tiberius::{ColumnData, ColumnType};

    use super::*;

    /// A row as the server returns it for `sql/isolation.sql`.
    fn recorded(level: i16, rcsi: i32, compat: i32) -> Row {
        Row::builder()
            .column(
                "isolation_level",
                ColumnType::Int2,
                ColumnData::I16(Some(level)),
            )
            .column(
                "read_committed_snapshot",
                ColumnType::Int4,
                ColumnData::I32(Some(rcsi)),
            )
            .column(
                "compatibility_level",
                ColumnType::Int4,
                ColumnData::I32(Some(compat)),
            )
            .column(
                "product_version",
                ColumnType::NVarchar,
                ColumnData::String(Some("16.0.4135.4".into())),
            )
            .build()
    }

    fn judged(level: i16, rcsi: i32, compat: i32) -> Result<()> {
        SessionFacts::from_row(&recorded(level, rcsi, compat))?.judge()
    }

    #[test]
    fn read_committed_and_repeatable_read_are_safe_with_or_without_rcsi() {
        judged(2, 0, 160).unwrap();
        judged(2, 1, 160).unwrap();
        judged(3, 0, 130).unwrap();
    }

    #[test]
    fn snapshot_serializable_and_read_uncommitted_are_refused_by_name() {
        for (level, name) in [
            (5, "SNAPSHOT"),
            (4, "SERIALIZABLE"),
            (1, "READ UNCOMMITTED"),
        ] {
            let err = judged(level, 0, 160).unwrap_err();
            assert!(matches!(err, OutboxError::Unsupported(_)), "{err:?}");
            assert!(err.to_string().contains(name), "{err}");
            assert!(err.to_string().contains("READPAST"), "{err}");
        }
    }

    #[test]
    fn databases_older_than_2016_compatibility_are_refused() {
        let err = judged(2, 0, 120).unwrap_err();
        assert!(err.to_string().contains("OPENJSON"), "{err}");
    }

    #[test]
    fn a_row_without_the_facts_is_an_error_not_a_pass() {
        let row = Row::builder()
            .column("isolation_level", ColumnType::Int2, ColumnData::I16(None))
            .build();
        assert!(SessionFacts::from_row(&row).is_err());
    }
}
