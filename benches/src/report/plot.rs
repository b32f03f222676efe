//! The report's two SVG plots, drawn with plotters' SVG backend.
//!
//! Text goes out as SVG `<text>` elements and plotters is built without its `ttf` feature, so
//! its font layer only estimates text sizes and never opens a font file: the plots draw the
//! same on a machine with no fonts installed.

use std::collections::BTreeMap;
use std::io;

use plotters::element::DashedPathElement;
use plotters::prelude::*;

use crate::results::{Engine, Results, ScaleRow, StorePath};

/// Width and height of every plot, in pixels.
const SIZE: (u32, u32) = (900, 600);

/// Distinct, readable line colors (the common ten-color categorical palette).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The scale cases drawn as one line per engine; every other case is drawn as a lone point.
const BACKLOG_CASES: [&str; 3] = ["pending-10k", "pending-200k", "pending-1m"];

fn color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

fn to_io<E: std::fmt::Display>(error: E) -> io::Error {
    io::Error::other(format!("drawing a plot: {error}"))
}

/// A positive, finite value: the only kind a log axis can place.
fn plottable(value: f64) -> bool {
    value.is_finite() && value > 0.0
}

/// Compact axis labels: 1, 50, 2k, 1.5M.
fn short(value: f64) -> String {
    let (scaled, suffix) = if value.abs() >= 1e6 {
        (value / 1e6, "M")
    } else if value.abs() >= 1e3 {
        (value / 1e3, "k")
    } else {
        (value, "")
    };
    let text = format!("{scaled:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text}{suffix}")
}

/// The smallest and largest of some values (`None` when there are none).
fn span(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// A valid plot that says there was nothing to draw.
fn no_data(title: &str) -> io::Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(to_io)?;
        let style = TextStyle::from(("sans-serif", 28).into_font()).color(&BLACK);
        root.draw_text(title, &style, (40, 40)).map_err(to_io)?;
        root.draw_text("no data", &style, (40, 290))
            .map_err(to_io)?;
        root.present().map_err(to_io)?;
    }
    Ok(out)
}

/// The legend name of one claims series.
fn claims_label(engine: Engine, path: StorePath, latency_ms: u32) -> String {
    if engine.has_network() {
        format!("{} {} {latency_ms} ms", engine.label(), path.label())
    } else {
        format!("{} {}", engine.label(), path.label())
    }
}

/// `claims.svg`: claims/s against batch size, both on log axes, one line per
/// (engine, path, latency); portable lines are dashed.
pub(super) fn claims_svg(results: &Results) -> io::Result<String> {
    const TITLE: &str = "Claims per second against batch size, one worker";
    let mut series: BTreeMap<(Engine, StorePath, u32), Vec<(f64, f64)>> = BTreeMap::new();
    for row in &results.claims {
        if plottable(row.claims_per_s) && row.batch > 0 {
            series
                .entry((row.engine, row.path, row.latency_ms))
                .or_default()
                .push((f64::from(row.batch), row.claims_per_s));
        }
    }
    for points in series.values_mut() {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let all = || series.values().flatten().copied();
    let (Some((x_lo, x_hi)), Some((y_lo, y_hi))) =
        (span(all().map(|p| p.0)), span(all().map(|p| p.1)))
    else {
        return no_data(TITLE);
    };

    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(to_io)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(TITLE, ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(
                (x_lo / 1.3..x_hi * 1.3).log_scale(),
                (y_lo / 2.0..y_hi * 2.0).log_scale(),
            )
            .map_err(to_io)?;
        chart
            .configure_mesh()
            .x_desc("batch size (rows per claim call)")
            .y_desc("claims/s (log scale)")
            .x_label_formatter(&|v| short(*v))
            .y_label_formatter(&|v| short(*v))
            .draw()
            .map_err(to_io)?;

        for (index, (&(engine, path, latency_ms), points)) in series.iter().enumerate() {
            let ink = color(index);
            let label = claims_label(engine, path, latency_ms);
            let line = ink.stroke_width(2);
            if path == StorePath::Portable {
                chart
                    .draw_series(DashedLineSeries::new(points.clone(), 8, 5, line))
                    .map_err(to_io)?
                    .label(label)
                    .legend(move |(x, y)| {
                        DashedPathElement::new(vec![(x, y), (x + 24, y)], 6, 4, line)
                    });
            } else {
                chart
                    .draw_series(LineSeries::new(points.iter().copied(), line))
                    .map_err(to_io)?
                    .label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], line));
            }
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, ink.filled())))
                .map_err(to_io)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(to_io)?;
        root.present().map_err(to_io)?;
    }
    Ok(out)
}

