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

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use fiox_options::argv::{self, CommandLine, Format};
use fiox_options::jobfile::{self, JobFile, RawOpt, Section};
use fiox_options::{Ctx, Origin};
use serde_json::{json, Value};

use crate::lab::axis::{self, Axis};
use crate::lab::charts::{self, AxisView, Figure, View};
use crate::lab::html::{self, Page, Table};
use crate::lab::knee;
use crate::lab::results::{self, Run};
use crate::lab::summary::{self, Row};

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

/// Set by SIGINT/SIGTERM while a sweep runs.
static STOP: AtomicBool = AtomicBool::new(false);

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

/// The base job: its command line and job files as parsed, ready to take axis values.
pub(crate) struct Base {
    cl: CommandLine,
    files: Vec<JobFile>,
    texts: Vec<String>,
    /// Global switches handed on to every point's run.
    pub passthrough: Vec<String>,
    readonly: bool,
    max_jobs: Option<u64>,
    ctx: Ctx,
}

/// A point, checked and ready to run: its arguments and the job files to write first.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub args: Vec<String>,
    pub files: Vec<(String, String)>,
}

impl Base {
    pub fn new(args: &[String], ctx: &Ctx) -> Result<Base> {
        let cl = argv::parse(args.to_vec())?;
        let g = &cl.globals;
        let refuse = |what: &str| -> Result<()> {
            bail!("sweep: {what} cannot be used with sweep (each point writes a JSON+ report into the --out folder)")
        };
        if g.output.is_some() {
            refuse("--output (use --out DIR for the results folder)")?;
        }
        if g.formats != [Format::Normal] {
            refuse("--output-format/--minimal")?;
        }
        if g.status_interval.is_some() || g.interval_delta || g.json_lines || g.terse_header {
            refuse("--status-interval, --status-interval-delta, --json-lines or --terse-header")?;
        }
        if g.parse_only || g.showcmd || g.cmdhelp.is_some() || g.enghelp.is_some() || g.version || g.help {
            refuse("--parse-only, --showcmd, --cmdhelp, --enghelp, --version or --help")?;
        }
        let mut passthrough: Vec<String> = g.sections.iter().map(|s| format!("--section={s}")).collect();
        if g.readonly {
            passthrough.push("--readonly".into());
        }
        if let Some(m) = g.max_jobs {
            passthrough.push(format!("--max-jobs={m}"));
        }
        if g.warnings_fatal {
            passthrough.push("--warnings-fatal".into());
        }
        let env = |v: &str| std::env::var(v).ok();
        let mut files = Vec::new();
        let mut texts = Vec::new();
        for p in &cl.job_files {
            if p == Path::new("-") {
                bail!("sweep: a job file on standard input cannot be swept; give it as a file");
            }
            files.push(jobfile::read(p, &env)?);
            texts.push(std::fs::read_to_string(p).unwrap_or_default());
        }
        if cl.job_files.is_empty() && !cl.sections.iter().any(|s| !s.is_global()) {
            bail!("sweep: no base job: give a job file, or job options ending with --name=JOB");
        }
        Ok(Base { readonly: g.readonly, max_jobs: g.max_jobs, cl, files, texts, passthrough, ctx: ctx.clone() })
    }

    /// What identifies the job files' content, so a resumed sweep can tell they changed.
    pub fn fingerprint(&self) -> Value {
        let fnv = |s: &str| s.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
        self.cl
            .job_files
            .iter()
            .zip(&self.texts)
            .map(|(p, t)| json!({"path": p.display().to_string(), "fnv64": format!("{:016x}", fnv(t))}))
            .collect()
    }

