//! TLS to PostgreSQL as libpq's `sslmode` and `sslrootcert` describe it, on rustls.
//!
//! tokio-postgres itself knows only `disable`, `prefer` and `require`, refuses
//! `sslrootcert`, and encrypts only when given a connector. [`connect_config`] reads all of
//! libpq's modes from a connection string and returns the driver's configuration with a
//! [`PgTls`] connector that does what the mode promises; use that connector for the pool,
//! for the listener, and in [`crate::PgStoreConfig::tls`], so that cancelling a statement
//! (which opens a connection of its own) is encrypted the same way.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use outbox_core::{OutboxError, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres::config::SslMode as DriverMode;
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::Socket;
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode`: whether to encrypt, and what to verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Never encrypt.
    Disable,
    /// Encrypt when the server offers it, without verifying its certificate (the default).
    Prefer,
    /// Always encrypt; verify the certificate's chain only when `sslrootcert` names a file.
    Require,
    /// Always encrypt and verify the certificate's chain (not its host name).
    VerifyCa,
    /// Always encrypt and verify the certificate's chain and that it names the host.
    VerifyFull,
}

impl FromStr for SslMode {
    type Err = OutboxError;

    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "disable" => Self::Disable,
            "prefer" | "allow" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            other => {
                return Err(OutboxError::invalid(
                    "sslmode",
                    format!(
                        "{other:?} (expected disable, prefer, require, verify-ca or verify-full)"
                    ),
                ))
            }
        })
    }
}

/// The TLS connector for one connection string: rustls, verifying as its mode says.
/// Cheap to clone.
#[derive(Clone)]
pub struct PgTls {
    mode: SslMode,
    connect: MakeRustlsConnect,
}

impl std::fmt::Debug for PgTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgTls")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl PgTls {
    /// A connector for `mode`, trusting the PEM certificates in `root_file` or, without
    /// one (or with `system`), the platform's roots.
    pub fn new(mode: SslMode, root_file: Option<&Path>) -> Result<Self> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let root_file = root_file.filter(|p| p.as_os_str() != "system");
        // As libpq: `require` with a root certificate verifies the chain.
        let verify = match (mode, root_file) {
            (SslMode::Require, Some(_)) => SslMode::VerifyCa,
            (m, _) => m,
        };
        let chain = match verify {
            SslMode::Disable | SslMode::Prefer | SslMode::Require => None,
            SslMode::VerifyCa | SslMode::VerifyFull => Some(
                WebPkiServerVerifier::builder_with_provider(
                    Arc::new(roots(root_file)?),
                    provider.clone(),
                )
                .build()
                .map_err(|e| OutboxError::invalid("sslrootcert", e.to_string()))?,
            ),
        };
        let verifier = Arc::new(Verifier {
            provider: provider.clone(),
            chain,
            check_name: verify == SslMode::VerifyFull,
        });
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| OutboxError::Unsupported(format!("TLS: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(Self {
            mode,
            connect: MakeRustlsConnect::new(config),
        })
    }

    /// The mode it was built for.
    pub fn mode(&self) -> SslMode {
        self.mode
    }
}

impl MakeTlsConnect<Socket> for PgTls {
    type Stream = <MakeRustlsConnect as MakeTlsConnect<Socket>>::Stream;
    type TlsConnect = <MakeRustlsConnect as MakeTlsConnect<Socket>>::TlsConnect;
    type Error = <MakeRustlsConnect as MakeTlsConnect<Socket>>::Error;

    fn make_tls_connect(
        &mut self,
        domain: &str,
    ) -> std::result::Result<Self::TlsConnect, Self::Error> {
        MakeTlsConnect::<Socket>::make_tls_connect(&mut self.connect, domain)
    }
}

fn roots(file: Option<&Path>) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    match file {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
                .map_err(|e| {
                    OutboxError::invalid(
                        "sslrootcert",
                        format!("cannot read {}: {e}", path.display()),
                    )
                })?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(OutboxError::invalid(
                    "sslrootcert",
                    format!("{} holds no usable certificate", path.display()),
                ));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            if roots.is_empty() {
                return Err(OutboxError::invalid(
                    "sslrootcert",
                    "no root certificates found on this system: name a file with sslrootcert=PATH",
                ));
            }
        }
    }
    Ok(roots)
}

/// Verifies a server's certificate as far as the mode asks: not at all (libpq's
/// `prefer` and `require`), its chain to a trusted root (`verify-ca`), or its chain and
/// its host name (`verify-full`). The handshake's signatures are verified in every mode.
#[derive(Debug)]
struct Verifier {
    provider: Arc<CryptoProvider>,
    chain: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// Reads a connection string (a `postgres://` URL or `key=value` pairs) with libpq's TLS
