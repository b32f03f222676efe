//! Connection strings: `sqlserver://` URLs, ADO.NET strings and JDBC strings, turned
//! into a tiberius [`Config`] with TLS on unless asked otherwise.

use std::time::Duration;

use outbox_core::{OutboxError, Result};
use tiberius::{AuthMethod, Config, EncryptionLevel};

/// Where and how the store connects: the driver's [`Config`], and the session settings
/// the store applies to every connection it opens.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    config: Config,
    connect_timeout: Duration,
    lock_timeout: Duration,
    trusts_any_certificate: bool,
}

/// The default wait for a TCP connection and the login handshake.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// The default `LOCK_TIMEOUT`: a statement blocked this long fails (error 1222) and is
/// retried, instead of hanging behind a stuck transaction.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

impl ConnectOptions {
    /// Parses a connection string:
    ///
    /// - `sqlserver://user:password@host:port/database?encrypt=true&trustServerCertificate=false`
    ///   (`mssql://` too; user, password and database percent-decoded; port 1433 when
    ///   omitted). Query keys: `encrypt` (`true`, the default: TLS required; `strict`:
    ///   TDS 8.0; `false`: only the login is encrypted; `DANGER_PLAINTEXT`: nothing is),
    ///   `trustServerCertificate` (`true` accepts any certificate: only for test
    ///   servers), `trustServerCertificateCA` (a PEM/DER file to trust), `applicationName`.
    /// - an ADO.NET string (`Server=tcp:host,1433;Database=…;User Id=…;Password=…;Encrypt=true`),
    /// - a JDBC string (`jdbc:sqlserver://host:1433;databaseName=…;user=…;password=…`),
    ///
    /// the last two with the driver's own rules. An unknown URL key is refused.
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        let config = if let Some(rest) = strip_scheme(s) {
            parse_url(rest)?
        } else if s.len() >= 5 && s[..5].eq_ignore_ascii_case("jdbc:") {
            Config::from_jdbc_string(s).map_err(|e| bad_string(&e.to_string()))?
        } else if s.contains('=') {
            Config::from_ado_string(s).map_err(|e| bad_string(&e.to_string()))?
        } else {
            return Err(bad_string(
                "expected sqlserver://user:password@host:port/database, an ADO.NET string (Server=…;Database=…) or a JDBC string",
            ));
        };
        Ok(Self {
            trusts_any_certificate: trusts_any_certificate(s),
            ..Self::from_config(config)
        })
    }

    /// Whether the parsed string told the driver to accept any server certificate
    /// (`trustServerCertificate=true`): the connection is encrypted but not authenticated,
    /// which a caller may want to say once, in its own words. False for a [`Config`]
    /// the host built itself.
    pub fn trusts_any_certificate(&self) -> bool {
        self.trusts_any_certificate
    }

    /// Wraps a [`Config`] the host built itself.
    pub fn from_config(config: Config) -> Self {
        Self {
            config,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            trusts_any_certificate: false,
        }
    }

    /// Sets how long opening a connection may take (1 ms ..= 10 min).
    pub fn connect_timeout(mut self, timeout: Duration) -> Result<Self> {
        check_between("connect timeout", timeout, Duration::from_secs(600))?;
        self.connect_timeout = timeout;
        Ok(self)
    }

    /// Sets the session's `LOCK_TIMEOUT` (1 ms ..= 10 min).
    pub fn lock_timeout(mut self, timeout: Duration) -> Result<Self> {
        check_between("lock timeout", timeout, Duration::from_secs(600))?;
        self.lock_timeout = timeout;
        Ok(self)
    }

    /// Names the store's sessions (`program_name` in `sys.dm_exec_sessions`), so an
    /// operator can tell them from everyone else's.
    pub fn application_name(mut self, name: &str) -> Self {
        self.config.application_name(name);
        self
    }

    /// The driver configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// How long opening a connection may take.
    pub fn get_connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// The session's lock timeout.
    pub fn get_lock_timeout(&self) -> Duration {
        self.lock_timeout
    }
}

