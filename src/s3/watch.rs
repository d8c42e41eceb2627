//! What watches an `fiox s3 bench` run: the live page (`--live`) and the Prometheus endpoint
//! (`--metrics`), both served by `crate::serve` (its HTTP server, its live feed and page, its
//! metrics page) from the figures pushed here once a second, one series per operation; and
//! `--repeat-until`'s figure of a finished run.
//!
//! The workers keep their statistics to themselves; once a second the run asks each for a
//! copy (`Shared::snapshot`), so the I/O path takes no lock but its own slot's, once a second.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use fiox_options::repeat::Metric;
use fiox_stats::LatHist;

use super::args::Opts;
use super::report::{OpStat, OPS};
use crate::serve::http::serve;
use crate::serve::live::{Figures, Interval, LiveFeed, Record};
use crate::serve::metrics::Metrics;

/// The operations whose counts make a run's total: a multipart upload's parts are inside its
/// MULTIPART operation, so PART is left out of "all".
fn counted(op: usize) -> bool {
    OPS[op] != "PART"
}

/// The live page's and the endpoint's state.
pub struct Watch {
    live: Option<Arc<LiveFeed>>,
    metrics: Option<Metrics>,
    repeat: bool,
    state: Mutex<State>,
}

struct State {
    started: Instant,
    /// The previous interval's moment and statistics: what the next one is the difference of.
    last: Option<(Instant, Vec<OpStat>)>,
}

impl Watch {
    /// Binds the addresses `--live` and `--metrics` name (one server when they are the same),
    /// before any request, so a taken port ends the bench with nothing done.
    pub fn start(o: &Opts) -> Result<Option<Watch>> {
        if o.live.is_none() && o.metrics.is_none() {
            return Ok(None);
        }
        let title = format!("fiox s3 bench {} on {}", o.mode, o.hosts.join(", "));
        let w = Watch {
            live: o.live.map(|_| LiveFeed::new(title)),
            metrics: o.metrics.map(|_| Metrics::default()),
            repeat: o.repeat.is_some(),
            state: Mutex::new(State { started: Instant::now(), last: None }),
        };
        let live = o.live.zip(w.live.as_ref());
        let metrics = o.metrics.zip(w.metrics.as_ref());
        match (live, metrics) {
            (Some((a, l)), Some((b, m))) if a == b => serve(a, "--live", vec![m.site(), l.site()])?,
            _ => {
                if let Some((a, l)) = live {
                    serve(a, "--live", vec![l.site()])?;
                }
                if let Some((a, m)) = metrics {
                    serve(a, "--metrics", vec![m.site()])?;
                }
            }
        }
        Ok(Some(w))
    }

    /// A run starts (the first, or another of `--repeat-until`'s).
    pub fn begin(&self, run: usize) {
        if let (Some(feed), true) = (&self.live, self.repeat) {
            feed.begin(format!("run {run}"));
        }
    }

    /// The measurement starts now: intervals count from here.
    pub fn measuring(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        *s = State { started: Instant::now(), last: None };
    }

    /// The statistics so far (every worker's, merged): an interval on the page, the metrics
    /// renewed.
    pub fn interval(&self, now: &[OpStat]) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let at = Instant::now();
        let (since, before) = match &s.last {
            Some((t, stats)) => (at.duration_since(*t).as_secs_f64(), Some(stats.as_slice())),
            None => (at.duration_since(s.started).as_secs_f64(), None),
        };
        if let Some(feed) = &self.live {
            feed.push(Record::Interval(interval(at.duration_since(s.started), now, before, since)));
        }
        if let Some(m) = &self.metrics {
            m.publish(exposition(now, before.map(|b| (b, since))));
        }
        s.last = Some((at, now.to_vec()));
    }

    /// The run ended: the whole run's figures, as the report gives them.
    pub fn end(&self, stats: &[OpStat], elapsed: Duration) {
        if let Some(feed) = &self.live {
            feed.push(Record::End(interval(elapsed, stats, None, elapsed.as_secs_f64())));
        }
        if let Some(m) = &self.metrics {
            m.publish(exposition(stats, None));
        }
    }
}

