//! fio's per-job log files: `write_bw_log`, `write_lat_log` (lat, clat and slat) and
//! `write_iops_log`, in fio 3.33's text format: `time_ms, value, ddir, bs, prio` per line, with
//! the offset before `prio` when `log_offset=1`.
//!
//! With `log_avg_msec=0` there is one line per I/O (bandwidth is that I/O's bytes over its
//! completion latency, IOPS is 1); otherwise one line per direction and window, with the
//! window's average (or maximum, `log_max_value=1` / `log_window_value=max`), and bs and offset
//! 0. `log_window_value=both` (fio 3.36+) puts the maximum in a second value column after the
//! average; bandwidth and IOPS windows have one figure, so both columns hold it.
//!
//! fio keeps its logs in memory and writes them when the job ends, which stalls the report of
//! a long per-I/O log and loses it all when the run is killed. fiox streams each log to its
//! file through a bounded buffer: memory stays flat, the end costs one last flush, and a kill
//! loses at most one buffer. A log that cannot be written (a full disk) is reported and
//! dropped; the job and its results go on.
//!
//! With `log_store_compressed=1` the same entries go, as binary samples, to `FILE.log.fz`
//! through the job's compression thread (`logz.rs`); the histogram log stays text (see
//! `JobLogs::new`).

use std::io::Write as _;

use fiox_options::JobSpec;

use super::logz::{self, Compressor, Prio, Sample, ZOut};

/// Bytes of formatted lines a log holds before writing them out.
const FLUSH_AT: usize = 256 << 10;

/// The longest a line waits in memory, so that a slow job's log is on disk up to the last
/// second when the run is killed.
const FLUSH_EVERY_MS: u64 = 1000;

/// A log file written as it grows: created on the first flush.
struct Sink {
    name: String,
    buf: Vec<u8>,
    file: Option<std::fs::File>,
    /// Bytes in the file: whole lines only.
    written: u64,
    /// The first write error; the log is abandoned from then on.
    failed: Option<String>,
    /// A compressed log: `buf` holds binary samples, which the compression thread writes.
    z: Option<ZOut>,
}

impl Sink {
    fn new(name: String) -> Sink {
        Sink { name, buf: Vec::with_capacity(FLUSH_AT + 256), file: None, written: 0, failed: None, z: None }
    }

    /// Writes out what is left; a compressed log's stream is ended.
    fn close(&mut self) {
        match &self.z {
            Some(z) => z.send(std::mem::take(&mut self.buf), true),
            None => self.flush(),
        }
    }

    #[inline]
    fn maybe_flush(&mut self) {
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if let Some(z) = &self.z {
            z.send(std::mem::replace(&mut self.buf, Vec::with_capacity(FLUSH_AT + 256)), false);
            return;
        }
        if self.failed.is_some() {
            self.buf.clear();
            return;
        }
        let r = match &mut self.file {
            Some(f) => f.write_all(&self.buf),
            None => std::fs::File::create(&self.name).and_then(|mut f| {
                let r = f.write_all(&self.buf);
                self.file = Some(f);
                r
            }),
        };
        match r {
            Ok(()) => self.written += self.buf.len() as u64,
            Err(e) => {
                // A write that stopped part way (a full disk) leaves half a line; the file is
                // cut back to its last whole line, so every line a parser reads is true.
                if let Some(f) = &self.file {
                    let _ = f.set_len(self.written);
                }
                self.failed = Some(format!("cannot write log file '{}': {e}", self.name));
            }
        }
        self.buf.clear();
    }
}

/// One I/O's bandwidth as fio logs it (and, with a per-I/O log, samples it): its bytes over its
/// completion latency, in bytes per millisecond.
#[inline]
pub fn io_bw(bytes: u32, clat_ns: u64) -> u64 {
    bytes as u64 * 1_000_000 / clat_ns.max(1)
}

