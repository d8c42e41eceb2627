//! Runs sweep points as child `fiox` processes into a results folder: one JSON+ report per
//! run, renamed into place only when the run ended well, so a folder can always be resumed.
//! `sweep.json` records what the folder holds; a folder holding another sweep is refused.

use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::lab::axis::Axis;
use crate::lab::base::{Base, Prepared};
use crate::lab::outputs::{brief, Outputs};
use crate::lab::results::{self, Run};
use crate::serve::live::{Figures, Interval, LiveFeed, Record};

/// Set by SIGINT/SIGTERM while a sweep runs.
pub(crate) static STOP: AtomicBool = AtomicBool::new(false);

pub(crate) enum Outcome {
    Done,
    Failed,
    Interrupted,
}

/// What every sweep session is run with, whatever its points.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The results folder.
    pub out: PathBuf,
    /// Runs per point.
    pub repeat: u32,
    /// The wait before each run but the first.
    pub pause: Duration,
    /// `--live ADDR`: where the live page is served while the sweep runs.
    pub live: Option<std::net::SocketAddr>,
}

/// Runs points as child processes into a results folder, skipping finished runs.
pub(crate) struct Runner {
    dir: PathBuf,
    points_dir: PathBuf,
    repeat: u32,
    pause: Duration,
    ran_one: bool,
    pub failures: Vec<String>,
    state: Value,
    started: Instant,
    /// The live page's feed (`--live`): each run's records, finished points included.
    live: Option<Arc<LiveFeed>>,
}