    /// The base with each axis's value appended to every job section, checked (options, values,
    /// cross-option rules, files) without doing any I/O.
    pub fn prepare(&self, axes: &[Axis], values: &[String]) -> Result<Prepared> {
        let add = |s: &mut Section| {
            if s.is_global() {
                return;
            }
            for (a, v) in axes.iter().zip(values) {
                s.options.push(RawOpt {
                    def: a.def,
                    typed: a.typed.clone(),
                    value: Some(v.clone()),
                    origin: Origin::CommandLine,
                });
            }
        };
        let mut cl = self.cl.clone();
        cl.sections.iter_mut().for_each(add);
        let mut files = self.files.clone();
        for f in &mut files {
            f.sections.iter_mut().for_each(add);
        }
        let point = || describe(axes, values);
        let set = fiox_options::assemble(&cl, &files, &self.ctx).with_context(|| format!("sweep point {}", point()))?;
        crate::plan::build(set, self.readonly, self.max_jobs).with_context(|| format!("sweep point {}", point()))?;
        let mut args = self.passthrough.clone();
        for s in &cl.sections {
            for o in &s.options {
                args.push(match &o.value {
                    Some(v) => format!("--{}={v}", o.typed),
                    None => format!("--{}", o.typed),
                });
            }
        }
        let mut texts = Vec::new();
        for f in &files {
            let text = render_job_file(f);
            // The file must read back as exactly these sections (a value holding '#', ';' or
            // '${' would not).
            let back = jobfile::parse_text(&text, &f.path, &|_| None).with_context(|| {
                format!("sweep point {}: cannot write '{}' back as a job file", point(), f.path.display())
            })?;
            let same = back.sections.len() == f.sections.len()
                && back.sections.iter().zip(&f.sections).all(|(a, b)| {
                    a.name == b.name
                        && a.options.len() == b.options.len()
                        && a.options.iter().zip(&b.options).all(|(x, y)| x.typed == y.typed && x.value == y.value)
                });
            if !same {
                bail!(
                    "sweep point {}: '{}' holds a value fiox cannot write back into a job file (a '#', ';' or '${{' in a value)",
                    point(),
                    f.path.display()
                );
            }
            texts.push(text);
        }
        Ok(Prepared { args, files: texts.into_iter().enumerate().map(|(i, t)| (format!("{i}"), t)).collect() })
    }
}

/// A parsed job file as text: sections and options as typed, environment variables and
/// includes already expanded.
fn render_job_file(f: &JobFile) -> String {
    let mut s = format!("; written by fiox sweep from {}\n", f.path.display());
    for sec in &f.sections {
        s.push_str(&format!("[{}]\n", sec.name));
        for o in &sec.options {
            match &o.value {
                Some(v) => s.push_str(&format!("{}={v}\n", o.typed)),
                None => s.push_str(&format!("{}\n", o.typed)),
            }
        }
    }
    s
}

pub(crate) enum Outcome {
    Done,
    Failed,
    Interrupted,
}

/// Runs points as child processes into a results folder, skipping finished runs.
pub(crate) struct Runner {
    dir: PathBuf,
    points_dir: PathBuf,
    pause: Duration,
    ran_one: bool,
    pub failures: Vec<String>,
    state: Value,
    started: Instant,
}

impl Runner {
    /// Opens (or creates) the results folder; a folder holding another sweep is refused.
    pub fn open(dir: &Path, definition: Value, settings: &impl RunSettings) -> Result<Runner> {
        let state_path = dir.join("sweep.json");
        let mut state = json!({
            "fiox sweep": crate::VERSION_STRING,
            "definition": definition,
            "command": std::env::args().collect::<Vec<_>>(),
            "cwd": std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default(),
            "started": epoch(),
        });
        if state_path.exists() {
            let old: Value = serde_json::from_str(&std::fs::read_to_string(&state_path)?).with_context(|| {
                format!("'{}' is damaged; remove the folder or use another --out", state_path.display())
            })?;
            if old.get("definition") != state.get("definition") {
                bail!(
                    "sweep: '{}' holds a different sweep (other base job, job files or axes); use another --out or remove it",
                    dir.display()
                );
            }
            println!("fiox sweep: resuming in {}", dir.display());
            state["started"] = old.get("started").cloned().unwrap_or(Value::Null);
        } else if dir.exists() && std::fs::read_dir(dir).map(|mut d| d.next().is_some()).unwrap_or(false) {
            bail!("sweep: '{}' exists and is not a sweep's results folder; use another --out", dir.display());
        }
        std::fs::create_dir_all(dir.join("points")).with_context(|| format!("cannot create '{}'", dir.display()))?;
        state["repeat"] = json!(settings.repeat());
        state["pause_s"] = json!(settings.pause().as_secs_f64());
        let r = Runner {
            dir: dir.to_path_buf(),
            points_dir: dir.join("points"),
            pause: settings.pause(),
            ran_one: false,
            failures: Vec::new(),
            state,
            started: Instant::now(),
        };
        r.save()?;
        STOP.store(false, Ordering::Relaxed);
        fiox_engine::sys::stop_on_signals(&STOP);
        Ok(r)
    }

