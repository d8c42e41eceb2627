//! Live metrics (`metrics_listen=ADDR`, a fiox option): while a run goes, `http://ADDR/metrics`
//! answers with each job clone's figures in Prometheus' text exposition format (version 0.0.4,
//! which OpenMetrics scrapers also read), refreshed every second from the workers' running
//! statistics and set to the final figures when the run ends, so a scrape then matches the
//! report. Off unless asked for; a bare port listens on loopback only.
//!
//! Names follow Prometheus' conventions: base units (bytes, seconds), `_total` for counters,
//! one label set per job clone and direction (`jobname`, `clone`, `direction`; not `job`, which
//! Prometheus gives the scrape target).

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use fiox_stats::DDIR_NAMES;

use crate::plan::Plan;
use crate::runner::worker::WorkerResult;

/// The quantiles each latency summary carries, as percentiles and as their labels.
const QUANTILES: [f64; 3] = [50.0, 99.0, 99.9];
const QUANTILE_LABELS: [&str; 3] = ["0.5", "0.99", "0.999"];

/// What one refresh saw: when, and each worker's I/O and byte counts per direction.
pub struct Seen {
    at: Instant,
    ios: Vec<[u64; 3]>,
    bytes: Vec<[u64; 3]>,
}

/// The endpoint: the page to serve, and what the last refresh saw (for rates).
#[derive(Default)]
pub struct Metrics {
    page: Arc<Mutex<String>>,
    last: Mutex<Option<Seen>>,
}

impl Metrics {
    /// What the HTTP server answers for: `/metrics`.
    pub fn site(&self) -> crate::serve::http::Site {
        let page = self.page.clone();
        crate::serve::http::Site {
            paths: "/metrics",
            respond: Box::new(move |path, _| {
                (path == "/metrics").then(|| {
                    let text = page.lock().map(|p| p.clone()).unwrap_or_default();
                    crate::serve::http::Response::ok("text/plain; version=0.0.4; charset=utf-8", text)
                })
            }),
        }
    }

    /// Puts a page made elsewhere in place (`fiox s3 bench`'s per-operation figures).
    pub fn publish(&self, text: String) {
        if let Ok(mut p) = self.page.lock() {
            *p = text;
        }
    }

    /// Renews the page from the workers' figures so far.
    pub fn update(&self, plan: &Plan, results: &[WorkerResult]) {
        let now = Instant::now();
        let ios: Vec<[u64; 3]> = results.iter().map(|r| r.ts.dirs.each_ref().map(|d| d.total_ios)).collect();
        let bytes: Vec<[u64; 3]> = results.iter().map(|r| r.ts.dirs.each_ref().map(|d| d.io_bytes)).collect();
        let mut last = self.last.lock().expect("one updater at a time");
        let text = render(plan, results, last.as_ref().map(|s| (now.duration_since(s.at).as_secs_f64(), s)));
        *last = Some(Seen { at: now, ios, bytes });
        if let Ok(mut p) = self.page.lock() {
            *p = text;
        }
    }
}