/// settings: `sslmode` (every libpq mode) and `sslrootcert`. Returns the driver's
/// configuration and the connector to connect with. A `statement_mode` parameter is read
/// and removed too; [`connect_settings`] returns it.
pub fn connect_config(s: &str) -> Result<(tokio_postgres::Config, PgTls)> {
    let settings = connect_settings(s)?;
    Ok((settings.config, settings.tls))
}

/// What a connection string says, read by [`connect_settings`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PgConnectSettings {
    /// The driver's configuration: everything but the settings below. Where it lists
    /// several hosts and sets no `connect_timeout`, each host gets
    /// [`MULTI_HOST_CONNECT_TIMEOUT`], so that a host that does not answer at all leaves
    /// time to try the next one within a call's deadline.
    pub config: tokio_postgres::Config,
    /// The TLS connector (`sslmode`, `sslrootcert`).
    pub tls: PgTls,
    /// How the store sends statements (`statement_mode=named|unnamed`; named unless
    /// given): see [`crate::StatementMode`].
    pub statement_mode: crate::StatementMode,
}

/// How long connecting to one host may take when a connection string lists several and
/// sets no `connect_timeout` of its own: 3 seconds, well inside the default call deadline
/// (10 s), so that a first host that never answers (a failed primary whose address no
/// longer routes) does not take the whole deadline before the second is tried.
pub const MULTI_HOST_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// Reads a connection string as [`connect_config`] does, and also the store's own
/// `statement_mode` parameter.
pub fn connect_settings(s: &str) -> Result<PgConnectSettings> {
    let split = split_settings(s)?;
    let mut config = tokio_postgres::Config::from_str(&split.rest).map_err(|e| {
        OutboxError::invalid(
            "database url",
            format!("not a PostgreSQL connection string: {e}"),
        )
    })?;
    config.ssl_mode(match split.mode {
        SslMode::Disable => DriverMode::Disable,
        SslMode::Prefer => DriverMode::Prefer,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => DriverMode::Require,
    });
    if config.get_hosts().len() > 1 && config.get_connect_timeout().is_none() {
        config.connect_timeout(MULTI_HOST_CONNECT_TIMEOUT);
    }
    let tls = PgTls::new(split.mode, split.root.as_deref().map(Path::new))?;
    Ok(PgConnectSettings {
        config,
        tls,
        statement_mode: split.statements,
    })
}

/// A connection string with the settings only the store reads taken out.
#[derive(Debug)]
struct Split {
    /// What the driver reads.
    rest: String,
    mode: SslMode,
    root: Option<String>,
    statements: crate::StatementMode,
}

