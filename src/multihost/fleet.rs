//! The run's hosts as the coordinator sees them: how each was named and is reached
//! ([`HostSpec`], [`Route`]), what it has said so far ([`Host`]), and what is made of that
//! for the outputs: the clients report (every host and the merge), the status line's and the
//! live page's views, the first-done aggregate. [`Fleet`] is what the coordinator's
//! watchers (`observe.rs`) are shown.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use fiox_multihost::msg::HostFacts;
use fiox_multihost::net::Endpoint;
use fiox_multihost::ssh;
use fiox_report::{ClientsReport, HostEntry, RunReport};

use super::eta::{HostView, JobHint};
use super::{probe_line, Closer, Sender};

/// One host of the run, as the command line makes it.
#[derive(Clone)]
pub struct HostSpec {
    /// As the user wrote it.
    pub name: String,
    pub route: Route,
    pub argv: Vec<String>,
    pub files: Vec<PathBuf>,
}

/// How a host is reached.
#[derive(Clone)]
pub enum Route {
    /// A standing server: loopback TCP or a unix socket in plain, anything else over TLS.
    Net(Endpoint),
    /// `ssh://[user@]host[:port]`: `fiox --server=stdio` started there by ssh.
    Ssh(ssh::SshTarget),
    /// `--rsh=CMD`: `fiox --server=stdio` started by CMD with the host's name for `{host}`.
    Rsh(String),
    /// `--join`: a server started by a launcher that dialled in (`None` until it has).
    Join(Option<Joined>),
}

/// A server that joined: its rank and address, and its connection until `open` takes it.
#[derive(Clone)]
pub struct Joined {
    pub addr: std::net::IpAddr,
    pub duplex: Arc<Mutex<Option<fiox_multihost::transport::Duplex>>>,
}

/// What the coordinator knows about a host as the run goes.
#[derive(Default)]
pub struct Host {
    /// How it was reached (`tcp`, `unix`, `tls`, `ssh`, `rsh`), once connected.
    pub transport: &'static str,
    pub tx: Option<Sender>,
    pub closer: Option<Closer>,
    pub facts: HostFacts,
    pub fiox_version: String,
    pub proto: u32,
    pub header: String,
    pub prepared: bool,
    pub prepare_errors: Vec<String>,
    pub last_seen: u64,
    /// Best clock probe: round trip, offset (host − coordinator), wall-clock offset.
    pub rtt: Option<u64>,
    pub offset: i64,
    pub wall_offset: i64,
    pub probes_answered: u32,
    pub started_coord_ns: Option<i64>,
    pub late: bool,
    pub interval: Option<RunReport>,
    pub final_report: Option<RunReport>,
    /// What each report said so far (runtime ms, then bytes and I/Os per direction, summed
    /// over its jobs): the first-done aggregate interpolates in it.
    pub series: Vec<(u64, [u64; 3], [u64; 3])>,
    pub exit: Option<u8>,
    pub error: Option<String>,
    pub failed_at_s: Option<f64>,
    /// Its failure was already printed (before the start).
    pub announced: bool,
    /// Text received without its end of line yet (a run prints some lines in pieces), for
    /// the normal output and for standard error.
    pub out_text: String,
    pub err_text: String,
}

/// Appends `piece` to `buf` and returns the whole lines it completes, each prefixed with the
/// host as fio prefixes a host's text.
pub fn whole_lines(buf: &mut String, piece: &str, host: &str) -> String {
    buf.push_str(piece);
    let Some(end) = buf.rfind('\n') else { return String::new() };
    let done: String = buf.drain(..=end).collect();
    done.lines().map(|l| format!("<{host}> {l}\n")).collect()
}

impl Host {
    pub fn live(&self) -> bool {
        self.failed_at_s.is_none() && self.error.is_none() && self.exit.is_none()
    }

