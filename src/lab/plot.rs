//! `fiox plot INPUT...`: charts from results that already exist, replacing fio_generate_plots
//! and fio2gnuplot.
//!
//! - JSON reports (fio's or fiox's; files, folders of them): each report is a point, in natural
//!   order of the file names. When the names are numbers or sizes (`4k.json`, `64k.json`) the
//!   x axis is numeric (log-scaled when it spans a factor of 16), named after their folder.
//! - A sweep's results folder: its charts, table and page are drawn again from its reports.
//! - Logs (`*_bw.N.log`, `_iops`, `_lat`, `_clat`, `_slat`): one chart per kind over time, one
//!   line per log and direction.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use fiox_charts::{Axis as ChartAxis, Chart, LineChart, Point, Scale, Series, Unit};
use serde_json::Value;

use crate::cli::{self, Arg, Syntax};
use crate::lab::charts::{AxisView, Figure};
use crate::lab::cli::{PLOT, PLOT_COLUMN};
use crate::lab::logs::{self, Log, LogKind};
use crate::lab::outputs::{self, Outputs};
use crate::lab::points;
use crate::lab::results::{self, Run};
use crate::serve::figure::{y_axis, Kind};
use crate::serve::html::{self, Page};

/// `--help` before the flags.
const HEAD: &str = "\
usage: fiox plot [--out DIR] [--title TEXT] INPUT...

Charts (PNG and SVG) and an index.html from existing results:
  INPUT  fio/fiox JSON reports (--output-format=json or json+), folders of them, a fiox sweep's
         results folder, or fio/fiox logs (PREFIX_bw.N.log, _iops, _lat, _clat, _slat)
";

/// `fiox plot --help`, also the man page's text for the command.
pub fn help() -> String {
    cli::usage(PLOT, Syntax::Gnu, PLOT_COLUMN, HEAD, "")
}

/// `fiox plot ARGS`: reads every input first, then writes the charts, `summary.csv` (for
/// reports) and `index.html` into `--out`.
pub fn run(args: &[String]) -> Result<ExitCode> {
    let mut out = PathBuf::from("fiox-plot");
    let mut title: Option<String> = None;
    let mut inputs: Vec<PathBuf> = Vec::new();
    for arg in cli::args(PLOT, Syntax::Gnu, args) {
        match arg.map_err(|e| anyhow::anyhow!(e.message("plot")))? {
            Arg::Flag(f, v) => match f.name {
                "--help" => {
                    print!("{}", help());
                    return Ok(ExitCode::SUCCESS);
                }
                "--out" => out = PathBuf::from(v),
                "--title" => title = Some(v),
                _ => unreachable!("{} is not a plot flag", f.name),
            },
            Arg::Other(a) if a.starts_with('-') && a.len() > 1 => {
                let flags = cli::labels(PLOT, Syntax::Gnu).join(" and ");
                bail!("plot: unknown option '{a}' (plot takes {flags}, then the results to plot)");
            }
            Arg::Other(a) => inputs.push(PathBuf::from(a)),
        }
    }
    if inputs.is_empty() {
        bail!("plot: give the results to plot: JSON reports, folders of them, or fio logs (see fiox plot --help)");
    }
    for p in &inputs {
        if !p.exists() {
            bail!("plot: '{}' does not exist", p.display());
        }
    }
    // A sweep's folder is redrawn as a sweep.
    if inputs.len() == 1 && inputs[0].join("sweep.json").is_file() {
        let o = from_sweep(&inputs[0], title)?;
        o.write(&out)?;
        println!("plot: {}", out.join("index.html").display());
        return Ok(ExitCode::SUCCESS);
    }
    let mut reports: Vec<PathBuf> = Vec::new();
    let mut log_files: Vec<PathBuf> = Vec::new();
    for p in &inputs {
        if p.is_dir() {
            let mut found = false;
            let mut entries: Vec<PathBuf> =
                std::fs::read_dir(p)?.filter_map(|e| e.ok().map(|e| e.path())).filter(|e| e.is_file()).collect();
            entries.sort_by(|a, b| results::natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
            for e in entries {
                match e.extension().and_then(|x| x.to_str()) {
                    // In a folder, JSON files that are not reports (notes, other tools' output)
                    // are passed over; named on the command line, they are an error.
                    Some("json") => match results::load(&e) {
                        Ok(_) => {
                            reports.push(e);
                            found = true;
                        }
                        Err(err) => eprintln!("plot: skipped {err:#}"),
                    },
                    Some("log") if LogKind::of(&e).is_ok() => {
                        log_files.push(e);
                        found = true;
                    }
                    _ => {}
                }
            }
            if !found {
                bail!("plot: '{}' holds no .json reports and no fio logs", p.display());
            }
        } else if p.extension().is_some_and(|x| x == "log") {
            log_files.push(p.clone());
        } else {
            reports.push(p.clone());
        }
    }
    // Everything is read (and refused if unreadable) before anything is written.
    let runs: Vec<Run> = reports.iter().map(|p| results::load(p)).collect::<Result<_>>()?;
    let versions: Vec<String> = runs.iter().map(|r| r.version.clone()).collect();
    let mut logs: Vec<Log> = log_files.iter().map(|p| logs::load(p)).collect::<Result<_>>()?;
    for (l, p) in logs.iter().zip(&log_files) {
        if l.series.is_empty() {
            eprintln!("plot: '{}' holds no samples; skipped", p.display());
        }
    }
    logs.retain(|l| !l.series.is_empty());
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create '{}'", out.display()))?;
    let title = title.unwrap_or_else(|| {
        format!("fiox plot: {}", inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))
    });
    let mut figures: Vec<Figure> = Vec::new();
    let mut page_table = None;
    let mut manifest = None;
    if !runs.is_empty() {
        let o = from_reports(&reports, runs, title.clone());
        let rows = o.rows();
        let names = o.columns.clone();
        std::fs::write(out.join("summary.csv"), crate::lab::summary::csv(&names, &o.labels, &rows, false))?;
        let view =
            crate::lab::charts::View { axes: o.axes.clone(), coords: o.coords.clone(), zipped: false, rows: &rows };
        // One report: bars per job; several: lines across the reports.
        if o.runs.len() == 1 {
            figures.extend(crate::lab::charts::job_bars(&rows));
        } else {
            figures.extend(crate::lab::charts::sweep_charts(&view));
        }
        page_table = Some(outputs::table(&names, &o.labels, &rows, false));
        manifest = o.runs.iter().flatten().find_map(|r| r.fiox.clone());
    }
    figures.extend(log_charts(&logs));
    let shown = outputs::write_charts(&out, &figures)?;
    let mut settings: Vec<(String, String)> = Vec::new();
    for (p, v) in reports.iter().zip(&versions) {
        settings.push(("report".into(), format!("{} ({v})", p.display())));
    }
    for p in &log_files {
        settings.push(("log".into(), p.display().to_string()));
    }
    let page = Page {
        title,
        headline: Vec::new(),
        settings,
        manifest: manifest.as_ref(),
        table: page_table,
        charts: shown,
        notes: Vec::new(),
    };
    std::fs::write(out.join("index.html"), html::render(&page))?;
    println!("plot: {} chart(s); {}", figures.len(), out.join("index.html").display());
    Ok(ExitCode::SUCCESS)
}