/// `scale.svg`: the optimized drain's entries/s against the pending backlog (log axis): one
/// line per engine through the `pending-*` cases, every other case as a labelled point.
pub(super) fn scale_svg(results: &Results) -> io::Result<String> {
    const TITLE: &str = "Optimized drain rate against pending backlog";
    let usable = |row: &&ScaleRow| row.pending > 0 && plottable(row.drain.entries_per_s);
    let point = |row: &ScaleRow| (row.pending as f64, row.drain.entries_per_s);

    let mut lines: BTreeMap<Engine, Vec<(f64, f64)>> = BTreeMap::new();
    let mut lone: Vec<(String, (f64, f64))> = Vec::new();
    for row in results.scale.iter().filter(usable) {
        if BACKLOG_CASES.contains(&row.case.as_str()) {
            lines.entry(row.engine).or_default().push(point(row));
        } else {
            lone.push((format!("{} {}", row.engine.label(), row.case), point(row)));
        }
    }
    for points in lines.values_mut() {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let all = || {
        lines
            .values()
            .flatten()
            .chain(lone.iter().map(|(_, p)| p))
            .copied()
    };
    let (Some((x_lo, x_hi)), Some((_, y_hi))) =
        (span(all().map(|p| p.0)), span(all().map(|p| p.1)))
    else {
        return no_data(TITLE);
    };

    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(to_io)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(TITLE, ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d((x_lo / 1.5..x_hi * 1.5).log_scale(), 0.0..y_hi * 1.15)
            .map_err(to_io)?;
        chart
            .configure_mesh()
            .x_desc("pending entries at the start (log scale)")
            .y_desc("entries delivered per second")
            .x_label_formatter(&|v| short(*v))
            .y_label_formatter(&|v| short(*v))
            .draw()
            .map_err(to_io)?;

        let mut index = 0;
        for (engine, points) in &lines {
            let ink = color(index);
            index += 1;
            let line = ink.stroke_width(2);
            chart
                .draw_series(LineSeries::new(points.iter().copied(), line))
                .map_err(to_io)?
                .label(format!("{} pending backlog", engine.label()))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], line));
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 4, ink.filled())))
                .map_err(to_io)?;
        }
        for (label, p) in &lone {
            let ink = color(index);
            index += 1;
            chart
                .draw_series(std::iter::once(TriangleMarker::new(*p, 7, ink.filled())))
                .map_err(to_io)?
                .label(label.as_str())
                .legend(move |(x, y)| TriangleMarker::new((x + 12, y), 6, ink.filled()));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(to_io)?;
        root.present().map_err(to_io)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels_are_short() {
        assert_eq!(short(1.0), "1");
        assert_eq!(short(50.0), "50");
        assert_eq!(short(2_000.0), "2k");
        assert_eq!(short(1_500_000.0), "1.5M");
    }

    #[test]
    fn empty_results_still_give_valid_svgs() {
        let empty = Results::default();
        for svg in [claims_svg(&empty).unwrap(), scale_svg(&empty).unwrap()] {
            assert!(svg.starts_with("<svg"), "{svg}");
            assert!(svg.contains("no data"));
            assert!(svg.trim_end().ends_with("</svg>"));
        }
    }
}
