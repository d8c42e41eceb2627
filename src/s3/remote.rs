//! `fiox s3 bench` on several hosts (`--client`): what the multi-host wing asks of the bench.
//! The coordinator [`claim`]s the bucket (checked, or made, once, before any host starts) and
//! gives each host its command line with a prefix of its own (`PREFIX/hN`, so no two hosts'
//! objects can share a name); each server [`prepare`]s its share (the objects it reads,
//! uploaded before the start barrier) and [`Share::run`]s it at the barrier, answering with a
//! fio report (a job per operation, its histogram whole) that the coordinator merges bucket
//! by bucket into All clients. Each host deletes only its own objects; the bucket goes at the
//! end if the coordinator made it.
//!
//! The coordinator keeps what watches the whole bench: `--live` and `--metrics` ([`Page`],
//! the local bench's page and endpoint, fed each second with the hosts' interval reports
//! merged per operation) and `--repeat-until` ([`Claim::judge`], the local bench's figure of
//! the merged run); the hosts run one measurement each time they are asked.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use fiox_report::{RepeatSummary, RunReport};

use super::args::{self, Opts};
use super::report::{OpStat, OPS};
use super::watch::{self, Watch};
use super::{cleanup, client::Client, endpoints, measure, report, shared, Shared};

/// The coordinator's hold on the bucket for the run.
pub struct Claim {
    opts: Opts,
    /// The command line after `bench`, without the hosts.
    args: Vec<String>,
    created: bool,
}

/// Parses the bench's flags (`args`: after `bench`, the hosts removed); [`Claim::bucket`]
/// then checks or makes the bucket, as a local bench does.
pub fn claim(args: &[String]) -> Result<Claim> {
    let opts = args::parse(args)?;
    Ok(Claim { opts, args: args.to_vec(), created: false })
}

impl Claim {
    /// Checks the bucket (or makes it, and then it is the claim's to remove).
    pub fn bucket(&mut self) -> Result<()> {
        let mut c = Client::new(&endpoints(&self.opts)[0], Duration::from_secs(15));
        self.created = super::bucket(&mut c, &self.opts)?;
        Ok(())
    }

    /// Host `i`'s command line (after `s3`): the bench under `PREFIX/hI`, in the bucket the
    /// claim checked (`--use-existing`: the other hosts' objects are there too), without what
    /// the coordinator keeps (the page, the endpoint, the repetition).
    pub fn host_args(&self, i: usize) -> Vec<String> {
        const KEPT: [&str; 4] = ["--live", "--metrics", "--repeat-until", "--repeat-max"];
        let mut a = vec!["bench".to_string()];
        let mut it = self.args.iter();
        while let Some(x) = it.next() {
            if KEPT.contains(&x.as_str()) {
                it.next();
            } else if !KEPT.iter().any(|k| x.strip_prefix(k).is_some_and(|v| v.starts_with('='))) {
                a.push(x.clone());
            }
        }
        a.push(format!("--prefix={}/h{i}", self.opts.prefix));
        a.push("--use-existing".into());
        a
    }

    pub fn json(&self) -> bool {
        self.opts.json
    }

    /// Whether the bench repeats (`--repeat-until`).
    pub fn repeats(&self) -> bool {
        self.opts.repeat.is_some()
    }

    /// The live page and the metrics endpoint, serving already, if asked for.
    pub fn page(&self) -> Result<Option<Page>> {
        Ok(Watch::start(&self.opts)?.map(|watch| Page { watch }))
    }

    /// `--repeat-until` after a run whose hosts reported `reports`: adds its figure (the local
    /// bench's, of the merged operations) and says whether another run is needed, with the
    /// summary once none is. A run with a failed request, or a lost host (`complete` false),
    /// ends the repetition.
    pub fn judge<'a>(
        &self,
        values: &mut Vec<f64>,
        reports: impl Iterator<Item = &'a RunReport>,
        complete: bool,
    ) -> Result<(bool, Option<RepeatSummary>)> {
        let Some(until) = &self.opts.repeat else { return Ok((false, None)) };
        let (stats, elapsed) = merged(reports);
        let failed = !complete || stats.iter().any(|s| s.errors > 0);
        if !failed {
            let Some(v) = watch::repeat_value(&stats, elapsed, until.metric) else {
                bail!("s3 bench: --repeat-until: run {} completed no operation", values.len() + 1)
            };
            values.push(v);
        }
        let more = !failed && crate::lab::repeat::more(values, until);
        Ok((more, (!more).then(|| crate::lab::repeat::summary(values, until))))
    }

    /// Removes the bucket if the claim made it (every host removed its objects already).
    pub fn release(&self) {
        if self.created && !self.opts.noclear {
            let mut c = Client::new(&endpoints(&self.opts)[0], Duration::from_secs(15));
            let path = format!("/{}", self.opts.bucket);
            match c.call("DELETE", &path, &[], &[], true) {
                Ok(d) if (200..300).contains(&d.status) => {}
                Ok(d) => eprintln!(
                    "fiox: s3 bench: cannot remove bucket '{}': {}",
                    self.opts.bucket,
                    super::client::describe(d.status, &d.body)
                ),
                Err(e) => eprintln!("fiox: s3 bench: cannot remove bucket '{}': {e}", self.opts.bucket),
            }
        }
    }
}

