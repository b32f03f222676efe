//! The engines the command serves, and which one serves a target: the one table that
//! names every engine module (they name only `backend`, never this file).

use std::sync::Arc;

use outbox_core::{AdminClaimStore, OutboxError, Result};

use crate::backend::{Engine, Target};

static ENGINES: &[&Engine] = &[
    &crate::engine_sqlite::ENGINE,
    &crate::engine_postgres::ENGINE,
    &crate::engine_sqlserver::ENGINE,
    &crate::engine_mysql::ENGINE,
];

impl Target {
    /// The engine serving this URL's scheme; refuses options it has no use for.
    pub(crate) fn engine(&self) -> Result<&'static Engine> {
        let engine = self.engine_by_scheme()?;
        if self.table.schema().is_some() && !engine.has_schemas {
            return Err(OutboxError::invalid(
                "--schema",
                format!(
                    "{} has no schemas: drop --schema (the table lives in the database file)",
                    engine.name
                ),
            ));
        }
        let pg_only = [
            ("--statement-mode", self.statement_mode.is_some()),
            (
                "--listen-url",
                matches!(self.listen, crate::backend::Listen::Url(_)),
            ),
            ("--no-listen", self.listen == crate::backend::Listen::Off),
        ];
        if let Some((flag, _)) = pg_only.iter().find(|(_, given)| *given) {
            if !engine.has_listener {
                return Err(OutboxError::invalid(
                    flag,
                    format!(
                        "{} has no listener or statement modes: drop {flag}",
                        engine.name
                    ),
                ));
            }
        }
        if self.pool.cap.is_some() && !engine.has_pool {
            return Err(OutboxError::invalid(
                "--pool-size",
                format!(
                    "{} opens no pool of server connections: drop --pool-size",
                    engine.name
                ),
            ));
        }
        Ok(engine)
    }

    fn engine_by_scheme(&self) -> Result<&'static Engine> {
        if !self.url.contains("://") && self.url.contains('=') {
            return by_keys(&self.url);
        }
        let scheme = self.url.split_once(':').map(|(s, _)| s).unwrap_or_default();
        ENGINES
            .iter()
            .copied()
            .find(|e| e.schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme)))
            .ok_or_else(|| {
                let known: Vec<String> = ENGINES
                    .iter()
                    .flat_map(|e| e.schemes.iter().map(|s| format!("{s}://")))
                    .collect();
                OutboxError::invalid(
                    "database url",
                    format!(
                        "unsupported scheme {scheme:?} (expected one of: {}, or a key=value string: {})",
                        known.join(", "),
                        key_value_forms()
                    ),
                )
            })
    }

    /// Opens the store, observed (transition metric and warnings).
    pub(crate) async fn open(&self) -> Result<Arc<dyn AdminClaimStore>> {
        (self.engine()?.open)(self).await
    }

    /// Opens the store for commands that only read (stats, lists, show): a database the
    /// process cannot write can still be inspected.
    pub(crate) async fn open_for_reading(&self) -> Result<Arc<dyn AdminClaimStore>> {
        let reading = Self {
            reading: true,
            ..self.clone()
        };
        (self.engine()?.open)(&reading).await
    }
}

/// The engine whose `key=value` form `s` is: every key in it must be one the engine's
/// driver takes. A string that fits no engine, or more than one, is refused with the forms.
fn by_keys(s: &str) -> Result<&'static Engine> {
    let fits: Vec<&'static Engine> = ENGINES
        .iter()
        .copied()
        .filter(|e| e.key_values.as_ref().is_some_and(|kv| kv.matches(s)))
        .collect();
    match fits.as_slice() {
        [one] => Ok(one),
        [] => Err(OutboxError::invalid(
            "database url",
            format!(
                "a key=value string whose keys no engine takes all of (the forms: {})",
                key_value_forms()
            ),
        )),
        many => Err(OutboxError::invalid(
            "database url",
            format!(
                "a key=value string that could be {} (the forms: {}); use a URL to say which",
                many.iter().map(|e| e.name).collect::<Vec<_>>().join(" or "),
                key_value_forms()
            ),
        )),
    }
}

/// Every engine's `key=value` form, by example, for messages.
fn key_value_forms() -> String {
    ENGINES
        .iter()
        .filter_map(|e| {
            e.key_values
                .as_ref()
                .map(|kv| format!("{} `{}`", e.name, kv.example))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine_of(url: &str) -> Result<&'static str> {
        by_keys(url).map(|e| e.name)
    }

    #[test]
    fn key_value_strings_are_recognised_by_their_keys() {
        assert_eq!(
            engine_of("host=127.0.0.1 port=5432 user=postgres dbname=app").unwrap(),
            "PostgreSQL"
        );
        assert_eq!(
            engine_of("host=db password='a b c' dbname=app sslmode=require").unwrap(),
            "PostgreSQL"
        );
        assert_eq!(
            engine_of("Server=tcp:h,1433;Database=app;User Id=sa;Password=x;").unwrap(),
            "SQL Server"
        );
        assert_eq!(
            engine_of("Data Source=h;Initial Catalog=app;Integrated Security=true").unwrap(),
            "SQL Server"
        );
    }

    #[test]
    fn strings_no_engine_or_several_engines_take_are_refused_naming_the_forms() {
        let none = engine_of("foo=1 bar=2").unwrap_err().to_string();
        assert!(
            none.contains("no engine") && none.contains("dbname=app"),
            "{none}"
        );
        let both = engine_of("user=sa").unwrap_err().to_string();
        assert!(both.contains("PostgreSQL or SQL Server"), "{both}");
        assert!(both.contains("Server=tcp:host,1433"), "{both}");
    }
}