fn check_between(field: &'static str, value: Duration, max: Duration) -> Result<()> {
    if value < Duration::from_millis(1) || value > max {
        return Err(OutboxError::invalid(
            field,
            format!("must be between 1ms and {max:?}, got {value:?}"),
        ));
    }
    Ok(())
}

fn bad_string(reason: &str) -> OutboxError {
    OutboxError::invalid("SQL Server connection string", reason.to_owned())
}

fn strip_scheme(s: &str) -> Option<&str> {
    ["sqlserver://", "mssql://"].iter().find_map(|scheme| {
        (s.len() >= scheme.len() && s[..scheme.len()].eq_ignore_ascii_case(scheme))
            .then(|| &s[scheme.len()..])
    })
}

/// Whether any form of connection string sets `trustServerCertificate` (any case, with or
/// without spaces in the key) to true or yes.
fn trusts_any_certificate(s: &str) -> bool {
    s.split(['?', '&', ';']).any(|pair| {
        pair.split_once('=').is_some_and(|(key, value)| {
            let key: String = key.chars().filter(|c| !c.is_whitespace()).collect();
            key.eq_ignore_ascii_case("trustservercertificate")
                && ["true", "yes"].contains(&value.trim().to_ascii_lowercase().as_str())
        })
    })
}

fn parse_url(rest: &str) -> Result<Config> {
    let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, database) = main.split_once('/').unwrap_or((main, ""));
    let (credentials, hostport) = match authority.rsplit_once('@') {
        Some((c, h)) => (Some(c), h),
        None => (None, authority),
    };
    if hostport.is_empty() {
        return Err(bad_string("no host"));
    }
    let (host, port) = split_host_port(hostport)?;
    let mut config = Config::new();
    config.host(host);
    config.port(port);
    config.encryption(EncryptionLevel::Required);
    let database = percent_decode(database)?;
    if !database.is_empty() {
        config.database(database);
    }
    if let Some(c) = credentials {
        let (user, password) = c.split_once(':').unwrap_or((c, ""));
        config.authentication(AuthMethod::sql_server(
            percent_decode(user)?,
            percent_decode(password)?,
        ));
    }
    let mut trust_any = false;
    let mut trust_ca = false;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode(value)?;
        match key.to_ascii_lowercase().as_str() {
            "encrypt" => config.encryption(encryption(&value)?),
            "trustservercertificate" => {
                trust_any = boolean(key, &value)?;
                if trust_ca && trust_any {
                    return Err(conflicting_trust());
                }
                if trust_any {
                    config.trust_cert();
                }
            }
            "trustservercertificateca" => {
                trust_ca = true;
                if trust_any {
                    return Err(conflicting_trust());
                }
                config.trust_cert_ca(value);
            }
            "applicationname" | "application_name" => config.application_name(value),
            other => {
                return Err(bad_string(&format!(
                    "unknown option {other:?} (known: encrypt, trustServerCertificate, trustServerCertificateCA, applicationName)"
                )))
            }
        }
    }
    Ok(config)
}

fn conflicting_trust() -> OutboxError {
    bad_string("trustServerCertificate=true and trustServerCertificateCA contradict each other: name a CA file, or (for a test server) trust any certificate")
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
fn split_host_port(hostport: &str) -> Result<(&str, u16)> {
    let (host, port) = match hostport.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6
                .split_once(']')
                .ok_or_else(|| bad_string("an IPv6 host is missing its ']'"))?;
            (host, after.strip_prefix(':'))
        }
        None => match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        },
    };
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .map_err(|_| bad_string(&format!("port {p:?} is not a number")))?,
        None => 1433,
    };
    Ok((host, port))
}

fn encryption(value: &str) -> Result<EncryptionLevel> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "yes" | "mandatory" => Ok(EncryptionLevel::Required),
        "strict" => Ok(EncryptionLevel::Strict),
        "false" | "no" | "optional" => Ok(EncryptionLevel::Off),
        _ if value == "DANGER_PLAINTEXT" => Ok(EncryptionLevel::NotSupported),
        _ => Err(bad_string(&format!(
            "encrypt={value:?} (expected true, strict, false or DANGER_PLAINTEXT)"
        ))),
    }
}

