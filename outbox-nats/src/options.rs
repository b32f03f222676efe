//! What the emitter is told: where it publishes, how long it waits, which stream it needs.

use std::time::Duration;

use outbox_core::drain::url_params;

use crate::{NatsError, SubjectTemplate};

/// The stream the emitter makes sure of at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamSetup {
    /// Leave streams to the operator; a missing one shows as dead-lettered entries.
    None,
    /// Fail at start-up unless this stream exists.
    Check(String),
    /// Create this stream (capturing the template's subjects) unless it exists.
    Create(String),
}

/// The emitter's settings.
#[derive(Debug, Clone)]
pub struct NatsOptions {
    /// The subject of each entry.
    pub subject: SubjectTemplate,
    /// How long one publish may wait for the stream's acknowledgement.
    pub ack_timeout: Duration,
    /// The stream to check or create at start-up.
    pub stream: StreamSetup,
}

impl NatsOptions {
    /// Subject `{topic}` (the topic itself), a 10 s acknowledgement timeout, no stream set-up.
    pub fn new() -> Self {
        Self {
            subject: SubjectTemplate::new("{topic}").expect("a valid template"),
            ack_timeout: Duration::from_secs(10),
            stream: StreamSetup::None,
        }
    }

    /// Reads an emitter URL: `nats://host:port?subject=events.{topic}&stream=EVENTS`, with
    /// `create_stream=true` to create the stream when it is missing and `ack_timeout=5s`
    /// (`ms` or `s`). Returns the server address (the URL without its query) and the options.
    pub fn from_url(url: &str) -> Result<(String, Self), NatsError> {
        let (server, query) = url.split_once('?').unwrap_or((url, ""));
        if !(server.starts_with("nats://") || server.starts_with("tls://")) {
            return Err(NatsError::Config(format!(
                "{url:?} is not a nats:// or tls:// URL"
            )));
        }
        let mut options = Self::new();
        let (mut stream, mut create) = (None, false);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "subject" => options.subject = SubjectTemplate::new(value)?,
                "stream" if !value.is_empty() => stream = Some(value.to_owned()),
                "create_stream" => {
                    create = url_params::flag(key, value).map_err(NatsError::Config)?
                }
                "ack_timeout" => {
                    options.ack_timeout =
                        url_params::duration(key, value).map_err(NatsError::Config)?
                }
                _ => {
                    return Err(NatsError::Config(format!(
                        "unknown or empty parameter {pair:?} (known: subject, stream, \
                         create_stream, ack_timeout)"
                    )))
                }
            }
        }
        options.stream = match (stream, create) {
            (None, true) => {
                return Err(NatsError::Config(
                    "create_stream=true needs stream=NAME".into(),
                ))
            }
            (None, false) => StreamSetup::None,
            (Some(name), false) => StreamSetup::Check(name),
            (Some(name), true) => StreamSetup::Create(name),
        };
        options.validate()?;
        Ok((server.to_owned(), options))
    }

    /// Refuses a zero timeout and a stream name NATS would refuse.
    pub fn validate(&self) -> Result<(), NatsError> {
        if self.ack_timeout.is_zero() {
            return Err(NatsError::Config("ack_timeout must be positive".into()));
        }
        if let StreamSetup::Check(name) | StreamSetup::Create(name) = &self.stream {
            let bad = name.is_empty()
                || name
                    .chars()
                    .any(|c| c.is_whitespace() || matches!(c, '.' | '*' | '>' | '/' | '\\'));
            if bad {
                return Err(NatsError::Config(format!(
                    "{name:?} is not a valid stream name (no spaces, '.', '*', '>', '/', '\\\\')"
                )));
            }
        }
        Ok(())
    }
}

impl Default for NatsOptions {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_the_server_and_the_options() {
        let (server, o) = NatsOptions::from_url(
            "nats://127.0.0.1:4222?subject=events.{topic}&stream=EVENTS&create_stream=true&ack_timeout=500ms",
        )
        .unwrap();
        assert_eq!(server, "nats://127.0.0.1:4222");
        assert_eq!(o.subject.as_str(), "events.{topic}");
        assert_eq!(o.stream, StreamSetup::Create("EVENTS".into()));
        assert_eq!(o.ack_timeout, Duration::from_millis(500));
        let (_, o) = NatsOptions::from_url("nats://h:1?stream=S").unwrap();
        assert_eq!(o.stream, StreamSetup::Check("S".into()));
        let (_, o) = NatsOptions::from_url("nats://h:1").unwrap();
        assert_eq!(
            (o.stream, o.subject.as_str()),
            (StreamSetup::None, "{topic}")
        );
    }

    #[test]
    fn bad_urls_are_refused_with_the_reason() {
        for (url, says) in [
            ("http://h:1", "not a nats://"),
            ("nats://h:1?subjet=x", "unknown"),
            ("nats://h:1?subject=a.*", "not a valid subject"),
            ("nats://h:1?create_stream=true", "needs stream"),
            ("nats://h:1?stream=a.b", "not a valid stream name"),
            ("nats://h:1?ack_timeout=0s", "longer than zero"),
            ("nats://h:1?ack_timeout=soon", "not a duration"),
            (
                "nats://h:1?create_stream=maybe&stream=S",
                "not true or false",
            ),
        ] {
            let err = NatsOptions::from_url(url).unwrap_err().to_string();
            assert!(err.contains(says), "{url}: {err}");
        }
    }
}