/// Appends a number in decimal (the logs' only formatting work, per line and column).
#[inline]
fn num(buf: &mut Vec<u8>, v: u64) {
    buf.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// The logs a job writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bw,
    Lat,
    Clat,
    Slat,
    Iops,
    /// fiox's `write_intended_lat_log`: each I/O's intended latency (its latency for an
    /// unpaced job).
    Intended,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Bw => "bw",
            Kind::Lat => "lat",
            Kind::Clat => "clat",
            Kind::Slat => "slat",
            Kind::Iops => "iops",
            Kind::Intended => "intended_lat",
        }
    }
}

/// Running window of one log and direction.
#[derive(Clone, Copy, Default)]
struct Window {
    sum: u64,
    n: u64,
    max: u64,
}

/// An averaging window's time and the bytes and I/Os per direction completed in it.
#[derive(Clone, Copy)]
struct Rates {
    at: u64,
    bytes: [u64; 3],
    ios: [u64; 3],
}

struct Log {
    kind: Kind,
    sink: Sink,
    windows: [Window; 3],
}

/// `write_hist_log`: the completion-latency histogram's new counts every `log_hist_msec`, one
/// line per direction: `time_ms, ddir, bs, count0, ..., count1855`.
struct HistLog {
    every_ms: u64,
    next_ms: u64,
    last: [Option<fiox_stats::LatHist>; 3],
    /// `log_hist_coarseness`: each column sums 2^c adjacent buckets of the histogram.
    coarseness: u32,
    sink: Sink,
}

pub struct JobLogs {
    logs: Vec<Log>,
    /// The thread that compresses and writes the logs (`log_store_compressed`).
    compressor: Option<Compressor>,
    hist: Option<HistLog>,
    avg_ms: u64,
    /// Per-I/O bandwidth lines are written (`disable_bw_measurement` leaves the log empty).
    keep_bw: bool,
    /// The last column holds each I/O's priority value (`log_prio`), with `job_prio` for I/Os
    /// that cmdprio left alone; otherwise 1 for an I/O cmdprio raised and 0 for the rest.
    log_prio: bool,
    job_prio: u16,
    /// Added to every line's time: the epoch of `log_unix_epoch`/`log_alternate_epoch`, in
    /// ms, at the job's start; 0 for times since the start.
    time_base: u64,
    /// 0: average, 1: maximum, 2: both (`log_window_value`).
    window_value: u8,
    offset: bool,
    /// `log_issue_time` (fio 3.42): a last column with the I/O's issue time in ns since the
    /// job's measurement started (0 on an averaged line).
    issue_time: bool,
    /// End of the current averaging window, in ms since measurement started.
    window_end: u64,
    window_bytes: [u64; 3],
    window_ios: [u64; 3],
    /// The last closed window's bytes and I/Os, whose bandwidth and IOPS lines are not
    /// written yet (see `close_window`).
    pending: Option<Rates>,
    /// When the buffers are next written out whatever their size, in ms since measurement
    /// started.
    next_flush_ms: u64,
}