/// The bench's exit status from the hosts' (`code`): as a local bench's, a repetition that
/// never came within its bound exits with 2.
pub fn exit_status(code: std::process::ExitCode, repeat: Option<&RepeatSummary>) -> std::process::ExitCode {
    if code == std::process::ExitCode::SUCCESS && repeat.is_some_and(|r| !r.met) {
        std::process::ExitCode::from(crate::lab::repeat::NOT_MET)
    } else {
        code
    }
}

/// The hosts' reports (a job per operation, its group the operation's place) merged back into
/// the bench's statistics, histograms bucket by bucket, with the longest host's run time.
fn merged<'a>(reports: impl Iterator<Item = &'a RunReport>) -> (Vec<OpStat>, Duration) {
    let mut all = vec![OpStat::default(); OPS.len()];
    let mut ms = 0;
    for job in reports.flat_map(|r| r.jobs.iter()) {
        let Some(op) = all.get_mut(job.groupid as usize) else { continue };
        let d = job.ts.dirs.iter().max_by_key(|d| (d.total_ios, d.runtime_ms)).expect("three directions");
        let mut s =
            OpStat { total: d.clat, ttfb: d.ttfb, bytes: d.io_bytes, errors: job.ts.total_err, ..OpStat::default() };
        s.total_hist = d.clat_hist.clone().unwrap_or_default();
        s.ttfb_hist = d.ttfb_hist.clone().unwrap_or_default();
        op.merge(&s);
        ms = ms.max(job.ts.job_runtime_ms);
    }
    (all, Duration::from_millis(ms))
}

/// `--live` and `--metrics` of a multi-host bench: the local bench's page and endpoint, fed
/// with the hosts' reports merged per operation.
pub struct Page {
    watch: Watch,
}

impl Page {
    /// Run `run` (of `--repeat-until`'s) begins.
    pub fn begin(&self, run: usize) {
        self.watch.begin(run);
    }

    /// The hosts started measuring: intervals count from here.
    pub fn measuring(&self) {
        self.watch.measuring();
    }

    /// The hosts' newest reports, for an interval.
    pub fn interval<'a>(&self, reports: impl Iterator<Item = &'a RunReport>) {
        self.watch.interval(&merged(reports).0);
    }

    /// The hosts' final reports.
    pub fn end<'a>(&self, reports: impl Iterator<Item = &'a RunReport>, started: Instant) {
        let (stats, elapsed) = merged(reports);
        self.watch.end(&stats, if elapsed.is_zero() { started.elapsed() } else { elapsed });
    }
}

/// One host's share, its objects uploaded; they (and what the run makes) are removed when it
/// is dropped, whether it ran or not.
pub struct Share {
    sh: Arc<Shared>,
}

/// A server's part: `args` as [`Claim::host_args`] made them.
pub fn prepare(args: &[String]) -> Result<Share> {
    if args.first().map(String::as_str) != Some("bench") {
        bail!("s3: expected 'bench'");
    }
    let opts = args::parse(&args[1..])?;
    // Watched: the coordinator gets an interval report each second.
    let sh = shared(&opts, true);
    let share = Share { sh };
    super::upload_first(&share.sh)?;
    Ok(share)
}

impl Share {
    /// Measures for `--duration` (or until `stop`), handing `tick` the figures so far each
    /// second, then removes this host's objects; the report is fio's model, a job per
    /// operation (its group the operation's, so the coordinator's per-group merges are per
    /// operation).
    pub fn run(&self, stop: &AtomicBool, tick: &(dyn Fn(RunReport) + Sync)) -> Result<RunReport> {
        let done = AtomicBool::new(false);
        let t0 = Instant::now();
        let result = std::thread::scope(|s| {
            s.spawn(|| {
                let mut next = t0 + Duration::from_secs(1);
                while !done.load(Ordering::Relaxed) {
                    if stop.load(Ordering::Relaxed) {
                        self.sh.stop.store(true, Ordering::Relaxed);
                    }
                    if Instant::now() >= next {
                        next += Duration::from_secs(1);
                        tick(self.report(&self.sh.snapshot(), t0.elapsed()));
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
            let r = measure(&self.sh, None, true);
            done.store(true, Ordering::Relaxed);
            r
        });
        let (stats, elapsed) = result?;
        Ok(self.report(&stats, elapsed))
    }

    fn report(&self, stats: &[OpStat], elapsed: Duration) -> RunReport {
        let first_error = self.sh.first_error.lock().unwrap().clone();
        let r = report::Run {
            opts: &self.sh.opts,
            elapsed,
            first_error: first_error.as_deref(),
            behind: self.sh.behind.load(Ordering::Relaxed),
            repeat: None,
        };
        report::run_report(&r, stats)
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        if !self.sh.opts.noclear {
            let _ = cleanup(&self.sh, false);
        }
    }
}
