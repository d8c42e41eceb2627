//! The live page (`live_listen=ADDR`, a fiox option; `fiox sweep --live ADDR`): while a run
//! goes, `http://ADDR/` shows IOPS, bandwidth and completion latency (p50, p99, p99.9) each
//! second, per job and for all jobs, drawn by `fiox-charts` as the sweep's page draws them,
//! with a table of the latest figures. The page is one HTML document with inline CSS, inline
//! SVG charts and a few lines of inline script that fetch the changing part again each second
//! from the same server: nothing comes from anywhere else, so it works offline and without
//! the script (a reload then shows the latest figures).
//!
//! The pieces, and how figures flow:
//! - [`Interval`] and [`Figures`]: one second of a run, per series (each job, and all of them):
//!   I/Os and bytes so far, IOPS and bandwidth over the interval, latency percentiles of the
//!   interval's completions. An [`Interval`] that ends a run holds the whole run's figures
//!   instead (the report's IOPS and percentiles).
//! - [`LiveFeed`]: the interface producers push into, in [`Record`]s (begin a run, an interval,
//!   the end, or a failure), and the bounded store the page is drawn from. A plain run pushes
//!   from the runner's once-a-second interval hook (`record::Recorder` turns the workers'
//!   running statistics into intervals); a sweep pushes its points' records, which each point's
//!   child process writes as JSON lines on its standard output (see [`RECORDS_ENV`]); a
//!   multi-host coordinator can push merged intervals the same way (a series per host or job
//!   in `jobs`, the merged figures in `all`).
//! - `page`: the page, its changing part, the JSON and the charts, as pure functions of what
//!   the feed holds; `LiveFeed::site` serves them through `crate::serve::http`, rendering at most once
//!   per new interval however often the page is polled.
//!
//! Nothing here is on the I/O path: the workers' figures are the snapshots the interval hook
//! already takes (one lock per worker per second); serving the page only reads the feed.

pub mod page;
pub mod record;

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

/// Set in a sweep point's environment: the child writes its live records on standard output,
/// one JSON [`Record`] a line, for the sweep's page.
pub const RECORDS_ENV: &str = "FIOX_LIVE_RECORDS";

/// One series' figures at the end of an interval (or, in a run's end, over the whole run).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The job's name, or `all`.
    pub name: String,
    /// I/Os completed so far (all directions).
    pub ios: u64,
    /// Bytes moved so far.
    pub bytes: u64,
    /// I/Os per second over the interval (a run's end: over the run, as the report gives it).
    pub iops: f64,
    /// Bytes per second, likewise.
    pub bw: f64,
    /// Completion latency percentiles, in ns, of the I/Os completed in the interval (the end:
    /// in the run); `None` when none completed or the job keeps no completion latency.
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p999_ns: Option<u64>,
    /// I/O errors so far.
    #[serde(default)]
    pub errors: u64,
}

/// One interval of a run: when it ended and each series' figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Seconds since the run started.
    pub t: f64,
    pub all: Figures,
    pub jobs: Vec<Figures>,
}

/// What producers push: the wire format of a sweep point's records, one JSON object a line
/// (`{"record":"interval","t":1.0,"all":{...},"jobs":[...]}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "lowercase")]
pub enum Record {
    /// A new run starts (a sweep point, a run of `--repeat-until`), under this label.
    Begin {
        label: String,
    },
    Interval(Interval),
    /// The run ended; the figures are the whole run's.
    End(Interval),
    /// The run failed (a sweep point's child died, or reported an error).
    Failed {
        why: String,
    },
}

/// How a run stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Running,
    Done,
    Failed(String),
}

/// One run as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub label: String,
    pub state: State,
    /// Its intervals, oldest first, at most [`MAX_INTERVALS`] (older ones thinned out); only
    /// the newest run keeps them.
    pub intervals: Vec<Interval>,
    /// The whole run's figures, once it ended.
    pub end: Option<Interval>,
}

/// Intervals kept per run: an hour at one a second; each time the list fills, pairs of
/// intervals become one (see [`coarsen`]), so the page always spans the whole run.
pub const MAX_INTERVALS: usize = 3600;
/// Runs kept (a sweep's finished points); the oldest are forgotten beyond this.
pub const MAX_RUNS: usize = 10_000;