impl JobLogs {
    /// The logs the job asked for, if any; `number` is the clone's 1-based position in the run.
    pub fn new(spec: &JobSpec, number: usize) -> Option<JobLogs> {
        let number = spec.per_job_logs.then_some(number);
        // `.N` in file names (`per_job_logs=1`), N counting job clones from 1.
        let name = |prefix: &str, suffix: &str| match number {
            Some(n) => format!("{prefix}_{suffix}.{n}.log"),
            None => format!("{prefix}_{suffix}.log"),
        };
        let zname = |prefix: &str, suffix: &str| match spec.log_store_compressed {
            true => format!("{}.fz", name(prefix, suffix)),
            false => name(prefix, suffix),
        };
        let mut logs = Vec::new();
        let mut add = |prefix: &Option<String>, kinds: &[Kind]| {
            if let Some(p) = prefix {
                for &k in kinds {
                    logs.push(Log { kind: k, sink: Sink::new(zname(p, k.suffix())), windows: Default::default() });
                }
            }
        };
        add(&spec.write_bw_log, &[Kind::Bw]);
        // A latency the job does not keep has no log file at all, as in fio.
        let [slat, clat, lat] = spec.keep_lat;
        let kept: Vec<Kind> = [(lat, Kind::Lat), (clat, Kind::Clat), (slat, Kind::Slat)]
            .into_iter()
            .filter(|k| k.0)
            .map(|k| k.1)
            .collect();
        add(&spec.write_lat_log, &kept);
        add(&spec.write_iops_log, &[Kind::Iops]);
        add(&spec.write_intended_lat_log, &[Kind::Intended]);
        // fio 3.33 stores a compressed histogram log as pointers into its memory, which no
        // decoder can read back; fiox keeps that log as text (and its `.log` name).
        let hist = spec.write_hist_log.as_ref().map(|prefix| HistLog {
            every_ms: spec.log_hist_msec,
            next_ms: spec.log_hist_msec,
            coarseness: spec.log_hist_coarseness,
            last: [None, None, None],
            sink: Sink::new(name(prefix, "clat_hist")),
        });
        if logs.is_empty() && hist.is_none() {
            return None;
        }
        let mut compressor = None;
        if spec.log_store_compressed && !logs.is_empty() {
            let size = logz::sample_size(spec.log_offset);
            let files: Vec<(String, usize)> = logs.iter().map(|l| (l.sink.name.clone(), size)).collect();
            let chunk = spec.log_compression.unwrap_or(logz::DEFAULT_CHUNK);
            let (c, outs) = Compressor::start(&files, chunk, spec.log_compression_cpus.clone());
            for (log, out) in logs.iter_mut().zip(outs) {
                log.sink.z = Some(out);
            }
            compressor = Some(c);
        }
        Some(JobLogs {
            logs,
            compressor,
            hist,
            avg_ms: spec.log_avg_msec,
            keep_bw: spec.keep_bw,
            log_prio: spec.log_prio,
            time_base: 0,
            job_prio: spec.ioprio.map_or(0, |(class, level)| (class << 13 | level) as u16),
            window_value: spec.log_window_value,
            offset: spec.log_offset,
            issue_time: spec.log_issue_time,
            window_end: spec.log_avg_msec,
            window_bytes: [0; 3],
            window_ios: [0; 3],
            pending: None,
            next_flush_ms: FLUSH_EVERY_MS,
        })
    }

