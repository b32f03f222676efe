//! [`WebhookOptions`]: where the emitter posts, what it signs with, how long it waits.

use std::fmt;
use std::time::Duration;

use crate::{WebhookError, WebhookSecret};

/// The emitter's settings. Their `Debug` form shows the URL's scheme, host and port only:
/// webhook URLs often carry a token in their path or query.
#[derive(Clone)]
pub struct WebhookOptions {
    /// Where every entry is POSTed: an `http://` or `https://` URL.
    pub url: String,
    /// The keys each message is signed with, every one of them (several while a key is
    /// rotated); with none, messages go unsigned and receivers cannot verify them.
    pub secrets: Vec<WebhookSecret>,
    /// How long one request may take from connecting to the response's status.
    pub timeout: Duration,
    /// How long connecting may take (within `timeout`).
    pub connect_timeout: Duration,
}

impl fmt::Debug for WebhookOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookOptions")
            .field("url", &shown(&self.url))
            .field("secrets", &self.secrets)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

/// `url` as messages and `Debug` forms show it: scheme, host and port, then `/…` when
/// anything else was there (a path, a query, a user or password), since that is where
/// webhook URLs keep their tokens.
pub(crate) fn shown(url: &str) -> String {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return "(a URL that does not parse)".into();
    };
    let host = parsed.host_str().unwrap_or_default();
    let port = parsed.port().map(|p| format!(":{p}")).unwrap_or_default();
    let more = parsed.path() != "/"
        || parsed.query().is_some()
        || !parsed.username().is_empty()
        || parsed.password().is_some();
    let rest = if more { "/…" } else { "" };
    format!("{}://{host}{port}{rest}", parsed.scheme())
}

impl WebhookOptions {
    /// Posts to `url`, unsigned, with a 30 s request timeout and 10 s to connect.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            secrets: Vec::new(),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
        }
    }

    /// Signs with `secret` too.
    pub fn secret(mut self, secret: WebhookSecret) -> Self {
        self.secrets.push(secret);
        self
    }

    /// Signs with every secret in `text`: `whsec_…` values separated by spaces, commas or
    /// newlines (as an environment variable or a file holds them).
    pub fn secrets_from_text(mut self, text: &str) -> Result<Self, WebhookError> {
        for value in text
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|v| !v.is_empty())
        {
            self.secrets.push(WebhookSecret::parse(value)?);
        }
        Ok(self)
    }

    /// One request's time limit.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The time limit for connecting.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The URL, checked: http or https (https only when built with the `tls` feature), with
    /// a host; and time limits above zero.
    pub fn validate(&self) -> Result<reqwest::Url, WebhookError> {
        let url = reqwest::Url::parse(&self.url)
            .map_err(|e| WebhookError::Config(format!("webhook URL: {e}")))?;
        match url.scheme() {
            "http" => {}
            "https" if cfg!(feature = "tls") => {}
            "https" => {
                return Err(WebhookError::Config(
                    "https webhook URLs need outbox-webhook's `tls` feature".into(),
                ))
            }
            other => {
                return Err(WebhookError::Config(format!(
                    "webhook URL {}: the scheme is {other:?}, not http or https",
                    shown(&self.url)
                )))
            }
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(WebhookError::Config(format!(
                "webhook URL {} has no host",
                shown(&self.url)
            )));
        }
        if self.timeout.is_zero() || self.connect_timeout.is_zero() {
            return Err(WebhookError::Config(
                "webhook timeouts must be above zero".into(),
            ));
        }
        Ok(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_limits_are_checked() {
        assert!(WebhookOptions::new("http://127.0.0.1:9/hook")
            .validate()
            .is_ok());
        for bad in ["ftp://x/y", "127.0.0.1:9/hook", "http://", "not a url", ""] {
            let error = WebhookOptions::new(bad).validate().unwrap_err();
            assert!(error.to_string().contains("webhook URL"), "{bad}: {error}");
        }
        let zero = WebhookOptions::new("http://h/").timeout(Duration::ZERO);
        assert!(zero.validate().is_err());
        let zero = WebhookOptions::new("http://h/").connect_timeout(Duration::ZERO);
        assert!(zero.validate().is_err());
    }

    #[test]
    fn tokens_in_the_url_are_never_shown() {
        let url = "https://user:pass@hooks.example.com:8443/services/T0/B0/tok3n?sig=s3cret";
        let options = WebhookOptions::new(url);
        let shown = format!("{options:?}");
        assert!(
            shown.contains("https://hooks.example.com:8443/…"),
            "{shown}"
        );
        for secret in ["pass", "tok3n", "s3cret", "user"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        let error = WebhookOptions::new("ftp://hooks.example.com/tok3n")
            .validate()
            .unwrap_err()
            .to_string();
        assert!(error.contains("ftp://hooks.example.com/…"), "{error}");
        assert!(!error.contains("tok3n"), "{error}");
        let plain = format!("{:?}", WebhookOptions::new("http://127.0.0.1:9/"));
        assert!(plain.contains("\"http://127.0.0.1:9\""), "{plain}");
    }

    #[test]
    fn secrets_are_read_from_text_and_a_bad_one_is_refused() {
        let a = WebhookSecret::from_key(vec![1; 32]).unwrap();
        let b = WebhookSecret::from_key(vec![2; 24]).unwrap();
        let text = format!(" {}\n{},\n", a.to_text(), b.to_text());
        let options = WebhookOptions::new("http://h/")
            .secrets_from_text(&text)
            .unwrap();
        assert_eq!(options.secrets, vec![a, b]);
        assert!(WebhookOptions::new("http://h/")
            .secrets_from_text("whsec_short")
            .is_err());
        let none = WebhookOptions::new("http://h/")
            .secrets_from_text(" \n")
            .unwrap();
        assert!(none.secrets.is_empty());
    }
}