fn boolean(key: &str, value: &str) -> Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "yes" => Ok(true),
        "false" | "no" => Ok(false),
        _ => Err(bad_string(&format!(
            "{key}={value:?} (expected true or false)"
        ))),
    }
}

fn percent_decode(s: &str) -> Result<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad_string("a % escape is not followed by two hex digits"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad_string("a percent-decoded part is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_give_host_port_and_database() {
        let o = ConnectOptions::parse("sqlserver://sa:p%40ss@db.example:14330/orders").unwrap();
        assert_eq!(o.config().get_addr(), "db.example:14330");
        let o = ConnectOptions::parse("mssql://sa:x@localhost").unwrap();
        assert_eq!(o.config().get_addr(), "localhost:1433");
    }

    #[test]
    fn trusting_any_certificate_is_seen_in_every_form() {
        for (s, trusts) in [
            ("sqlserver://sa:x@h/db?trustServerCertificate=true", true),
            ("sqlserver://sa:x@h/db?trustServerCertificate=false", false),
            ("sqlserver://sa:x@h/db", false),
            ("Server=h;Database=db;TrustServerCertificate=True", true),
            ("Server=h;Database=db;Trust Server Certificate=yes", true),
            (
                "jdbc:sqlserver://h:1433;databaseName=db;trustServerCertificate=true",
                true,
            ),
        ] {
            let options = ConnectOptions::parse(s).unwrap();
            assert_eq!(options.trusts_any_certificate(), trusts, "{s}");
        }
    }

    #[test]
    fn ado_and_jdbc_strings_are_accepted() {
        let o = ConnectOptions::parse(
            "Server=tcp:db.example,1444;Database=orders;User Id=sa;Password=x;TrustServerCertificate=true",
        )
        .unwrap();
        assert_eq!(o.config().get_addr(), "db.example:1444");
        let o = ConnectOptions::parse(
            "jdbc:sqlserver://db.example:1455;databaseName=orders;user=sa;password=x",
        )
        .unwrap();
        assert_eq!(o.config().get_addr(), "db.example:1455");
    }

    #[test]
    fn bad_strings_get_a_clear_error() {
        for (s, says) in [
            ("postgres://x@y/z", "expected sqlserver://"),
            ("sqlserver://sa:x@host:99999/db", "port"),
            ("sqlserver://sa:x@host/db?encrypt=maybe", "encrypt"),
            (
                "sqlserver://sa:x@host/db?trustServerCertificate=perhaps",
                "trustServerCertificate",
            ),
            ("sqlserver://sa:x@host/db?sslmode=require", "unknown option"),
            ("sqlserver://sa:x%zz@host/db", "hex digits"),
            ("sqlserver://", "no host"),
            (
                "sqlserver://sa:x@host/db?trustServerCertificate=true&trustServerCertificateCA=/ca.pem",
                "contradict",
            ),
            (
                "sqlserver://sa:x@host/db?trustServerCertificateCA=/ca.pem&trustServerCertificate=true",
                "contradict",
            ),
        ] {
            let err = ConnectOptions::parse(s).unwrap_err();
            assert!(err.is_invalid_input(), "{s}: {err:?}");
            assert!(err.to_string().contains(says), "{s}: {err}");
        }
    }

    #[test]
    fn timeouts_are_bounded() {
        let o = ConnectOptions::parse("sqlserver://sa:x@h/db").unwrap();
        assert!(o.clone().lock_timeout(Duration::ZERO).is_err());
        assert!(o.clone().connect_timeout(Duration::from_secs(601)).is_err());
        assert_eq!(
            o.lock_timeout(Duration::from_secs(2))
                .unwrap()
                .get_lock_timeout(),
            Duration::from_secs(2)
        );
    }
}