    /// Records one completed I/O. Times are ms since measurement started; latencies in ns;
    /// `slat` is `None` for synchronous engines (their slat log stays empty, as in fio).
    #[allow(clippy::too_many_arguments)]
    pub fn io(
        &mut self,
        time_ms: u64,
        ddir: usize,
        bs: u32,
        offset: u64,
        ioprio: u16,
        slat: Option<u64>,
        clat: u64,
        lat: u64,
        intended: Option<u64>,
        issue_ns: u64,
    ) {
        let issue = self.issue_time.then_some(issue_ns);
        let prio = match (self.log_prio, ioprio) {
            (true, 0) => Prio::Value(self.job_prio),
            (true, v) => Prio::Value(v),
            // Without log_prio, fio writes 1 for an I/O in the real-time class (its own or the
            // job's), else 0.
            (false, v) => Prio::Flag((if v == 0 { self.job_prio } else { v }) >> 13 == 1),
        };
        if self.avg_ms > 0 {
            self.roll(time_ms);
        }
        for log in &mut self.logs {
            let value = match log.kind {
                Kind::Lat => lat,
                Kind::Intended => intended.unwrap_or(lat),
                Kind::Clat => clat,
                Kind::Slat => match slat {
                    Some(s) => s,
                    None => continue,
                },
                Kind::Bw if !self.keep_bw => continue,
                Kind::Bw => io_bw(bs, clat),
                Kind::Iops => 1,
            };
            if self.avg_ms == 0 {
                let t = self.time_base + time_ms;
                line(&mut log.sink, t, value, None, ddir as u8, bs, self.offset.then_some(offset), prio, issue);
            } else if matches!(log.kind, Kind::Lat | Kind::Clat | Kind::Slat | Kind::Intended) {
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
            self.close_window(self.window_end, false);
            self.window_end += self.avg_ms;
        }
    }

    /// Writes the open window's latency lines with time `at` and starts a new window. Its
    /// bandwidth and IOPS lines (unless `latency_only`) wait until the next window closes or
    /// the job ends: fio writes none for a window that ends as the job ends (`end_windows`).
    fn close_window(&mut self, at: u64, latency_only: bool) {
        let rates = Rates { at, bytes: self.window_bytes, ios: self.window_ios };
        if !latency_only {
            if let Some(before) = self.pending.replace(rates) {
                self.write_window(&before, false);
            }
        }
        self.write_window(&rates, true);
        self.window_bytes = [0; 3];
        self.window_ios = [0; 3];
    }

    /// Writes a window's lines with time `w.at`: those of the latency logs, or those of the
    /// bandwidth and IOPS logs.
    fn write_window(&mut self, w: &Rates, latency: bool) {
        // A window mixes priorities: fio writes 0 (0x0000 under log_prio).
        let prio = if self.log_prio { Prio::Value(0) } else { Prio::Flag(false) };
        for log in &mut self.logs {
            let is_latency = !matches!(log.kind, Kind::Bw | Kind::Iops);
            if latency != is_latency {
                continue;
            }
            for d in 0..3 {
                let (avg, max) = match log.kind {
                    // KiB/s and I/Os per second over the window.
                    Kind::Bw if w.bytes[d] > 0 => {
                        let v = w.bytes[d] * 1000 / self.avg_ms / 1024;
                        (v, v)
                    }
                    Kind::Iops if w.ios[d] > 0 => {
                        let v = w.ios[d] * 1000 / self.avg_ms;
                        (v, v)
                    }
                    Kind::Lat | Kind::Clat | Kind::Slat | Kind::Intended if log.windows[d].n > 0 => {
                        let lw = log.windows[d];
                        (lw.sum / lw.n, lw.max)
                    }
                    _ => continue,
                };
                let value = if self.window_value == 1 { max } else { avg };
                let second = (self.window_value == 2).then_some(max);
                let t = self.time_base + w.at;
                let issue = self.issue_time.then_some(0);
                line(&mut log.sink, t, value, second, d as u8, 0, self.offset.then_some(0), prio, issue);
                if is_latency {
                    log.windows[d] = Window::default();
                }
            }
        }
    }

    /// Measurement starts now: under `log_unix_epoch`/`log_alternate_epoch`, times count from
    /// that clock's epoch from here on.
    pub fn start(&mut self, epoch_clock: Option<i32>) {
        self.time_base = epoch_clock.and_then(fiox_engine::sys::clock_ms).unwrap_or(0);
    }

    /// Ends the job's last averaging window at `time_ms`, the end of the job: its latency
    /// lines are written with that time, as fio writes them (bandwidth and IOPS lines are not).
    pub fn end_windows(&mut self, time_ms: u64) {
        self.roll(time_ms);
        // The last full window's bandwidth and IOPS lines are written unless it ended as the
        // job ended: fio 3.33 samples them while the job runs, never at its end, so a 3 s job
        // under log_avg_msec=1000 has lines at 1000 and 2000 only (its latency logs have 3000).
        if let Some(last) = self.pending.take().filter(|w| w.at != time_ms) {
            self.write_window(&last, false);
        }
        // A window that would start and end at the job's end (its I/O completed in the same
        // millisecond as the last full window ended) is not written, as in fio.
        if self.avg_ms == 0 || time_ms + self.avg_ms <= self.window_end {
            return;
        }
        self.close_window(time_ms, true);
    }

    /// Called between I/O batches with the job's statistics so far (`bs` is each direction's
    /// block size): appends the histogram lines of the windows that ended by `time_ms`, and
    /// once a second writes out what the buffers hold.
    #[inline]
    pub fn tick(&mut self, time_ms: u64, ts: &fiox_stats::ThreadStat, bs: [u64; 3]) {
        self.hist_tick(time_ms, ts, bs);
        if time_ms >= self.next_flush_ms {
            self.next_flush_ms = time_ms + FLUSH_EVERY_MS;
            for sink in self.logs.iter_mut().map(|l| &mut l.sink).chain(self.hist.iter_mut().map(|h| &mut h.sink)) {
                if !sink.buf.is_empty() {
                    sink.flush();
                }
            }
        }
    }

    fn hist_tick(&mut self, time_ms: u64, ts: &fiox_stats::ThreadStat, bs: [u64; 3]) {
        let time_base = self.time_base;
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
            let buf = &mut h.sink.buf;
            let _ = write!(buf, "{}, {d}, {}", time_ms + time_base, bs[d]);
            for group in delta.counts().chunks(1 << h.coarseness) {
                buf.extend_from_slice(b", ");
                num(buf, group.iter().sum());
            }
            buf.push(b'\n');
            h.last[d] = Some(now.clone());
            h.sink.maybe_flush();
        }
    }

