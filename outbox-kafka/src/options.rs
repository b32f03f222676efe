//! What the emitter is told: where it produces, how long it waits, how large a message
//! may be.

use std::time::Duration;

use outbox_core::drain::url_params;

use crate::{KafkaError, TopicTemplate};

/// The emitter's settings.
#[derive(Debug, Clone)]
pub struct KafkaOptions {
    /// The Kafka topic of each entry.
    pub topic: TopicTemplate,
    /// How long one emission may wait for the acknowledgement of every in-sync replica.
    pub ack_timeout: Duration,
    /// The largest message (key, value and headers) the emitter sends; a larger one is
    /// dead-lettered without being sent. Keep it at or below the broker's
    /// `message.max.bytes` (1 MiB by default).
    pub max_message_bytes: usize,
}

impl KafkaOptions {
    /// Topic `{topic}` (the outbox topic itself), a 10 s acknowledgement timeout, messages
    /// up to 1,000,000 bytes.
    pub fn new() -> Self {
        Self {
            topic: TopicTemplate::new("{topic}").expect("a valid template"),
            ack_timeout: Duration::from_secs(10),
            max_message_bytes: 1_000_000,
        }
    }

    /// Reads an emitter URL: `kafka://host:9092[,host2:9092]?topic=events.{topic}`, with
    /// `ack_timeout=5s` (`ms` or `s`) and `max_message_bytes=N`. Returns the bootstrap
    /// brokers (`host:port`) and the options.
    pub fn from_url(url: &str) -> Result<(Vec<String>, Self), KafkaError> {
        let rest = url
            .strip_prefix("kafka://")
            .ok_or_else(|| KafkaError::Config(format!("{url:?} is not a kafka:// URL")))?;
        let (hosts, query) = rest.split_once('?').unwrap_or((rest, ""));
        let hosts = hosts.strip_suffix('/').unwrap_or(hosts);
        if hosts.contains('/') {
            return Err(KafkaError::Config(format!(
                "{url:?}: a kafka:// URL names brokers only, with no path"
            )));
        }
        let brokers = hosts
            .split(',')
            .map(|host| check_broker(host).map(|()| host.to_owned()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut options = Self::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "topic" => options.topic = TopicTemplate::new(value)?,
                "ack_timeout" => {
                    options.ack_timeout =
                        url_params::duration(key, value).map_err(KafkaError::Config)?
                }
                "max_message_bytes" => {
                    options.max_message_bytes = value.parse().map_err(|_| {
                        KafkaError::Config(format!("{key}={value:?} is not a byte count"))
                    })?
                }
                _ => {
                    return Err(KafkaError::Config(format!(
                        "unknown or empty parameter {pair:?} (known: topic, ack_timeout, \
                         max_message_bytes)"
                    )))
                }
            }
        }
        options.validate()?;
        Ok((brokers, options))
    }

    /// Refuses a zero timeout and a zero message size.
    pub fn validate(&self) -> Result<(), KafkaError> {
        if self.ack_timeout.is_zero() {
            return Err(KafkaError::Config("ack_timeout must be positive".into()));
        }
        if self.max_message_bytes == 0 {
            return Err(KafkaError::Config(
                "max_message_bytes must be positive".into(),
            ));
        }
        Ok(())
    }
}

impl Default for KafkaOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// A bootstrap broker: `host:port`, with a port number.
pub(crate) fn check_broker(host: &str) -> Result<(), KafkaError> {
    let bad = |why: &str| KafkaError::Config(format!("broker {host:?} {why}"));
    let (name, port) = host
        .rsplit_once(':')
        .ok_or_else(|| bad("has no port (host:port)"))?;
    if name.is_empty() || name.contains(['/', '@', ' ']) {
        return Err(bad("has no valid host name"));
    }
    match port.parse::<u16>() {
        Ok(p) if p > 0 => Ok(()),
        _ => Err(bad("has no valid port")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_the_brokers_and_the_options() {
        let (brokers, o) = KafkaOptions::from_url(
            "kafka://127.0.0.1:9092,k2:9093?topic=events.{topic}&ack_timeout=500ms&max_message_bytes=2048",
        )
        .unwrap();
        assert_eq!(brokers, vec!["127.0.0.1:9092", "k2:9093"]);
        assert_eq!(o.topic.as_str(), "events.{topic}");
        assert_eq!(o.ack_timeout, Duration::from_millis(500));
        assert_eq!(o.max_message_bytes, 2048);
        let (brokers, o) = KafkaOptions::from_url("kafka://h:1").unwrap();
        assert_eq!((brokers, o.topic.as_str()), (vec!["h:1".into()], "{topic}"));
    }

    #[test]
    fn bad_urls_are_refused_with_the_reason() {
        for (url, says) in [
            ("http://h:1", "not a kafka://"),
            ("kafka://h", "has no port"),
            ("kafka://h:x", "no valid port"),
            ("kafka://:9092", "no valid host"),
            ("kafka://h:1,", "has no port"),
            ("kafka://h:1/events", "no path"),
            ("kafka://h:1?topc=x", "unknown"),
            ("kafka://h:1?topic=a b", "not a valid Kafka topic"),
            ("kafka://h:1?ack_timeout=0s", "longer than zero"),
            ("kafka://h:1?ack_timeout=soon", "not a duration"),
            ("kafka://h:1?max_message_bytes=0", "must be positive"),
            ("kafka://h:1?max_message_bytes=lots", "not a byte count"),
        ] {
            let err = KafkaOptions::from_url(url).unwrap_err().to_string();
            assert!(err.contains(says), "{url}: {err}");
        }
    }
}
