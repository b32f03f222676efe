//! How figures are written in the report: separators, units, dashes for what is missing.

/// Puts a comma between each group of three digits of an unsigned decimal integer.
pub(super) fn group(digits: &str) -> String {
    let groups: Vec<_> = digits
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(String::from_utf8_lossy)
        .collect();
    groups.join(",")
}

pub(super) fn count(n: u64) -> String {
    group(&n.to_string())
}

/// A rate: whole numbers with separators from 100 up, one decimal below.
pub(super) fn rate(x: f64) -> String {
    match x {
        x if !x.is_finite() => "—".into(),
        x if x >= 100.0 => group(&format!("{x:.0}")),
        x => format!("{x:.1}"),
    }
}

pub(super) fn ratio(x: f64) -> String {
    format!("{x:.2}×")
}

pub(super) fn ms(x: f64) -> String {
    format!("{x:.2}")
}

pub(super) fn mib(x: f64) -> String {
    format!("{x:.1}")
}

/// A per-batch command count: whole when it is whole.
pub(super) fn per_batch(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// How a figure is shown.
pub(super) type Fmt = fn(f64) -> String;

pub(super) fn or_dash(value: Option<f64>, fmt: Fmt) -> String {
    value.map_or_else(|| "—".into(), fmt)
}

/// Every round's figure in the order run, comma-separated; a dash when there are none
/// (results written before the cell had rounds).
pub(super) fn each_or_dash(values: &[f64], fmt: Fmt) -> String {
    if values.is_empty() {
        return "—".into();
    }
    values
        .iter()
        .map(|v| fmt(*v))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The drain process's CPU time per entry, microseconds.
pub(super) fn cpu(o: &crate::results::DrainOutcome) -> String {
    or_dash(o.cpu_us_per_entry, micros)
}

/// The server's CPU time per entry, microseconds; a dash where it was not measured
/// (SQLite works inside the drain process).
pub(super) fn server_cpu(o: &crate::results::DrainOutcome) -> String {
    or_dash(o.server_cpu_us_per_entry, micros)
}

/// Microseconds, one decimal.
pub(super) fn micros(x: f64) -> String {
    format!("{x:.1}")
}