    /// Writes what is left and closes the files (in the current directory, as fio does);
    /// the messages of logs that could not be written.
    pub fn finish(&mut self) -> Vec<String> {
        let sinks = self.logs.iter_mut().map(|l| &mut l.sink).chain(self.hist.iter_mut().map(|h| &mut h.sink));
        let mut failed = Vec::new();
        for sink in sinks {
            sink.close();
            // The compression thread waits for every log's sender to go before it ends.
            sink.z = None;
            failed.extend(sink.failed.take());
        }
        if let Some(c) = &mut self.compressor {
            failed.extend(c.finish());
        }
        failed
    }
}

/// One line: `time, value, [second value, ]ddir, bs, [offset, ]prio[, issue time]`.
#[inline]
#[allow(clippy::too_many_arguments)]
fn line(
    sink: &mut Sink,
    time_ms: u64,
    value: u64,
    second: Option<u64>,
    ddir: u8,
    bs: u32,
    offset: Option<u64>,
    prio: Prio,
    issue: Option<u64>,
) {
    let s = Sample { time: time_ms, value, ddir: ddir as u32, bs: bs as u64, offset, prio };
    match sink.z {
        // `log_window_value=both` is refused with compression (a sample has one value).
        Some(_) => logz::encode(&mut sink.buf, &s),
        None => text_line(&mut sink.buf, &s, second, issue),
    }
    sink.maybe_flush();
}

/// A log entry as a text line: `time, value, [second value, ]ddir, bs, [offset, ]prio[, issue
/// time]`. Also what `--inflate-log` prints for each sample of a compressed log, so both read the
/// same.
#[inline]
pub fn text_line(buf: &mut Vec<u8>, s: &Sample, second: Option<u64>, issue: Option<u64>) {
    num(buf, s.time);
    buf.extend_from_slice(b", ");
    num(buf, s.value);
    buf.extend_from_slice(b", ");
    if let Some(v) = second {
        num(buf, v);
        buf.extend_from_slice(b", ");
    }
    num(buf, s.ddir as u64);
    buf.extend_from_slice(b", ");
    num(buf, s.bs);
    buf.extend_from_slice(b", ");
    if let Some(o) = s.offset {
        num(buf, o);
        buf.extend_from_slice(b", ");
    }
    match s.prio {
        Prio::Flag(false) => buf.push(b'0'),
        Prio::Flag(true) => buf.push(b'1'),
        Prio::Value(v) => {
            let _ = write!(buf, "0x{v:04x}");
        }
    }
    if let Some(t) = issue {
        buf.extend_from_slice(b", ");
        num(buf, t);
    }
    buf.push(b'\n');
}
