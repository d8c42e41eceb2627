//! The status line of a multi-host run: one line for every host together, in fio's layout
//! (`Jobs: 4 (f=4): [r(4)][45.0%][r=1024MiB/s][r=262k IOPS][eta 00m:03s]`), as fio's client
//! sums its servers' ETAs into one line.
//!
//! The coordinator has no worker counters, only what the hosts stream: each host's latest
//! interval report (cumulative figures) and, once it is done, its final report. Rates are the
//! growth of the summed figures between two lines; progress and time left come from each job's
//! planned length (runtime, or size for jobs that are not time-based) as the coordinator read
//! it when it checked the job, against the time since the start barrier and the bytes done.

use fiox_options::{JobSet, SizeSpec};
use fiox_report::RunReport;

use crate::runner::eta::{render_line, JobsEta};

/// What the coordinator knows in advance about one job clone on a host.
#[derive(Debug, Clone)]
pub struct JobHint {
    state: char,
    files: u32,
    /// Ramp plus runtime in seconds (0: none set).
    total_s: f64,
    /// Bytes it moves when not time-based and its size is absolute.
    bytes: Option<u64>,
    /// Its `kb_base`: the line's units follow the first job's, as a local run's do.
    pub kb_base: u64,
}

/// Every job clone of a checked job set, in plan order.
pub fn hints(set: &JobSet) -> Vec<JobHint> {
    let mut out = Vec::new();
    for j in &set.jobs {
        let s = &j.spec;
        let bytes = match (&s.io_size, &s.size) {
            _ if s.time_based => None,
            (Some(SizeSpec::Bytes(n)), _) | (None, Some(SizeSpec::Bytes(n))) => Some(n * s.loops.max(1) as u64),
            _ => None,
        };
        for _ in 0..s.numjobs {
            out.push(JobHint {
                state: crate::runner::state_char(s),
                files: s.nrfiles.max(1),
                total_s: (s.ramp_time_us + s.runtime_us) as f64 / 1e6,
                bytes,
                kb_base: s.kb_base,
            });
        }
    }
    out
}

/// One host as the status line sees it.
pub struct HostView<'a> {
    pub hints: &'a [JobHint],
    /// Its latest figures: the final report once done, else the latest interval report.
    pub report: Option<&'a RunReport>,
    /// Still running (not done, not lost).
    pub running: bool,
}

/// The line's state between two lines: the totals at the last one.
#[derive(Default)]
pub struct MergedEta {
    last: Option<(std::time::Instant, [u64; 3], [u64; 3])>,
    /// The rates the last line showed.
    rates: ([u64; 3], [u64; 3]),
}

impl MergedEta {
    /// The line for `hosts`, `elapsed_s` after the start barrier (`finished` for the last
    /// one), and how many jobs it counts as running.
    pub fn line(&mut self, hosts: &[HostView<'_>], elapsed_s: f64, finished: bool, kb_base: u64) -> (String, u32) {
        let now = std::time::Instant::now();
        let mut e = JobsEta::default();
        let (mut bytes, mut ios) = ([0u64; 3], [0u64; 3]);
        let (mut frac_min, mut eta_s) = (1f64, 0f64);
        for h in hosts {
            let jobs = h.report.map(|r| r.jobs.as_slice()).unwrap_or_default();
            for j in jobs {
                for d in 0..3 {
                    bytes[d] += j.ts.dirs[d].io_bytes;
                    ios[d] += j.ts.dirs[d].total_ios;
                }
            }
            for (k, hint) in h.hints.iter().enumerate() {
                if !h.running {
                    e.states.push('_');
                    continue;
                }
                let done_b: u64 = jobs.get(k).map_or(0, |j| j.ts.dirs.iter().map(|d| d.io_bytes).sum());
                let frac_t = if hint.total_s > 0.0 { (elapsed_s / hint.total_s).min(1.0) } else { 0.0 };
                let frac_b = hint.bytes.map_or(0.0, |b| done_b as f64 / b.max(1) as f64);
                let frac = frac_t.max(frac_b).clamp(0.0001, 1.0);
                if frac >= 1.0 && hint.total_s > 0.0 {
                    e.states.push('_');
                    continue;
                }
                e.states.push(hint.state);
                e.running += 1;
                e.files += hint.files;
                frac_min = frac_min.min(frac);
                eta_s = eta_s.max(elapsed_s * (1.0 - frac) / frac);
            }
        }
        match self.last {
            // The last line keeps the rates of the one before: the hosts' final reports carry
            // what they did since their last interval report, which no short time span
            // between two lines measures.
            _ if finished => (e.bw, e.iops) = self.rates,
            Some((then, b0, i0)) => {
                let dt = now.duration_since(then).as_secs_f64().max(1e-3);
                for d in 0..3 {
                    e.bw[d] = (bytes[d].saturating_sub(b0[d]) as f64 / dt) as u64;
                    e.iops[d] = (ios[d].saturating_sub(i0[d]) as f64 / dt) as u64;
                }
            }
            None => {}
        }
        self.last = Some((now, bytes, ios));
        self.rates = (e.bw, e.iops);
        e.percent = if finished { 100.0 } else { frac_min * 100.0 };
        e.eta_secs = if finished { 0 } else { eta_s.ceil() as u64 };
        (render_line(&e, kb_base), e.running)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_report::JobReport;

    fn report(read: &[u64]) -> RunReport {
        let jobs = read
            .iter()
            .map(|&b| {
                let mut j = JobReport::default();
                j.ts.dirs[0].io_bytes = b;
                j.ts.dirs[0].total_ios = b / 4096;
                j
            })
            .collect();
        RunReport { jobs, ..RunReport::default() }
    }

    /// Two hosts of 10 s time-based random reads, one of them done: its job shows as `_`, the
    /// other's as running at half time, and the rate is the growth of both hosts' bytes.
    #[test]
    fn hosts_sum_into_one_line() {
        let h = JobHint { state: 'r', files: 1, total_s: 10.0, bytes: None, kb_base: 1024 };
        let hints = vec![h];
        let (a0, b0) = (report(&[0]), report(&[0]));
        let mut m = MergedEta::default();
        let views = |a, b, running_b| {
            vec![
                HostView { hints: &hints, report: Some(a), running: true },
                HostView { hints: &hints, report: Some(b), running: running_b },
            ]
        };
        m.line(&views(&a0, &b0, true), 4.0, false, 1024);
        std::thread::sleep(std::time::Duration::from_millis(100));
        let (a1, b1) = (report(&[8 << 20]), report(&[8 << 20]));
        let (line, running) = m.line(&views(&a1, &b1, false), 5.0, false, 1024);
        assert_eq!(running, 1);
        assert!(line.starts_with("Jobs: 1 (f=1): [r(1),_(1)][50.0%][r="), "{line}");
        assert!(line.ends_with("[eta 00m:05s]"), "{line}");
    }
}
