//! The Kafka topic an entry is produced to, from its outbox topic.

use crate::KafkaError;

/// Where an entry goes: a Kafka topic name with an optional `{topic}` placeholder
/// (`events.{topic}`), replaced by the entry's topic when it is produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicTemplate {
    template: String,
}

impl TopicTemplate {
    /// Checks `template`: a valid Kafka topic name once `{topic}` is replaced by a word.
    pub fn new(template: impl Into<String>) -> Result<Self, KafkaError> {
        let template = template.into();
        if let Err(why) = check_topic(&template.replace("{topic}", "t")) {
            return Err(KafkaError::Config(format!(
                "topic template {template:?} is not a valid Kafka topic: {why}"
            )));
        }
        Ok(Self { template })
    }

    /// The Kafka topic of an entry of `topic`, or why there cannot be one (a topic with
    /// spaces, slashes or over 249 characters can never be produced).
    pub fn render(&self, topic: &str) -> Result<String, String> {
        let name = self.template.replace("{topic}", topic);
        check_topic(&name).map_err(|why| {
            format!("topic {topic:?} gives no valid Kafka topic ({name:?}): {why}")
        })?;
        Ok(name)
    }

    /// The template as given.
    pub fn as_str(&self) -> &str {
        &self.template
    }
}

/// A Kafka topic name: 1 to 249 of ASCII letters, digits, `.`, `_` and `-`, and not `.`
/// or `..`.
fn check_topic(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("it is empty");
    }
    if name.len() > 249 {
        return Err("it is longer than 249 characters");
    }
    if name == "." || name == ".." {
        return Err("'.' and '..' are not topic names");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Err("only ASCII letters, digits, '.', '_' and '-' are allowed");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_render_topics_into_kafka_topics() {
        let t = TopicTemplate::new("events.{topic}").unwrap();
        assert_eq!(t.render("orders.created").unwrap(), "events.orders.created");
        let fixed = TopicTemplate::new("outbox").unwrap();
        assert_eq!(fixed.render("anything at all").unwrap(), "outbox");
    }

    #[test]
    fn invalid_templates_and_topics_are_refused_with_the_reason() {
        for bad in ["", "a b", "events/{topic}", "..", "é{topic}"] {
            let err = TopicTemplate::new(bad).unwrap_err().to_string();
            assert!(err.contains("not a valid Kafka topic"), "{bad:?}: {err}");
        }
        let t = TopicTemplate::new("{topic}").unwrap();
        for bad in ["", "two words", "a/b", ".", "x:y"] {
            assert!(t.render(bad).is_err(), "topic {bad:?} accepted");
        }
        let long = "x".repeat(250);
        assert!(t.render(&long).unwrap_err().contains("249"));
    }
}
