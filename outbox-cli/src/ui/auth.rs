//! Who may use the pages: the token a reachable listener needs, the loopback names a
//! listener without one answers to, the same-site check of a write, and who a request
//! came from, for the log of writes.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use outbox_core::{OutboxError, Result};

use super::state::Ui;

/// The shortest token `--auth-token-file` may hold.
const MIN_TOKEN_CHARS: usize = 16;

/// Refuses a listener other machines can reach unless a token guards it.
pub(super) fn check_listen(addr: SocketAddr, guarded: bool) -> Result<()> {
    if addr.ip().is_loopback() || guarded {
        return Ok(());
    }
    Err(OutboxError::invalid(
        "--listen",
        format!(
            "refusing to serve the outbox on {addr}, which other machines can reach, without \
             --auth-token-file: anyone reaching it would read every entry (listen on \
             127.0.0.1, or give a token)"
        ),
    ))
}

/// The token in `path`: its first line, trimmed, at least [`MIN_TOKEN_CHARS`] long.
pub(super) fn read_token(path: &std::path::Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        OutboxError::invalid(
            "--auth-token-file",
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    let token = text.lines().next().unwrap_or("").trim().to_owned();
    if token.chars().count() < MIN_TOKEN_CHARS {
        return Err(OutboxError::invalid(
            "--auth-token-file",
            format!(
                "{} must hold a token of at least {MIN_TOKEN_CHARS} characters on its first line",
                path.display()
            ),
        ));
    }
    Ok(token)
}

/// Lets a request through when it carries the token, or when no token is set and it was
/// sent to a loopback name. Without a token the server listens on loopback only, and a
/// request naming another host there is another site's page that had its name resolve to
/// this machine (DNS rebinding): refused, so such a page can neither read nor write.
pub(super) async fn guard(State(ui): State<Arc<Ui>>, request: Request, next: Next) -> Response {
    if ui.token.is_none() && !loopback_host(request.headers()) {
        return (
            StatusCode::MISDIRECTED_REQUEST,
            "without --auth-token-file the outbox's pages answer only to a loopback name \
             (127.0.0.1, localhost, [::1])\n",
        )
            .into_response();
    }
    match &ui.token {
        Some(token) if !carries(request.headers(), token) => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Basic realm=\"outbox\"")],
            "the outbox's pages need the token (basic auth, any user, the token as password; or a bearer token)\n",
        )
            .into_response(),
        _ => next.run(request).await,
    }
}

/// Whether `headers` carry `token`, as a bearer token or a basic-auth password.
pub(super) fn carries(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let given = if let Some(bearer) = value.strip_prefix("Bearer ") {
        bearer.trim().to_owned()
    } else if let Some(basic) = value.strip_prefix("Basic ") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic.trim())
            .ok()
            .and_then(|d| String::from_utf8(d).ok());
        match decoded.as_deref().and_then(|d| d.split_once(':')) {
            Some((_, password)) => password.to_owned(),
            None => return false,
        }
    } else {
        return false;
    };
    same_secret(&given, token)
}

