//! Durations on the command line: `250ms`, `30s`, `5m`, `2h`, `7d`, or plain seconds.

use chrono::TimeDelta;

/// Parses a positive duration; the error names the accepted forms.
pub(crate) fn parse_duration(text: &str) -> Result<TimeDelta, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: i64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (use e.g. 250ms, 30s, 5m, 2h, 7d)"))?;
    let d = match unit {
        "ms" => TimeDelta::try_milliseconds(n),
        "" | "s" => TimeDelta::try_seconds(n),
        "m" => TimeDelta::try_minutes(n),
        "h" => TimeDelta::try_hours(n),
        "d" => TimeDelta::try_days(n),
        _ => None,
    }
    .ok_or_else(|| format!("{text:?} is not a duration (use e.g. 250ms, 30s, 5m, 2h, 7d)"))?;
    if d <= TimeDelta::zero() {
        return Err(format!("{text:?} must be longer than zero"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_forms() {
        assert_eq!(parse_duration("250ms"), Ok(TimeDelta::milliseconds(250)));
        assert_eq!(parse_duration("30"), Ok(TimeDelta::seconds(30)));
        assert_eq!(parse_duration("5m"), Ok(TimeDelta::minutes(5)));
        assert_eq!(parse_duration("2h"), Ok(TimeDelta::hours(2)));
        assert_eq!(parse_duration("7d"), Ok(TimeDelta::days(7)));
    }

    #[test]
    fn refused_forms() {
        for bad in [
            "",
            "0s",
            "-5s",
            "5 minutes",
            "1.5h",
            "s",
            "99999999999999999999d",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
