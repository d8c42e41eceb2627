//! What watches a multi-host run, as `fio/observe.rs` has it for a local run: each watcher is
//! a [`RunObserver`] of the coordinator's [`Fleet`] (the hosts and their latest reports),
//! told whenever the coordinator wakes during the run (a host's message, or 50 ms without
//! one) and keeping its own pace, then told the end before the final report is written.
//! In the order they see each interval: the live page's records, the status line (`--eta`),
//! `--status-interval`'s merged reports.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use fiox_options::argv::{self, Format, Globals};

use super::eta::{JobHint, MergedEta};
use super::fleet::{Fleet, HostSpec};
use crate::runner::RunObserver;
use crate::serve::live::record::SeriesRecorder;
use crate::serve::live::{LiveFeed, Record};

/// The watchers of a multi-host run, in the order they see each interval; `live` is the live
/// page, already serving ([`LivePage::serve`]).
pub fn watchers<'a>(
    g: &'a Globals,
    live: Option<LivePage>,
    out: &Arc<Output>,
    hints: Vec<Vec<JobHint>>,
) -> Vec<Box<dyn RunObserver<Fleet> + 'a>> {
    let mut list: Vec<Box<dyn RunObserver<Fleet> + 'a>> = Vec::new();
    if let Some(page) = live {
        list.push(Box::new(page));
    }
    if let Some(line) = StatusLine::new(g, hints) {
        list.push(Box::new(line));
    }
    if let Some(every) = g.status_interval.map(Duration::from_millis) {
        list.push(Box::new(StatusReports { g, out: out.clone(), every, next: Mutex::new(None) }));
    }
    list
}

/// Where results go, standard output or `--output`, shared by the coordinator (the hosts'
/// output lines, the headers, the final report) and the status reports.
pub struct Output {
    w: Mutex<Box<dyn Write + Send>>,
    /// The first write a watcher could not make, for the coordinator to stop on.
    failed: Mutex<Option<std::io::Error>>,
}

impl Output {
    pub fn new(g: &Globals) -> Result<Arc<Output>> {
        let w: Box<dyn Write + Send> = match &g.output {
            Some(p) => Box::new(
                std::fs::File::create(p).with_context(|| format!("cannot create --output file '{}'", p.display()))?,
            ),
            None => Box::new(std::io::stdout()),
        };
        Ok(Arc::new(Output { w: Mutex::new(w), failed: Mutex::new(None) }))
    }

    pub fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        self.lock()?.write_all(bytes)
    }

    pub fn flush(&self) -> std::io::Result<()> {
        self.lock()?.flush()
    }

    /// The error of a watcher's write, if one failed since the last call.
    pub fn check(&self) -> std::io::Result<()> {
        match self.failed.lock().ok().and_then(|mut f| f.take()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Keeps a watcher's failed write for [`check`](Output::check).
    fn keep(&self, r: std::io::Result<()>) {
        if let (Err(e), Ok(mut failed)) = (r, self.failed.lock()) {
            failed.get_or_insert(e);
        }
    }

    fn lock(&self) -> std::io::Result<std::sync::MutexGuard<'_, Box<dyn Write + Send>>> {
        self.w.lock().map_err(|_| std::io::Error::other("output lock poisoned"))
    }
}

/// `live_listen`: the live page is the coordinator's, fed by the hosts' interval reports (a
/// series per host, and all of them).
pub struct LivePage {
    feed: Arc<LiveFeed>,
    recorder: Mutex<SeriesRecorder>,
    next: Mutex<Option<Instant>>,
}

impl LivePage {
    /// Binds the page's address (before anything connects, so a taken port stops the run) and
    /// begins its run.
    pub fn serve(at: Option<SocketAddr>, specs: &[HostSpec]) -> Result<Option<LivePage>> {
        let Some(addr) = at else { return Ok(None) };
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        let feed = LiveFeed::new(format!("fiox on {}", names.join(", ")));
        crate::serve::http::serve(addr, "live_listen", vec![feed.site()])?;
        feed.begin(format!("{} hosts", specs.len()));
        Ok(Some(LivePage { feed, recorder: Mutex::new(SeriesRecorder::default()), next: Mutex::new(None) }))
    }

    fn record(&self, fleet: &Fleet) -> crate::serve::live::Interval {
        self.recorder.lock().expect("one coordinator").interval(&fleet.live_series())
    }
}

impl RunObserver<Fleet> for LivePage {
    fn every(&self) -> Option<Duration> {
        Some(Duration::from_secs(1))
    }
    fn on_interval(&self, fleet: &Fleet) {
        let Some(start) = fleet.started else { return };
        let mut next = self.next.lock().expect("one coordinator");
        // Half a second after the hosts report (they do each second from the start), so each
        // tick sees every host's newest report.
        let due = *next.get_or_insert(start + Duration::from_millis(1500));
        if Instant::now() >= due {
            *next = Some(due + Duration::from_secs(1));
            self.feed.push(Record::Interval(self.record(fleet)));
        }
    }
    fn on_end(&self, fleet: &Fleet) -> Result<()> {
        // The last interval (the hosts' final reports), then the run's state.
        self.feed.push(Record::End(self.record(fleet)));
        if let Some(why) = fleet.first_failure() {
            self.feed.push(Record::Failed { why });
        }
        Ok(())
    }
}

/// The status line (`--eta`): every host's figures in one line, shown as a local run shows it.
struct StatusLine {
    every: Duration,
    newline: bool,
    hints: Vec<Vec<JobHint>>,
    kb_base: u64,
    state: Mutex<LineState>,
}

