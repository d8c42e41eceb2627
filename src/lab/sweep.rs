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
use serde_json::json;

use crate::cli::{self, Arg, Syntax};
use crate::lab::axis::{self, Axis};
use crate::lab::base::{Base, Prepared};
use crate::lab::cli::{SWEEP, SWEEP_COLUMN};
use crate::lab::knee;
use crate::lab::outputs::Outputs;
use crate::lab::points::{cross, cross_view, describe, ids, zip_view, zipped};
use crate::lab::results::Run;
use crate::lab::runner::{Outcome, Runner, Settings, STOP};

/// `--help` before the flags.
const HEAD: &str = "\
usage: fiox sweep --vary OPTION=VALUES [--vary ...] [sweep options] [fio options] [job file(s)]

Runs the job once per point and writes a results folder: points/*.json (fio JSON+ reports),
summary.csv, charts/*.png and *.svg, and index.html.

";

/// `--help` after the flags.
const TAIL: &str = "
Examples:
  fiox sweep --vary bs=1k,2k,4k,...,64m job.fio
  fiox sweep --vary numjobs=1..16:x2 --vary iodepth=1..64:x2 --pause 10s job.fio
  fiox sweep --find-knee --target p99<=2ms --filename=/dev/nvme0n1 --rw=randread --ioengine=io_uring --direct=1 --runtime=10 --time_based --name=qd
";

/// What the user asked for.
struct Opts {
    vary: Vec<String>,
    zip: bool,
    /// The results folder, repeats and pause.
    run: Settings,
    knee: bool,
    target: Option<String>,
    max_iodepth: u32,
    /// `--repeat-until` and `--repeat-max`: each point runs until its interval is narrow enough.
    until: Option<(fiox_options::repeat::Metric, f64)>,
    repeat_max: Option<u32>,
    /// Everything else: fio's options and job files.
    base: Vec<String>,
}

/// The sweep's own flags, and everything else as the base job; `None` for `--help`.
fn parse_opts(args: &[String]) -> Result<Option<Opts>> {
    let mut o = Opts {
        vary: Vec::new(),
        zip: false,
        run: Settings { out: PathBuf::from("fiox-sweep"), repeat: 1, pause: Duration::ZERO, live: None },
        knee: false,
        target: None,
        max_iodepth: 1024,
        until: None,
        repeat_max: None,
        base: Vec::new(),
    };
    let mut repeat_given = false;
    for arg in cli::args(SWEEP, Syntax::Gnu, args) {
        let (f, v) = match arg.map_err(|e| anyhow::anyhow!(e.message("sweep")))? {
            Arg::Flag(f, v) => (f, v),
            Arg::Other(a) => {
                o.base.push(a.to_string());
                continue;
            }
        };
        let name = f.name;
        match name {
            "--help" => return Ok(None),
            "--zip" => o.zip = true,
            "--find-knee" => o.knee = true,
            "--vary" => o.vary.push(v),
            "--repeat" => {
                o.run.repeat = match v.parse::<u32>() {
                    Ok(n) if (1..=1000).contains(&n) => n,
                    _ => bail!("sweep: bad value '{v}' for {name}: a whole number from 1 to 1000"),
                };
                repeat_given = true;
            }
            "--repeat-until" => {
                o.until = Some(
                    fiox_options::repeat::parse_until(&v)
                        .map_err(|e| anyhow::anyhow!("sweep: bad value '{v}' for {name}: {e}"))?,
                );
            }
            "--repeat-max" => {
                o.repeat_max = Some(
                    fiox_options::repeat::parse_max(&v)
                        .map_err(|e| anyhow::anyhow!("sweep: bad value '{v}' for {name}: {e}"))?,
                );
            }
            "--pause" => {
                let us = fiox_options::value::parse_time(&v, fiox_options::table::TimeUnit::Sec)
                    .map_err(|e| anyhow::anyhow!("sweep: bad value '{v}' for {name}: {e}"))?;
                o.run.pause = Duration::from_micros(us);
            }
            "--out" => o.run.out = PathBuf::from(v),
            "--live" => {
                o.run.live = Some(
                    fiox_options::spec::listen_addr(&v)
                        .map_err(|e| anyhow::anyhow!("sweep: bad value '{v}' for {name}: {e}"))?,
                );
            }
            "--target" => o.target = Some(v),
            "--max-iodepth" => {
                o.max_iodepth = match v.parse::<u32>() {
                    Ok(n) if (1..=65536).contains(&n) => n,
                    _ => bail!("sweep: bad value '{v}' for {name}: a whole number from 1 to 65536"),
                };
            }
            _ => unreachable!("{name} is not a sweep flag"),
        }
    }
    if o.repeat_max.is_some() && o.until.is_none() {
        bail!("sweep: --repeat-max needs --repeat-until");
    }
    if o.until.is_some() && repeat_given {
        bail!("sweep: --repeat and --repeat-until exclude each other (--repeat-max bounds the runs)");
    }
    if o.until.is_some() && o.knee {
        bail!("sweep: --repeat-until does not apply to --find-knee (use --repeat)");
    }
    Ok(Some(o))
}

/// `fiox sweep --help`, also the man page's text for the command.
pub fn help() -> String {
    cli::usage(SWEEP, Syntax::Gnu, SWEEP_COLUMN, HEAD, TAIL)
}

/// `fiox sweep ARGS`: checks every point, runs them (or the knee search) into the results
/// folder and writes its table, charts and page. Exits 128 when interrupted, and 1 when a run of
/// the sweep failed or when no point meets the knee's target.
pub fn run(args: &[String]) -> Result<ExitCode> {
    let Some(o) = parse_opts(args)? else {
        print!("{}", help());
        return Ok(ExitCode::SUCCESS);
    };
    let ctx = crate::plan::machine_ctx();
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
        return knee::run(&base, &o.run, axes, target, o.max_iodepth);
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
    let what = vec![
        ("axes", json!(axes.iter().map(|a| json!({"option": a.typed, "values": a.values})).collect::<Vec<_>>())),
        ("mode", json!(if o.zip { "zip" } else { "cross" })),
    ];
    let mut settings = o.run.clone();
    if let Some((_, _)) = o.until {
        // Runs are numbered up to the most a point may need.
        settings.repeat = o.repeat_max.unwrap_or(fiox_options::repeat::DEFAULT_MAX);
    }
    let mut runner = Runner::open(&settings, &base, what)?;
    let ids: Vec<String> = ids(&axes, &points);
    runner.record_points(&axes, &points, &ids)?;
    let until = o.until.map(|(metric, bound_pct)| fiox_options::repeat::RepeatUntil {
        metric,
        bound_pct,
        max_runs: o.repeat_max.unwrap_or(fiox_options::repeat::DEFAULT_MAX),
    });
    let repeat = settings.repeat;
    let total = points.len() as u32 * repeat;
    let mut k = 0;
    'rounds: for run in 1..=repeat {
        for (i, p) in points.iter().enumerate() {
            k += 1;
            // --repeat-until: a point whose interval is narrow enough (or that has its
            // minimum of runs and is within the bound) is left out of the later rounds.
            if let Some(u) = &until {
                let values = point_values(&runner.load_runs(&ids[i]), u);
                if run as usize > values.len() && !crate::lab::repeat::more(&values, u) {
                    continue;
                }
            }
            let tag = runner.tag(&format!("[{k}/{total}] {}", describe(&axes, p)), run);
            match runner.run(&ids[i], &prepared[i], run, &tag)? {
                Outcome::Interrupted => break 'rounds,
                Outcome::Done | Outcome::Failed => {}
            }
        }
    }
    let interrupted = STOP.load(Ordering::Relaxed);
    let runs: Vec<Vec<Run>> = ids.iter().map(|id| runner.load_runs(id)).collect();
    let mut not_met = 0;
    if let Some(u) = &until {
        let mut record = serde_json::Map::new();
        for ((id, p), point_runs) in ids.iter().zip(&points).zip(&runs) {
            let s = crate::lab::repeat::summary(&point_values(point_runs, u), u);
            not_met += usize::from(!s.met);
            println!(
                "{}: {} over {} runs: mean {:.2} {}, 95% CI ±{:.2} (±{:.2}%): {}",
                describe(&axes, p),
                s.metric,
                s.values.len(),
                s.mean,
                s.unit,
                s.ci95,
                s.ci95_pct,
                if s.met { "within the bound".to_string() } else { format!("NOT within {}%", s.bound_pct) }
            );
            let finite = |v: f64| if v.is_finite() { json!(v) } else { serde_json::Value::Null };
            record.insert(
                id.clone(),
                json!({"metric": s.metric, "bound_pct": s.bound_pct, "runs": s.values.len(), "max_runs": s.max_runs,
                       "mean": finite(s.mean), "ci95": finite(s.ci95), "ci95_pct": finite(s.ci95_pct), "met": s.met,
                       "values": s.values}),
            );
        }
        runner.record("repeat_until", serde_json::Value::Object(record))?;
    }
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
        settings: runner.settings(&axes),
        extra: Vec::new(),
        headline: Vec::new(),
        notes: runner.failures.clone(),
        with_ci: repeat > 1,
    };
    if let Some(code) = runner.conclude(&out, interrupted)? {
        return Ok(code);
    }
    if !runner.failures.is_empty() {
        eprintln!("fiox: {} run(s) failed; see {}", runner.failures.len(), o.run.out.join("points").display());
        return Ok(ExitCode::from(1));
    }
    if not_met > 0 {
        return Ok(ExitCode::from(crate::lab::repeat::NOT_MET));
    }
    Ok(ExitCode::SUCCESS)
}

/// A point's figures so far for `--repeat-until`, one per finished run.
fn point_values(runs: &[Run], u: &fiox_options::repeat::RepeatUntil) -> Vec<f64> {
    runs.iter().filter_map(|r| crate::lab::repeat::of_run(r, u.metric)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sweep_flag_is_handled() {
        for f in SWEEP {
            // A valid value for each flag; --repeat-max goes with --repeat-until.
            let value = match f.name {
                "--repeat-until" => "iops:2%",
                "--repeat-max" => "5",
                _ => "1",
            };
            let with: &[&str] = if f.name == "--repeat-max" { &["--repeat-until=bw:1%"] } else { &[] };
            let args: Vec<String> =
                with.iter().copied().chain([f.name]).chain(f.value.map(|_| value)).map(String::from).collect();
            let o = parse_opts(&args).unwrap_or_else(|e| panic!("{}: {e}", f.name));
            assert_eq!(o.is_none(), f.name == "--help", "{}", f.name);
            assert!(o.is_none_or(|o| o.base.is_empty()), "{} went to the base job", f.name);
        }
        let o =
            parse_opts(&["--vary=bs=4k".into(), "--name=j".into(), "--repeat".into(), "3".into()]).unwrap().unwrap();
        assert_eq!((o.vary, o.base, o.run.repeat), (vec!["bs=4k".to_string()], vec!["--name=j".to_string()], 3));
    }
}
