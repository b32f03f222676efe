//! The subject an entry is published to, from its topic.

use crate::NatsError;

/// Where an entry goes: a subject with an optional `{topic}` placeholder
/// (`events.{topic}`), replaced by the entry's topic when it is published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectTemplate {
    template: String,
}

impl SubjectTemplate {
    /// Checks `template`: a valid NATS subject once `{topic}` is replaced by one token.
    pub fn new(template: impl Into<String>) -> Result<Self, NatsError> {
        let template = template.into();
        let sample = template.replace("{topic}", "t");
        if let Err(why) = check_subject(&sample) {
            return Err(NatsError::Config(format!(
                "subject template {template:?} is not a valid subject: {why}"
            )));
        }
        Ok(Self { template })
    }

    /// The subject of an entry of `topic`, or why there cannot be one (a topic with
    /// spaces, wildcards or empty tokens can never be published).
    pub fn render(&self, topic: &str) -> Result<String, String> {
        let subject = self.template.replace("{topic}", topic);
        check_subject(&subject).map_err(|why| {
            format!("topic {topic:?} gives no valid subject ({subject:?}): {why}")
        })?;
        Ok(subject)
    }

    /// The subjects a stream must capture to hold every entry: `{topic}` as `>` when it
    /// ends the template, the template itself when it has no placeholder; `None` when
    /// the placeholder sits elsewhere (name the stream's subjects yourself then).
    pub fn stream_subjects(&self) -> Option<String> {
        match self.template.find("{topic}") {
            None => Some(self.template.clone()),
            Some(at) if at + "{topic}".len() == self.template.len() => {
                Some(format!("{}>", &self.template[..at]))
            }
            Some(_) => None,
        }
    }

    /// The template as given.
    pub fn as_str(&self) -> &str {
        &self.template
    }
}

/// A publish subject: dot-separated, non-empty tokens of printable characters other than
/// whitespace and the wildcards `*` and `>`.
fn check_subject(subject: &str) -> Result<(), &'static str> {
    if subject.is_empty() {
        return Err("it is empty");
    }
    if subject.len() > 1_024 {
        return Err("it is longer than 1,024 bytes");
    }
    for token in subject.split('.') {
        if token.is_empty() {
            return Err("it has an empty token");
        }
        if token == "*" || token == ">" || token.contains(['*', '>']) {
            return Err("it has a wildcard, which a publish cannot use");
        }
        if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("it has whitespace or a control character");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_render_topics_into_subjects() {
        let t = SubjectTemplate::new("events.{topic}").unwrap();
        assert_eq!(t.render("orders.created").unwrap(), "events.orders.created");
        assert_eq!(t.stream_subjects().as_deref(), Some("events.>"));
        let fixed = SubjectTemplate::new("events.all").unwrap();
        assert_eq!(fixed.render("anything").unwrap(), "events.all");
        assert_eq!(fixed.stream_subjects().as_deref(), Some("events.all"));
        let middle = SubjectTemplate::new("a.{topic}.b").unwrap();
        assert_eq!(middle.stream_subjects(), None);
    }

    #[test]
    fn invalid_templates_and_topics_are_refused() {
        for bad in [
            "",
            "events.",
            ".x",
            "events.*",
            "a.>",
            "a b.{topic}",
            "a..{topic}",
        ] {
            assert!(SubjectTemplate::new(bad).is_err(), "{bad:?} accepted");
        }
        let t = SubjectTemplate::new("events.{topic}").unwrap();
        for bad in ["", "a b", "a..b", "orders.*", "x.>", "tab\there"] {
            assert!(t.render(bad).is_err(), "topic {bad:?} accepted");
        }
    }
}
