//! The workers' running statistics into live intervals: per job (its clones together) and for
//! all jobs, I/Os and bytes so far, IOPS and bandwidth since the previous interval, and the
//! completion-latency percentiles of the I/Os completed since then, from the difference of
//! fio's histograms (so an interval's p99 is that interval's, not the run's so far).

use std::time::Instant;

use fiox_stats::{LatHist, ThreadStat};

use crate::plan::Plan;
use crate::runner::worker::WorkerResult;
use crate::serve::live::{Figures, Interval};

const PERCENTILES: [f64; 3] = [50.0, 99.0, 99.9];

/// A series' totals at one moment, to difference the next interval against.
#[derive(Clone, Default)]
struct Totals {
    ios: u64,
    bytes: u64,
    errors: u64,
    clat: Option<LatHist>,
}

/// Makes intervals from the workers' figures, remembering the previous interval's.
pub struct Recorder {
    started: Instant,
    /// The series each worker (in plan order) belongs to; `None` for a job kept out of the
    /// reports (`stats=0`).
    series_of: Vec<Option<usize>>,
    names: Vec<String>,
    last: Option<(Instant, Vec<Totals>)>,
}

impl Recorder {
    /// Starts the run's clock now.
    pub fn new(plan: &Plan) -> Recorder {
        let mut names: Vec<String> = Vec::new();
        let mut bases: Vec<&str> = Vec::new();
        let mut jobs: Vec<usize> = Vec::new();
        let mut series_of = Vec::with_capacity(plan.workers.len());
        for w in &plan.workers {
            if !w.spec.stats {
                series_of.push(None);
                continue;
            }
            let k = match jobs.iter().position(|&j| j == w.job_index) {
                Some(k) => k,
                None => {
                    // Two jobs of one name stay apart on the page.
                    let same = bases.iter().filter(|&&b| b == w.spec.name).count();
                    names.push(if same == 0 { w.spec.name.clone() } else { format!("{} ({})", w.spec.name, same + 1) });
                    bases.push(&w.spec.name);
                    jobs.push(w.job_index);
                    jobs.len() - 1
                }
            };
            series_of.push(Some(k));
        }
        Recorder { started: Instant::now(), series_of, names, last: None }
    }

    /// Each series' totals (the last one is all jobs').
    fn totals(&self, results: &[WorkerResult]) -> Vec<Totals> {
        let mut t = vec![Totals::default(); self.names.len() + 1];
        for (r, k) in results.iter().zip(&self.series_of) {
            let Some(k) = *k else { continue };
            for s in [k, self.names.len()] {
                t[s].add(&r.ts);
            }
        }
        t
    }

    fn figures(&self, name: &str, now: &Totals, iops: f64, bw: f64, hist: Option<&LatHist>) -> Figures {
        figures(name, now, iops, bw, hist)
    }

    /// The interval since the previous call (since the start, the first time).
    pub fn interval(&mut self, results: &[WorkerResult]) -> Interval {
        let now = self.totals(results);
        difference(self.started, &mut self.last, now, &self.names)
    }

    /// The whole run's figures from the final results: IOPS and bandwidth as the report gives
    /// them (each direction's count over its own runtime, summed), percentiles of every
    /// completion.
    pub fn end(&self, results: &[WorkerResult]) -> Interval {
        let now = self.totals(results);
        let mut rates = vec![(0.0, 0.0); now.len()];
        for (r, k) in results.iter().zip(&self.series_of) {
            let Some(k) = *k else { continue };
            for d in r.ts.dirs.iter().filter(|d| d.runtime_ms > 0) {
                for s in [k, self.names.len()] {
                    rates[s].0 += 1000.0 * d.total_ios as f64 / d.runtime_ms as f64;
                    rates[s].1 += 1000.0 * d.io_bytes as f64 / d.runtime_ms as f64;
                }
            }
        }
        let mut series: Vec<Figures> = now
            .iter()
            .zip(&rates)
            .enumerate()
            .map(|(k, (n, (iops, bw)))| {
                let name = self.names.get(k).map_or("all", String::as_str);
                self.figures(name, n, *iops, *bw, n.clat.as_ref())
            })
            .collect();
        let all = series.pop().unwrap_or_default();
        Interval { t: self.started.elapsed().as_secs_f64(), all, jobs: series }
    }
}

