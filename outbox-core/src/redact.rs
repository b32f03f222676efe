//! Connection strings and broker URLs in messages: one rule for every store and emitter.

/// `conn` without its password, fit for logs and error messages, whichever form it is
/// written in:
/// - a URL (`postgres://`, `mysql://`, `sqlserver://`, `amqp://`, …) loses the password
///   of its user part and every `password` or `pwd` query parameter
///   (`postgres://user:secret@host/db?sslmode=require` →
///   `postgres://user@host/db?sslmode=require`);
/// - `key=value` pairs separated by `;` (ADO.NET, JDBC) have their `Password`/`Pwd`
///   value replaced, in any case (`Server=h;Pwd=secret` → `Server=h;Pwd=***`);
/// - `key=value` pairs separated by spaces (libpq) have their `password` value replaced,
///   quoted or not (`host=h password=secret` → `host=h password=***`).
///
/// A password holding a raw `@` or `?` is hidden whole: the user part is read as widely
/// as any of the drivers read it.
pub fn redact_url(conn: &str) -> String {
    // A URL starts with its scheme; `://` anywhere else (`jdbc:sqlserver://h;…`) is part
    // of a key=value string.
    let scheme = conn.find("://").filter(|&end| {
        end > 0
            && conn[..end]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    match scheme {
        Some(end) => redact_uri(conn, end + 3),
        // Without a URL, which form a string is in cannot be told for sure (a libpq value
        // may hold a `;`, an ADO.NET value a space), so a string with a `;` goes through
        // both readings: whatever either reads as a password is hidden.
        None if conn.contains(';') => redact_semicolon_pairs(&redact_key_values(conn)),
        None => redact_key_values(conn),
    }
}

/// Whether `key` names a password in any form this module reads.
fn is_password_key(key: &str) -> bool {
    let key = key.trim();
    key.eq_ignore_ascii_case("password") || key.eq_ignore_ascii_case("pwd")
}

/// `key=value` pairs separated by `;`: a value runs to the next `;`.
fn redact_semicolon_pairs(conn: &str) -> String {
    conn.split(';')
        .map(|part| match part.split_once('=') {
            Some((key, _)) if is_password_key(key) => format!("{key}=***"),
            _ => part.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// The user part starts after the scheme and runs past the first `@` anywhere (where
/// PostgreSQL's driver ends it) to the last `@` before the host's end (where URL parsers
/// end it), so what either reads as the password is hidden; the password is what follows
/// the first `:`. Parameters start at the first `?` after the user part.
fn redact_uri(url: &str, authority_start: usize) -> String {
    let (scheme, rest) = url.split_at(authority_start);
    let mut out = String::with_capacity(url.len());
    out.push_str(scheme);
    let user_end = rest.find('@').map(|first| {
        let host_end = rest[first..]
            .find(['/', '?', '#'])
            .map_or(rest.len(), |i| first + i);
        rest[..host_end].rfind('@').unwrap_or(first)
    });
    let rest = match user_end {
        Some(at) => {
            out.push_str(rest[..at].split(':').next().unwrap_or_default());
            &rest[at..]
        }
        None => rest,
    };
    let Some((before, query)) = rest.split_once('?') else {
        out.push_str(rest);
        return out;
    };
    out.push_str(before);
    // A key written percent-encoded (`pass%77ord`) may decode to `password`: such keys
    // are dropped too, whatever they decode to.
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let key = pair.split('=').next().unwrap_or_default();
            !is_password_key(key) && !key.contains('%')
        })
        .collect();
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    out
}

/// `key=value` pairs separated by spaces; a value may be single-quoted, with `\'` and
/// `\\` escapes. Every `password` value becomes `***`; the rest is copied as written.
fn redact_key_values(conn: &str) -> String {
    let mut out = String::with_capacity(conn.len());
    let mut rest = conn;
    while !rest.is_empty() {
        // Whitespace between pairs, as written.
        let spaces = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..spaces]);
        rest = &rest[spaces..];
        let Some(eq) = rest.find('=') else {
            out.push_str(rest);
            break;
        };
        let key = rest[..eq].trim();
        out.push_str(&rest[..=eq]);
        rest = &rest[eq + 1..];
        let spaces = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..spaces]);
        rest = &rest[spaces..];
        let value_len = value_length(rest);
        if is_password_key(key) {
            out.push_str("***");
        } else {
            out.push_str(&rest[..value_len]);
        }
        rest = &rest[value_len..];
    }
    out
}

/// The length of the value at the start of `s`: a quoted string up to its closing quote
/// (or the end), or everything up to the next whitespace. In both, a backslash takes the
/// next character as it is (so `a\ b` is one value), as the driver reads them.
fn value_length(s: &str) -> usize {
    let quoted = s.starts_with('\'');
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(usize::from(quoted)) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '\'' if quoted => return i + 1,
            c if !quoted && c.is_whitespace() => return i,
            _ => {}
        }
    }
    s.len()
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn passwords_never_reach_messages() {
        for (given, shown) in [
            ("postgres://u:secret@h:5432/db", "postgres://u@h:5432/db"),
            ("postgres://u@h/db", "postgres://u@h/db"),
            ("postgres://h/db", "postgres://h/db"),
            (
                "postgres://u:p@h/db?sslmode=require&password=secret&application_name=x",
                "postgres://u@h/db?sslmode=require&application_name=x",
            ),
            ("postgres://h/db?password=secret", "postgres://h/db"),
            (
                "host=h user=u password=secret dbname=d",
                "host=h user=u password=*** dbname=d",
            ),
            (
                "host=h password = 'it\\'s secret' port=5",
                "host=h password = *** port=5",
            ),
            ("postgres://h/db?x=a@b:c", "postgres://h/db?x=a@b:c"),
            ("postgres://us?er:secret@h/db", "postgres://us?er@h/db"),
            ("host=a\\\tb password=secret", "host=a\\\tb password=***"),
            ("mysql://app:hunter2@db:3306/x", "mysql://app@db:3306/x"),
            ("mysql://root@db/x", "mysql://root@db/x"),
            ("amqp://u:secret@h:1/v", "amqp://u@h:1/v"),
            ("amqp://u:p@ss@h/v", "amqp://u@h/v"),
            (
                "sqlserver://sa:s3cret@h:1433/db?encrypt=true",
                "sqlserver://sa@h:1433/db?encrypt=true",
            ),
            ("sqlserver://h/db?PWD=s3cret", "sqlserver://h/db"),
            (
                "Server=h;User Id=sa;Password=s3 cret;Encrypt=true",
                "Server=h;User Id=sa;Password=***;Encrypt=true",
            ),
            (
                "jdbc:sqlserver://h;user=sa;pwd=s3cret",
                "jdbc:sqlserver://h;user=sa;pwd=***",
            ),
            ("sqlserver://h/db", "sqlserver://h/db"),
            ("no url at all", "no url at all"),
            (
                "host=localhost user=me password=hunter22 dbname=x;y",
                "host=localhost user=me password=*** dbname=x;y",
            ),
            ("Password=a b;Server=h", "Password=***;Server=h"),
        ] {
            assert_eq!(redact_url(given), shown, "{given}");
        }
    }
}
