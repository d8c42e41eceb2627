//! fio's per-job log files: `write_bw_log`, `write_lat_log` (lat, clat and slat) and
//! `write_iops_log`, in fio 3.33's text format: `time_ms, value, ddir, bs, prio` per line, with
//! the offset before `prio` when `log_offset=1`.
//!
//! With `log_avg_msec=0` there is one line per I/O (bandwidth is that I/O's bytes over its
//! completion latency, IOPS is 1); otherwise one line per direction and window, with the
//! window's average (or maximum, `log_max_value=1` / `log_window_value=max`), and bs and offset
//! 0. `log_window_value=both` (fio 3.36+) puts the maximum in a second value column after the
//! average; bandwidth and IOPS windows have one figure, so both columns hold it. Entries are
//! kept in memory and written when the job ends, as fio does.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use fiox_options::JobSpec;

/// The logs a job writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bw,
    Lat,
    Clat,
    Slat,
    Iops,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Bw => "bw",
            Kind::Lat => "lat",
            Kind::Clat => "clat",
            Kind::Slat => "slat",
            Kind::Iops => "iops",
        }
    }
}

/// One log line before formatting.
#[derive(Clone, Copy)]
struct Entry {
    time_ms: u64,
    value: u64,
    ddir: u8,
    bs: u32,
    offset: u64,
}

/// Running window of one log and direction.
#[derive(Clone, Copy, Default)]
struct Window {
    sum: u64,
    n: u64,
    max: u64,
}

struct Log {
    kind: Kind,
    prefix: String,
    entries: Vec<Entry>,
    /// Under `log_window_value=both`, each entry's window maximum (the second value column);
    /// kept apart so that per-I/O entries stay small.
    maxes: Vec<u64>,
    windows: [Window; 3],
}

/// `write_hist_log`: the completion-latency histogram's new counts every `log_hist_msec`, one
/// line per direction: `time_ms, ddir, bs, count0, ..., count1855`.
struct HistLog {
    prefix: String,
    every_ms: u64,
    next_ms: u64,
    last: [Option<fiox_stats::LatHist>; 3],
    text: String,
}

pub struct JobLogs {
    logs: Vec<Log>,
    hist: Option<HistLog>,
    avg_ms: u64,
    /// 0: average, 1: maximum, 2: both (`log_window_value`).
    window_value: u8,
    offset: bool,
    /// `.N` in file names (`per_job_logs=1`), N counting job clones from 1.
    number: Option<usize>,
    /// End of the current averaging window, in ms since measurement started.
    window_end: u64,
    window_bytes: [u64; 3],
    window_ios: [u64; 3],
}

impl JobLogs {
    /// The logs the job asked for, if any; `number` is the clone's 1-based position in the run.
    pub fn new(spec: &JobSpec, number: usize) -> Option<JobLogs> {
        let mut logs = Vec::new();
        let mut add = |prefix: &Option<String>, kinds: &[Kind]| {
            if let Some(p) = prefix {
                for &k in kinds {
                    logs.push(Log {
                        kind: k,
                        prefix: p.clone(),
                        entries: Vec::new(),
                        maxes: Vec::new(),
                        windows: Default::default(),
                    });
                }
            }
        };
        add(&spec.write_bw_log, &[Kind::Bw]);
        add(&spec.write_lat_log, &[Kind::Lat, Kind::Clat, Kind::Slat]);
        add(&spec.write_iops_log, &[Kind::Iops]);
        let hist = spec.write_hist_log.as_ref().map(|prefix| HistLog {
            prefix: prefix.clone(),
            every_ms: spec.log_hist_msec,
            next_ms: spec.log_hist_msec,
            last: [None, None, None],
            text: String::new(),
        });
        if logs.is_empty() && hist.is_none() {
            return None;
        }
        Some(JobLogs {
            logs,
            hist,
            avg_ms: spec.log_avg_msec,
            window_value: spec.log_window_value,
            offset: spec.log_offset,
            number: spec.per_job_logs.then_some(number),
            window_end: spec.log_avg_msec,
            window_bytes: [0; 3],
            window_ios: [0; 3],
        })
    }

