//! Which charts a set of results gets, built from summary rows: the data decisions (units,
//! scales, series) live here; drawing is `fiox-charts`' job.
//!
//! - one axis (or zipped axes): IOPS, bandwidth, completion latency (mean and p99) and device
//!   utilisation against the axis, one line per job and direction;
//! - two axes (numjobs × iodepth, say): heat maps of IOPS and p99 latency, lines against each
//!   axis with one line per value of the other, and the results ordered by the product of the
//!   two axes (bandwidth, with mean latency on the right-hand axis);
//! - more axes: lines against the last axis, one per combination of the others.

use fiox_charts::{Axis, BarChart, Chart, HeatMap, LineChart, Point, Scale, Series, Unit};

use crate::lab::summary::{self, Row};
use crate::serve::figure::{y_axis, Kind};

/// A chart and the file name (without extension) it is saved under.
pub struct Figure {
    pub name: String,
    pub chart: Chart,
}

/// A swept axis as the charts see it.
#[derive(Debug, Clone)]
pub struct AxisView {
    pub name: String,
    pub values: Vec<String>,
    /// Numeric positions of the values (bytes, counts, microseconds), when all have one.
    pub positions: Option<Vec<f64>>,
    pub bytes: bool,
    /// The values' unit when they are bare numbers of one ("s" for `runtime=10,20`).
    pub unit: Option<&'static str>,
}

impl AxisView {
    /// The axis title with its unit: `bs (bytes)`, `runtime (s)`.
    pub fn label(&self) -> String {
        match (self.bytes, self.unit) {
            (true, _) => format!("{} (bytes)", self.name),
            (false, Some(u)) => format!("{} ({u})", self.name),
            _ => self.name.clone(),
        }
    }
}

/// The results to chart: the axes, each point's index into every axis's values, and the rows.
pub struct View<'a> {
    pub axes: Vec<AxisView>,
    pub coords: Vec<Vec<usize>>,
    pub zipped: bool,
    pub rows: &'a [Row],
}

/// The x axis for a swept option: numeric when every value is a number (log when they span a
/// factor of 16 or more), with a tick at each value as the user wrote it; categorical otherwise.
pub fn x_axis(a: &AxisView, label: &str) -> (Axis, Vec<f64>) {
    match &a.positions {
        Some(pos) if !pos.is_empty() => {
            let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let log = lo > 0.0 && hi / lo >= 16.0;
            let ticks = pos.iter().zip(&a.values).map(|(p, v)| (*p, v.clone())).collect();
            let axis = Axis {
                label: label.to_string(),
                scale: if log { Scale::Log } else { Scale::Linear },
                unit: if a.bytes { Unit::Bytes } else { Unit::Number },
                ticks: Some(ticks),
                from_zero: false,
            };
            (axis, pos.clone())
        }
        _ => {
            let axis = Axis::categories(label, &a.values);
            (axis, (0..a.values.len()).map(|i| i as f64).collect())
        }
    }
}

/// A metric as drawn: which summary column, its title and kind.
struct Shown {
    metric: usize,
    title: &'static str,
    kind: Kind,
    file: &'static str,
}

const IOPS: Shown = Shown { metric: summary::IOPS, title: "IOPS", kind: Kind::Iops, file: "iops" };
const BW: Shown = Shown { metric: summary::BW, title: "bandwidth", kind: Kind::BytesPerSec, file: "bandwidth" };
const P99: Shown =
    Shown { metric: summary::CLAT_P99, title: "completion latency p99", kind: Kind::Nanos, file: "clat-p99" };
const UTIL: Shown = Shown { metric: summary::UTIL, title: "device utilisation", kind: Kind::Percent, file: "util" };

pub fn sweep_charts(v: &View<'_>) -> Vec<Figure> {
    if v.rows.is_empty() || v.axes.is_empty() {
        return Vec::new();
    }
    if v.zipped || v.axes.len() == 1 {
        one_axis(v)
    } else if v.axes.len() == 2 {
        let mut out = two_axes(v);
        out.extend(lines_by(v, 1, "lines"));
        out.extend(lines_by(v, 0, &format!("by-{}", v.axes[0].name)));
        out.extend(by_product(v));
        out
    } else {
        lines_by(v, v.axes.len() - 1, "lines")
    }
}

