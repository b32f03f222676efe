//! [`WebhookSecret`]: a Standard Webhooks signing key, and the signature it makes.

use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::WebhookError;

/// The prefix of a secret's text form.
pub const SECRET_PREFIX: &str = "whsec_";

/// The shortest key accepted, in bytes (the scheme asks for 24 to 64).
pub const MIN_SECRET_BYTES: usize = 24;

/// The longest key accepted, in bytes.
pub const MAX_SECRET_BYTES: usize = 64;

/// A key the emitter signs with: `whsec_` followed by the key in base64, as receivers
/// configure it. Its `Debug` form never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret {
    key: Vec<u8>,
}

impl WebhookSecret {
    /// A secret from its text form, `whsec_<base64 key>` (padding optional). The key must
    /// be 24 to 64 bytes.
    pub fn parse(text: &str) -> Result<Self, WebhookError> {
        let text = text.trim();
        let Some(encoded) = text.strip_prefix(SECRET_PREFIX) else {
            return Err(WebhookError::Secret(format!(
                "a webhook secret starts with {SECRET_PREFIX:?} followed by its key in base64"
            )));
        };
        let key = STANDARD
            .decode(encoded)
            .or_else(|_| STANDARD_NO_PAD.decode(encoded))
            .map_err(|e| {
                WebhookError::Secret(format!(
                    "the key after {SECRET_PREFIX:?} is not base64: {e}"
                ))
            })?;
        Self::from_key(key)
    }

    /// A secret from the key's bytes (24 to 64 of them).
    pub fn from_key(key: impl Into<Vec<u8>>) -> Result<Self, WebhookError> {
        let key = key.into();
        if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&key.len()) {
            return Err(WebhookError::Secret(format!(
                "a webhook key is {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes, not {}",
                key.len()
            )));
        }
        Ok(Self { key })
    }

    /// The text form receivers are configured with.
    pub fn to_text(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.key))
    }

    /// The versioned signature (`v1,<base64 HMAC-SHA256>`) of one message: the key over
    /// `<id>.<timestamp>.<body>`.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes a key of any length");
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

impl FromStr for WebhookSecret {
    type Err = WebhookError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WebhookSecret({} bytes, redacted)", self.key.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8; 32] = b"0123456789abcdef0123456789abcdef";

    #[test]
    fn the_text_form_round_trips_with_or_without_padding() {
        let secret = WebhookSecret::from_key(KEY.to_vec()).unwrap();
        let text = secret.to_text();
        assert!(text.starts_with("whsec_"));
        assert_eq!(WebhookSecret::parse(&text).unwrap(), secret);
        let unpadded = text.trim_end_matches('=');
        assert_eq!(unpadded.parse::<WebhookSecret>().unwrap(), secret);
    }

    #[test]
    fn bad_secrets_are_refused_with_the_reason() {
        let no_prefix = WebhookSecret::parse("c2VjcmV0").unwrap_err().to_string();
        assert!(no_prefix.contains("whsec_"), "{no_prefix}");
        let not_base64 = WebhookSecret::parse("whsec_***").unwrap_err().to_string();
        assert!(not_base64.contains("base64"), "{not_base64}");
        let short = WebhookSecret::parse("whsec_c2VjcmV0")
            .unwrap_err()
            .to_string();
        assert!(short.contains("not 6"), "{short}");
        assert!(WebhookSecret::from_key(vec![7; 65]).is_err());
        assert!(WebhookSecret::from_key(vec![7; 64]).is_ok());
    }

    #[test]
    fn the_key_is_never_shown() {
        let secret = WebhookSecret::from_key(KEY.to_vec()).unwrap();
        let shown = format!("{secret:?}");
        assert!(!shown.contains("0123"), "{shown}");
        assert!(!shown.contains(&STANDARD.encode(KEY)), "{shown}");
    }

    #[test]
    fn the_signature_covers_id_timestamp_and_body() {
        let secret = WebhookSecret::from_key(KEY.to_vec()).unwrap();
        let base = secret.sign("id-1", 1_700_000_000, b"{}");
        assert!(base.starts_with("v1,"));
        assert_eq!(base, secret.sign("id-1", 1_700_000_000, b"{}"));
        assert_ne!(base, secret.sign("id-2", 1_700_000_000, b"{}"));
        assert_ne!(base, secret.sign("id-1", 1_700_000_001, b"{}"));
        assert_ne!(base, secret.sign("id-1", 1_700_000_000, b"[]"));
        let other = WebhookSecret::from_key(vec![1; 32]).unwrap();
        assert_ne!(base, other.sign("id-1", 1_700_000_000, b"{}"));
    }
}