    fn save(&self) -> Result<()> {
        let p = self.dir.join("sweep.json");
        let tmp = self.dir.join("sweep.json.tmp");
        std::fs::write(&tmp, serde_json::to_string_pretty(&self.state)? + "\n")?;
        std::fs::rename(&tmp, &p).with_context(|| format!("cannot write '{}'", p.display()))
    }

    pub fn record_points(&mut self, axes: &[Axis], points: &[Vec<String>], ids: &[String]) -> Result<()> {
        self.state["points"] = points
            .iter()
            .zip(ids)
            .map(|(p, id)| {
                let values: serde_json::Map<String, Value> =
                    axes.iter().zip(p).map(|(a, v)| (a.typed.clone(), json!(v))).collect();
                json!({"id": id, "values": values})
            })
            .collect();
        self.save()
    }

    pub fn add_point(&mut self, axes: &[Axis], values: &[String], id: &str) -> Result<()> {
        let values: serde_json::Map<String, Value> =
            axes.iter().zip(values).map(|(a, v)| (a.typed.clone(), json!(v))).collect();
        let entry = json!({"id": id, "values": values});
        match self.state.get_mut("points").and_then(Value::as_array_mut) {
            Some(list) if list.iter().any(|p| p["id"] == id) => return Ok(()),
            Some(list) => list.push(entry),
            None => self.state["points"] = json!([entry]),
        }
        self.save()
    }

    pub fn finish(&mut self, interrupted: bool) -> Result<()> {
        self.state["finished"] = if interrupted { Value::Null } else { json!(epoch()) };
        self.state["failed"] = json!(self.failures);
        self.save()
    }

    pub fn settings(&self, o: &impl RunSettings, axes: &[Axis]) -> Vec<(String, String)> {
        let mut s = vec![("command".to_string(), shell_words(&std::env::args().collect::<Vec<_>>()))];
        for a in axes {
            s.push((format!("axis {}", a.typed), a.values.join(", ")));
        }
        s.push(("repeat".into(), o.repeat().to_string()));
        if !o.pause().is_zero() {
            s.push(("pause between runs".into(), format!("{:?}", o.pause())));
        }
        if let Some(t) = self.state.get("started").and_then(Value::as_i64) {
            s.push(("started".into(), fiox_engine::sys::ctime(t)));
        }
        s.push(("this session".into(), format!("{:.0} s", self.started.elapsed().as_secs_f64())));
        s
    }

    pub fn report_path(&self, id: &str, run: u32) -> PathBuf {
        if run <= 1 {
            self.points_dir.join(format!("{id}.json"))
        } else {
            self.points_dir.join(format!("{id}.run{run}.json"))
        }
    }

    /// The finished reports of a point, runs 1 to `repeat`.
    pub fn load_runs(&self, id: &str, repeat: u32) -> Vec<Run> {
        (1..=repeat).filter_map(|r| results::load(&self.report_path(id, r)).ok()).collect()
    }