/// Reports as the points of one axis named after their folder, positioned by their names when
/// those are numbers or sizes.
fn from_reports(paths: &[PathBuf], runs: Vec<Run>, title: String) -> Outputs {
    let stems: Vec<String> =
        paths.iter().map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()).collect();
    let mut labels = stems.clone();
    // The same name in two folders: tell them apart by folder.
    for i in 0..labels.len() {
        if stems.iter().filter(|s| **s == stems[i]).count() > 1 {
            labels[i] = paths[i].display().to_string();
        }
    }
    let parent = |p: &PathBuf| p.parent().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned());
    let axis_name = match paths.iter().map(parent).collect::<Option<Vec<_>>>() {
        Some(ps) if !ps.is_empty() && ps.iter().all(|p| *p == ps[0]) => ps[0].clone(),
        _ => "report".into(),
    };
    let ctx = crate::plan::machine_ctx();
    let positions: Option<Vec<f64>> =
        labels.iter().map(|l| fiox_options::value::parse_size(l, &ctx).ok().map(|v| v as f64)).collect();
    let unique = positions.as_ref().is_some_and(|p| {
        let mut q = p.clone();
        q.sort_by(f64::total_cmp);
        q.windows(2).all(|w| w[0] != w[1])
    });
    let positions = positions.filter(|_| unique);
    let bytes = positions.is_some() && labels.iter().any(|l| l.ends_with(|c: char| c.is_ascii_alphabetic()));
    Outputs {
        title,
        columns: vec![axis_name.clone()],
        axes: vec![AxisView { name: axis_name, values: labels.clone(), positions, bytes, unit: None }],
        coords: (0..labels.len()).map(|i| vec![i]).collect(),
        zipped: false,
        labels: labels.into_iter().map(|l| vec![l]).collect(),
        runs: runs.into_iter().map(|r| vec![r]).collect(),
        settings: Vec::new(),
        extra: Vec::new(),
        headline: Vec::new(),
        notes: Vec::new(),
        with_ci: false,
    }
}

