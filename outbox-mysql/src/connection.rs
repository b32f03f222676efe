//! How the store reaches its server: the URL it takes, and the session settings it checks
//! on a pool it is given.

use std::str::FromStr;

use outbox_core::{OutboxError, Result};
use sqlx::mysql::MySqlConnectOptions;
use sqlx::MySqlPool;

use crate::error::map_err;

/// Parses a `mysql:` or `mariadb:` URL.
pub(crate) fn connect_options(url: &str) -> Result<MySqlConnectOptions> {
    let normalized = match url.strip_prefix("mariadb:") {
        Some(rest) => format!("mysql:{rest}"),
        None => url.to_owned(),
    };
    if !normalized.starts_with("mysql:") {
        return Err(OutboxError::invalid(
            "database url",
            format!(
                "{:?} is not a mysql:// or mariadb:// URL",
                outbox_core::redact_url(url)
            ),
        ));
    }
    MySqlConnectOptions::from_str(&normalized).map_err(|e| {
        OutboxError::invalid(
            "database url",
            format!("{:?}: {e}", outbox_core::redact_url(url)),
        )
    })
}

/// Fails unless a session of `pool` runs its transactions `READ COMMITTED`.
pub(crate) async fn check_isolation(pool: &MySqlPool) -> Result<()> {
    let mut conn = pool.acquire().await.map_err(map_err)?;
    let level: String = match sqlx::query_scalar(include_str!("../sql/isolation.sql"))
        .fetch_one(&mut *conn)
        .await
    {
        Ok(level) => level,
        Err(_) => sqlx::query_scalar(include_str!("../sql/isolation_legacy.sql"))
            .fetch_one(&mut *conn)
            .await
            .map_err(map_err)?,
    };
    if level.eq_ignore_ascii_case("READ-COMMITTED") {
        return Ok(());
    }
    Err(OutboxError::invalid(
        "pool",
        format!(
            "its sessions run {level} transactions; the store needs READ-COMMITTED (under \
             REPEATABLE READ a claim takes gap locks that block enqueues): open the pool with \
             MySqlClaimStore::open_pool, or run `SET SESSION TRANSACTION ISOLATION LEVEL READ \
             COMMITTED` in its after_connect"
        ),
    ))
}

/// The server's `max_allowed_packet`: no statement may be longer.
pub(crate) async fn max_allowed_packet(pool: &MySqlPool) -> Result<usize> {
    let bytes: u64 = sqlx::query_scalar(include_str!("../sql/max_allowed_packet.sql"))
        .fetch_one(pool)
        .await
        .map_err(map_err)?;
    Ok(usize::try_from(bytes).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_of_both_spellings_parse_and_others_are_refused() {
        assert!(connect_options("mysql://root@127.0.0.1:3306/test").is_ok());
        assert!(connect_options("mariadb://root@127.0.0.1:3306/test").is_ok());
        let err = connect_options("postgres://u:secret@h/db").unwrap_err();
        assert!(!err.to_string().contains("secret"), "{err}");
    }
}