/// `intervals` with each `every` consecutive ones made one: the counts so far are the last
/// one's, IOPS and bandwidth the mean over the whole span (each interval weighted by its
/// length), and each latency percentile the highest of the span's (the feed keeps no
/// histograms to merge, and a latency spike must not vanish from a long run's chart).
pub fn coarsen(intervals: &[Interval], every: usize) -> Vec<Interval> {
    let every = every.max(1);
    let mut out = Vec::with_capacity(intervals.len().div_ceil(every));
    let mut start = 0.0;
    for chunk in intervals.chunks(every) {
        let last = chunk.last().expect("chunks are not empty");
        let span = last.t - start;
        let mut prev = start;
        let weights: Vec<f64> = chunk
            .iter()
            .map(|iv| {
                let w = iv.t - prev;
                prev = iv.t;
                if span > 0.0 {
                    w / span
                } else {
                    1.0 / chunk.len() as f64
                }
            })
            .collect();
        let merge = |pick: &dyn Fn(&Interval) -> Option<&Figures>, last: &Figures| {
            let mut f = last.clone();
            let parts: Vec<(&Figures, f64)> =
                chunk.iter().zip(&weights).filter_map(|(iv, w)| pick(iv).map(|f| (f, *w))).collect();
            f.iops = parts.iter().map(|(x, w)| x.iops * w).sum();
            f.bw = parts.iter().map(|(x, w)| x.bw * w).sum();
            f.p50_ns = parts.iter().filter_map(|(x, _)| x.p50_ns).max();
            f.p99_ns = parts.iter().filter_map(|(x, _)| x.p99_ns).max();
            f.p999_ns = parts.iter().filter_map(|(x, _)| x.p999_ns).max();
            f
        };
        out.push(Interval {
            t: last.t,
            all: merge(&|iv| Some(&iv.all), &last.all),
            jobs: last.jobs.iter().enumerate().map(|(k, f)| merge(&|iv| iv.jobs.get(k), f)).collect(),
        });
        start = last.t;
    }
    out
}

/// What the page is drawn from.
#[derive(Debug, Clone, Serialize)]
pub struct Snapshot {
    pub title: String,
    /// Counts every change, so a poller can ask whether anything is new.
    pub generation: u64,
    pub runs: Vec<Run>,
}

/// The live figures of a run, a sweep or a multi-host run: producers push records, the page
/// reads snapshots. Thread-safe; each call takes one short lock (never per I/O).
pub struct LiveFeed {
    state: Mutex<Snapshot>,
    /// The page's rendered parts, for the generation they were made from.
    cache: Mutex<Option<page::Rendered>>,
}

impl LiveFeed {
    pub fn new(title: impl Into<String>) -> Arc<LiveFeed> {
        Arc::new(LiveFeed {
            state: Mutex::new(Snapshot { title: title.into(), generation: 0, runs: Vec::new() }),
            cache: Mutex::new(None),
        })
    }

