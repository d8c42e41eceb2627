//! What watches a local run: each watcher is a [`RunObserver`], so `run_plan` only asks them
//! how often they want figures and hands every one the same intervals and the same end, in
//! the order fio's outputs need (the figures first, then the reports written to the output).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use fiox_options::argv::Globals;

use super::act::ActTable;
use super::Output;
use crate::plan::Plan;
use crate::report::summary;
use crate::runner::worker::WorkerResult;
use crate::runner::RunObserver;
use crate::serve::live::record::Recorder;
use crate::serve::live::{LiveFeed, Record, RECORDS_ENV};
use crate::serve::metrics::Metrics;

/// The run's watchers, in the order they see each interval: `metrics_listen`'s figures, the
/// live page's records, `--status-interval`'s reports, ACT's rows. Starts the HTTP servers the
/// first two need (binding before any I/O, so a taken port stops the run).
pub fn watchers<'a>(
    plan: &'a Plan,
    g: &'a Globals,
    sink: &Arc<Output>,
    act: Option<ActTable>,
) -> Result<Vec<Box<dyn RunObserver + 'a>>> {
    let started = Instant::now();
    let metrics_at = plan.jobs.iter().find_map(|j| j.spec.metrics_listen);
    let live_at = plan.jobs.iter().find_map(|j| j.spec.live_listen);
    let metrics = metrics_at.map(|_| Metrics::default());
    let live = live_at.map(|_| LiveFeed::new(live_title(plan)));
    // A sweep point also writes its live records for the sweep's page.
    let records = std::env::var_os(RECORDS_ENV).is_some();
    serve(metrics_at, metrics.as_ref(), live_at, live.as_ref())?;
    let mut out: Vec<Box<dyn RunObserver + 'a>> = Vec::new();
    if let Some(metrics) = metrics {
        out.push(Box::new(MetricsFeed { plan, metrics }));
    }
    if live.is_some() || records {
        let recorder = Mutex::new(Recorder::new(plan));
        out.push(Box::new(LiveRecords { plan, recorder, feed: live, records, repeat: g.repeat_until.is_some() }));
    }
    if let Some(every) = g.status_interval.map(Duration::from_millis) {
        // Alone, the status reports set the pace; sharing the ticks, they keep their own.
        let shared = !out.is_empty() || act.is_some();
        out.push(Box::new(StatusReports {
            plan,
            g,
            sink: sink.clone(),
            every,
            shared,
            started,
            next: Mutex::new(every),
            previous: Mutex::new(Vec::new()),
        }));
    }
    if let Some(table) = act {
        let next = Mutex::new(ActTable::slice());
        out.push(Box::new(ActRows { table: Mutex::new(table), sink: sink.clone(), started, next }));
    }
    Ok(out)
}

/// `metrics_listen`: the figures Prometheus reads, renewed every second and set to the final
/// ones at the end, so a scrape after the run matches the report.
struct MetricsFeed<'a> {
    plan: &'a Plan,
    metrics: Metrics,
}

impl RunObserver for MetricsFeed<'_> {
    fn every(&self) -> Option<Duration> {
        Some(Duration::from_secs(1))
    }
    fn on_interval(&self, partial: &[WorkerResult]) {
        self.metrics.update(self.plan, partial);
    }
    fn on_end(&self, results: &[WorkerResult]) -> Result<()> {
        self.metrics.update(self.plan, results);
        Ok(())
    }
}

/// `live_listen`'s page and a sweep point's records: an interval every second, a begin per run
/// under `--repeat-until`, and the end.
struct LiveRecords<'a> {
    plan: &'a Plan,
    recorder: Mutex<Recorder>,
    feed: Option<Arc<LiveFeed>>,
    /// Write each record to standard output, a line each (a sweep point, `RECORDS_ENV`).
    records: bool,
    repeat: bool,
}

impl LiveRecords<'_> {
    fn publish(&self, record: Record) {
        if self.records {
            // Standard output carries nothing else in a sweep point (its report goes to
            // --output); a sweep that went away leaves the write failing, which is harmless.
            if let Ok(line) = serde_json::to_string(&record) {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}").and_then(|_| out.flush());
            }
        }
        if let Some(feed) = &self.feed {
            feed.push(record);
        }
    }
}

impl RunObserver for LiveRecords<'_> {
    fn every(&self) -> Option<Duration> {
        Some(Duration::from_secs(1))
    }
    fn on_begin(&self, run: usize) {
        *self.recorder.lock().expect("no run yet") = Recorder::new(self.plan);
        if self.repeat {
            self.publish(Record::Begin { label: format!("run {run}") });
        }
    }
    fn on_interval(&self, partial: &[WorkerResult]) {
        let interval = self.recorder.lock().expect("interval reports are sequential").interval(partial);
        self.publish(Record::Interval(interval));
    }
    fn on_end(&self, results: &[WorkerResult]) -> Result<()> {
        self.publish(Record::End(self.recorder.lock().expect("the run is over").end(results)));
        Ok(())
    }
}

