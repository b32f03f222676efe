//! Reading what `drain --metrics-addr` and `outbox ui` serve.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

/// GET /metrics, the body; empty while nothing listens yet.
pub fn scrape(port: u16) -> String {
    get(port, "/metrics", "")
        .map(|(_, body)| body)
        .unwrap_or_default()
}

/// GET `path` on the loopback `port` with `headers` (whole `Name: value\r\n` lines) added:
/// the status and the body, `None` while nothing listens yet.
pub fn get(port: u16, path: &str, headers: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{headers}Connection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    let status = reply.split(' ').nth(1)?.parse().ok()?;
    let body = reply
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    Some((status, body))
}

/// The value of the series `name` (with its labels, as printed), if present.
pub fn value(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| {
            l.strip_prefix(series)
                .and_then(|rest| rest.strip_prefix(' '))
        })
        .and_then(|v| v.trim().parse().ok())
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