/// Whether the request's `Host` names this machine's loopback interface: `localhost`,
/// an address in 127.0.0.0/8, or `[::1]`, with any port.
pub(super) fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `given` is `secret`, every byte compared, so the time taken says nothing of
/// where they differ.
pub(super) fn same_secret(given: &str, secret: &str) -> bool {
    given.len() == secret.len()
        && given
            .bytes()
            .zip(secret.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Who sent a request, for the log, and the address it came from: with a token
/// (`authenticated`, checked before the request got here) the user name the client gave
/// with it, or how the token came; without one, nobody in particular.
pub(super) fn who(headers: &HeaderMap, peer: SocketAddr, authenticated: bool) -> String {
    let auth = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .filter(|_| authenticated);
    let name = match auth {
        Some(value) if value.starts_with("Bearer ") => "a bearer of the token".to_owned(),
        Some(value) => value
            .strip_prefix("Basic ")
            .and_then(|b| {
                base64::engine::general_purpose::STANDARD
                    .decode(b.trim())
                    .ok()
            })
            .and_then(|d| String::from_utf8(d).ok())
            .and_then(|d| d.split_once(':').map(|(user, _)| user.to_owned()))
            .filter(|user| !user.is_empty())
            .map_or_else(
                || "someone with the token".to_owned(),
                |user| {
                    let user: String = user.chars().filter(|c| !c.is_control()).collect();
                    format!("user {user:?}")
                },
            ),
        None => "an unauthenticated client".to_owned(),
    };
    format!("{name} at {peer}")
}

/// False when the request names an origin (or, lacking one, a referer) whose host is
/// neither the one it was sent to nor, behind a reverse proxy, the one the proxy says it
/// forwarded (`X-Forwarded-Host`, which a page of another site cannot set on a form): a
/// form posted from another site. Browsers send `Origin` with every form post. The scheme
/// is not compared (a proxy may take https in front of this plain HTTP).
pub(super) fn same_origin(headers: &HeaderMap) -> bool {
    let Some(from) = headers
        .get(header::ORIGIN)
        .or_else(|| headers.get(header::REFERER))
    else {
        return true;
    };
    let Ok(from) = from.to_str() else {
        return false;
    };
    let Some(from_host) = from
        .strip_prefix("http://")
        .or_else(|| from.strip_prefix("https://"))
        .and_then(|rest| rest.split('/').next())
    else {
        return false;
    };
    [
        header::HOST,
        header::HeaderName::from_static("x-forwarded-host"),
    ]
    .iter()
    .filter_map(|name| headers.get(name).and_then(|v| v.to_str().ok()))
    .any(|host| host.trim().eq_ignore_ascii_case(from_host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reachable_listener_needs_a_token() {
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let open: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert!(check_listen(local, false).is_ok());
        assert!(check_listen(open, true).is_ok());
        let err = check_listen(open, false).unwrap_err();
        assert!(err.to_string().contains("--auth-token-file"), "{err}");
    }

    #[test]
    fn only_loopback_names_are_loopback_hosts() {
        let host = |value: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, value.parse().unwrap());
            loopback_host(&h)
        };
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "[::1]:8080",
            "127.1.2.3",
        ] {
            assert!(host(ok), "{ok}");
        }
        for not in [
            "evil.example:8080",
            "192.168.1.5:8080",
            "[::2]:80",
            "localhost.evil.example",
        ] {
            assert!(!host(not), "{not}");
        }
        assert!(!loopback_host(&HeaderMap::new()));
    }

    #[test]
    fn the_token_is_taken_as_bearer_or_basic_password_only() {
        let token = "0123456789abcdef";
        let with = |value: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::AUTHORIZATION, value.parse().unwrap());
            carries(&h, token)
        };
        assert!(with("Bearer 0123456789abcdef"));
        let basic = base64::engine::general_purpose::STANDARD.encode("ops:0123456789abcdef");
        assert!(with(&format!("Basic {basic}")));
        let wrong = base64::engine::general_purpose::STANDARD.encode("0123456789abcdef:x");
        assert!(!with(&format!("Basic {wrong}")));
        assert!(!with("Bearer 0123456789abcdeX"));
        assert!(!with("Bearer 0123"));
        assert!(!carries(&HeaderMap::new(), token));
    }

    #[test]
    fn a_post_from_another_site_is_told_apart() {
        let with = |pairs: &[(header::HeaderName, &str)]| {
            let mut h = HeaderMap::new();
            for (name, value) in pairs {
                h.insert(name.clone(), value.parse().unwrap());
            }
            same_origin(&h)
        };
        let host = (header::HOST, "127.0.0.1:8080");
        assert!(
            with(std::slice::from_ref(&host)),
            "no origin: not a browser form"
        );
        assert!(with(&[
            host.clone(),
            (header::ORIGIN, "http://127.0.0.1:8080")
        ]));
        assert!(with(&[
            host.clone(),
            (
                header::REFERER,
                "https://127.0.0.1:8080/entries?status=failed"
            )
        ]));
        assert!(!with(&[
            host.clone(),
            (header::ORIGIN, "https://evil.example")
        ]));
        assert!(!with(&[host.clone(), (header::ORIGIN, "null")]));
        assert!(!with(&[(header::ORIGIN, "http://127.0.0.1:8080")]));
        let proxied = [
            (header::HOST, "127.0.0.1:8080"),
            (
                header::HeaderName::from_static("x-forwarded-host"),
                "outbox.example.com",
            ),
            (header::ORIGIN, "https://Outbox.Example.com"),
        ];
        assert!(with(&proxied), "behind a proxy that says what it forwarded");
        let mut unreadable = HeaderMap::new();
        unreadable.insert(header::HOST, "127.0.0.1:8080".parse().unwrap());
        unreadable.insert(
            header::ORIGIN,
            header::HeaderValue::from_bytes(b"http://\xff").unwrap(),
        );
        assert!(
            !same_origin(&unreadable),
            "an origin that cannot be read is not ours"
        );
    }

    #[test]
    fn the_log_names_who_asked_without_their_secret() {
        let peer: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let mut h = HeaderMap::new();
        assert_eq!(
            who(&h, peer, false),
            "an unauthenticated client at 127.0.0.1:5000"
        );
        let basic = base64::engine::general_purpose::STANDARD.encode("ops:s3cret-token-for-tests");
        h.insert(
            header::AUTHORIZATION,
            format!("Basic {basic}").parse().unwrap(),
        );
        assert_eq!(who(&h, peer, true), "user \"ops\" at 127.0.0.1:5000");
        assert_eq!(
            who(&h, peer, false),
            "an unauthenticated client at 127.0.0.1:5000",
            "a name nobody checked is not taken"
        );
        h.insert(header::AUTHORIZATION, "Bearer s3cret".parse().unwrap());
        assert!(!who(&h, peer, true).contains("s3cret"));
    }
}
