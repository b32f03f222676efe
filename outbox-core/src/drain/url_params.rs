//! Reading the parameters of an emitter URL (`…?ack_timeout=5s&create=true`), the same way
//! for every emitter crate.

use std::time::Duration;

/// A flag: `true`, `1`, `yes` or `false`, `0`, `no`; otherwise why not, naming `key`.
pub fn flag(key: &str, value: &str) -> Result<bool, String> {
    match value {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(format!("{key}={value:?} is not true or false")),
    }
}

/// A positive duration written as the `outbox` command's flags take them
/// ([`crate::duration::parse`]: `500ms`, `5s`, `2m`, …); otherwise why not, naming `key`.
pub fn duration(key: &str, value: &str) -> Result<Duration, String> {
    crate::duration::parse(value)
        .and_then(|d| d.to_std().map_err(|e| e.to_string()))
        .map_err(|why| format!("{key}={value:?}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_durations_read_as_documented() {
        assert_eq!(flag("x", "yes"), Ok(true));
        assert_eq!(flag("x", "0"), Ok(false));
        assert!(flag("x", "maybe").unwrap_err().contains("x=\"maybe\""));
        assert_eq!(duration("t", "500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("t", "5s"), Ok(Duration::from_secs(5)));
        assert_eq!(duration("t", "2m"), Ok(Duration::from_secs(120)));
        for bad in ["5", "ms", "-1s", "1.5s", "soon", "0ms"] {
            assert!(duration("t", bad).is_err(), "{bad}");
        }
    }
}
