//! Where an entry's time goes between the raw loop and the drain: the ceiling's layers
//! (raw, the store's own calls, the drain) turned into microseconds per entry, each
//! layer's share the difference to the one below. The same loop on sqlx is not a layer:
//! the store runs these calls on a `rusqlite` connection of its own, as the raw loop
//! does, so the sqlx figure only says what the pool's driver would cost.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Microseconds per entry at each layer, and what each adds to the one below.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Split {
    /// The store's statements with nothing in between.
    pub raw_us: f64,
    /// What the store's code adds (its own calls, no drain).
    pub store_us: f64,
    /// What the drain adds (emission, bookkeeping, recording).
    pub drain_us: f64,
}

impl Split {
    /// The split of a ceiling row measured at every layer; `None` when one is missing.
    pub(super) fn of(c: &CeilingRow) -> Option<Self> {
        let per_entry = |rows_per_s: f64| (rows_per_s > 0.0).then(|| 1e6 / rows_per_s);
        let raw = per_entry(c.raw_rows_per_s)?;
        let store = per_entry(c.store_rows_per_s?)?;
        let drain = per_entry(c.drain.entries_per_s)?;
        Some(Self {
            raw_us: raw,
            store_us: store - raw,
            drain_us: drain - store,
        })
    }
}

/// The table of splits, for the rows measured at every layer (SQLite's).
pub(super) fn render(md: &mut String, r: &Results) {
    let rows: Vec<(&CeilingRow, Split)> = r
        .ceilings
        .iter()
        .filter_map(|c| Split::of(c).map(|s| (c, s)))
        .collect();
    if rows.is_empty() {
        return;
    }
    md.push_str(
        "Where an entry's time goes, in microseconds per entry: the raw loop's, then what \
         each layer adds to the one below it (the store: its own calls, on its own \
         `rusqlite` connection as the raw loop is, with full rows decoded and results \
         judged; the drain: emission, bookkeeping and recording around them). A negative \
         share is a layer measured faster than the one below, within the run's noise.\n\n",
    );
    let us: Fmt = |x| format!("{x:.1}");
    let columns: [Column<'_, (&CeilingRow, Split)>; 5] = [
        ("engine", &|(c, _)| c.engine.label().into()),
        ("payload bytes", &|(c, _)| count(c.payload_bytes.into())),
        ("raw µs", &|(_, s)| us(s.raw_us)),
        ("store adds µs", &|(_, s)| us(s.store_us)),
        ("drain adds µs", &|(_, s)| us(s.drain_us)),
    ];
    table(md, &rows, &columns);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(raw: f64, driver: Option<f64>, store: Option<f64>, drain: f64) -> CeilingRow {
        let mut c: CeilingRow = serde_json::from_value(serde_json::json!({
            "engine": "sqlite", "method": "loop", "backlog": 1000, "batch": 100,
            "clients": 1, "raw_rows_per_s": raw,
            "drain": {"delivered": 1000, "seconds": 1.0, "entries_per_s": drain, "peak_rss_mib": 1.0},
        }))
        .expect("a ceiling row");
        c.driver_rows_per_s = driver;
        c.store_rows_per_s = store;
        c
    }

    #[test]
    fn each_layer_adds_its_difference() {
        // 40,000/s raw = 25 µs; 20,000/s = 50 µs; 10,000/s = 100 µs. The sqlx loop
        // (25,000/s) is no layer of the store's.
        let split = Split::of(&row(40_000.0, Some(25_000.0), Some(20_000.0), 10_000.0));
        let s = split.expect("every layer measured");
        assert!((s.raw_us - 25.0).abs() < 1e-9);
        assert!((s.store_us - 25.0).abs() < 1e-9);
        assert!((s.drain_us - 50.0).abs() < 1e-9);
    }

    #[test]
    fn a_missing_layer_or_a_zero_rate_gives_no_split() {
        assert!(Split::of(&row(40_000.0, None, Some(20_000.0), 10_000.0)).is_some());
        assert!(Split::of(&row(40_000.0, Some(1.0), None, 10_000.0)).is_none());
        assert!(Split::of(&row(0.0, Some(1.0), Some(1.0), 10_000.0)).is_none());
    }

    #[test]
    fn the_table_lists_only_split_rows() {
        let mut r = Results::default();
        r.ceilings
            .push(row(40_000.0, Some(25_000.0), Some(20_000.0), 10_000.0));
        r.ceilings.push(row(24_000.0, None, None, 18_000.0));
        let mut md = String::new();
        render(&mut md, &r);
        assert!(md.contains("| 25.0 | 25.0 | 50.0 |"), "{md}");
        assert_eq!(md.matches("| SQLite |").count(), 1, "{md}");
        let mut empty = String::new();
        render(&mut empty, &Results::default());
        assert!(empty.is_empty());
    }
}