    /// Runs one point once, unless its report is already there.
    pub fn run(&mut self, id: &str, p: &Prepared, run: u32, tag: &str) -> Result<Outcome> {
        if STOP.load(Ordering::Relaxed) {
            return Ok(Outcome::Interrupted);
        }
        let report = self.report_path(id, run);
        if let Ok(r) = results::load(&report) {
            println!("{tag}: done earlier: {}", brief(&r));
            return Ok(Outcome::Done);
        }
        if self.ran_one && !self.pause.is_zero() {
            let until = Instant::now() + self.pause;
            while Instant::now() < until {
                if STOP.load(Ordering::Relaxed) {
                    return Ok(Outcome::Interrupted);
                }
                std::thread::sleep(Duration::from_millis(50).min(until.saturating_duration_since(Instant::now())));
            }
        }
        self.ran_one = true;
        let mut args = p.args.clone();
        for (k, text) in &p.files {
            let path = if p.files.len() == 1 {
                self.points_dir.join(format!("{id}.fio"))
            } else {
                self.points_dir.join(format!("{id}.{k}.fio"))
            };
            std::fs::write(&path, text).with_context(|| format!("cannot write '{}'", path.display()))?;
            args.push(path.display().to_string());
        }
        let partial = report.with_extension("json.partial");
        args.push("--output-format=json+".into());
        args.push(format!("--output={}", partial.display()));
        args.push("--eta=never".into());
        let exe = std::env::current_exe().context("cannot find the fiox binary to run points with")?;
        let mut child = Command::new(exe)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot start a point's run")?;
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
            s
        });
        let mut signalled = false;
        let status = loop {
            if let Some(st) = child.try_wait()? {
                break st;
            }
            if STOP.load(Ordering::Relaxed) && !signalled {
                // Ctrl-C reaches the child from the terminal; a SIGTERM to us does not.
                let _ = fiox_engine::sys::send_signal(child.id(), libc::SIGINT);
                signalled = true;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let err_text = reader.join().unwrap_or_default();
        if STOP.load(Ordering::Relaxed) || status.code() == Some(128) {
            let _ = std::fs::remove_file(&partial);
            STOP.store(true, Ordering::Relaxed);
            println!("{tag}: interrupted");
            return Ok(Outcome::Interrupted);
        }
        let parsed = results::load(&partial);
        match (status.success(), parsed) {
            (true, Ok(r)) => {
                std::fs::rename(&partial, &report).with_context(|| format!("cannot write '{}'", report.display()))?;
                println!("{tag}: {}", brief(&r));
                Ok(Outcome::Done)
            }
            (ok, parsed) => {
                let failed = report.with_extension("failed.json");
                let log = report.with_extension("failed.log");
                if parsed.is_ok() {
                    let _ = std::fs::rename(&partial, &failed);
                } else {
                    let _ = std::fs::remove_file(&partial);
                }
                let why = match status.code() {
                    Some(c) if !ok => format!("exit status {c}"),
                    Some(_) => "no complete report".to_string(),
                    None => "killed by a signal".to_string(),
                };
                let _ = std::fs::write(&log, &err_text);
                let last = err_text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
                let msg = format!(
                    "{tag}: failed ({why}){}",
                    if last.is_empty() { String::new() } else { format!(": {last}") }
                );
                println!("{msg}");
                self.failures.push(msg);
                Ok(Outcome::Failed)
            }
        }
    }
}

/// Repeat count and pause, as the runner needs them.
pub(crate) trait RunSettings {
    fn repeat(&self) -> u32;
    fn pause(&self) -> Duration;
}

impl RunSettings for Opts {
    fn repeat(&self) -> u32 {
        self.repeat
    }
    fn pause(&self) -> Duration {
        self.pause
    }
}

impl RunSettings for (u32, Duration) {
    fn repeat(&self) -> u32 {
        self.0
    }
    fn pause(&self) -> Duration {
        self.1
    }
}

fn epoch() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// Arguments as one line a shell reads back the same.
pub(crate) fn shell_words(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_=.,/:+@%".contains(c)) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

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

    #[test]
    fn axis_values_override_job_sections() {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("j.fio");
        std::fs::write(&job, "[global]\nioengine=null\nsize=1m\nbs=4k\n[a]\nbs=8k # own value\n[b]\nrw=randread\n")
            .unwrap();
        let base = Base::new(&[job.display().to_string()], &ctx()).unwrap();
        let bs = axis::parse("bs=64k,1m", &ctx()).unwrap();
        let p = base.prepare(std::slice::from_ref(&bs), &["64k".to_string()]).unwrap();
        let text = &p.files[0].1;
        assert!(text.contains("[a]\nbs=8k\nbs=64k\n[b]\nrw=randread\nbs=64k\n"), "{text}");
        assert!(!text.contains("[global]\nioengine=null\nsize=1m\nbs=4k\nbs=64k"), "{text}");
        // A bad combination is refused before anything runs.
        let nj = axis::parse("iodepth=2", &ctx()).unwrap();
        let base = Base::new(&["--name=j".into(), "--ioengine=null".into()], &ctx()).unwrap();
        let e = base.prepare(&[nj], &["2".into()]).unwrap_err();
        assert!(format!("{e:#}").contains("sweep point iodepth=2"), "{e:#}");
        assert!(format!("{e:#}").contains("no target size"), "{e:#}");
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(
            shell_words(&["fiox".into(), "--vary".into(), "bs=4k,8k".into(), "a b".into(), "it's".into()]),
            "fiox --vary bs=4k,8k 'a b' 'it'\\''s'"
        );
    }
}
