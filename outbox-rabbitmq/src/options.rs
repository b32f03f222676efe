//! Where the emitter publishes and what it checks, from its URL.

use std::time::Duration;

use outbox_core::drain::url_params;

use crate::RabbitError;

/// What the emitter does with its exchange at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExchangeSetup {
    /// Nothing: a missing exchange shows as dead-lettered entries.
    None,
    /// Fail at start-up unless the exchange exists.
    Check,
    /// Declare it (durable, of type `topic`) unless it exists.
    Declare,
}

/// The emitter's settings.
#[derive(Debug, Clone)]
pub struct RabbitOptions {
    /// The exchange, with `{topic}` replaced by the entry's topic; empty for the default
    /// exchange (where the routing key names a queue).
    pub exchange: String,
    /// The routing key, with `{topic}` replaced by the entry's topic.
    pub routing_key: String,
    /// How long one publish may wait for the broker's confirm.
    pub ack_timeout: Duration,
    /// What to do with the exchange at start-up.
    pub exchange_setup: ExchangeSetup,
}

impl RabbitOptions {
    /// The default exchange, routing key `{topic}`, a 10 s confirm timeout, no set-up.
    pub fn new() -> Self {
        Self {
            exchange: String::new(),
            routing_key: "{topic}".into(),
            ack_timeout: Duration::from_secs(10),
            exchange_setup: ExchangeSetup::None,
        }
    }

    /// Reads an emitter URL: `amqp://user:pass@host:5672/%2f?exchange=events`, with
    /// `routing_key=orders.{topic}` (default `{topic}`), `ack_timeout=5s` (`ms` or `s`) and
    /// `declare_exchange=true` (declare a durable topic exchange when missing; without it
    /// a named exchange is checked at start-up). Other parameters (`heartbeat`, …) stay
    /// on the URL for the client. Returns the client's URL and the options.
    pub fn from_url(url: &str) -> Result<(String, Self), RabbitError> {
        if !(url.starts_with("amqp://") || url.starts_with("amqps://")) {
            return Err(RabbitError::Config(format!(
                "{} is not an amqp:// or amqps:// URL",
                outbox_core::redact_url(url)
            )));
        }
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut options = Self::new();
        let mut declare = false;
        let mut rest = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "exchange" => options.exchange = value.to_owned(),
                "routing_key" => options.routing_key = value.to_owned(),
                "ack_timeout" => {
                    options.ack_timeout =
                        url_params::duration(key, value).map_err(RabbitError::Config)?
                }
                "declare_exchange" => {
                    declare = url_params::flag(key, value).map_err(RabbitError::Config)?
                }
                _ => rest.push(pair),
            }
        }
        let templated = options.exchange.contains("{topic}");
        options.exchange_setup = match (options.exchange.is_empty(), templated, declare) {
            (true, _, true) => {
                return Err(RabbitError::Config(
                    "declare_exchange=true needs exchange=NAME".into(),
                ))
            }
            (false, true, true) => {
                return Err(RabbitError::Config(
                    "declare_exchange=true needs a fixed exchange name, not a {topic} template"
                        .into(),
                ))
            }
            // One exchange per topic: none to check before the topics are known.
            (true, _, false) | (false, true, false) => ExchangeSetup::None,
            (false, false, false) => ExchangeSetup::Check,
            (false, false, true) => ExchangeSetup::Declare,
        };
        options.validate()?;
        let client = if rest.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", rest.join("&"))
        };
        Ok((client, options))
    }

    /// Refuses a zero timeout, and names longer than AMQP allows.
    pub fn validate(&self) -> Result<(), RabbitError> {
        if self.ack_timeout.is_zero() {
            return Err(RabbitError::Config("ack_timeout must be positive".into()));
        }
        if self.exchange.len() > 255 {
            return Err(RabbitError::Config(
                "the exchange name is over 255 bytes".into(),
            ));
        }
        if self.routing_key.replace("{topic}", "").len() > 255 {
            return Err(RabbitError::Config(
                "the routing key is over 255 bytes".into(),
            ));
        }
        Ok(())
    }

    /// The exchange of an entry of `topic`, or why there cannot be one.
    pub fn exchange_for(&self, topic: &str) -> Result<String, String> {
        let exchange = self.exchange.replace("{topic}", topic);
        if exchange.len() > 255 {
            return Err(format!(
                "topic {topic:?} makes an exchange name over 255 bytes"
            ));
        }
        Ok(exchange)
    }

    /// The routing key of an entry of `topic`, or why there cannot be one.
    pub fn routing_key_for(&self, topic: &str) -> Result<String, String> {
        let key = self.routing_key.replace("{topic}", topic);
        if key.len() > 255 {
            return Err(format!(
                "topic {topic:?} makes a routing key over 255 bytes"
            ));
        }
        Ok(key)
    }
}

impl Default for RabbitOptions {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_give_the_client_its_url_and_us_our_options() {
        let (client, o) = RabbitOptions::from_url(
            "amqp://guest:guest@127.0.0.1:5672/%2f?exchange=events&heartbeat=10&routing_key=o.{topic}&ack_timeout=500ms",
        )
        .unwrap();
        assert_eq!(client, "amqp://guest:guest@127.0.0.1:5672/%2f?heartbeat=10");
        assert_eq!(o.exchange, "events");
        assert_eq!(o.routing_key_for("created").unwrap(), "o.created");
        assert_eq!(o.ack_timeout, Duration::from_millis(500));
        assert_eq!(o.exchange_setup, ExchangeSetup::Check);
        let (_, o) =
            RabbitOptions::from_url("amqp://h/%2f?exchange=e&declare_exchange=true").unwrap();
        assert_eq!(o.exchange_setup, ExchangeSetup::Declare);
        let (client, o) = RabbitOptions::from_url("amqp://h/%2f").unwrap();
        assert_eq!(
            (client.as_str(), o.exchange_setup),
            ("amqp://h/%2f", ExchangeSetup::None)
        );
    }

    #[test]
    fn bad_urls_are_refused_with_the_reason_and_no_password() {
        for (url, says) in [
            ("http://u:secret@h", "not an amqp://"),
            ("amqp://h/%2f?declare_exchange=true", "needs exchange"),
            (
                "amqp://h/%2f?exchange=e.{topic}&declare_exchange=true",
                "fixed exchange name",
            ),
            ("amqp://h/%2f?ack_timeout=0ms", "longer than zero"),
            ("amqp://h/%2f?ack_timeout=soon", "not a duration"),
            (
                "amqp://h/%2f?exchange=e&declare_exchange=maybe",
                "not true or false",
            ),
        ] {
            let err = RabbitOptions::from_url(url).unwrap_err().to_string();
            assert!(err.contains(says), "{url}: {err}");
            assert!(!err.contains("secret"), "{err}");
        }
    }
}