    /// Marks a host lost for `why` (`started`: when the run started, to say when) and closes
    /// its connection; a host already lost or done keeps what it had.
    pub fn fail(&mut self, why: String, started: Option<Instant>) {
        if self.failed_at_s.is_some() || self.exit.is_some() {
            return;
        }
        self.error = Some(why);
        self.failed_at_s = Some(started.map_or(0.0, |s| s.elapsed().as_secs_f64()));
        if let Some(c) = &self.closer {
            c.close();
        }
    }

    /// Its latest figures: the final report once it came, else the latest interval report.
    fn latest(&self) -> Option<&RunReport> {
        self.final_report.as_ref().or(self.interval.as_ref())
    }
}

/// The hosts of a run, in host-list order, and when the run started (at the start barrier,
/// in the coordinator's clock).
pub struct Fleet {
    pub specs: Vec<HostSpec>,
    pub hosts: Vec<Host>,
    pub started: Option<Instant>,
    /// The first host to send its final report, for the first-done aggregate.
    pub first_final: Option<usize>,
}

impl Fleet {
    /// Host `idx` is lost for `why`.
    pub fn fail(&mut self, idx: usize, why: String) {
        self.hosts[idx].fail(why, self.started);
    }

    /// The hosts still running (or still to run), by index.
    pub fn live(&self) -> Vec<usize> {
        (0..self.hosts.len()).filter(|&i| self.hosts[i].live()).collect()
    }

    /// Every host with a line of its own: its name and the host's part.
    pub fn named(&self) -> impl Iterator<Item = (&Host, &HostSpec)> {
        self.hosts.iter().zip(&self.specs)
    }

    /// What the status line sees of each host (`hints`: each host's jobs).
    pub fn eta_views<'a>(&'a self, hints: &'a [Vec<JobHint>]) -> Vec<HostView<'a>> {
        hints
            .iter()
            .zip(&self.hosts)
            .map(|(hints, h)| HostView { hints, report: h.latest(), running: h.live() && h.final_report.is_none() })
            .collect()
    }

    /// The live page's series: each host's jobs as its latest report has them.
    pub fn live_series(&self) -> Vec<(String, Vec<&fiox_stats::ThreadStat>)> {
        self.named()
            .map(|(h, s)| {
                (s.name.clone(), h.latest().map(|r| r.jobs.iter().map(|j| &j.ts).collect()).unwrap_or_default())
            })
            .collect()
    }

    /// The first host lost or without a final report, and why, for the live page's end.
    pub fn first_failure(&self) -> Option<String> {
        let (h, s) = self.named().find(|(h, _)| h.failed_at_s.is_some() || h.final_report.is_none())?;
        Some(format!("host {}: {}", s.name, h.error.as_deref().unwrap_or("no final report")))
    }

    /// Every host's entry in host-list order, and the merge: at the end, or (`so_far`) during
    /// the run from the hosts' latest interval reports, running hosts marked `running`.
    pub fn report(&self, so_far: bool) -> ClientsReport {
        let now_ms = crate::plan::clock::epoch_ms();
        let first_start = self.hosts.iter().filter_map(|h| h.started_coord_ns).min();
        let entries: Vec<HostEntry> = self.named().map(|(h, s)| host_entry(s, h, so_far, first_start)).collect();
        let starts: Vec<i64> = self.hosts.iter().filter_map(|h| h.started_coord_ns).collect();
        let skew =
            (starts.len() > 1).then(|| (starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0)) as u64);
        let bound = self.hosts.iter().filter(|h| h.started_coord_ns.is_some()).filter_map(|h| h.rtt).max().unwrap_or(0);
        let time = fiox_engine::sys::ctime((now_ms / 1000) as i64);
        let with_data: Vec<&HostEntry> = entries.iter().filter(|e| e.report.is_some()).collect();
        let all = (entries.len() > 1 && !with_data.is_empty())
            .then(|| super::merge::all_clients(with_data.iter().filter_map(|e| e.report.as_ref()), &time, now_ms));
        let merged_groups = if with_data.is_empty() {
            Vec::new()
        } else {
            super::merge::per_group(with_data.iter().filter_map(|e| e.report.as_ref()), &time, now_ms)
        };
        let degraded = all.as_ref().and_then(|_| degraded(&entries));
        ClientsReport {
            version: crate::VERSION_STRING.to_string(),
            timestamp: now_ms / 1000,
            timestamp_ms: now_ms,
            time,
            hosts: entries,
            all,
            merged_groups,
            degraded,
            start_skew_ns: skew,
            skew_bound_ns: bound,
            first_done: None,
            repeat: None,
        }
    }

    /// Every host's newest report (its final one, else its last interval's), in host order.
    pub fn latest_reports(&self) -> impl Iterator<Item = &RunReport> {
        self.hosts.iter().filter_map(Host::latest)
    }

    /// The first-done aggregate, once a host has sent its final report.
    pub fn first_done(&self) -> Option<fiox_report::FirstDone> {
        self.first_final.and_then(|i| first_done(i, &self.specs, &self.hosts))
    }
}