    /// Records one completed I/O. Times are ms since measurement started; latencies in ns;
    /// `slat` is `None` for synchronous engines (their slat log stays empty, as in fio).
    #[allow(clippy::too_many_arguments)]
    pub fn io(&mut self, time_ms: u64, ddir: usize, bs: u32, offset: u64, slat: Option<u64>, clat: u64, lat: u64) {
        if self.avg_ms > 0 {
            self.roll(time_ms);
        }
        for log in &mut self.logs {
            let value = match log.kind {
                Kind::Lat => lat,
                Kind::Clat => clat,
                Kind::Slat => match slat {
                    Some(s) => s,
                    None => continue,
                },
                // One I/O's bandwidth: its bytes over its completion latency (bytes/ms).
                Kind::Bw => bs as u64 * 1_000_000 / clat.max(1),
                Kind::Iops => 1,
            };
            if self.avg_ms == 0 {
                log.entries.push(Entry { time_ms, value, ddir: ddir as u8, bs, offset });
            } else if matches!(log.kind, Kind::Lat | Kind::Clat | Kind::Slat) {
                let w = &mut log.windows[ddir];
                w.sum += value;
                w.n += 1;
                w.max = w.max.max(value);
            }
        }
        if self.avg_ms > 0 {
            self.window_bytes[ddir] += bs as u64;
            self.window_ios[ddir] += 1;
        }
    }

    /// Closes every averaging window that ended before `time_ms`.
    pub fn roll(&mut self, time_ms: u64) {
        while self.avg_ms > 0 && time_ms >= self.window_end {
            let end = self.window_end;
            let (bytes, ios) = (self.window_bytes, self.window_ios);
            for log in &mut self.logs {
                for d in 0..3 {
                    let (avg, max) = match log.kind {
                        // KiB/s and I/Os per second over the window.
                        Kind::Bw if bytes[d] > 0 => {
                            let v = bytes[d] * 1000 / self.avg_ms / 1024;
                            (v, v)
                        }
                        Kind::Iops if ios[d] > 0 => {
                            let v = ios[d] * 1000 / self.avg_ms;
                            (v, v)
                        }
                        Kind::Lat | Kind::Clat | Kind::Slat if log.windows[d].n > 0 => {
                            let w = log.windows[d];
                            (w.sum / w.n, w.max)
                        }
                        _ => continue,
                    };
                    let value = if self.window_value == 1 { max } else { avg };
                    log.entries.push(Entry { time_ms: end, value, ddir: d as u8, bs: 0, offset: 0 });
                    if self.window_value == 2 {
                        log.maxes.push(max);
                    }
                    log.windows[d] = Window::default();
                }
            }
            self.window_bytes = [0; 3];
            self.window_ios = [0; 3];
            self.window_end += self.avg_ms;
        }
    }

    /// Appends histogram lines for the windows that ended by `time_ms` (called between I/O
    /// batches with the job's statistics so far; `bs` is each direction's block size).
    pub fn hist_tick(&mut self, time_ms: u64, ts: &fiox_stats::ThreadStat, bs: [u64; 3]) {
        let Some(h) = &mut self.hist else { return };
        if h.every_ms == 0 || time_ms < h.next_ms {
            return;
        }
        h.next_ms = time_ms + h.every_ms;
        for (d, ds) in ts.dirs.iter().enumerate() {
            let Some(now) = &ds.clat_hist else { continue };
            let delta = match &h.last[d] {
                Some(prev) => now.since(prev),
                None => now.clone(),
            };
            if delta.total() == 0 {
                continue;
            }
            let _ = write!(h.text, "{time_ms}, {d}, {}", bs[d]);
            for c in delta.counts() {
                let _ = write!(h.text, ", {c}");
            }
            h.text.push('\n');
            h.last[d] = Some(now.clone());
        }
    }

    /// Writes the log files (in the current directory, as fio does).
    pub fn write(&self) -> Result<()> {
        if let Some(h) = &self.hist {
            let name = match self.number {
                Some(n) => format!("{}_clat_hist.{n}.log", h.prefix),
                None => format!("{}_clat_hist.log", h.prefix),
            };
            std::fs::write(&name, &h.text).with_context(|| format!("cannot write log file '{name}'"))?;
        }
        for log in &self.logs {
            let name = match self.number {
                Some(n) => format!("{}_{}.{n}.log", log.prefix, log.kind.suffix()),
                None => format!("{}_{}.log", log.prefix, log.kind.suffix()),
            };
            let mut text = String::with_capacity(log.entries.len() * 24);
            for (i, e) in log.entries.iter().enumerate() {
                let _ = write!(text, "{}, {}, ", e.time_ms, e.value);
                if let Some(max) = log.maxes.get(i) {
                    let _ = write!(text, "{max}, ");
                }
                if self.offset {
                    let _ = writeln!(text, "{}, {}, {}, 0", e.ddir, e.bs, e.offset);
                } else {
                    let _ = writeln!(text, "{}, {}, 0", e.ddir, e.bs);
                }
            }
            std::fs::write(&name, text).with_context(|| format!("cannot write log file '{name}'"))?;
        }
        Ok(())
    }
}
