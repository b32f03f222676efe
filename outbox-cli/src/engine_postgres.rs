//! The PostgreSQL engine: `postgres://` and `postgresql://` URLs, and libpq's keyword/value
//! strings (`host=127.0.0.1 port=5432 user=postgres dbname=app`).

use std::sync::Arc;

use outbox_core::portable::PortableConfig;
use outbox_core::{AdminClaimStore, OutboxError, Result};
use outbox_postgres::deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use outbox_postgres::tokio_postgres;
use outbox_postgres::{PgClaimStore, PgListener, PgStoreConfig, PgTls};

use crate::args::{StatementModeArg, StoreKind};
use crate::backend::{
    observed, observed_bounded, Engine, Fut, KeyValues, Listen, Separator, Target,
};
use outbox_postgres::StatementMode;

pub(crate) static ENGINE: Engine = Engine {
    schemes: &["postgres", "postgresql"],
    name: "PostgreSQL",
    has_schemas: true,
    has_listener: true,
    has_pool: true,
    key_values: Some(KeyValues {
        separator: Separator::Whitespace,
        keys: &[
            "host",
            "hostaddr",
            "port",
            "dbname",
            "user",
            "password",
            "passfile",
            "channel_binding",
            "connect_timeout",
            "client_encoding",
            "options",
            "application_name",
            "fallback_application_name",
            "keepalives",
            "keepalives_idle",
            "keepalives_interval",
            "keepalives_count",
            "tcp_user_timeout",
            "replication",
            "gssencmode",
            "sslmode",
            "requiressl",
            "sslcompression",
            "sslcert",
            "sslkey",
            "sslpassword",
            "sslrootcert",
            "sslcrl",
            "sslcrldir",
            "sslsni",
            "requirepeer",
            "ssl_min_protocol_version",
            "ssl_max_protocol_version",
            "krbsrvname",
            "gsslib",
            "service",
            "target_session_attrs",
            "load_balance_hosts",
        ],
        example: "host=127.0.0.1 port=5432 user=postgres dbname=app",
    }),
    migrate,
    migrate_down_to,
    script,
    open,
};

/// The driver's configuration and the TLS connector for `url`: libpq's `sslmode`
/// (`disable`, `prefer` (the default), `require`, `verify-ca`, `verify-full`) and
/// `sslrootcert` are honoured for every connection the command opens.
fn config(url: &str) -> Result<(tokio_postgres::Config, PgTls)> {
    outbox_postgres::connect_config(url)
}

/// How the store sends statements: `--statement-mode`, else the URL's `statement_mode`.
fn statement_mode(target: &Target) -> Result<StatementMode> {
    Ok(match target.statement_mode {
        Some(StatementModeArg::Named) => StatementMode::Named,
        Some(StatementModeArg::Unnamed) => StatementMode::Unnamed,
        None => outbox_postgres::connect_settings(&target.url)?.statement_mode,
    })
}

/// The listener `target` asks for: on the store's own settings (`pg`, `tls`, sending
/// statements as `mode` says) or on a connection string of its own; `None` for a command
/// that does not drain, and for `--no-listen` (said once on standard error).
fn listener(
    target: &Target,
    pg: &tokio_postgres::Config,
    tls: &PgTls,
    mode: StatementMode,
) -> Result<Option<Arc<PgListener>>> {
    let (config, tls) = match &target.listen {
        Listen::NotDraining => return Ok(None),
        Listen::Off => {
            eprintln!(
                "outbox: no listener (--no-listen): workers look for new entries at their poll \
                 interval instead of being woken"
            );
            return Ok(None);
        }
        Listen::Same => {
            if mode == StatementMode::Unnamed {
                eprintln!(
                    "outbox: warning: the listener connects with the database URL, whose \
                     unnamed statements suggest a transaction-mode pooler; through one it \
                     hears nothing (it says so within seconds, and drains poll): give it a \
                     direct connection with --listen-url URL, or pass --no-listen"
                );
            }
            (pg.clone(), tls.clone())
        }
        Listen::Url(url) => config(url)?,
    };
    Ok(Some(Arc::new(PgListener::start(
        config,
        tls,
        &target.table,
    ))))
}

fn unreachable(url: &str, e: impl std::fmt::Display) -> OutboxError {
    OutboxError::Connection {
        message: format!(
            "cannot connect to the PostgreSQL server at {}: {e}",
            outbox_core::redact_url(url)
        ),
        source: None,
    }
}

