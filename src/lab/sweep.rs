//! `fiox sweep`: runs a base job once per point of one or more axes (`--vary bs=4k,64k`), each
//! point as a child `fiox` process writing a fio-compatible JSON+ report, and turns the reports
//! into `summary.csv`, charts and `index.html`.
//!
//! - The axis option is appended to every job section (command-line and job-file jobs alike),
//!   so it overrides the job's own value, as the seed's `sed` edits did. Job files are written
//!   per point into `points/` (runnable with fio itself), command-line jobs become arguments.
//! - Every point is checked through the option table and the planner before anything runs.
//! - Points run in order (repeats in rounds: all points once, then again, so slow drift spreads
//!   over all points instead of biasing one), with an optional pause between runs.
//! - A report is renamed into place only when its run finished, so running the same command
//!   again skips finished runs and picks up where an interrupted sweep stopped.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use fiox_options::Ctx;
use serde_json::json;

use crate::lab::axis::{self, Axis};
use crate::lab::base::{Base, Prepared};
use crate::lab::charts::AxisView;
use crate::lab::knee;
use crate::lab::outputs::Outputs;
use crate::lab::results::Run;
use crate::lab::runner::{Outcome, RunSettings, Runner, STOP};

const USAGE: &str = "\
usage: fiox sweep --vary OPTION=VALUES [--vary ...] [sweep options] [fio options] [job file(s)]

