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

use crate::lab::axis::{self, Axis};
use crate::lab::base::{Base, Prepared};
use crate::lab::knee;
use crate::lab::outputs::Outputs;
use crate::lab::points::{cross, cross_view, describe, ids, zip_view, zipped};
use crate::lab::results::Run;
use crate::lab::runner::{Outcome, Runner, Settings, STOP};

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
    /// The results folder, repeats and pause.
    run: Settings,
    knee: bool,
    target: Option<String>,
    max_iodepth: u32,
    /// Everything else: fio's options and job files.
    base: Vec<String>,
}

fn parse_opts(args: &[String]) -> Result<Option<Opts>> {
    let mut o = Opts {
        vary: Vec::new(),
        zip: false,
        run: Settings { out: PathBuf::from("fiox-sweep"), repeat: 1, pause: Duration::ZERO },
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
                o.run.repeat = match v.parse::<u32>() {
                    Ok(n) if (1..=1000).contains(&n) => n,
                    _ => bail!("sweep: bad value '{v}' for --repeat: a whole number from 1 to 1000"),
                };
            }
            "--pause" => {
                let v = value()?;
                let us = fiox_options::value::parse_time(&v, fiox_options::table::TimeUnit::Sec)
                    .map_err(|e| anyhow::anyhow!("sweep: bad value '{v}' for --pause: {e}"))?;
                o.run.pause = Duration::from_micros(us);
            }
            "--out" => o.run.out = PathBuf::from(value()?),
            "--target" => o.target = Some(value()?),
            "--max-iodepth" => {
                let v = value()?;
                o.max_iodepth = match v.parse::<u32>() {
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
    let mut runner = Runner::open(&o.run, &base, what)?;
    let ids: Vec<String> = ids(&axes, &points);
    runner.record_points(&axes, &points, &ids)?;
    let repeat = o.run.repeat;
    let total = points.len() as u32 * repeat;
    let mut k = 0;
    'rounds: for run in 1..=repeat {
        for (i, p) in points.iter().enumerate() {
            k += 1;
            let tag = runner.tag(&format!("[{k}/{total}] {}", describe(&axes, p)), run);
            match runner.run(&ids[i], &prepared[i], run, &tag)? {
                Outcome::Interrupted => break 'rounds,
                Outcome::Done | Outcome::Failed => {}
            }
        }
    }
    let interrupted = STOP.load(Ordering::Relaxed);
    let runs: Vec<Vec<Run>> = ids.iter().map(|id| runner.load_runs(id)).collect();
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
    Ok(ExitCode::SUCCESS)
}
