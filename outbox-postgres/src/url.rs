//! Connection strings in messages.

/// `conn` without its password, fit for logs and error messages. Both forms the driver
/// reads are handled: a URL loses the password of its user part and any `password`
/// query parameter (`postgres://user:secret@host/db?sslmode=require` →
/// `postgres://user@host/db?sslmode=require`), and a `key=value` string has its
/// `password` value replaced (`host=h password=secret` → `host=h password=***`).
pub fn redact_url(conn: &str) -> String {
    // A URL starts with its scheme; `://` anywhere else is part of a key=value string.
    let scheme = conn.find("://").filter(|&end| {
        end > 0
            && conn[..end]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    match scheme {
        Some(end) => redact_uri(conn, end + 3),
        None => redact_key_values(conn),
    }
}

/// Read the way the driver reads it: the user part runs to the first `@` anywhere (its
/// password after the first `:`), and the parameters start at the first `?` after it.
fn redact_uri(url: &str, authority_start: usize) -> String {
    let (scheme, rest) = url.split_at(authority_start);
    let mut out = String::with_capacity(url.len());
    out.push_str(scheme);
    let rest = match rest.find('@') {
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
            !key.eq_ignore_ascii_case("password") && !key.contains('%')
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
        if key == "password" {
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
        ] {
            assert_eq!(redact_url(given), shown, "{given}");
        }
    }
}