Runs the job once per point and writes a results folder: points/*.json (fio JSON+ reports),
summary.csv, charts/*.png and *.svg, and index.html.

  --vary OPTION=VALUES  an axis: 1,2,4,8 | 1..64:x2 | 10..60:+10 | 1k,2k,4k,...,64m | randread,write
                        (values with commas of their own: separate them with ';')
  --zip                 walk the axes side by side instead of their cross product
  --repeat N            run every point N times: means and 95% confidence intervals
  --pause TIME          wait between runs (10s, 500ms; a bare number is seconds)
  --out DIR             the results folder (default fiox-sweep); running the same sweep
                        again into it resumes where it stopped
  --find-knee           search iodepth (and numjobs, if given with --vary) for the highest
                        throughput that meets --target, instead of running every point
  --target METRIC<=TIME latency target for --find-knee: mean, p50 ... p99.99 (p99<=2ms)
  --max-iodepth N       the deepest queue --find-knee tries (default 1024)

Examples:
  fiox sweep --vary bs=1k,2k,4k,...,64m job.fio
  fiox sweep --vary numjobs=1..16:x2 --vary iodepth=1..64:x2 --pause 10s job.fio
  fiox sweep --find-knee --target p99<=2ms --filename=/dev/nvme0n1 --rw=randread --ioengine=io_uring --direct=1 --runtime=10 --time_based --name=qd
";

/// What the user asked for.
struct Opts {
    vary: Vec<String>,
    zip: bool,
    repeat: u32,
    pause: Duration,
    out: PathBuf,
    knee: bool,
    target: Option<String>,
    max_iodepth: u64,
    /// Everything else: fio's options and job files.
    base: Vec<String>,
}

fn parse_opts(args: &[String]) -> Result<Option<Opts>> {
    let mut o = Opts {
        vary: Vec::new(),
        zip: false,
        repeat: 1,
        pause: Duration::ZERO,
        out: PathBuf::from("fiox-sweep"),
        knee: false,
        target: None,
        max_iodepth: 1024,
        base: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let takes_value = matches!(name, "--vary" | "--repeat" | "--pause" | "--out" | "--target" | "--max-iodepth");
        let flag = matches!(name, "--zip" | "--find-knee" | "--help" | "-h");
        if !takes_value && !flag {
            o.base.push(a.clone());
            continue;
        }
        if flag && inline.is_some() {
            bail!("sweep: {name} takes no value");
        }
        let mut value = || -> Result<String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            let v = args.get(i).cloned().with_context(|| format!("sweep: {name} needs a value"))?;
            i += 1;
            Ok(v)
        };
        match name {
            "--help" | "-h" => return Ok(None),
            "--zip" => o.zip = true,
            "--find-knee" => o.knee = true,
            "--vary" => o.vary.push(value()?),
            "--repeat" => {
                let v = value()?;
                o.repeat = match v.parse::<u32>() {
                    Ok(n) if (1..=1000).contains(&n) => n,
                    _ => bail!("sweep: bad value '{v}' for --repeat: a whole number from 1 to 1000"),
                };
            }
            "--pause" => {
                let v = value()?;
                let us = fiox_options::value::parse_time(&v, fiox_options::table::TimeUnit::Sec)
                    .map_err(|e| anyhow::anyhow!("sweep: bad value '{v}' for --pause: {e}"))?;
                o.pause = Duration::from_micros(us);
            }
            "--out" => o.out = PathBuf::from(value()?),
            "--target" => o.target = Some(value()?),
            "--max-iodepth" => {
                let v = value()?;
                o.max_iodepth = match v.parse::<u64>() {
                    Ok(n) if (1..=65536).contains(&n) => n,
                    _ => bail!("sweep: bad value '{v}' for --max-iodepth: a whole number from 1 to 65536"),
                };
            }
            _ => unreachable!("every sweep option is handled"),
        }
    }
    Ok(Some(o))
}

pub fn run(args: &[String]) -> Result<ExitCode> {
    let Some(o) = parse_opts(args)? else {
        print!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    };
    let ctx = crate::fio::machine_ctx();
    let axes: Vec<Axis> = o.vary.iter().map(|v| axis::parse(v, &ctx)).collect::<Result<_>>()?;
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.def.name == a.def.name) {
            bail!("sweep: --vary {} is given twice", a.def.name);
        }
    }
    if o.target.is_some() && !o.knee {
        bail!("sweep: --target is for --find-knee");
    }
    if o.knee && o.zip {
        bail!("sweep: --zip does not apply to --find-knee (it searches iodepth for each numjobs value)");
    }
    if !o.knee && o.max_iodepth != 1024 {
        bail!("sweep: --max-iodepth is for --find-knee");
    }
    let base = Base::new(&o.base, &ctx)?;
    if o.knee {
        let target =
            o.target.as_deref().context("sweep: --find-knee needs a latency target, e.g. --target p99<=2ms")?;
        let target = knee::Target::parse(target)?;
        return knee::run(base, &o.base, axes, target, o.max_iodepth, o.repeat, o.pause, &o.out);
    }
    if axes.is_empty() {
        bail!("sweep: give at least one axis, e.g. --vary bs=4k,64k,1m (see fiox sweep --help)");
    }
    if !o.zip {
        if let Some((a, v)) = axes.iter().find_map(|a| a.repeated().map(|v| (a, v))) {
            bail!("--vary {}: the value '{v}' is given twice", a.typed);
        }
    }
    let points = if o.zip { zipped(&axes)? } else { cross(&axes)? };
    // Check every point before anything runs.
    let prepared: Vec<Prepared> = points.iter().map(|p| base.prepare(&axes, p)).collect::<Result<_>>()?;
    let definition = json!({
        "base": o.base,
        "job files": base.fingerprint(),
        "axes": axes.iter().map(|a| json!({"option": a.typed, "values": a.values})).collect::<Vec<_>>(),
        "mode": if o.zip { "zip" } else { "cross" },
    });
    let mut runner = Runner::open(&o.out, definition, &o)?;
    let ids: Vec<String> = ids(&axes, &points);
    runner.record_points(&axes, &points, &ids)?;
    let total = points.len() as u32 * o.repeat;
    let mut k = 0;
    'rounds: for run in 1..=o.repeat {
        for (i, p) in points.iter().enumerate() {
            k += 1;
            let what = describe(&axes, p);
            let tag = if o.repeat > 1 {
                format!("[{k}/{total}] {what} (run {run}/{})", o.repeat)
            } else {
                format!("[{k}/{total}] {what}")
            };
            match runner.run(&ids[i], &prepared[i], run, &tag)? {
                Outcome::Interrupted => break 'rounds,
                Outcome::Done | Outcome::Failed => {}
            }
        }
    }
    let interrupted = STOP.load(Ordering::Relaxed);
    let runs: Vec<Vec<Run>> = ids.iter().map(|id| runner.load_runs(id, o.repeat)).collect();
    let (views, coords) = if o.zip { zip_view(&axes, &points, &ctx) } else { cross_view(&axes, &points, &ctx) };
    let title = format!("fiox sweep: {}", axes.iter().map(|a| a.typed.as_str()).collect::<Vec<_>>().join(" × "));
    let out = Outputs {
        title,
        columns: axes.iter().map(|a| a.typed.clone()).collect(),
        axes: views,
        coords,
        zipped: o.zip,
        labels: points.clone(),
        runs,
        settings: runner.settings(&o, &axes),
        extra: Vec::new(),
        headline: Vec::new(),
        notes: runner.failures.clone(),
        with_ci: o.repeat > 1,
    };
    out.write(&o.out)?;
    runner.finish(interrupted)?;
    println!("results: {}", o.out.join("index.html").display());
    if interrupted {
        eprintln!("fiox: sweep interrupted; run the same command again to resume");
        return Ok(ExitCode::from(128));
    }
    if !runner.failures.is_empty() {
        eprintln!("fiox: {} run(s) failed; see {}", runner.failures.len(), o.out.join("points").display());
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Every combination, first axis outermost (as nested shell loops).
fn cross(axes: &[Axis]) -> Result<Vec<Vec<String>>> {
    let n: usize = axes.iter().map(|a| a.values.len()).product();
    if n > 10_000 {
        bail!("sweep: {n} points is too many (the cross product of the axes); at most 10000");
    }
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for a in axes {
        out =
            out.into_iter().flat_map(|p| a.values.iter().map(move |v| [p.clone(), vec![v.clone()]].concat())).collect();
    }
    Ok(out)
}

fn zipped(axes: &[Axis]) -> Result<Vec<Vec<String>>> {
    let n = axes[0].values.len();
    if let Some(a) = axes.iter().find(|a| a.values.len() != n) {
        bail!(
            "sweep: --zip needs axes of equal length, but {} has {} values and {} has {n}",
            a.typed,
            a.values.len(),
            axes[0].typed
        );
    }
    Ok((0..n).map(|i| axes.iter().map(|a| a.values[i].clone()).collect()).collect())
}

/// `bs=4k iodepth=8`.
pub(crate) fn describe(axes: &[Axis], values: &[String]) -> String {
    axes.iter().zip(values).map(|(a, v)| format!("{}={v}", a.typed)).collect::<Vec<_>>().join(" ")
}

/// The axes as charted, and each point's index into their values.
pub(crate) fn cross_view(axes: &[Axis], points: &[Vec<String>], ctx: &Ctx) -> (Vec<AxisView>, Vec<Vec<usize>>) {
    let coords = points
        .iter()
        .map(|p| p.iter().enumerate().map(|(a, v)| axes[a].values.iter().position(|x| x == v).unwrap_or(0)).collect())
        .collect();
    (axis_views(axes, ctx), coords)
}

/// Zipped axes are one axis of points labelled with all their values (`randread 4k`), placed by
/// the first axis's values when those are distinct numbers.
pub(crate) fn zip_view(axes: &[Axis], points: &[Vec<String>], ctx: &Ctx) -> (Vec<AxisView>, Vec<Vec<usize>>) {
    let firsts: Vec<&String> = points.iter().map(|p| &p[0]).collect();
    let distinct = firsts.iter().collect::<std::collections::HashSet<_>>().len() == firsts.len();
    let positions: Option<Vec<f64>> = firsts.iter().map(|v| axes[0].numeric(v, ctx)).collect();
    let view = AxisView {
        name: axes.iter().map(|a| a.typed.as_str()).collect::<Vec<_>>().join(", ") + " (zipped)",
        values: points.iter().map(|p| p.join(" ")).collect(),
        positions: positions.filter(|_| distinct),
        bytes: axes[0].is_size(),
        unit: time_unit(&axes[0]),
    };
    (vec![view], (0..points.len()).map(|i| vec![i]).collect())
}

/// The unit of a time option's values when all are bare numbers (`runtime=10,20` are seconds).
pub(crate) fn time_unit(a: &Axis) -> Option<&'static str> {
    use fiox_options::table::{Kind, TimeUnit};
    let Kind::Time { unit } = a.def.kind else { return None };
    if !a.values.iter().all(|v| v.trim().parse::<f64>().is_ok()) {
        return None;
    }
    Some(match unit {
        TimeUnit::Usec => "µs",
        TimeUnit::Msec => "ms",
        TimeUnit::Sec => "s",
    })
}

/// File-name-safe, unique ids for the points: `bs=4k_iodepth=8`.
pub(crate) fn ids(axes: &[Axis], points: &[Vec<String>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let mut id: String = axes
            .iter()
            .zip(p)
            .map(|(a, v)| {
                let v: String =
                    v.chars().map(|c| if c.is_ascii_alphanumeric() || ".+-".contains(c) { c } else { '_' }).collect();
                format!("{}={v}", a.typed)
            })
            .collect::<Vec<_>>()
            .join("_");
        if id.len() > 150 {
            id.truncate(150);
        }
        if out.contains(&id) {
            id = format!("{id}~{i}");
        }
        out.push(id);
    }
    out
}

pub(crate) fn axis_views(axes: &[Axis], ctx: &Ctx) -> Vec<AxisView> {
    axes.iter()
        .map(|a| AxisView {
            unit: time_unit(a),
            name: a.typed.clone(),
            values: a.values.clone(),
            positions: a.positions(ctx),
            bytes: a.is_size(),
        })
        .collect()
}

impl RunSettings for Opts {
    fn repeat(&self) -> u32 {
        self.repeat
    }
    fn pause(&self) -> Duration {
        self.pause
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx { kb_base: 1024, pagesize: 4096, ncpus: 2, mb_memory: 1024 }
    }

    #[test]
    fn points_cross_and_zip() {
        let a = axis::parse("numjobs=1,2", &ctx()).unwrap();
        let b = axis::parse("iodepth=1,4,16", &ctx()).unwrap();
        let c = cross(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(c.len(), 6);
        assert_eq!(c[1], ["1", "4"]);
        assert_eq!(c[3], ["2", "1"]);
        assert!(zipped(&[a.clone(), b.clone()]).unwrap_err().to_string().contains("equal length"));
        let b2 = axis::parse("iodepth=8,16", &ctx()).unwrap();
        assert_eq!(zipped(&[a.clone(), b2.clone()]).unwrap(), [["1", "8"], ["2", "16"]]);
        let f = axis::parse("filename=/dev/a,/dev/b", &ctx()).unwrap();
        assert_eq!(
            ids(&[f.clone(), a], &cross(&[f, axis::parse("numjobs=1,2", &ctx()).unwrap()]).unwrap())[3],
            "filename=_dev_b_numjobs=2"
        );
    }
}
