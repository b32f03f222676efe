//! Connection URLs in messages.

/// `url` without its password (`postgres://user:secret@host/db` → `postgres://user@host/db`),
/// fit for logs and error messages.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let user = url[scheme + 3..at].split(':').next().unwrap_or_default();
            format!("{}{user}@{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            super::redact_url("postgres://u:secret@h:5432/db"),
            "postgres://u@h:5432/db"
        );
        assert_eq!(super::redact_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(super::redact_url("postgres://h/db"), "postgres://h/db");
    }
}