impl Runner {
    /// Opens (or creates) the results folder; a folder holding another sweep is refused.
    /// `what` is what defines the session beyond its base job (the axes, or the knee's
    /// target): a resumed session must have the same base job, job files and `what`.
    pub fn open(settings: &Settings, base: &Base, what: Vec<(&str, Value)>) -> Result<Runner> {
        // The live page's port first, so a taken one fails before the folder is touched.
        let live = match settings.live {
            Some(addr) => {
                // The page's title is the command, as the user would type it again.
                let args: Vec<String> = std::env::args().skip(1).collect();
                let feed = LiveFeed::new(format!("fiox {}", shell_words(&args)));
                crate::serve::http::serve(addr, "sweep: --live", vec![feed.site()])?;
                Some(feed)
            }
            None => None,
        };
        let dir = settings.out.as_path();
        let mut definition = serde_json::Map::new();
        definition.insert("base".into(), json!(base.args));
        definition.insert("job files".into(), base.fingerprint());
        definition.extend(what.into_iter().map(|(k, v)| (k.to_string(), v)));
        let definition = Value::Object(definition);
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
        state["repeat"] = json!(settings.repeat);
        state["pause_s"] = json!(settings.pause.as_secs_f64());
        let r = Runner {
            dir: dir.to_path_buf(),
            points_dir: dir.join("points"),
            repeat: settings.repeat,
            pause: settings.pause,
            ran_one: false,
            failures: Vec::new(),
            state,
            started: Instant::now(),
            live,
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

    /// Records `value` under `key` in `sweep.json`.
    pub fn record(&mut self, key: &str, value: Value) -> Result<()> {
        self.state[key] = value;
        self.save()
    }

    /// Records in `sweep.json` when the session ended (`null` when interrupted) and its failures.
    fn finish(&mut self, interrupted: bool) -> Result<()> {
        self.state["finished"] = if interrupted { Value::Null } else { json!(epoch()) };
        self.state["failed"] = json!(self.failures);
        self.save()
    }

    /// The session as the page's settings table shows it.
    pub fn settings(&self, axes: &[Axis]) -> Vec<(String, String)> {
        let mut s = vec![("command".to_string(), shell_words(&std::env::args().collect::<Vec<_>>()))];
        for a in axes {
            s.push((format!("axis {}", a.typed), a.values.join(", ")));
        }
        s.push(("repeat".into(), self.repeat.to_string()));
        if !self.pause.is_zero() {
            s.push(("pause between runs".into(), format!("{:?}", self.pause)));
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
    pub fn load_runs(&self, id: &str) -> Vec<Run> {
        (1..=self.repeat).filter_map(|r| results::load(&self.report_path(id, r)).ok()).collect()
    }

    /// A run's name in progress lines: the point, and which run when points are repeated.
    pub fn tag(&self, what: &str, run: u32) -> String {
        if self.repeat > 1 {
            format!("{what} (run {run}/{})", self.repeat)
        } else {
            what.to_string()
        }
    }

    /// Runs every repeat of one point in a row, for searches that need a point's result before
    /// choosing the next; `Failed` when any run failed.
    pub fn run_repeats(&mut self, id: &str, p: &Prepared, what: &str) -> Result<Outcome> {
        let mut outcome = Outcome::Done;
        for run in 1..=self.repeat {
            match self.run(id, p, run, &self.tag(what, run))? {
                Outcome::Interrupted => return Ok(Outcome::Interrupted),
                Outcome::Failed => outcome = Outcome::Failed,
                Outcome::Done => {}
            }
        }
        Ok(outcome)
    }

    /// Writes the results folder from the runs that finished, records how the session ended
    /// and says where the results are. An interrupted session's exit status comes back.
    pub fn conclude(&mut self, outputs: &Outputs, interrupted: bool) -> Result<Option<ExitCode>> {
        outputs.write(&self.dir)?;
        self.finish(interrupted)?;
        println!("results: {}", self.dir.join("index.html").display());
        if interrupted {
            eprintln!("fiox: sweep interrupted; run the same command again to resume");
            return Ok(Some(ExitCode::from(128)));
        }
        Ok(None)
    }

    /// Runs one point once, unless its report is already there.
    pub fn run(&mut self, id: &str, p: &Prepared, run: u32, tag: &str) -> Result<Outcome> {
        if STOP.load(Ordering::Relaxed) {
            return Ok(Outcome::Interrupted);
        }
        let report = self.report_path(id, run);
        if let Ok(r) = results::load(&report) {
            println!("{tag}: done earlier: {}", brief(&r));
            if let Some(feed) = &self.live {
                feed.begin(format!("{tag} (done earlier)"));
                feed.push(Record::End(live_end(&r)));
            }
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
        let mut cmd = Command::new(exe);
        cmd.args(&args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        if self.live.is_some() {
            // The point writes its live records on its standard output (its report goes to
            // --output), one JSON line each second.
            cmd.env(crate::serve::live::RECORDS_ENV, "1").stdout(Stdio::piped());
        }
        let mut child = cmd.spawn().context("cannot start a point's run")?;
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
            s
        });
        let records = match (&self.live, child.stdout.take()) {
            (Some(feed), Some(out)) => {
                feed.begin(tag);
                let feed = feed.clone();
                Some(std::thread::spawn(move || {
                    let mut ended = false;
                    for line in std::io::BufRead::lines(std::io::BufReader::new(out)).map_while(Result::ok) {
                        // Anything else on the point's output is not ours to show.
                        if let Ok(record) = serde_json::from_str::<Record>(&line) {
                            ended |= matches!(record, Record::End(_));
                            feed.push(record);
                        }
                    }
                    ended
                }))
            }
            _ => None,
        };
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
        let ended = records.map(|r| r.join().unwrap_or(false));
        let live_failed = |why: &str| {
            if let Some(feed) = &self.live {
                feed.push(Record::Failed { why: why.to_string() });
            }
        };
        if STOP.load(Ordering::Relaxed) || status.code() == Some(128) {
            live_failed("interrupted");
            let _ = std::fs::remove_file(&partial);
            STOP.store(true, Ordering::Relaxed);
            println!("{tag}: interrupted");
            return Ok(Outcome::Interrupted);
        }
        let parsed = results::load(&partial);
        match (status.success(), parsed) {
            (true, Ok(r)) => {
                if let (Some(feed), Some(false)) = (&self.live, ended) {
                    feed.push(Record::End(live_end(&r)));
                }
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
                // The last line that says what went wrong: a job ended by an I/O error closes
                // with fio's `pid=N, err=E` summary, which names no file or offset.
                let last = err_text
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty() && !l.starts_with("fiox: pid="))
                    .unwrap_or("")
                    .trim()
                    .to_string();
                let msg = format!(
                    "{tag}: failed ({why}){}",
                    if last.is_empty() { String::new() } else { format!(": {last}") }
                );
                println!("{msg}");
                live_failed(&why);
                self.failures.push(msg);
                Ok(Outcome::Failed)
            }
        }
    }
}

/// A finished report's figures as the live page shows a run's end: per job (directions
/// together) and for all jobs, percentiles from the merged histograms.
fn live_end(run: &Run) -> Interval {
    let mut order: Vec<&str> = Vec::new();
    for j in &run.jobs {
        if !order.contains(&j.job.as_str()) {
            order.push(&j.job);
        }
    }
    let figures = |name: &str, pick: &dyn Fn(&results::JobResult) -> bool| {
        let mut f = Figures { name: name.to_string(), ..Figures::default() };
        let mut bins = std::collections::BTreeMap::new();
        for j in run.jobs.iter().filter(|j| pick(j)) {
            f.ios += j.fig.ios;
            f.bytes += (j.fig.bw * j.fig.runtime_ms as f64 / 1000.0).round() as u64;
            f.iops += j.fig.iops;
            f.bw += j.fig.bw;
            for &(v, n) in &j.fig.bins {
                *bins.entry(v).or_insert(0) += n;
            }
        }
        let merged = results::Figures { bins: bins.into_iter().collect(), ..results::Figures::default() };
        let at = |p: f64| merged.percentile(p).map(|ns| ns as u64);
        (f.p50_ns, f.p99_ns, f.p999_ns) = (at(50.0), at(99.0), at(99.9));
        f
    };
    let t = run.jobs.iter().map(|j| j.fig.runtime_ms).max().unwrap_or(0) as f64 / 1000.0;
    Interval {
        t,
        all: figures("all", &|_| true),
        jobs: order.iter().map(|name| figures(name, &|j| j.job == *name)).collect(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting() {
        assert_eq!(
            shell_words(&["fiox".into(), "--vary".into(), "bs=4k,8k".into(), "a b".into(), "it's".into()]),
            "fiox --vary bs=4k,8k 'a b' 'it'\\''s'"
        );
    }
}