#[derive(Default)]
struct LineState {
    merged: MergedEta,
    /// When the next line is due; `None` until the run's first.
    next: Option<Instant>,
    /// The last line's width, to blank what a shorter one leaves.
    width: usize,
}

impl StatusLine {
    fn new(g: &Globals, hints: Vec<Vec<JobHint>>) -> Option<StatusLine> {
        let shown = match g.eta {
            argv::Eta::Always => true,
            argv::Eta::Never => false,
            argv::Eta::Auto => g.formats.contains(&Format::Normal) && fiox_engine::sys::stdout_is_tty(),
        };
        let every = Duration::from_millis(g.eta_interval.or(g.eta_newline).unwrap_or(1000).max(100));
        let kb_base = hints.iter().flatten().next().map_or(1024, |h| h.kb_base);
        shown.then(|| StatusLine {
            every,
            newline: g.eta_newline.is_some(),
            hints,
            kb_base,
            state: Mutex::new(LineState::default()),
        })
    }
}

impl RunObserver<Fleet> for StatusLine {
    fn every(&self) -> Option<Duration> {
        Some(self.every)
    }
    fn on_interval(&self, fleet: &Fleet) {
        let Some(start) = fleet.started else { return };
        let mut s = self.state.lock().expect("one coordinator");
        let due = *s.next.get_or_insert(start + self.every);
        if Instant::now() >= due {
            s.next = Some(due + self.every);
            let elapsed = Instant::now().saturating_duration_since(start).as_secs_f64();
            let (line, running) = s.merged.line(&fleet.eta_views(&self.hints), elapsed, false, self.kb_base);
            // Once no job runs, the last line (at the end) is the only one left.
            if running > 0 {
                print_eta(&line, self.newline, &mut s.width, false);
            }
        }
    }
    fn on_end(&self, fleet: &Fleet) -> Result<()> {
        let mut s = self.state.lock().expect("one coordinator");
        if let (Some(start), Some(_)) = (fleet.started, s.next) {
            let elapsed = start.elapsed().as_secs_f64();
            let (line, _) = s.merged.line(&fleet.eta_views(&self.hints), elapsed, true, self.kb_base);
            print_eta(&line, self.newline, &mut s.width, true);
        }
        Ok(())
    }
}

/// Prints the status line on standard output as a local run does: rewritten in place, or one
/// per line with `--eta-newline`; the last one ends its line.
fn print_eta(line: &str, newline: bool, width: &mut usize, last: bool) {
    let mut out = std::io::stdout().lock();
    if newline {
        let _ = writeln!(out, "{line}");
    } else {
        let pad = width.saturating_sub(line.len());
        let _ = write!(out, "\r{line}{}", " ".repeat(pad));
        *width = line.len();
        if last {
            let _ = writeln!(out);
        }
    }
    let _ = out.flush();
}

/// `--status-interval`: the merged report so far, every interval, once a host has reported.
struct StatusReports<'a> {
    g: &'a Globals,
    out: Arc<Output>,
    every: Duration,
    next: Mutex<Option<Instant>>,
}

impl StatusReports<'_> {
    fn write(&self, fleet: &Fleet) -> std::io::Result<()> {
        let report = fleet.report(true);
        // Interval reports in JSON are one line each (JSON lines), so a reader can take them
        // as they come.
        let opts = fiox_report::ReportOpts { json_lines: true, ..crate::report::opts(self.g) };
        for f in crate::report::print_order(&self.g.formats) {
            self.out.write(fiox_report::render_clients(crate::report::format(f), &report, &opts).as_bytes())?;
        }
        self.out.flush()
    }
}

impl RunObserver<Fleet> for StatusReports<'_> {
    fn every(&self) -> Option<Duration> {
        Some(self.every)
    }
    fn on_interval(&self, fleet: &Fleet) {
        let Some(start) = fleet.started else { return };
        let mut next = self.next.lock().expect("one coordinator");
        let due = *next.get_or_insert(start + self.every);
        if Instant::now() >= due && fleet.hosts.iter().any(|h| h.interval.is_some()) {
            *next = Some(due + self.every);
            self.out.keep(self.write(fleet));
        }
    }
    fn on_end(&self, _: &Fleet) -> Result<()> {
        Ok(())
    }
}

/// `fiox s3 bench --live/--metrics` on several hosts: the bench's own page and endpoint (a
/// series per operation), fed each second with the hosts' newest reports merged.
pub struct S3Page<'a> {
    page: &'a crate::s3::remote::Page,
    next: Mutex<Option<Instant>>,
}

impl<'a> S3Page<'a> {
    pub fn new(page: &'a crate::s3::remote::Page) -> Self {
        S3Page { page, next: Mutex::new(None) }
    }
}

impl RunObserver<Fleet> for S3Page<'_> {
    fn every(&self) -> Option<Duration> {
        Some(Duration::from_secs(1))
    }
    fn on_interval(&self, fleet: &Fleet) {
        let Some(start) = fleet.started else { return };
        let mut next = self.next.lock().expect("one coordinator");
        if next.is_none() {
            if Instant::now() < start {
                return;
            }
            self.page.measuring();
        }
        // Half a second after the hosts report (they do each second from the start).
        let due = *next.get_or_insert(start + Duration::from_millis(1500));
        if Instant::now() >= due {
            *next = Some(due + Duration::from_secs(1));
            self.page.interval(fleet.latest_reports());
        }
    }
    fn on_end(&self, fleet: &Fleet) -> Result<()> {
        self.page.end(fleet.latest_reports(), fleet.started.unwrap_or_else(Instant::now));
        Ok(())
    }
}