/// One host's entry in the clients report (`first_start`: the earliest host's start, which
/// the others' are counted from).
fn host_entry(s: &HostSpec, h: &Host, so_far: bool, first_start: Option<i64>) -> HostEntry {
    let (hostname, port) = match &s.route {
        Route::Net(Endpoint::Tcp { host, port, .. }) => (host.clone(), *port),
        Route::Net(other) => (other.to_string(), 0),
        Route::Ssh(t) => (t.host.clone(), t.port.unwrap_or(22)),
        Route::Rsh(h) => (h.clone(), 0),
        Route::Join(j) => (j.as_ref().map(|j| j.addr.to_string()).unwrap_or_default(), 0),
    };
    let partial = h.final_report.is_none() && h.interval.is_some() && !(so_far && h.live());
    let report = h.latest().cloned();
    let runtime_ms = report.as_ref().map_or(0, report_runtime_ms);
    HostEntry {
        name: s.name.clone(),
        hostname,
        port,
        probe: if h.fiox_version.is_empty() { String::new() } else { probe_line(&h.facts, &h.fiox_version, h.proto) },
        report,
        status: if so_far && h.live() {
            "running".into()
        } else if h.failed_at_s.is_some() || h.final_report.is_none() {
            "failed".into()
        } else {
            "ok".into()
        },
        error: h.error.clone(),
        partial,
        failed_at_s: h.failed_at_s,
        transport: match (&s.route, h.transport) {
            (_, k) if !k.is_empty() => k.into(),
            (Route::Net(Endpoint::Unix(_)), _) => "unix".into(),
            (Route::Net(_), _) => "tcp".into(),
            (Route::Ssh(_), _) => "ssh".into(),
            (Route::Rsh(_), _) => "rsh".into(),
            (Route::Join(_), _) => "join".into(),
        },
        fiox_version: h.fiox_version.clone(),
        proto: h.proto,
        clock_offset_ns: h.offset,
        wallclock_offset_ns: h.wall_offset,
        rtt_ns: h.rtt.unwrap_or(0),
        start_ns: h.started_coord_ns.zip(first_start).map(|(s, f)| s - f),
        late_start: h.late,
        runtime_ms,
        // The host's own epoch ms, brought to the coordinator's wall clock.
        job_start_ms: h
            .latest()
            .and_then(|r| r.jobs.iter().map(|j| j.job_start_ms).filter(|&ms| ms > 0).min())
            .map(|ms| ms as i64 - h.wall_offset / 1_000_000),
    }
}

/// The report's degraded line when some host failed: how many completed, and each failure.
fn degraded(entries: &[HostEntry]) -> Option<String> {
    let failed: Vec<&HostEntry> = entries.iter().filter(|e| e.status == "failed").collect();
    if failed.is_empty() {
        return None;
    }
    let ok = entries.len() - failed.len();
    let what: Vec<String> = failed
        .iter()
        .map(|e| {
            format!(
                "{} failed at {:.1} s{}: {}",
                e.name,
                e.failed_at_s.unwrap_or(0.0),
                if e.partial { " (partial figures kept)" } else { "" },
                e.error.as_deref().unwrap_or("no final report")
            )
        })
        .collect();
    Some(format!("{ok} of {} hosts complete; {}", entries.len(), what.join("; ")))
}

