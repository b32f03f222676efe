//! The report's targets table: each target's figure from the run, judged against what
//! [`wanted`] holds it to.

mod engines;
mod others;
mod postgres;
mod wanted;

use super::*;

/// One line of the targets table.
pub(super) struct Target {
    what: String,
    wanted: String,
    /// `None`: not measured in this run.
    measured: Option<String>,
    /// `None` beside a measurement: reported, with no fixed target.
    met: Option<bool>,
}

/// How a target judges its figure.
#[derive(Clone, Copy)]
pub(super) enum Rule {
    /// The worst (lowest) figure must reach this.
    AtLeast(f64),
    /// The worst (highest) figure must stay under this.
    Below(f64),
    /// No fixed target yet: the lowest figure is shown.
    Reported,
}

impl Rule {
    /// Judges the worst of the finite `values`.
    fn judge(self, what: String, values: impl IntoIterator<Item = f64>, fmt: Fmt) -> Target {
        let values: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
        let pick = if matches!(self, Rule::Below(_)) {
            f64::max
        } else {
            f64::min
        };
        let worst = values.iter().copied().reduce(pick);
        let n = values.len();
        let of = if n > 1 {
            format!(" (worst of {n})")
        } else {
            String::new()
        };
        let (wanted, met) = match self {
            Rule::AtLeast(x) => (format!("≥ {}", fmt(x)), worst.map(|w| w >= x)),
            Rule::Below(x) => (format!("< {}", fmt(x)), worst.map(|w| w < x)),
            Rule::Reported => ("—".into(), None),
        };
        let measured = worst.map(|w| format!("{}{of}", fmt(w)));
        Target {
            what,
            wanted,
            measured,
            met,
        }
    }
}

/// A target every measured row must hit exactly: `seen` lists the distinct figures (empty
/// when nothing was measured).
pub(super) fn exact(what: &str, wanted: &str, mut seen: Vec<String>, all_hit: bool) -> Target {
    seen.dedup();
    let measured = (!seen.is_empty()).then(|| seen.join(", "));
    let met = measured.as_ref().map(|_| all_hit);
    Target {
        what: what.into(),
        wanted: wanted.into(),
        measured,
        met,
    }
}

pub(in crate::report) fn render(md: &mut String, r: &Results) {
    md.push_str("## Targets\n\n");
    let verdict = |t: &Target| match (&t.measured, t.met) {
        (None, _) => "—".into(),
        (Some(_), None) => "reported".into(),
        (Some(_), Some(true)) => "met".into(),
        (Some(_), Some(false)) => "**missed**".into(),
    };
    let measured = |t: &Target| t.measured.clone().unwrap_or_else(|| "not measured".into());
    let columns: [Column<'_, Target>; 4] = [
        ("target", &|t| t.what.clone()),
        ("wanted", &|t| t.wanted.clone()),
        ("measured", &measured),
        ("met?", &verdict),
    ];
    table(md, &rows(r), &columns);
}

/// Every target, in the table's order.
fn rows(r: &Results) -> Vec<Target> {
    let mut t = postgres::targets(r);
    t.extend(engines::sqlite_targets(r));
    t.extend(engines::mariadb_targets(r));
    t.extend(others::ordered_targets(r));
    t.extend(others::held_targets(r));
    t.extend(others::reading_targets(r));
    t.extend(others::soak_targets(r));
    t
}