fn series_of(rows: &[Row]) -> Vec<String> {
    summary::series_names(rows)
}

/// A line chart of `shown` for series given as (name, [(x, row)]).
fn line_chart(title: String, x: Axis, shown: &Shown, lines: Vec<(String, Vec<(f64, &Row)>)>, dashed: bool) -> Chart {
    let vals: Vec<f64> = lines.iter().flat_map(|l| l.1.iter().filter_map(|(_, r)| r.mean(shown.metric))).collect();
    let (y, div) = y_axis(shown.title, shown.kind, &vals);
    let series = lines
        .into_iter()
        .map(|(name, mut pts)| {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                name,
                points: pts
                    .iter()
                    .filter_map(|(x, r)| {
                        let m = r.mean(shown.metric)?;
                        Some(Point { x: *x, y: m / div, err: r.ci(shown.metric).map(|c| c / div), label: None })
                    })
                    .collect(),
                dashed,
            }
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    Chart::Line(LineChart { title, x, y, series, y2: None, hlines: Vec::new(), marks: Vec::new() })
}

fn one_axis(v: &View<'_>) -> Vec<Figure> {
    let a = &v.axes[0];
    let (x, pos) = x_axis(a, &a.label());
    let at = |r: &Row| pos[v.coords[r.point][0]];
    let names = series_of(v.rows);
    let per_series =
        |name: &str| -> Vec<(f64, &Row)> { v.rows.iter().filter(|r| r.series() == name).map(|r| (at(r), r)).collect() };
    let mut out = Vec::new();
    for shown in [&IOPS, &BW] {
        let lines = names.iter().map(|n| (n.clone(), per_series(n))).collect();
        out.push(Figure {
            name: shown.file.to_string(),
            chart: line_chart(format!("{} by {}", shown.title, a.name), x.clone(), shown, lines, false),
        });
    }
    // Completion latency: mean (solid) and p99 (dashed) of each series on one chart.
    let all: Vec<f64> =
        v.rows.iter().flat_map(|r| [r.mean(summary::CLAT_MEAN), r.mean(summary::CLAT_P99)]).flatten().collect();
    let (y, div) = y_axis("completion latency", Kind::Nanos, &all);
    let mut series = Vec::new();
    for n in &names {
        for (metric, what, dashed) in [(summary::CLAT_MEAN, "mean", false), (summary::CLAT_P99, "p99", true)] {
            let mut pts: Vec<Point> = per_series(n)
                .iter()
                .filter_map(|(x, r)| {
                    Some(Point { x: *x, y: r.mean(metric)? / div, err: r.ci(metric).map(|c| c / div), label: None })
                })
                .collect();
            pts.sort_by(|a, b| a.x.total_cmp(&b.x));
            series.push(Series { name: format!("{n} {what}"), points: pts, dashed });
        }
    }
    out.push(Figure {
        name: "clat".into(),
        chart: Chart::Line(LineChart {
            title: format!("completion latency by {}", a.name),
            x: x.clone(),
            y,
            series,
            y2: None,
            hlines: Vec::new(),
            marks: Vec::new(),
        }),
    });
    // Utilisation is the device's over the whole run: one line, from the first series.
    if v.rows.iter().any(|r| r.mean(summary::UTIL).is_some()) {
        let first = names.first().cloned().unwrap_or_default();
        let lines = vec![("util".to_string(), per_series(&first))];
        out.push(Figure {
            name: UTIL.file.into(),
            chart: line_chart(format!("device utilisation by {}", a.name), x, &UTIL, lines, false),
        });
    }
    out
}

fn two_axes(v: &View<'_>) -> Vec<Figure> {
    let (ra, ca) = (&v.axes[0], &v.axes[1]);
    let names = series_of(v.rows);
    let mut out = Vec::new();
    for (si, name) in names.iter().enumerate() {
        for shown in [&IOPS, &P99] {
            let vals: Vec<f64> = v.rows.iter().filter_map(|r| r.mean(shown.metric)).collect();
            let (axis, div) = y_axis(shown.title, shown.kind, &vals);
            let mut cells = vec![vec![None; ca.values.len()]; ra.values.len()];
            for r in v.rows.iter().filter(|r| &r.series() == name) {
                let c = &v.coords[r.point];
                cells[c[0]][c[1]] = r.mean(shown.metric).map(|m| m / div);
            }
            let suffix = if names.len() > 1 { format!(" ({name})") } else { String::new() };
            let file = if names.len() > 1 {
                format!("heat-{}-{}", shown.file, si + 1)
            } else {
                format!("heat-{}", shown.file)
            };
            out.push(Figure {
                name: file,
                chart: Chart::Heat(HeatMap {
                    title: format!("{}: {} × {}{suffix}", shown.title, ra.name, ca.name),
                    x_label: ca.name.clone(),
                    y_label: ra.name.clone(),
                    cols: ca.values.clone(),
                    rows: ra.values.clone(),
                    cells,
                    log: axis.scale == Scale::Log,
                    unit: axis.label.clone(),
                }),
            });
        }
    }
    out
}

/// Lines against axis `xi`, one per combination of the other axes' values (and series);
/// saved as `iops-FILE`, `bandwidth-FILE`, `clat-p99-FILE`.
fn lines_by(v: &View<'_>, xi: usize, file: &str) -> Vec<Figure> {
    let xa = &v.axes[xi];
    let (x, pos) = x_axis(xa, &xa.label());
    let names = series_of(v.rows);
    let others: Vec<usize> = (0..v.axes.len()).filter(|&i| i != xi).collect();
    let mut groups: Vec<(String, Vec<(f64, &Row)>)> = Vec::new();
    for r in v.rows {
        let c = &v.coords[r.point];
        let mut label: Vec<String> =
            others.iter().map(|&i| format!("{}={}", v.axes[i].name, v.axes[i].values[c[i]])).collect();
        if names.len() > 1 {
            label.push(r.series());
        }
        let label = label.join(" ");
        match groups.iter_mut().find(|g| g.0 == label) {
            Some(g) => g.1.push((pos[c[xi]], r)),
            None => groups.push((label, vec![(pos[c[xi]], r)])),
        }
    }
    let other_names: Vec<&str> = others.iter().map(|&i| v.axes[i].name.as_str()).collect();
    [&IOPS, &BW, &P99]
        .into_iter()
        .map(|shown| Figure {
            name: format!("{}-{file}", shown.file),
            chart: line_chart(
                format!("{} by {}, one line per {}", shown.title, xa.name, other_names.join(" × ")),
                x.clone(),
                shown,
                groups.clone(),
                false,
            ),
        })
        .collect()
}

/// The chart the seed draws by hand: points ordered by the product of the two (numeric) axes,
/// bandwidth on the left axis and mean completion latency on the right.
fn by_product(v: &View<'_>) -> Option<Figure> {
    let (a, b) = (&v.axes[0], &v.axes[1]);
    let (pa, pb) = (a.positions.as_ref()?, b.positions.as_ref()?);
    if a.bytes || b.bytes {
        return None;
    }
    let mut order: Vec<usize> = (0..v.coords.len()).collect();
    let product = |p: usize| pa[v.coords[p][0]] * pb[v.coords[p][1]];
    order.sort_by(|&p, &q| product(p).total_cmp(&product(q)).then(pa[v.coords[p][0]].total_cmp(&pa[v.coords[q][0]])));
    let labels: Vec<String> =
        order.iter().map(|&p| format!("{}×{}", a.values[v.coords[p][0]], b.values[v.coords[p][1]])).collect();
    let x = Axis::categories(format!("{} × {}, ordered by the product", a.name, b.name), &labels);
    let slot = |point: usize| order.iter().position(|&p| p == point).unwrap_or(0) as f64;
    let names = series_of(v.rows);
    let bw_vals: Vec<f64> = v.rows.iter().filter_map(|r| r.mean(summary::BW)).collect();
    let lat_vals: Vec<f64> = v.rows.iter().filter_map(|r| r.mean(summary::CLAT_MEAN)).collect();
    let (y, bdiv) = y_axis("bandwidth", Kind::BytesPerSec, &bw_vals);
    let (y2, ldiv) = y_axis("mean completion latency", Kind::Nanos, &lat_vals);
    let pts = |name: &str, metric: usize, div: f64| -> Vec<Point> {
        let mut p: Vec<Point> = v
            .rows
            .iter()
            .filter(|r| r.series() == name)
            .filter_map(|r| Some(Point::new(slot(r.point), r.mean(metric)? / div)))
            .collect();
        p.sort_by(|a, b| a.x.total_cmp(&b.x));
        p
    };
    let series = names
        .iter()
        .map(|n| Series { name: format!("{n} bandwidth"), points: pts(n, summary::BW, bdiv), dashed: false })
        .collect();
    let lat = names
        .iter()
        .map(|n| Series { name: format!("{n} clat mean"), points: pts(n, summary::CLAT_MEAN, ldiv), dashed: true })
        .collect();
    Some(Figure {
        name: "by-product".into(),
        chart: Chart::Line(LineChart {
            title: format!("bandwidth and mean latency, ordered by {} × {}", a.name, b.name),
            x,
            y,
            series,
            y2: Some((y2, lat)),
            hlines: Vec::new(),
            marks: Vec::new(),
        }),
    })
}

/// Bars per series for a single report (lines need more than one point): IOPS, bandwidth and
/// p99 completion latency of each job and direction.
pub fn job_bars(rows: &[Row]) -> Vec<Figure> {
    let names = series_of(rows);
    [&IOPS, &BW, &P99]
        .into_iter()
        .map(|shown| {
            let values: Vec<Option<f64>> = names
                .iter()
                .map(|n| rows.iter().find(|r| &r.series() == n).and_then(|r| r.mean(shown.metric)))
                .collect();
            Figure {
                name: shown.file.to_string(),
                chart: bars(format!("{} per job", shown.title), shown, names.clone(), vec![(String::new(), values)]),
            }
        })
        .collect()
}

/// Grouped bars of one metric: `groups` are (series name, one value per category), in base units.
pub fn bars(
    title: String,
    shown_kind: &impl BarMetric,
    categories: Vec<String>,
    groups: Vec<(String, Vec<Option<f64>>)>,
) -> Chart {
    let vals: Vec<f64> = groups.iter().flat_map(|g| g.1.iter().flatten().copied()).collect();
    let (y, div) = y_axis(shown_kind.title(), shown_kind.kind(), &vals);
    let y = Axis { scale: Scale::Linear, ..y };
    let series = groups.into_iter().map(|(n, v)| (n, v.into_iter().map(|x| x.map(|x| x / div)).collect())).collect();
    Chart::Bars(BarChart { title, x_label: "job".into(), categories, y, series })
}

/// What a bar chart needs to know of its metric.
pub trait BarMetric {
    fn title(&self) -> &str;
    fn kind(&self) -> Kind;
}

impl BarMetric for Shown {
    fn title(&self) -> &str {
        self.title
    }
    fn kind(&self) -> Kind {
        self.kind
    }
}

impl BarMetric for (&str, Kind) {
    fn title(&self) -> &str {
        self.0
    }
    fn kind(&self) -> Kind {
        self.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_follow_the_values() {
        let (a, d) = y_axis("bandwidth", Kind::BytesPerSec, &[3.0 * 1048576.0, 9.0 * 1048576.0]);
        assert_eq!((a.label.as_str(), d, a.scale), ("bandwidth (MiB/s)", 1048576.0, Scale::Linear));
        let (a, d) = y_axis("latency", Kind::Nanos, &[20_000.0, 5_000_000.0]);
        assert_eq!((a.label.as_str(), d, a.scale), ("latency (ms)", 1e6, Scale::Log));
        let (a, _) = y_axis("IOPS", Kind::Iops, &[100.0, 300.0]);
        assert_eq!((a.label.as_str(), a.scale), ("IOPS", Scale::Linear));
    }

    #[test]
    fn x_axes() {
        let bs = AxisView {
            name: "bs".into(),
            values: vec!["4k".into(), "64k".into(), "1m".into()],
            positions: Some(vec![4096.0, 65536.0, 1048576.0]),
            bytes: true,
            unit: None,
        };
        let (a, pos) = x_axis(&bs, "bs");
        assert_eq!(a.scale, Scale::Log);
        assert_eq!(pos[1], 65536.0);
        assert_eq!(a.ticks.unwrap()[2].1, "1m");
        let rw = AxisView {
            name: "rw".into(),
            values: vec!["read".into(), "write".into()],
            positions: None,
            bytes: false,
            unit: None,
        };
        let (a, pos) = x_axis(&rw, "rw");
        assert_eq!((a.scale, pos), (Scale::Linear, vec![0.0, 1.0]));
    }
}
