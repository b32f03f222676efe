//! Durations as operators write them (command-line flags, configuration): `250ms`, `30s`,
//! `5m`, `2h`, `7d`. A bare number is refused: `--delivered-older-than 7` could mean
//! seven seconds or seven days, and a destructive command must not guess.

use chrono::TimeDelta;

/// Parses a positive duration in one whole unit (`ms`, `s`, `m`, `h`, `d`); the error
/// names the accepted forms.
pub fn parse(text: &str) -> Result<TimeDelta, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: i64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (use e.g. 250ms, 30s, 5m, 2h, 7d)"))?;
    if unit.is_empty() {
        return Err(format!(
            "{text:?} has no unit (write e.g. {n}s, {n}m, {n}h or {n}d)"
        ));
    }
    let d = match unit {
        "ms" => TimeDelta::try_milliseconds(n),
        "s" => TimeDelta::try_seconds(n),
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

/// A duration the way an operator would write it, in its largest whole unit (`30s`,
/// `5m`); [`parse`] reads it back.
pub fn show(d: TimeDelta) -> String {
    let ms = d.num_milliseconds();
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1_000),
    ] {
        if ms != 0 && ms % size == 0 {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_forms() {
        assert_eq!(parse("250ms"), Ok(TimeDelta::milliseconds(250)));
        assert_eq!(parse("30s"), Ok(TimeDelta::seconds(30)));
        assert_eq!(parse("5m"), Ok(TimeDelta::minutes(5)));
        assert_eq!(parse("2h"), Ok(TimeDelta::hours(2)));
        assert_eq!(parse("7d"), Ok(TimeDelta::days(7)));
    }

    #[test]
    fn shown_in_the_largest_whole_unit() {
        assert_eq!(show(TimeDelta::milliseconds(250)), "250ms");
        assert_eq!(show(TimeDelta::seconds(90)), "90s");
        assert_eq!(show(TimeDelta::minutes(5)), "5m");
        assert_eq!(show(TimeDelta::days(7)), "7d");
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
            "7",
            "30",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
