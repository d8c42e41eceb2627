//! How a measured figure is drawn, for every page fiox makes (the lab's results page and the
//! live page): what kind of value it is, and the y axis (unit, scale) its values get.

use fiox_charts::{Axis, Scale, Unit};

/// How a metric's values are shown.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Iops,
    BytesPerSec,
    Nanos,
    Percent,
}

/// The y axis for these values, and the divisor that turns them into its unit.
pub fn y_axis(title: &str, kind: Kind, values: &[f64]) -> (Axis, f64) {
    let max = values.iter().copied().fold(0.0, f64::max);
    let (unit, div) = match kind {
        Kind::Iops => ("", 1.0),
        Kind::Percent => ("%", 1.0),
        Kind::BytesPerSec => [("GiB/s", 1024f64.powi(3)), ("MiB/s", 1024f64.powi(2)), ("KiB/s", 1024.0), ("B/s", 1.0)]
            .into_iter()
            .find(|(_, d)| max >= *d)
            .unwrap_or(("B/s", 1.0)),
        Kind::Nanos => [("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0)]
            .into_iter()
            .find(|(_, d)| max >= *d)
            .unwrap_or(("ns", 1.0)),
    };
    let label = if unit.is_empty() { title.to_string() } else { format!("{title} ({unit})") };
    let pos: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = pos.iter().copied().fold(0.0, f64::max);
    // Values spanning more than two decades read better on a log scale.
    let log = kind != Kind::Percent && pos.len() == values.len() && !pos.is_empty() && hi / lo > 100.0;
    (Axis::new(label, if log { Scale::Log } else { Scale::Linear }, Unit::Number), div)
}
