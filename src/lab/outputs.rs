//! What a results folder gets from a set of reports: `summary.csv`, the charts as PNG and SVG,
//! and `index.html`; plus the number formats shared by the progress lines and tables.

use std::path::Path;

use anyhow::{Context, Result};

use crate::lab::charts::{self, AxisView, Figure, View};
use crate::lab::results::Run;
use crate::lab::summary::{self, Row};
use crate::serve::html::{self, Page, Table};

/// One line per run: each series' IOPS, bandwidth and p99, and the utilisation.
pub(crate) fn brief(r: &Run) -> String {
    let mut parts: Vec<String> = r
        .jobs
        .iter()
        .map(|j| {
            let p99 = j.fig.percentile(99.0).map(|p| format!(", clat p99 {}", fmt_ns(p))).unwrap_or_default();
            format!("{} {} IOPS, {}{p99}", j.key(), fmt_count(j.fig.iops), fmt_bw(j.fig.bw))
        })
        .collect();
    if let Some(u) = r.util {
        parts.push(format!("util {u:.0}%"));
    }
    if parts.is_empty() {
        "no I/O".into()
    } else {
        parts.join("; ")
    }
}

pub(crate) fn fmt_count(v: f64) -> String {
    fiox_charts::scale::number(v)
}

pub(crate) fn fmt_bw(b: f64) -> String {
    let (d, u) = [(1024f64.powi(3), "GiB/s"), (1024f64.powi(2), "MiB/s"), (1024.0, "KiB/s")]
        .into_iter()
        .find(|(d, _)| b >= *d)
        .unwrap_or((1.0, "B/s"));
    format!("{} {u}", fiox_charts::scale::sig3(b / d))
}

pub(crate) fn fmt_ns(ns: f64) -> String {
    let (d, u) = [(1e9, "s"), (1e6, "ms"), (1e3, "µs")].into_iter().find(|(d, _)| ns >= *d).unwrap_or((1.0, "ns"));
    format!("{} {u}", fiox_charts::scale::sig3(ns / d))
}

/// Everything a results folder gets from a set of reports.
pub(crate) struct Outputs {
    pub title: String,
    /// The CSV's and table's first columns: one per swept option.
    pub columns: Vec<String>,
    pub axes: Vec<AxisView>,
    pub coords: Vec<Vec<usize>>,
    pub zipped: bool,
    /// Each point's values, one per axis (the CSV's first columns).
    pub labels: Vec<Vec<String>>,
    pub runs: Vec<Vec<Run>>,
    pub settings: Vec<(String, String)>,
    /// Charts beyond the standard ones (the knee's).
    pub extra: Vec<Figure>,
    pub headline: Vec<String>,
    pub notes: Vec<String>,
    pub with_ci: bool,
}

impl Outputs {
    pub fn rows(&self) -> Vec<Row> {
        summary::rows(&self.runs)
    }

    /// Writes summary.csv, charts/ and index.html into `dir`.
    pub fn write(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create '{}'", dir.display()))?;
        let rows = self.rows();
        let names = &self.columns;
        write(&dir.join("summary.csv"), summary::csv(names, &self.labels, &rows, self.with_ci))?;
        let view = View { axes: self.axes.clone(), coords: self.coords.clone(), zipped: self.zipped, rows: &rows };
        let mut figures = charts::sweep_charts(&view);
        figures.extend(self.extra.iter().map(|f| Figure { name: f.name.clone(), chart: f.chart.clone() }));
        let shown = write_charts(dir, &figures)?;
        let manifest = self.runs.iter().flatten().find_map(|r| r.fiox.as_ref());
        let page = Page {
            title: self.title.clone(),
            headline: self.headline.clone(),
            settings: self.settings.clone(),
            manifest,
            table: Some(table(names, &self.labels, &rows, self.with_ci)),
            charts: shown,
            notes: self.notes.clone(),
        };
        write(&dir.join("index.html"), html::render(&page))
    }
}

fn write(path: &Path, text: String) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write '{}'", path.display()))
}

/// Saves every figure as PNG and SVG under `dir/charts`, returning them for the page.
pub(crate) fn write_charts(dir: &Path, figures: &[Figure]) -> Result<Vec<html::Shown>> {
    let cdir = dir.join("charts");
    std::fs::create_dir_all(&cdir).with_context(|| format!("cannot create '{}'", cdir.display()))?;
    let mut shown = Vec::new();
    for f in figures {
        let svg = fiox_charts::svg(&f.chart)?;
        let png = fiox_charts::png(&f.chart)?;
        std::fs::write(cdir.join(format!("{}.svg", f.name)), &svg)?;
        std::fs::write(cdir.join(format!("{}.png", f.name)), &png)?;
        shown.push(html::Shown { file: f.name.clone(), title: f.chart.title().to_string(), svg });
    }
    Ok(shown)
}

/// The table on the page: readable units, `mean ± ci` when repeated.
pub(crate) fn table(names: &[String], labels: &[Vec<String>], rows: &[Row], with_ci: bool) -> Table {
    let mut head: Vec<String> = names.to_vec();
    head.extend(
        [
            "job",
            "dir",
            "runs",
            "IOPS",
            "bandwidth",
            "clat mean",
            "clat p50",
            "clat p99",
            "clat p99.9",
            "lat mean",
            "util",
            "CPU",
        ]
        .map(String::from),
    );
    type Fmt = fn(f64) -> String;
    let fmts: [(usize, Fmt); 9] = [
        (summary::IOPS, fmt_count),
        (summary::BW, fmt_bw),
        (summary::CLAT_MEAN, fmt_ns),
        (summary::CLAT_P50, fmt_ns),
        (summary::CLAT_P99, fmt_ns),
        (summary::CLAT_P999, fmt_ns),
        (summary::LAT_MEAN, fmt_ns),
        (summary::UTIL, |v| format!("{v:.1}%")),
        (summary::CPU, |v| format!("{v:.1}%")),
    ];
    let body = rows
        .iter()
        .map(|r| {
            let mut cells = labels[r.point].clone();
            cells.extend([r.job.clone(), r.dir.name().to_string(), r.runs.to_string()]);
            for (m, f) in &fmts {
                cells.push(match (r.mean(*m), r.ci(*m)) {
                    (Some(v), Some(ci)) if with_ci => format!("{} ± {}", f(v), f(ci)),
                    (Some(v), _) => f(v),
                    _ => String::new(),
                });
            }
            cells
        })
        .collect();
    Table { head, rows: body, text_cols: names.len() + 2 }
}