    /// Takes one record.
    pub fn push(&self, record: Record) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.generation += 1;
        let fresh = |label: String| Run { label, state: State::Running, intervals: Vec::new(), end: None };
        match record {
            Record::Begin { label } => {
                // Finished runs keep their end figures only.
                for r in &mut s.runs {
                    r.intervals = Vec::new();
                }
                s.runs.push(fresh(label));
                if s.runs.len() > MAX_RUNS {
                    let extra = s.runs.len() - MAX_RUNS;
                    s.runs.drain(..extra);
                }
            }
            Record::Interval(iv) => {
                if s.runs.last().is_none_or(|r| r.state != State::Running) {
                    s.runs.push(fresh(String::new()));
                }
                let run = s.runs.last_mut().expect("a run was just made");
                if run.intervals.len() >= MAX_INTERVALS {
                    run.intervals = coarsen(&run.intervals, 2);
                }
                run.intervals.push(iv);
            }
            Record::End(iv) => {
                if let Some(run) = s.runs.last_mut().filter(|r| r.state == State::Running) {
                    run.state = State::Done;
                    run.end = Some(iv);
                }
            }
            Record::Failed { why } => {
                // Also a run that ended: a point whose report counts a failed job.
                if let Some(run) = s.runs.last_mut() {
                    run.state = State::Failed(why);
                }
            }
        }
    }

    /// A run starts (a convenience for `push(Record::Begin ...)`).
    pub fn begin(&self, label: impl Into<String>) {
        self.push(Record::Begin { label: label.into() });
    }

    pub fn snapshot(&self) -> Snapshot {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn generation(&self) -> u64 {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).generation
    }

    /// The page's parts for the feed as it is now, rendered once per generation.
    fn rendered(&self) -> page::Rendered {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = cache.as_ref().filter(|r| r.generation == self.generation()) {
            return r.clone();
        }
        let r = page::render(&self.snapshot());
        *cache = Some(r.clone());
        r
    }

    /// What the HTTP server answers for: the page at `/`, its changing part at `/live/part`
    /// (`?after=G`: no content while the generation is still G), the charts at
    /// `/live/NAME.svg` and the figures at `/live.json`.
    pub fn site(self: &Arc<Self>) -> crate::serve::http::Site {
        use crate::serve::http::Response;
        let feed = self.clone();
        crate::serve::http::Site {
            paths: "the live page at /",
            respond: Box::new(move |path, query| match path {
                "/" | "/index.html" | "/live" => Some(Response::ok("text/html; charset=utf-8", feed.rendered().page)),
                "/live/part" => {
                    let after = query.split('&').find_map(|kv| kv.strip_prefix("after=")).and_then(|g| g.parse().ok());
                    if after.is_some_and(|g: u64| g == feed.generation()) {
                        return Some(Response::no_content());
                    }
                    Some(Response::ok("text/html; charset=utf-8", feed.rendered().part))
                }
                "/live.json" => {
                    let text =
                        serde_json::to_string(&feed.snapshot()).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
                    Some(Response::ok("application/json", text))
                }
                _ => {
                    let name = path.strip_prefix("/live/")?.strip_suffix(".svg")?;
                    let r = feed.rendered();
                    let svg = r.charts.iter().find(|c| c.file == name)?.svg.clone();
                    Some(Response::ok("image/svg+xml", svg))
                }
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(t: f64, ios: u64) -> Interval {
        Interval { t, all: Figures { name: "all".into(), ios, ..Figures::default() }, jobs: Vec::new() }
    }

    #[test]
    fn runs_begin_fill_end_and_stay_bounded() {
        let feed = LiveFeed::new("t");
        feed.push(Record::Interval(iv(1.0, 10)));
        for i in 0..MAX_INTERVALS as u64 + 10 {
            feed.push(Record::Interval(iv(2.0 + i as f64, 20 + i)));
        }
        let s = feed.snapshot();
        assert_eq!(s.runs.len(), 1);
        let kept = &s.runs[0].intervals;
        assert!(kept.len() <= MAX_INTERVALS && kept.len() > MAX_INTERVALS / 2, "{}", kept.len());
        assert_eq!(kept.last().unwrap().all.ios, 20 + MAX_INTERVALS as u64 + 9, "the newest stays");
        feed.push(Record::End(iv(9.0, 99)));
        feed.begin("second");
        feed.push(Record::Interval(iv(1.0, 5)));
        feed.push(Record::Failed { why: "exit status 1".into() });
        let s = feed.snapshot();
        assert_eq!(s.runs.len(), 2);
        assert_eq!((s.runs[0].state.clone(), s.runs[0].intervals.len()), (State::Done, 0), "ended runs keep their end");
        assert_eq!(s.runs[0].end.as_ref().unwrap().all.ios, 99);
        assert_eq!(s.runs[1].state, State::Failed("exit status 1".into()));
        assert_eq!(s.generation, MAX_INTERVALS as u64 + 11 + 4);
    }

    #[test]
    fn coarsening_averages_rates_and_keeps_spikes() {
        let mut a = iv(1.0, 100);
        a.all.iops = 100.0;
        a.all.p99_ns = Some(10);
        let mut b = iv(3.0, 500);
        b.all.iops = 200.0;
        b.all.p99_ns = Some(1000);
        let mut c = iv(4.0, 600);
        c.all.iops = 100.0;
        let out = coarsen(&[a, b, c.clone()], 2);
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].t, out[0].all.ios, out[0].all.p99_ns), (3.0, 500, Some(1000)));
        // 1 s at 100 IOPS, then 2 s at 200: 500 I/Os in 3 s.
        assert!((out[0].all.iops - 500.0 / 3.0).abs() < 1e-9, "{}", out[0].all.iops);
        assert_eq!(out[1], c);
    }

    #[test]
    fn records_read_back_from_their_lines() {
        let recs = vec![
            Record::Begin { label: "bs=4k".into() },
            Record::Interval(iv(1.0, 3)),
            Record::End(iv(2.0, 7)),
            Record::Failed { why: "x".into() },
        ];
        for r in recs {
            let line = serde_json::to_string(&r).unwrap();
            assert!(line.starts_with("{\"record\":"), "{line}");
            assert_eq!(serde_json::from_str::<Record>(&line).unwrap(), r);
        }
    }
}