/// One series' figures: counts so far from `now`, rates and percentiles from what `now` adds
/// to `before` over `secs` seconds (the whole run when there is no `before`).
fn figures(name: &str, now: &OpStat, before: Option<&OpStat>, secs: f64) -> Figures {
    let zero = OpStat::default();
    let b = before.unwrap_or(&zero);
    let hist = now.total_hist.since(&b.total_hist);
    let n = now.total.samples - b.total.samples.min(now.total.samples);
    let bytes = now.bytes.saturating_sub(b.bytes);
    let p = hist.percentiles(&[50.0, 99.0, 99.9]);
    let at = |i: usize| p.get(i).map(|x| x.1);
    Figures {
        name: name.to_string(),
        ios: now.total.samples,
        bytes: now.bytes,
        iops: n as f64 / secs.max(1e-9),
        bw: bytes as f64 / secs.max(1e-9),
        p50_ns: at(0),
        p99_ns: at(1),
        p999_ns: at(2),
        errors: now.errors,
    }
}

/// The operations' statistics added together (PART left out), histograms bucket by bucket.
pub fn all(stats: &[OpStat]) -> OpStat {
    let mut a = OpStat::default();
    for (_, s) in stats.iter().enumerate().filter(|(i, _)| counted(*i)) {
        a.merge(s);
    }
    a
}

/// An interval of the live page: a series per operation seen, and all of them.
fn interval(t: Duration, now: &[OpStat], before: Option<&[OpStat]>, secs: f64) -> Interval {
    let jobs = now
        .iter()
        .enumerate()
        .filter(|(_, s)| s.total.samples > 0 || s.errors > 0)
        .map(|(i, s)| figures(&OPS[i].to_lowercase(), s, before.map(|b| &b[i]), secs))
        .collect();
    let before_all = before.map(all);
    Interval { t: t.as_secs_f64(), all: figures("all", &all(now), before_all.as_ref(), secs), jobs }
}

/// The Prometheus text (exposition format 0.0.4): counters per operation, rates since the
/// previous refresh, and latency summaries (the request and its first byte) since the start,
/// quantiles from the merged histograms.
fn exposition(now: &[OpStat], before: Option<(&[OpStat], f64)>) -> String {
    let mut out = String::new();
    let seen: Vec<usize> = (0..now.len()).filter(|&i| now[i].total.samples > 0 || now[i].errors > 0).collect();
    let label = |i: usize| format!("operation=\"{}\"", OPS[i]);
    let mut family = |name: &str, kind: &str, help: &str, value: &dyn Fn(usize) -> String| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for &i in &seen {
            let _ = writeln!(out, "{name}{{{}}} {}", label(i), value(i));
        }
    };
    family("fiox_s3_requests_total", "counter", "S3 operations completed.", &|i| now[i].total.samples.to_string());
    family("fiox_s3_bytes_total", "counter", "Object bytes moved.", &|i| now[i].bytes.to_string());
    family("fiox_s3_errors_total", "counter", "S3 operations that failed.", &|i| now[i].errors.to_string());
    if let Some((b, secs)) = before.filter(|(_, s)| *s > 0.0) {
        family("fiox_s3_requests_per_second", "gauge", "Operations per second since the previous refresh.", &|i| {
            format!("{:.3}", now[i].total.samples.saturating_sub(b[i].total.samples) as f64 / secs)
        });
        family(
            "fiox_s3_bandwidth_bytes_per_second",
            "gauge",
            "Object bytes per second since the previous refresh.",
            &|i| format!("{:.3}", now[i].bytes.saturating_sub(b[i].bytes) as f64 / secs),
        );
    }
    for (name, help, pick) in [
        (
            "fiox_s3_request_latency_seconds",
            "Whole request latency since the start, quantiles from fio's histogram.",
            (|s: &OpStat| (&s.total_hist, s.total.sum())) as fn(&OpStat) -> (&LatHist, u128),
        ),
        (
            "fiox_s3_first_byte_latency_seconds",
            "Time to the answer's first byte since the start, quantiles from fio's histogram.",
            |s: &OpStat| (&s.ttfb_hist, s.ttfb.sum()),
        ),
    ] {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} summary");
        for &i in &seen {
            let (h, sum) = pick(&now[i]);
            for ((_, ns), q) in h.percentiles(&[50.0, 99.0, 99.9]).into_iter().zip(["0.5", "0.99", "0.999"]) {
                let _ = writeln!(out, "{name}{{{},quantile=\"{q}\"}} {}", label(i), ns as f64 / 1e9);
            }
            let _ = writeln!(out, "{name}_sum{{{}}} {}", label(i), sum as f64 / 1e9);
            let _ = writeln!(out, "{name}_count{{{}}} {}", label(i), h.total());
        }
    }
    out
}