/// The connection string without `sslmode`, `sslrootcert` and `statement_mode`, and
/// their values.
fn split_settings(s: &str) -> Result<Split> {
    let mut mode = SslMode::Prefer;
    let mut root = None;
    let mut statements = crate::StatementMode::default();
    let mut take = |key: &str, value: &str| -> Result<bool> {
        match key {
            "sslmode" => {
                mode = value.parse()?;
                Ok(true)
            }
            "sslrootcert" => {
                root = Some(value.to_owned());
                Ok(true)
            }
            "statement_mode" => {
                statements = value.parse()?;
                Ok(true)
            }
            _ => Ok(false),
        }
    };
    let rest = if s.starts_with("postgres://") || s.starts_with("postgresql://") {
        match s.split_once('?') {
            None => s.to_owned(),
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&') {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    if !take(k, &percent_decode(v))? {
                        kept.push(pair);
                    }
                }
                if kept.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
        }
    } else {
        let mut kept = Vec::new();
        for word in s.split_whitespace() {
            let (k, v) = word.split_once('=').unwrap_or((word, ""));
            if !take(k.trim(), v.trim().trim_matches('\''))? {
                kept.push(word);
            }
        }
        kept.join(" ")
    };
    Ok(Split {
        rest,
        mode,
        root,
        statements,
    })
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (
            bytes[i],
            s.get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok()),
        ) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_settings_are_taken_out_and_the_rest_is_kept() {
        let split = split_settings(
            "postgres://u:p@db:5432/app?sslmode=verify-full&application_name=x&sslrootcert=%2Fetc%2Fca.pem&statement_mode=unnamed",
        )
        .unwrap();
        assert_eq!(split.rest, "postgres://u:p@db:5432/app?application_name=x");
        assert_eq!(split.mode, SslMode::VerifyFull);
        assert_eq!(split.root.as_deref(), Some("/etc/ca.pem"));
        assert_eq!(split.statements, crate::StatementMode::Unnamed);

        let split = split_settings(
            "host=db user=u sslmode=require sslrootcert=/ca.pem dbname=app statement_mode=named",
        )
        .unwrap();
        assert_eq!(split.rest, "host=db user=u dbname=app");
        assert_eq!(split.mode, SslMode::Require);
        assert_eq!(split.root.as_deref(), Some("/ca.pem"));
        assert_eq!(split.statements, crate::StatementMode::Named);

        let split = split_settings("postgres://u@db/app").unwrap();
        assert_eq!(
            (
                split.rest.as_str(),
                split.mode,
                split.root,
                split.statements
            ),
            (
                "postgres://u@db/app",
                SslMode::Prefer,
                None,
                crate::StatementMode::Named
            )
        );
        let err = split_settings("postgres://u@db/app?statement_mode=off").unwrap_err();
        assert!(err.to_string().contains("statement mode"), "{err}");
    }

    #[test]
    fn several_hosts_get_a_connect_timeout_each_unless_one_is_set() {
        let one = connect_settings("postgres://u@a/app").unwrap();
        assert_eq!(one.config.get_connect_timeout(), None);
        let two = connect_settings("postgres://u@a,b/app?target_session_attrs=read-write").unwrap();
        assert_eq!(
            two.config.get_connect_timeout(),
            Some(&MULTI_HOST_CONNECT_TIMEOUT)
        );
        let set = connect_settings("host=a,b user=u connect_timeout=7").unwrap();
        assert_eq!(
            set.config.get_connect_timeout(),
            Some(&std::time::Duration::from_secs(7))
        );
    }

    #[test]
    fn every_mode_gives_the_driver_a_mode_it_knows() {
        for (mode, driver) in [
            ("disable", DriverMode::Disable),
            ("prefer", DriverMode::Prefer),
            ("require", DriverMode::Require),
            ("verify-ca", DriverMode::Require),
            ("verify-full", DriverMode::Require),
        ] {
            let url = format!("postgres://u@127.0.0.1/app?sslmode={mode}");
            match connect_config(&url) {
                Ok((config, tls)) => {
                    assert_eq!(config.get_ssl_mode(), driver, "{mode}");
                    assert_eq!(tls.mode(), mode.parse().unwrap());
                }
                // verify-* need root certificates; a machine without any says so.
                Err(e) => assert!(
                    mode.starts_with("verify") && e.to_string().contains("sslrootcert"),
                    "{e}"
                ),
            }
        }
    }

    #[test]
    fn bad_settings_are_refused_clearly() {
        let err = connect_config("postgres://u@h/db?sslmode=sometimes").unwrap_err();
        assert!(
            err.is_invalid_input() && err.to_string().contains("verify-full"),
            "{err}"
        );
        let err =
            connect_config("postgres://u@h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem")
                .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");
    }
}