impl Totals {
    fn add(&mut self, ts: &ThreadStat) {
        self.errors += ts.total_err;
        for d in &ts.dirs {
            self.ios += d.total_ios;
            self.bytes += d.io_bytes;
            if let Some(h) = &d.clat_hist {
                self.clat.get_or_insert_with(LatHist::default).merge(h);
            }
        }
    }
}

fn figures(name: &str, now: &Totals, iops: f64, bw: f64, hist: Option<&LatHist>) -> Figures {
    let p = hist.map(|h| h.percentiles(&PERCENTILES)).unwrap_or_default();
    let at = |q: f64| p.iter().find(|(x, _)| *x == q).map(|x| x.1);
    Figures {
        name: name.to_string(),
        ios: now.ios,
        bytes: now.bytes,
        iops: finite(iops),
        bw: finite(bw),
        p50_ns: at(50.0),
        p99_ns: at(99.0),
        p999_ns: at(99.9),
        errors: now.errors,
    }
}

/// The interval from `last` (or `started`) to now, per series (`now`'s last entry is `all`),
/// remembering `now` for the next.
fn difference(
    started: Instant,
    last: &mut Option<(Instant, Vec<Totals>)>,
    now: Vec<Totals>,
    names: &[String],
) -> Interval {
    let at = Instant::now();
    let (since, before) = match last.take() {
        Some((t, before)) => (t, before),
        None => (started, vec![Totals::default(); now.len()]),
    };
    let secs = at.duration_since(since).as_secs_f64();
    let mut series: Vec<Figures> = now
        .iter()
        .zip(&before)
        .enumerate()
        .map(|(k, (n, b))| {
            let rate = |x: u64, y: u64| if secs > 0.0 { x.saturating_sub(y) as f64 / secs } else { 0.0 };
            let hist = match (&n.clat, &b.clat) {
                (Some(n), Some(b)) => Some(n.since(b)),
                (Some(n), None) => Some(n.clone()),
                _ => None,
            };
            let name = names.get(k).map_or("all", String::as_str);
            figures(name, n, rate(n.ios, b.ios), rate(n.bytes, b.bytes), hist.as_ref())
        })
        .collect();
    *last = Some((at, now));
    let all = series.pop().unwrap_or_default();
    Interval { t: at.duration_since(started).as_secs_f64(), all, jobs: series }
}

/// Live intervals from reports rather than workers: a multi-host coordinator's, one series per
/// host from its latest interval report (all of its jobs), `all` every host's; differenced as
/// [`Recorder`] does, so a host's p99 is its last interval's.
pub struct SeriesRecorder {
    started: Instant,
    last: Option<(Instant, Vec<Totals>)>,
}

impl Default for SeriesRecorder {
    fn default() -> Self {
        SeriesRecorder { started: Instant::now(), last: None }
    }
}

impl SeriesRecorder {
    /// The interval since the previous call; `series` names each host and its jobs' statistics
    /// so far (the same hosts, in the same order, every time).
    pub fn interval(&mut self, series: &[(String, Vec<&ThreadStat>)]) -> Interval {
        let mut now = vec![Totals::default(); series.len() + 1];
        for (k, (_, stats)) in series.iter().enumerate() {
            for ts in stats {
                now[k].add(ts);
                now[series.len()].add(ts);
            }
        }
        let names: Vec<String> = series.iter().map(|(n, _)| n.clone()).collect();
        difference(self.started, &mut self.last, now, &names)
    }
}

fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}
