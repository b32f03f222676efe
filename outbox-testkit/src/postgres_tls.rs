//! A second throwaway PostgreSQL cluster that accepts connections only over TLS, with a
//! certificate for `localhost` issued by a test CA of its own: what a managed PostgreSQL
//! looks like to a client. Started once per test binary.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

use crate::postgres::{init_cluster, start};

/// The TLS-only server.
#[derive(Debug)]
pub struct TlsPgServer {
    /// `postgres://postgres@localhost:PORT/postgres`, without TLS settings.
    pub url: String,
    /// The PEM file of the CA that issued the server's certificate.
    pub ca_file: PathBuf,
    /// The PEM file of another CA, which issued nothing this server uses.
    pub other_ca_file: PathBuf,
}

static SERVER: OnceLock<Result<TlsPgServer, String>> = OnceLock::new();

/// The TLS-only server for this test binary, started on first use; `Err` says why there
/// is none (no server binaries).
pub fn tls_server() -> Result<&'static TlsPgServer, String> {
    SERVER.get_or_init(start_tls).as_ref().map_err(Clone::clone)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn new_ca(name: &str) -> Result<CertifiedIssuer<'static, KeyPair>, String> {
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(|e| e.to_string())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let key = KeyPair::generate().map_err(|e| e.to_string())?;
    CertifiedIssuer::self_signed(params, key).map_err(|e| e.to_string())
}

fn start_tls() -> Result<TlsPgServer, String> {
    let ca = new_ca("outbox test CA")?;
    let other = new_ca("another test CA")?;
    let server_key = KeyPair::generate().map_err(|e| e.to_string())?;
    let server_cert = CertificateParams::new(vec!["localhost".to_owned()])
        .and_then(|p| p.signed_by(&server_key, &ca))
        .map_err(|e| e.to_string())?;

    let extra = "-c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key".to_owned();
    let (cluster, dir) = init_cluster(extra)?;
    write(&cluster.data.join("server.crt"), &server_cert.pem())?;
    let key_path = cluster.data.join("server.key");
    write(&key_path, &server_key.serialize_pem())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| e.to_string())?;
    }
    // Only encrypted TCP connections are let in; plain ones are refused by name.
    write(
        &cluster.data.join("pg_hba.conf"),
        "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n",
    )?;
    let ca_file = dir.join("ca.pem");
    let other_ca_file = dir.join("other-ca.pem");
    write(&ca_file, &ca.pem())?;
    write(&other_ca_file, &other.pem())?;
    start(&cluster, &dir)?;
    Ok(TlsPgServer {
        url: format!("postgres://postgres@localhost:{}/postgres", cluster.port),
        ca_file,
        other_ca_file,
    })
}