/// The exposition text. `rates` holds the seconds since the previous refresh and what it saw,
/// from which the IOPS and bandwidth gauges are made (absent at the first).
pub fn render(plan: &Plan, results: &[WorkerResult], rates: Option<(f64, &Seen)>) -> String {
    let mut out = String::new();
    let label = |i: usize, d: Option<usize>| {
        let w = &plan.workers[i];
        let mut l = format!("jobname=\"{}\",clone=\"{}\"", escape(&w.spec.name), w.clone);
        if let Some(d) = d {
            let _ = write!(l, ",direction=\"{}\"", DDIR_NAMES[d]);
        }
        l
    };
    let active = |r: &WorkerResult, d: usize| r.ts.dirs[d].total_ios > 0 || r.ts.issued[d] > 0;
    head(&mut out, "fiox_ios_total", "counter", "I/Os completed.");
    {
        let o = &mut out;
        for (i, r) in results.iter().enumerate() {
            for d in (0..3).filter(|&d| active(r, d)) {
                let _ = writeln!(o, "fiox_ios_total{{{}}} {}", label(i, Some(d)), r.ts.dirs[d].total_ios);
            }
        }
    }
    head(&mut out, "fiox_io_bytes_total", "counter", "Bytes moved.");
    {
        let o = &mut out;
        for (i, r) in results.iter().enumerate() {
            for d in (0..3).filter(|&d| active(r, d)) {
                let _ = writeln!(o, "fiox_io_bytes_total{{{}}} {}", label(i, Some(d)), r.ts.dirs[d].io_bytes);
            }
        }
    }
    head(&mut out, "fiox_inflight_ios", "gauge", "I/Os issued and not yet completed.");
    {
        let o = &mut out;
        for (i, r) in results.iter().enumerate() {
            for d in (0..3).filter(|&d| active(r, d)) {
                let n = r.ts.issued[d].saturating_sub(r.ts.dirs[d].total_ios);
                let _ = writeln!(o, "fiox_inflight_ios{{{}}} {n}", label(i, Some(d)));
            }
        }
    }
    head(&mut out, "fiox_io_errors_total", "counter", "I/Os that failed.");
    {
        let o = &mut out;
        for (i, r) in results.iter().enumerate() {
            let _ = writeln!(o, "fiox_io_errors_total{{{}}} {}", label(i, None), r.ts.total_err);
        }
    }
    if let Some((secs, Seen { ios, bytes, .. })) = rates.filter(|(s, _)| *s > 0.0) {
        head(&mut out, "fiox_iops", "gauge", "I/Os per second since the previous refresh.");
        {
            let o = &mut out;
            for (i, r) in results.iter().enumerate() {
                for d in (0..3).filter(|&d| active(r, d)) {
                    let before = ios.get(i).map_or(0, |v| v[d]);
                    let v = r.ts.dirs[d].total_ios.saturating_sub(before) as f64 / secs;
                    let _ = writeln!(o, "fiox_iops{{{}}} {v:.3}", label(i, Some(d)));
                }
            }
        }
        head(&mut out, "fiox_bandwidth_bytes_per_second", "gauge", "Bytes per second since the previous refresh.");
        {
            let o = &mut out;
            for (i, r) in results.iter().enumerate() {
                for d in (0..3).filter(|&d| active(r, d)) {
                    let before = bytes.get(i).map_or(0, |v| v[d]);
                    let v = r.ts.dirs[d].io_bytes.saturating_sub(before) as f64 / secs;
                    let _ = writeln!(o, "fiox_bandwidth_bytes_per_second{{{}}} {v:.3}", label(i, Some(d)));
                }
            }
        }
    }
    head(
        &mut out,
        "fiox_completion_latency_seconds",
        "summary",
        "Completion latency (fio's clat) since the start, quantiles from fio's histogram.",
    );
    {
        let o = &mut out;
        for (i, r) in results.iter().enumerate() {
            for d in (0..3).filter(|&d| active(r, d)) {
                let dir = &r.ts.dirs[d];
                let l = label(i, Some(d));
                if let Some(h) = &dir.clat_hist {
                    for ((_, ns), q) in h.percentiles(&QUANTILES).into_iter().zip(QUANTILE_LABELS) {
                        let secs = ns as f64 / 1e9;
                        let _ = writeln!(o, "fiox_completion_latency_seconds{{{l},quantile=\"{q}\"}} {secs}");
                    }
                }
                let _ = writeln!(o, "fiox_completion_latency_seconds_sum{{{l}}} {}", dir.clat.sum() as f64 / 1e9);
                let _ = writeln!(o, "fiox_completion_latency_seconds_count{{{l}}} {}", dir.clat.samples);
            }
        }
    }
    out
}

fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A label value as the exposition format wants it: backslash, quote and newline escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}
