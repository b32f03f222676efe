//! What a receiver's response status (and its `Retry-After`) means for the entry.

use chrono::{DateTime, TimeDelta, Utc};
use outbox_core::drain::{EmitOutcome, RouteFault};

/// The outcome of a response with `status` from `destination` (the receiver, as shown
/// to operators) and, if it had one, a `Retry-After` value:
/// - 2xx delivers;
/// - 429 or 503 with a `Retry-After` (seconds or an HTTP date) defers until then;
/// - the route's, for every entry alike (held, no attempt counted): 401, 403 and 407
///   (`refused`: the sender's credentials), 404 and 410 (`missing`: the URL names no
///   endpoint; a receiver refusing one entry answers 400, 409 or 422), 502, 503 and 504
///   without `Retry-After` (`unavailable`: a gateway saying the receiver is down);
/// - 429 otherwise and the other 5xx are the entry's, retryable;
/// - redirects (never followed) and every other status are the entry's, permanent.
pub fn classify(
    status: u16,
    retry_after: Option<&str>,
    destination: &str,
    now: DateTime<Utc>,
) -> EmitOutcome {
    let route = |fault| EmitOutcome::route(fault, destination, format!("HTTP {status}"));
    match status {
        200..=299 => EmitOutcome::delivered(),
        429 | 503 => match retry_after.and_then(|v| retry_at(v, now)) {
            Some(until) => EmitOutcome::Deferred {
                until,
                reason: Some(format!("HTTP {status}, retry after {until}")),
            },
            None if status == 503 => route(RouteFault::Unavailable),
            None => EmitOutcome::retryable(format!("HTTP {status}")),
        },
        401 | 403 | 407 => route(RouteFault::Refused),
        404 | 410 => route(RouteFault::Missing),
        502 | 504 => route(RouteFault::Unavailable),
        500..=599 => EmitOutcome::retryable(format!("HTTP {status}")),
        300..=399 => EmitOutcome::permanent(format!("HTTP {status}: redirects are not followed")),
        _ => EmitOutcome::permanent(format!("HTTP {status}")),
    }
}

/// When a `Retry-After` value (a delay in seconds, or an HTTP date) says to come back;
/// never before `now`.
fn retry_at(value: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let value = value.trim();
    let at = match value.parse::<i64>() {
        Ok(secs) if secs >= 0 => now.checked_add_signed(TimeDelta::try_seconds(secs)?)?,
        Ok(_) => return None,
        Err(_) => DateTime::parse_from_rfc2822(value)
            .ok()?
            .with_timezone(&Utc),
    };
    Some(at.max(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn classify(status: u16, retry_after: Option<&str>, now: DateTime<Utc>) -> EmitOutcome {
        super::classify(status, retry_after, "webhook https://r", now)
    }

    #[test]
    fn statuses_map_to_outcomes() {
        let now = at("2026-12-02T10:00:00Z");
        assert_eq!(classify(204, None, now), EmitOutcome::delivered());
        assert_eq!(
            classify(429, Some("30"), now),
            EmitOutcome::Deferred {
                until: at("2026-12-02T10:00:30Z"),
                reason: Some("HTTP 429, retry after 2026-12-02 10:00:30 UTC".into()),
            }
        );
        assert!(matches!(
            classify(503, Some("5"), now),
            EmitOutcome::Deferred { .. }
        ));
        for (status, kind) in [
            (503, RouteFault::Unavailable),
            (502, RouteFault::Unavailable),
            (504, RouteFault::Unavailable),
            (401, RouteFault::Refused),
            (403, RouteFault::Refused),
            (407, RouteFault::Refused),
            (404, RouteFault::Missing),
            (410, RouteFault::Missing),
        ] {
            assert_eq!(
                classify(status, None, now),
                EmitOutcome::route(kind, "webhook https://r", format!("HTTP {status}")),
                "{status}"
            );
        }
        assert!(matches!(
            classify(429, None, now),
            EmitOutcome::Retryable { .. }
        ));
        assert!(matches!(
            classify(429, Some("soon"), now),
            EmitOutcome::Retryable { .. }
        ));
        assert!(matches!(
            classify(500, Some("5"), now),
            EmitOutcome::Retryable { .. }
        ));
        assert!(matches!(
            classify(302, None, now),
            EmitOutcome::Permanent { .. }
        ));
        assert!(matches!(
            classify(422, None, now),
            EmitOutcome::Permanent { .. }
        ));
        assert!(matches!(
            classify(400, Some("5"), now),
            EmitOutcome::Permanent { .. }
        ));
    }

    #[test]
    fn retry_after_takes_seconds_or_a_date_and_never_the_past() {
        let now = at("2026-12-02T10:00:00Z");
        assert_eq!(retry_at("0", now), Some(now));
        assert_eq!(retry_at(" 90 ", now), Some(at("2026-12-02T10:01:30Z")));
        assert_eq!(
            retry_at("Wed, 02 Dec 2026 10:05:00 GMT", now),
            Some(at("2026-12-02T10:05:00Z"))
        );
        assert_eq!(retry_at("Tue, 01 Dec 2026 10:05:00 GMT", now), Some(now));
        assert_eq!(retry_at("-1", now), None);
        assert_eq!(retry_at("later", now), None);
    }
}