/// A failed connection, with what the server said (its message and SQLSTATE: a missing
/// database, an unknown role, a refused password) or what the network said (connection
/// refused, no such host), never just "db error".
fn not_connected(url: &str, e: &tokio_postgres::Error) -> OutboxError {
    let detail = match e.as_db_error() {
        Some(db) => format!(
            "the server refused: {} (SQLSTATE {})",
            db.message(),
            db.code().code()
        ),
        None => outbox_core::error_chain(e),
    };
    unreachable(url, detail)
}

/// A connection of the command's own, made within the call deadline: a server that
/// accepts but never answers is reported, not waited on.
async fn connect(target: &Target) -> Result<tokio_postgres::Client> {
    let url = target.url.as_str();
    let (config, tls) = config(url)?;
    let (client, connection) = tokio::time::timeout(target.call_timeout, config.connect(tls))
        .await
        .map_err(|_| {
            unreachable(
                url,
                format!(
                    "no answer within the call deadline ({:?}, --call-timeout)",
                    target.call_timeout
                ),
            )
        })?
        .map_err(|e| not_connected(url, &e))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

fn migrate(target: &Target, ordered: bool) -> Fut<'_, i64> {
    Box::pin(async move {
        let mut client = connect(target).await?;
        let version = outbox_postgres::migrate(&mut client, &target.table).await?;
        if ordered {
            outbox_postgres::enable_ordered_claims(&mut client, &target.table).await?;
        }
        Ok(version)
    })
}

fn migrate_down_to(target: &Target, version: i64) -> Fut<'_, i64> {
    Box::pin(async move {
        let mut client = connect(target).await?;
        outbox_postgres::migrate_down_to(&mut client, &target.table, version).await
    })
}

fn script(target: &Target, ordered: bool) -> outbox_core::Result<String> {
    let mut script = outbox_postgres::migration_script(&target.table);
    if ordered {
        script.push_str(&outbox_postgres::ordered_claims_script(&target.table));
    }
    Ok(script)
}

fn open(target: &Target) -> Fut<'_, Arc<dyn AdminClaimStore>> {
    Box::pin(async move {
        let (pg, tls) = config(&target.url)?;
        let mode = statement_mode(target)?;
        if target.kind == StoreKind::Portable && mode == StatementMode::Unnamed {
            return Err(OutboxError::invalid(
                "--store portable",
                "the portable store runs on sqlx, which prepares a statement in one round \
                 trip and binds it in the next, so a transaction-mode pooler may hand the two \
                 to different server connections; behind such a pooler use the optimized \
                 store (drop --store portable)",
            ));
        }
        // Fail fast, with a clear message, when the server is not there.
        let probe = connect(target).await?;
        tokio::time::timeout(
            target.call_timeout,
            outbox_postgres::check_schema(&probe, &target.table),
        )
        .await
        .map_err(|_| {
            unreachable(
                &target.url,
                "the schema check got no answer within the call deadline",
            )
        })??;
        drop(probe);
        match target.kind {
            StoreKind::Optimized => {
                let manager = Manager::from_config(
                    pg.clone(),
                    tls.clone(),
                    ManagerConfig {
                        recycling_method: RecyclingMethod::Fast,
                    },
                );
                let pool = Pool::builder(manager)
                    .max_size(target.pool.size() as usize)
                    .build()
                    .map_err(|e| unreachable(&target.url, e))?;
                let mut config = PgStoreConfig::new()
                    .table(target.table.clone())
                    .statement_mode(mode)
                    .tls(tls.clone())
                    .call_timeout(target.call_timeout)?;
                if let Some(listener) = listener(target, &pg, &tls, mode)? {
                    config = config.listener(listener);
                }
                Ok(observed(PgClaimStore::new(pool, config).await?))
            }
            StoreKind::Portable => {
                let pool = sqlx::postgres::PgPoolOptions::new()
                    .max_connections(target.pool.size())
                    .acquire_timeout(target.call_timeout)
                    .connect(&target.url)
                    .await
                    .map_err(|e| unreachable(&target.url, e))?;
                let portable = PortableConfig::default().table(target.table.clone());
                observed_bounded(
                    outbox_postgres::portable_store(pool, portable).await?,
                    target,
                )
            }
        }
    })
}