/// A sweep's folder, from its `sweep.json` and reports.
fn from_sweep(dir: &Path, title: Option<String>) -> Result<Outputs> {
    let state: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json"))?)
        .with_context(|| format!("'{}' is damaged", dir.join("sweep.json").display()))?;
    let points = state.get("points").and_then(Value::as_array).cloned().unwrap_or_default();
    let repeat = state.get("repeat").and_then(Value::as_u64).unwrap_or(1) as u32;
    // Axes in the order the points name them, values in order of appearance (numeric order when
    // every value is a number).
    let mut names: Vec<String> = Vec::new();
    for p in &points {
        for (k, _) in p["values"].as_object().into_iter().flatten() {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    let ctx = crate::plan::machine_ctx();
    let mut axes: Vec<AxisView> = Vec::new();
    for n in &names {
        let mut values: Vec<String> = Vec::new();
        for p in &points {
            if let Some(v) = p["values"][n].as_str() {
                if !values.iter().any(|x| x == v) {
                    values.push(v.to_string());
                }
            }
        }
        let def = fiox_options::table::lookup(n);
        let pos: Option<Vec<f64>> = def.and_then(|d| {
            let a = crate::lab::axis::Axis { def: d, typed: n.clone(), values: values.clone() };
            a.positions(&ctx)
        });
        if let Some(pos) = &pos {
            let mut idx: Vec<usize> = (0..values.len()).collect();
            idx.sort_by(|&a, &b| pos[a].total_cmp(&pos[b]));
            values = idx.iter().map(|&i| values[i].clone()).collect();
        }
        let a = def.map(|d| crate::lab::axis::Axis { def: d, typed: n.clone(), values: values.clone() });
        axes.push(AxisView {
            unit: a.as_ref().and_then(points::time_unit),
            name: n.clone(),
            positions: a.as_ref().and_then(|a| a.positions(&ctx)),
            bytes: a.as_ref().is_some_and(|a| a.is_size()),
            values,
        });
    }
    let mut labels = Vec::new();
    let mut coords = Vec::new();
    let mut runs = Vec::new();
    for p in &points {
        let id = p["id"].as_str().unwrap_or_default();
        let vals: Vec<String> = names.iter().map(|n| p["values"][n].as_str().unwrap_or("").to_string()).collect();
        coords.push(axes.iter().zip(&vals).map(|(a, v)| a.values.iter().position(|x| x == v).unwrap_or(0)).collect());
        labels.push(vals);
        let pd = dir.join("points");
        runs.push(
            (1..=repeat)
                .filter_map(|r| {
                    let f = if r == 1 { pd.join(format!("{id}.json")) } else { pd.join(format!("{id}.run{r}.json")) };
                    results::load(&f).ok()
                })
                .collect(),
        );
    }
    let mode_zip = state["definition"]["mode"] == "zip";
    let title = title.unwrap_or_else(|| format!("fiox sweep: {}", names.join(" × ")));
    let defs: Option<Vec<crate::lab::axis::Axis>> = names
        .iter()
        .zip(&axes)
        .map(|(n, a)| {
            fiox_options::table::lookup(n).map(|d| crate::lab::axis::Axis {
                def: d,
                typed: n.clone(),
                values: a.values.clone(),
            })
        })
        .collect();
    let (axes, coords) = match defs {
        Some(d) if mode_zip && !d.is_empty() => points::zip_view(&d, &labels, &ctx),
        _ => (axes, coords),
    };
    Ok(Outputs {
        title,
        columns: names.clone(),
        axes,
        coords,
        zipped: mode_zip,
        labels,
        runs,
        settings: vec![("sweep".into(), dir.display().to_string())],
        extra: Vec::new(),
        headline: Vec::new(),
        notes: Vec::new(),
        with_ci: repeat > 1,
    })
}

/// One chart per kind of log: value over time, one line per log and direction.
fn log_charts(logs: &[Log]) -> Vec<Figure> {
    let mut kinds: Vec<LogKind> = logs.iter().map(|l| l.kind).collect();
    kinds.sort();
    kinds.dedup();
    kinds
        .into_iter()
        .map(|kind| {
            let of_kind: Vec<&Log> = logs.iter().filter(|l| l.kind == kind).collect();
            let vals: Vec<f64> =
                of_kind.iter().flat_map(|l| l.series.iter().flat_map(|s| s.1.iter().map(|p| p.1))).collect();
            let k = match kind {
                LogKind::Bw => Kind::BytesPerSec,
                LogKind::Iops => Kind::Iops,
                _ => Kind::Nanos,
            };
            let (y, div) = y_axis(kind.title(), k, &vals);
            let series = of_kind
                .iter()
                .flat_map(|l| {
                    let many = l.series.len() > 1;
                    l.series.iter().map(move |(dir, pts)| Series {
                        name: if many { format!("{} {}", l.name, dir.name()) } else { l.name.clone() },
                        points: pts.iter().map(|(t, v)| Point::new(*t, v / div)).collect(),
                        dashed: false,
                    })
                })
                .collect();
            Figure {
                name: kind.file().into(),
                chart: Chart::Line(LineChart {
                    title: format!("{} over time", kind.title()),
                    x: ChartAxis { from_zero: true, ..ChartAxis::new("time (s)", Scale::Linear, Unit::Number) },
                    y,
                    series,
                    y2: None,
                    hlines: Vec::new(),
                    marks: Vec::new(),
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plot_flag_is_handled() {
        // Each flag with a value, alone: refused for want of results, before any I/O.
        for f in PLOT.iter().filter(|f| f.name != "--help") {
            assert!(run(&[f.name.to_string(), "x".into()]).is_err(), "{}", f.name);
        }
    }
}
