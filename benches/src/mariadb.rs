//! The MariaDB server the benches use: the testkit's (`OUTBOX_TEST_MYSQL_URL`, by default
//! root on 127.0.0.1:3306), a throwaway database per bench table, what the server is, and
//! the SQL helpers the loader needs (backtick-quoted names, the slice hash in SQL).
//!
//! The latency proxy reads the PostgreSQL protocol, so MariaDB is always reached direct.

use outbox_core::{Quotes, TableName};
use outbox_testkit::mysql::TestDatabase;
use sqlx::{Connection, MySqlConnection};

use crate::location::Location;
use crate::results::PgServerInfo;

pub use outbox_testkit::mysql::{server_url, ENGINE};

/// Connects to the server (no database) and says what it is, or why it cannot be reached.
pub async fn probe() -> Result<PgServerInfo, String> {
    let url = server_url();
    let mut conn = MySqlConnection::connect(&url)
        .await
        .map_err(|e| format!("{}: {e}", outbox_core::redact_url(&url)))?;
    let version: String = sqlx::query_scalar("SELECT version()")
        .fetch_one(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    let mut settings = Vec::new();
    for name in [
        "innodb_flush_log_at_trx_commit",
        "innodb_buffer_pool_size",
        "sync_binlog",
        "log_bin",
        "max_connections",
    ] {
        // Every value as text, whatever its type.
        let sql = format!("SELECT CAST(@@global.{name} AS CHAR)");
        if let Ok(value) = sqlx::query_scalar::<_, String>(&sql)
            .fetch_one(&mut conn)
            .await
        {
            settings.push((name.to_owned(), value));
        }
    }
    let _ = conn.close().await;
    Ok(PgServerInfo {
        version: format!("MariaDB {version}"),
        url: outbox_core::redact_url(&url),
        settings,
    })
}

/// A fresh database (dropped with its contents when the value is dropped); `None`, reported
/// loudly, when the server cannot be reached.
pub async fn database() -> Option<TestDatabase> {
    TestDatabase::create().await
}

/// A connection to the database `location` names.
pub async fn connect(location: &Location) -> MySqlConnection {
    MySqlConnection::connect(&location.url)
        .await
        .unwrap_or_else(|e| panic!("connect to the bench database: {e}"))
}

/// `template` for `table`, quoted as MariaDB quotes names.
pub fn render(table: &TableName, template: &str) -> String {
    table.render_in(template, Quotes::BACKTICKS)
}

/// The rows `location`'s table holds as delivered.
pub async fn delivered_rows(location: &Location) -> u64 {
    let mut conn = connect(location).await;
    let sql = render(
        &location.table_name(),
        "SELECT COUNT(*) FROM {table} WHERE status = 1",
    );
    let n: i64 = sqlx::query_scalar(&sql)
        .fetch_one(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("count the delivered rows: {e}"));
    let _ = conn.close().await;
    u64::try_from(n).unwrap_or(0)
}

/// `outbox_core::slice_hash` in SQL over the first `len` bytes of `bytes` (a binary or
/// ASCII string expression): 32-bit FNV-1a, one byte per step.
pub fn fnv1a(bytes: &str, len: usize) -> String {
    (1..=len).fold("2166136261".to_owned(), |hash, k| {
        format!("((({hash}) ^ ASCII(SUBSTRING({bytes}, {k}, 1))) * 16777619 & 4294967295)")
    })
}

/// [`fnv1a`] over the whole of an ASCII string expression of up to `max_len` characters.
pub fn fnv1a_of_text(text: &str, max_len: usize) -> String {
    let arms: String = (1..=max_len)
        .map(|n| format!(" WHEN {n} THEN {}", fnv1a(text, n)))
        .collect();
    format!("(CASE CHAR_LENGTH({text}){arms} ELSE 2166136261 END)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slice_hash_in_sql_has_one_step_per_byte() {
        assert_eq!(fnv1a("x", 0), "2166136261");
        let one = fnv1a("x", 1);
        assert_eq!(
            one,
            "(((2166136261) ^ ASCII(SUBSTRING(x, 1, 1))) * 16777619 & 4294967295)"
        );
        assert_eq!(fnv1a("x", 16).matches("SUBSTRING").count(), 16);
        let text = fnv1a_of_text("k", 3);
        assert!(text.starts_with("(CASE CHAR_LENGTH(k) WHEN 1 THEN"));
        assert_eq!(text.matches("SUBSTRING").count(), 1 + 2 + 3);
    }
}