/// `--repeat-until`'s figure of one finished run, with the jobs' meanings: operations (or
/// bytes) per second over all operations, the mean request latency weighted by count, or the
/// 99th percentile of the merged request histogram. `None` when the run completed nothing.
pub fn repeat_value(stats: &[OpStat], elapsed: Duration, metric: Metric) -> Option<f64> {
    let a = all(stats);
    let secs = elapsed.as_secs_f64();
    if a.total.samples == 0 || secs <= 0.0 {
        return None;
    }
    Some(match metric {
        Metric::Iops => a.total.samples as f64 / secs,
        Metric::Bw => a.bytes as f64 / secs,
        Metric::Lat => a.total.mean(),
        Metric::P99 => a.total_hist.percentiles(&[99.0])[0].1 as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats() -> Vec<OpStat> {
        let mut s = vec![OpStat::default(); OPS.len()];
        for ms in 1..=100u64 {
            s[0].add(ms * 100_000, ms * 1_000_000, 4096);
        }
        // Parts are inside their upload: left out of every total.
        s[6].add(1, 1, 1 << 20);
        s
    }

    #[test]
    fn repeat_figures() {
        let s = stats();
        let t = Duration::from_secs(2);
        assert_eq!(repeat_value(&s, t, Metric::Iops), Some(50.0));
        assert_eq!(repeat_value(&s, t, Metric::Bw), Some(100.0 * 4096.0 / 2.0));
        assert_eq!(repeat_value(&s, t, Metric::Lat), Some(50.5e6));
        let p99 = repeat_value(&s, t, Metric::P99).unwrap();
        assert!((98e6..=101e6).contains(&p99), "{p99}");
        assert_eq!(repeat_value(&vec![OpStat::default(); OPS.len()], t, Metric::Iops), None);
    }

    #[test]
    fn intervals_and_exposition() {
        let before = stats();
        let mut now = before.clone();
        now[0].add(5_000_000, 7_000_000, 4096);
        let iv = interval(Duration::from_secs(3), &now, Some(&before), 0.5);
        assert_eq!(iv.jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), ["get", "part"]);
        assert_eq!((iv.jobs[0].ios, iv.jobs[0].iops), (101, 2.0));
        assert_eq!((iv.all.ios, iv.all.bytes), (101, 101 * 4096));
        assert!(iv.all.p50_ns.unwrap().abs_diff(7_000_000) < 100_000, "{:?}", iv.all.p50_ns);
        let text = exposition(&now, Some((&before, 0.5)));
        assert!(text.contains("fiox_s3_requests_total{operation=\"GET\"} 101\n"), "{text}");
        assert!(text.contains("fiox_s3_requests_per_second{operation=\"GET\"} 2.000\n"), "{text}");
        assert!(text.contains("fiox_s3_request_latency_seconds_count{operation=\"GET\"} 101\n"), "{text}");
        assert!(text.contains("# TYPE fiox_s3_first_byte_latency_seconds summary\n"), "{text}");
    }
}