/// `--status-interval`: the full report so far, in every requested format, each interval
/// (only the interval's own figures under `--interval-delta`).
struct StatusReports<'a> {
    plan: &'a Plan,
    g: &'a Globals,
    sink: Arc<Output>,
    every: Duration,
    shared: bool,
    started: Instant,
    next: Mutex<Duration>,
    previous: Mutex<Vec<WorkerResult>>,
}

impl StatusReports<'_> {
    fn report(&self, partial: &[WorkerResult]) {
        let shown: Vec<WorkerResult> = if self.g.interval_delta {
            // Each report covers only the interval since the last one (fio's are cumulative).
            let mut prev = self.previous.lock().expect("interval reports are sequential");
            let delta = partial
                .iter()
                .enumerate()
                .map(|(i, now)| {
                    let then = prev.get(i).cloned().unwrap_or_default();
                    let ms = now.elapsed_ms.saturating_sub(then.elapsed_ms);
                    WorkerResult { ts: now.ts.since(&then.ts, ms), elapsed_ms: ms, ..now.clone() }
                })
                .collect();
            *prev = partial.to_vec();
            delta
        } else {
            partial.to_vec()
        };
        let report = summary::build(self.plan, &shown, Vec::new(), crate::plan::clock::epoch_ms());
        let _ = self.sink.write(&super::formats(self.g, &report));
    }
}

impl RunObserver for StatusReports<'_> {
    fn every(&self) -> Option<Duration> {
        Some(self.every)
    }
    fn on_interval(&self, partial: &[WorkerResult]) {
        let mut next = self.next.lock().expect("interval reports are sequential");
        if !self.shared || self.started.elapsed() >= *next {
            *next += self.every;
            drop(next);
            self.report(partial);
        }
    }
    fn on_end(&self, _: &[WorkerResult]) -> Result<()> {
        Ok(())
    }
}

/// `--profile=act`'s table: a row per hour-long slice as the run goes (each slice ends at the
/// first interval after its hour), then the last row and the verdict.
struct ActRows {
    table: Mutex<ActTable>,
    sink: Arc<Output>,
    started: Instant,
    next: Mutex<Duration>,
}

impl RunObserver for ActRows {
    fn every(&self) -> Option<Duration> {
        Some(ActTable::slice())
    }
    fn on_interval(&self, partial: &[WorkerResult]) {
        let mut next = self.next.lock().expect("interval reports are sequential");
        if self.started.elapsed() >= *next {
            *next += ActTable::slice();
            if let Some(row) = self.table.lock().expect("one reporter").close_slice(partial) {
                let _ = self.sink.write(&row);
            }
        }
    }
    fn on_end(&self, results: &[WorkerResult]) -> Result<()> {
        let mut table = self.table.lock().expect("one reporter");
        let row = table.close_slice(results).unwrap_or_default();
        self.sink.write(&(row + &table.verdict()))
    }
}

/// Starts the HTTP servers of `metrics_listen` and `live_listen`: one for both when they name
/// the same address. Binding happens here, before any I/O, so a taken port stops the run.
fn serve(
    metrics_at: Option<SocketAddr>,
    metrics: Option<&Metrics>,
    live_at: Option<SocketAddr>,
    live: Option<&Arc<LiveFeed>>,
) -> Result<()> {
    let metrics = metrics_at.zip(metrics);
    let live = live_at.zip(live);
    match (metrics, live) {
        (Some((a, m)), Some((b, l))) if a == b => {
            crate::serve::http::serve(a, "metrics_listen", vec![m.site(), l.site()])
        }
        _ => {
            if let Some((a, m)) = metrics {
                crate::serve::http::serve(a, "metrics_listen", vec![m.site()])?;
            }
            if let Some((a, l)) = live {
                crate::serve::http::serve(a, "live_listen", vec![l.site()])?;
            }
            Ok(())
        }
    }
}

/// The live page's title: fiox and the jobs' names.
fn live_title(plan: &Plan) -> String {
    let mut names: Vec<&str> = Vec::new();
    for j in &plan.jobs {
        if !names.contains(&j.spec.name.as_str()) {
            names.push(&j.spec.name);
        }
    }
    let more = names.len().saturating_sub(6);
    names.truncate(6);
    let mut t = format!("fiox: {}", names.join(", "));
    if more > 0 {
        t.push_str(&format!(" and {more} more"));
    }
    t
}