/// The longest runtime in a report's groups (ms): a host's runtime so far, or in the end.
fn report_runtime_ms(r: &RunReport) -> u64 {
    r.groups.iter().flat_map(|g| g.max_run.iter().copied()).max().unwrap_or(0)
}

/// A report's runtime and its jobs' bytes and I/Os per direction.
pub fn totals(r: &RunReport) -> (u64, [u64; 3], [u64; 3]) {
    let (mut bytes, mut ios) = ([0u64; 3], [0u64; 3]);
    for j in &r.jobs {
        for d in 0..3 {
            bytes[d] += j.ts.dirs[d].io_bytes;
            ios[d] += j.ts.dirs[d].total_ios;
        }
    }
    (report_runtime_ms(r), bytes, ios)
}

/// The aggregate until host `idx`, the first to finish, was done: every host's figures at
/// that host's runtime, interpolated between the two reports around it (a host that ended
/// or was lost before then counts with what it last reported).
pub fn first_done(idx: usize, specs: &[HostSpec], hosts: &[Host]) -> Option<fiox_report::FirstDone> {
    let t = hosts[idx].series.last()?.0;
    if t == 0 {
        return None;
    }
    let mut f = fiox_report::FirstDone { host: specs[idx].name.clone(), runtime_ms: t, ..Default::default() };
    for h in hosts {
        let mut before = (0u64, [0u64; 3], [0u64; 3]);
        let mut at = None;
        for p in &h.series {
            if p.0 >= t {
                at = Some(*p);
                break;
            }
            before = *p;
        }
        let (b, i) = match at {
            Some(p) if p.0 > before.0 => {
                let w = (t - before.0) as f64 / (p.0 - before.0) as f64;
                let mix = |x: [u64; 3], y: [u64; 3]| -> [u64; 3] {
                    std::array::from_fn(|d| x[d] + ((y[d].saturating_sub(x[d])) as f64 * w) as u64)
                };
                (mix(before.1, p.1), mix(before.2, p.2))
            }
            Some(p) => (p.1, p.2),
            None => (before.1, before.2),
        };
        for d in 0..3 {
            f.io_bytes[d] += b[d];
            f.ios[d] += i[d];
        }
    }
    for d in 0..3 {
        f.bw_bytes[d] = f.io_bytes[d] * 1000 / t;
        f.iops[d] = f.ios[d] * 1000 / t;
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_pieces_become_prefixed_lines() {
        let mut buf = String::new();
        assert_eq!(whole_lines(&mut buf, "lay: Laying out (1 file / ", "h"), "");
        assert_eq!(whole_lines(&mut buf, "4MiB)\nnext", "h"), "<h> lay: Laying out (1 file / 4MiB)\n");
        assert_eq!(buf, "next");
    }

    /// First done: the finished host's own figures, and the other's interpolated between its
    /// reports around that time.
    #[test]
    fn first_done_interpolates_the_other_hosts() {
        let spec =
            |n: &str| HostSpec { name: n.into(), route: Route::Rsh(n.into()), argv: Vec::new(), files: Vec::new() };
        let specs = vec![spec("a"), spec("b")];
        let pt = |ms: u64, b: u64| (ms, [b, 0, 0], [b / 10, 0, 0]);
        let mut hosts = vec![Host::default(), Host::default()];
        hosts[0].series = vec![pt(500, 50), pt(1000, 100)];
        hosts[1].series = vec![pt(800, 40), pt(1600, 80)];
        let f = first_done(0, &specs, &hosts).unwrap();
        assert_eq!((f.host.as_str(), f.runtime_ms), ("a", 1000));
        assert_eq!((f.io_bytes[0], f.ios[0], f.bw_bytes[0], f.iops[0]), (150, 15, 150, 15));
    }
}
