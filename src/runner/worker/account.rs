//! Accounting: what a worker measured. The [`Accountant`] owns the job's statistics, knows
//! whether measurement has started (after `ramp_time`), books every finished I/O into the
//! latency sums, histograms and logs, and takes the bandwidth and IOPS samples.

use fiox_engine::{sys, Ddir, Io};
use fiox_options::JobSpec;
use fiox_stats::{DirStat, ThreadStat};

use super::WorkerResult;
use crate::plan::clock;
use crate::runner::logs::JobLogs;

pub(super) struct Accountant {
    pub(super) ts: ThreadStat,
    /// The statistics of a fresh start (and again after ramp_time): the job's directions, with
    /// per-priority latency where cmdprio sends some I/Os with a priority.
    blank: ThreadStat,
    /// Measurement has started (ramp_time is over); before, finished I/Os are not booked.
    pub(super) measuring: bool,
    /// Clock reading when measurement started. Measurement ends with the last I/O booked: the
    /// I/O drained at the end of a job counts, over the time it took, so bytes, I/Os and
    /// runtime always agree (fio books the drained I/O but stops its runtime at the end of
    /// `runtime`, which inflates its bandwidth on deep, slow queues).
    pub(super) start: u64,
    usage0: sys::Usage,
    start_epoch_ms: u64,
    on: [bool; 3],
    /// Per-priority latency is total latency with lat_percentiles, completion latency otherwise.
    prio_total_lat: bool,
    /// `[slat, clat, lat]`: which latencies are kept (`disable_*`, `gtod_reduce`).
    keep: [bool; 3],
    /// With a per-I/O bandwidth or IOPS log (`log_avg_msec=0`), fio's bandwidth and IOPS
    /// statistics are that log's values, one sample per I/O, instead of periodic samples. `bw`
    /// is `Some(kept)` then: whether each I/O's bandwidth is kept (`disable_bw_measurement`).
    per_io_bw: Option<bool>,
    per_io_iops: bool,
    log_epoch_clock: Option<i32>,
    bw: Sampler,
    iops: Sampler,
    pub(super) logs: Option<JobLogs>,
    /// `block_error_percentiles`: each block's last state.
    blocks: Option<super::blocks::BlockStates>,
}

/// One of fio's sample series (`bwavgtime`, `iopsavgtime`): a value per direction every window.
struct Sampler {
    window_ns: u64,
    last_at: u64,
    last: [u64; 3],
}

impl Accountant {
    pub(super) fn new(spec: &JobSpec, number: usize, measuring: bool) -> Accountant {
        // A write job that reads its blocks back (verify) reads too.
        let reads_back = spec.rw.writes() && spec.verify.as_ref().is_some_and(|v| v.after_write || v.only);
        let trims_back = reads_back && spec.verify.as_ref().is_some_and(|v| v.trim_percentage > 0);
        let on = [spec.rw.reads() || reads_back, spec.rw.writes(), spec.rw.trims() || trims_back];
        let mut blank = ThreadStat { jobs: 1, ..ThreadStat::default() };
        for (d, &active) in on.iter().enumerate() {
            if active {
                blank.dirs[d] = DirStat::active();
                // A latency the job does not keep has no histogram, so no percentiles either.
                let [slat, clat, lat] = spec.keep_lat;
                let ds = &mut blank.dirs[d];
                for (keep, hist) in [(slat, &mut ds.slat_hist), (clat, &mut ds.clat_hist), (lat, &mut ds.lat_hist)] {
                    if !keep {
                        *hist = None;
                    }
                }
                if paced(spec) {
                    blank.dirs[d].intended_hist = Some(Default::default());
                }
                let rules = spec.engine.cmdprio.rules(d);
                if !rules.is_empty() {
                    let prios: Vec<u16> = std::iter::once(0).chain(rules.iter().map(|r| r.ioprio)).collect();
                    blank.dirs[d].track_prios(&prios);
                }
            }
        }
        Accountant {
            ts: blank.clone(),
            blank,
            measuring,
            start: 0,
            usage0: clock::thread_usage(),
            start_epoch_ms: clock::epoch_ms(),
            on,
            prio_total_lat: spec.lat_percentiles,
            keep: spec.keep_lat,
            per_io_bw: (spec.write_bw_log.is_some() && spec.log_avg_msec == 0).then_some(spec.keep_bw),
            per_io_iops: spec.write_iops_log.is_some() && spec.log_avg_msec == 0,
            log_epoch_clock: spec.log_epoch_clock,
            bw: Sampler { window_ns: spec.bwavgtime_ms.max(1) * 1_000_000, last_at: 0, last: [0; 3] },
            iops: Sampler { window_ns: spec.iopsavgtime_ms.max(1) * 1_000_000, last_at: 0, last: [0; 3] },
            blocks: None,
            logs: JobLogs::new(spec, number).map(|mut l| {
                if measuring {
                    l.start(spec.log_epoch_clock);
                }
                l
            }),
        }
    }

    /// Ramp over: forgets what was measured and starts the clock for the report. The I/O done
    /// while ramping still counts toward the job's size, as in fio: only the statistics start
    /// over.
    pub(super) fn start_measuring(&mut self, now: u64) {
        self.measuring = true;
        self.start = now;
        self.usage0 = clock::thread_usage();
        self.start_epoch_ms = clock::epoch_ms();
        if let Some(l) = &mut self.logs {
            l.start(self.log_epoch_clock);
        }
        self.ts = self.blank.clone();
        self.bw.last_at = now;
        self.bw.last = [0; 3];
        self.iops.last_at = now;
        self.iops.last = [0; 3];
    }

    /// Milliseconds measured by clock reading `now`.
    pub(super) fn elapsed_ms(&self, now: u64) -> u64 {
        now.saturating_sub(self.start) / 1_000_000
    }

    /// Books one I/O that moved nothing and took no measured time: counted, with no bytes and
    /// no latency sample (fio's count of rdma's passive server).
    pub(super) fn empty_io(&mut self, io: &Io) {
        if self.measuring && matches!(io.ddir, Ddir::Read | Ddir::Write | Ddir::Trim) {
            self.ts.dirs[io.ddir as usize].total_ios += 1;
        }
    }

    /// Books one I/O that moved `result` bytes (`result >= 0`). `start` is when it was
    /// prepared (`None` for I/Os with no submission phase: no slat), `issue` when the engine
    /// got it, `done` when it was seen complete; `due` when a paced job's schedule wanted it
    /// to start (`None` for unpaced jobs), for the intended latency.
    #[inline]
    pub(super) fn complete(
        &mut self,
        io: &Io,
        result: i64,
        start: Option<u64>,
        issue: u64,
        done: u64,
        due: Option<u64>,
    ) {
        if let Some(b) = &mut self.blocks {
            b.record(io, true);
        }
        if !self.measuring {
            return;
        }
        let ts = &mut self.ts;
        let d = match io.ddir {
            Ddir::Read => 0,
            Ddir::Write => 1,
            Ddir::Trim => 2,
            Ddir::Sync | Ddir::DataSync | Ddir::SyncRange => {
                ts.sync_lat.add(done - issue);
                ts.sync_hist.get_or_insert_with(Default::default).add(done - issue);
                // fio counts each sync in a per-direction array indexed by its direction
                // (3: fsync, 4: fdatasync, 5: sync_file_range) that has four slots and is
                // followed by the short-I/O counts: only an fsync shows in `sync.total_ios` and
                // the issued count; an fdatasync lands in the reads' short count and a
                // sync_file_range in the writes' (measured with fio 3.33,
                // docs/fio-observed/sync.md). Reported as fio reports them.
                match io.ddir {
                    Ddir::Sync => {
                        ts.sync_ios += 1;
                        ts.issued[3] += 1;
                    }
                    Ddir::DataSync => {
                        ts.dirs[0].short_ios += 1;
                        ts.short[0] += 1;
                    }
                    _ => {
                        ts.dirs[1].short_ios += 1;
                        ts.short[1] += 1;
                    }
                }
                return;
            }
        };
        let clat = done.saturating_sub(issue);
        let ds = &mut ts.dirs[d];
        ds.io_bytes += result as u64;
        ds.total_ios += 1;
        if (result as u64) < io.len as u64 {
            ds.short_ios += 1;
            ts.short[d] += 1;
        }
        let [keep_slat, keep_clat, keep_lat] = self.keep;
        if keep_clat {
            ds.clat.add(clat);
            ts.mark_clat_bucket(clat);
        }
        let ds = &mut ts.dirs[d];
        if let Some(h) = &mut ds.clat_hist {
            h.add(clat);
        }
        let lat = match start {
            Some(s) => {
                let slat = issue.saturating_sub(s);
                if keep_slat {
                    ds.slat.add(slat);
                }
                if let Some(h) = &mut ds.slat_hist {
                    h.add(slat);
                }
                done.saturating_sub(s)
            }
            None => clat,
        };
        if keep_lat {
            ds.lat.add(lat);
        }
        if let Some(h) = &mut ds.lat_hist {
            h.add(lat);
        }
        let intended = match due {
            Some(due) => ds.add_intended(due, start.unwrap_or(issue), done),
            None => None,
        };
        if !ds.prios.is_empty() {
            // fio keeps per-priority completion latency, or total latency with lat_percentiles.
            ds.add_prio(io.ioprio, if self.prio_total_lat { lat } else { clat });
        }
        if let Some(l) = &mut self.logs {
            let slat = start.map(|s| issue.saturating_sub(s));
            let t = done.saturating_sub(self.start) / 1_000_000;
            let issue_ns = issue.saturating_sub(self.start);
            l.io(t, d, io.len, io.offset, io.ioprio, slat, clat, lat, intended, issue_ns);
            // Per-I/O bw and iops logs exist only with logs, so this costs nothing without.
            if self.per_io_bw == Some(true) {
                ds.bw.add(crate::runner::logs::io_bw(io.len, clat));
            }
            if self.per_io_iops {
                ds.iops.add(1);
            }
        }
    }

    /// Books an I/O that failed: it counts among the direction's I/Os (as fio's `total_ios`
    /// and `issued` do), not in its bytes or latencies.
    #[inline]
    pub(super) fn failed(&mut self, io: &Io) {
        if let Some(b) = &mut self.blocks {
            b.record(io, false);
        }
        if self.measuring && (io.ddir as usize) < 3 {
            self.ts.dirs[io.ddir as usize].total_ios += 1;
        }
    }

    /// Takes bandwidth and IOPS samples when their windows have passed (fio's `bwavgtime`,
    /// `iopsavgtime`), for the directions the job does, and histogram log lines.
    #[inline]
    pub(super) fn sample(&mut self, now: u64, bs: [u64; 3]) {
        if !self.measuring {
            return;
        }
        let (ts, on) = (&mut self.ts, self.on);
        if self.per_io_bw.is_none() && now - self.bw.last_at >= self.bw.window_ns {
            let ms = (now - self.bw.last_at) / 1_000_000;
            for d in (0..3).filter(|&d| on[d]) {
                let delta = ts.dirs[d].io_bytes - self.bw.last[d];
                ts.dirs[d].bw.add(delta * 1000 / ms.max(1) / 1024);
                self.bw.last[d] = ts.dirs[d].io_bytes;
            }
            self.bw.last_at = now;
        }
        if !self.per_io_iops && now - self.iops.last_at >= self.iops.window_ns {
            let ms = (now - self.iops.last_at) / 1_000_000;
            for d in (0..3).filter(|&d| on[d]) {
                let delta = ts.dirs[d].total_ios - self.iops.last[d];
                ts.dirs[d].iops.add(delta * 1000 / ms.max(1));
                self.iops.last[d] = ts.dirs[d].total_ios;
            }
            self.iops.last_at = now;
        }
        if let Some(l) = &mut self.logs {
            l.tick(now.saturating_sub(self.start) / 1_000_000, &self.ts, bs);
        }
    }

    /// The result so far, as of clock reading `now` (for snapshots).
    pub(super) fn result(&self, now: u64, pid: u32, seed: u64) -> WorkerResult {
        self.report(self.ts.clone(), now, pid, seed)
    }

    /// The final result, without a copy of the statistics.
    pub(super) fn into_result(mut self, now: u64, pid: u32, seed: u64) -> WorkerResult {
        let ts = std::mem::take(&mut self.ts);
        self.report(ts, now, pid, seed)
    }

    /// Starts keeping each block's state (`block_error_percentiles`) over files of `sizes`.
    pub(super) fn track_blocks(&mut self, sizes: &[u64], block: u64) {
        self.blocks = Some(super::blocks::BlockStates::new(sizes, block));
    }

    fn report(&self, mut ts: ThreadStat, now: u64, pid: u32, seed: u64) -> WorkerResult {
        ts.block_states = self.blocks.as_ref().map(|b| b.counts());
        let elapsed_ms = self.elapsed_ms(now);
        finish_stats(&mut ts, elapsed_ms, &self.usage0);
        WorkerResult { ts, pid, start_epoch_ms: self.start_epoch_ms, elapsed_ms, seed, ..WorkerResult::default() }
    }
}

/// Whether the job is paced by a rate (`rate`, `rate_iops`, either spacing), so that its
/// I/Os have due times and an intended latency. `thinktime` alone does not pace: its pauses
/// are the job's own.
pub(super) fn paced(spec: &JobSpec) -> bool {
    spec.rate.iter().chain(spec.rate_iops.iter()).any(|&r| r > 0)
}

/// Fills in what is only known at the end (or at a snapshot): CPU use, runtimes, issued counts.
pub(super) fn finish_stats(ts: &mut ThreadStat, elapsed_ms: u64, usage0: &sys::Usage) {
    let usage = clock::thread_usage().since(usage0);
    ts.usr_us = usage.usr_us;
    ts.sys_us = usage.sys_us;
    ts.ctx = usage.ctx;
    ts.majf = usage.majf;
    ts.minf = usage.minf;
    ts.job_runtime_ms = elapsed_ms;
    for (d, ds) in ts.dirs.iter_mut().enumerate() {
        // A direction whose every I/O failed moved nothing and has no runtime in fio 3.33's
        // reports (its JSON says 0, and its normal output leaves the direction out).
        if ds.io_bytes > 0 {
            ds.runtime_ms = elapsed_ms.max(1);
        }
        ts.issued[d] = ds.total_ios;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_options::{argv, assemble, Ctx};

    fn spec(args: &[&str]) -> JobSpec {
        let mut a = vec!["--name=t", "--ioengine=null", "--size=1m"];
        a.extend_from_slice(args);
        assemble(&argv::parse(a).unwrap(), &[], &Ctx::default()).unwrap().jobs[0].spec.clone()
    }

    fn io(ddir: Ddir, len: u32) -> Io {
        Io { ddir, file: 0, offset: 0, len, ioprio: 0 }
    }

    /// `[samples, min, max]` of a latency statistic.
    fn lat(s: &fiox_stats::IoStat) -> [u64; 3] {
        [s.samples, s.min, s.max]
    }

    #[test]
    fn books_bytes_ios_and_the_three_latencies_per_direction() {
        let mut a = Accountant::new(&spec(&["--rw=randrw"]), 1, true);
        // Prepared at 1000, given to the engine at 1500, seen complete at 4000.
        a.complete(&io(Ddir::Read, 4096), 4096, Some(1000), 1500, 4000, None);
        a.complete(&io(Ddir::Write, 8192), 8192, Some(0), 100, 600, None);
        // No submission phase: no slat, and the total latency is the completion latency.
        a.complete(&io(Ddir::Write, 8192), 8192, None, 1000, 1200, None);
        let [r, w, t] = &a.ts.dirs;
        assert_eq!((r.io_bytes, r.total_ios, r.short_ios), (4096, 1, 0));
        assert_eq!((lat(&r.slat), lat(&r.clat), lat(&r.lat)), ([1, 500, 500], [1, 2500, 2500], [1, 3000, 3000]));
        assert_eq!((w.io_bytes, w.total_ios), (16384, 2));
        assert_eq!((lat(&w.slat), lat(&w.clat), lat(&w.lat)), ([1, 100, 100], [2, 200, 500], [2, 200, 600]));
        assert_eq!(w.clat_hist.as_ref().unwrap().total(), 2);
        assert_eq!((t.io_bytes, t.total_ios), (0, 0));
    }

    #[test]
    fn a_short_io_counts_the_bytes_it_moved_and_as_short() {
        let mut a = Accountant::new(&spec(&["--rw=read"]), 1, true);
        a.complete(&io(Ddir::Read, 4096), 1024, Some(0), 0, 10, None);
        a.complete(&io(Ddir::Read, 4096), 4096, Some(0), 0, 10, None);
        let r = &a.ts.dirs[0];
        assert_eq!((r.io_bytes, r.total_ios, r.short_ios, a.ts.short[0]), (5120, 2, 1, 1));
    }

    #[test]
    fn a_failed_io_counts_as_an_io_without_bytes_or_latency() {
        let mut a = Accountant::new(&spec(&["--rw=write"]), 1, true);
        a.failed(&io(Ddir::Write, 4096));
        let w = &a.ts.dirs[1];
        assert_eq!((w.io_bytes, w.total_ios, w.clat.samples), (0, 1, 0));
        // A failed sync is no direction's I/O.
        a.failed(&io(Ddir::Sync, 0));
        assert_eq!(a.ts.dirs.iter().map(|d| d.total_ios).sum::<u64>(), 1);
    }

    #[test]
    fn nothing_is_booked_while_ramping_and_measuring_starts_afresh() {
        let mut a = Accountant::new(&spec(&["--rw=read"]), 1, false);
        a.complete(&io(Ddir::Read, 4096), 4096, Some(0), 0, 10, None);
        a.failed(&io(Ddir::Read, 4096));
        a.sample(2_000_000_000, [4096; 3]);
        assert_eq!((a.ts.dirs[0].total_ios, a.ts.dirs[0].bw.samples), (0, 0));
        a.start_measuring(5_000_000_000);
        assert!(a.measuring);
        a.complete(&io(Ddir::Read, 4096), 4096, Some(5_000_000_000), 5_000_000_100, 5_000_000_900, None);
        assert_eq!((a.ts.dirs[0].total_ios, a.ts.dirs[0].io_bytes), (1, 4096));
        assert_eq!(a.elapsed_ms(7_500_000_000), 2500);
        assert_eq!(a.elapsed_ms(1), 0, "a reading before the start is no time, not a wrap");
    }

    #[test]
    fn syncs_are_counted_where_fio_counts_them() {
        let mut a = Accountant::new(&spec(&["--rw=write"]), 1, true);
        a.complete(&io(Ddir::Sync, 0), 0, None, 100, 350, None);
        a.complete(&io(Ddir::DataSync, 0), 0, None, 100, 200, None);
        a.complete(&io(Ddir::SyncRange, 0), 0, None, 100, 150, None);
        let ts = &a.ts;
        assert_eq!((ts.sync_ios, ts.issued[3]), (1, 1), "only the fsync shows as a sync");
        assert_eq!(lat(&ts.sync_lat), [3, 50, 250], "all three in the sync latency");
        assert_eq!((ts.dirs[0].short_ios, ts.short[0]), (1, 1), "fdatasync in the reads' short count");
        assert_eq!((ts.dirs[1].short_ios, ts.short[1]), (1, 1), "sync_file_range in the writes'");
        assert_eq!(ts.dirs.iter().map(|d| d.total_ios + d.io_bytes).sum::<u64>(), 0);
    }

    #[test]
    fn a_latency_the_job_does_not_keep_is_not_booked() {
        let mut a = Accountant::new(&spec(&["--rw=read", "--disable_clat=1", "--disable_slat=1"]), 1, true);
        a.complete(&io(Ddir::Read, 4096), 4096, Some(0), 100, 400, None);
        let r = &a.ts.dirs[0];
        assert_eq!((r.slat.samples, r.clat.samples, r.lat.samples), (0, 0, 1));
        assert!(r.clat_hist.is_none() && r.slat_hist.is_none() && r.lat_hist.is_some());
        assert_eq!(r.io_bytes, 4096, "bytes are counted all the same");
    }

    #[test]
    fn a_paced_job_books_the_intended_latency_from_when_each_io_was_due() {
        let s = spec(&["--rw=read", "--rate_iops=100"]);
        assert!(paced(&s));
        let mut a = Accountant::new(&s, 1, true);
        // Due at 1000, started late at 5000, done at 6000: 5000 ns intended, 1000 ns latency.
        a.complete(&io(Ddir::Read, 4096), 4096, Some(5000), 5000, 6000, Some(1000));
        // Started before it was due: its own latency.
        a.complete(&io(Ddir::Read, 4096), 4096, Some(9000), 9000, 9300, Some(10_000));
        let r = &a.ts.dirs[0];
        assert_eq!(lat(&r.intended), [2, 300, 5000]);
        assert_eq!(lat(&r.lat), [2, 300, 1000]);
        assert!(!paced(&spec(&["--rw=read", "--thinktime=10"])), "thinktime alone does not pace");
    }

    #[test]
    fn bandwidth_and_iops_are_sampled_once_a_window_for_the_jobs_directions() {
        let mut a = Accountant::new(&spec(&["--rw=read", "--bwavgtime=500", "--iopsavgtime=250"]), 1, true);
        for _ in 0..256 {
            a.complete(&io(Ddir::Read, 4096), 4096, Some(0), 0, 10, None);
        }
        a.sample(200_000_000, [4096; 3]);
        assert_eq!((a.ts.dirs[0].bw.samples, a.ts.dirs[0].iops.samples), (0, 0), "no window has passed");
        a.sample(500_000_000, [4096; 3]);
        let r = &a.ts.dirs[0];
        // 1 MiB in 500 ms: 2048 KiB/s; 256 I/Os in 500 ms: 512 IOPS.
        assert_eq!((r.bw.samples, r.bw.min, r.bw.max), (1, 2048, 2048));
        assert_eq!((r.iops.samples, r.iops.min), (1, 512));
        assert_eq!((a.ts.dirs[1].bw.samples, a.ts.dirs[1].iops.samples), (0, 0), "a read job has no write samples");
        // The next IOPS window (250 ms) passes before the next bandwidth window, with nothing done.
        a.sample(750_000_000, [4096; 3]);
        let r = &a.ts.dirs[0];
        assert_eq!((r.bw.samples, r.iops.samples, r.iops.min), (1, 2, 0));
    }

    #[test]
    fn the_result_carries_the_runtime_and_the_issued_counts() {
        let mut a = Accountant::new(&spec(&["--rw=randrw"]), 1, true);
        a.complete(&io(Ddir::Read, 4096), 4096, Some(0), 0, 10, None);
        a.complete(&io(Ddir::Read, 4096), 4096, Some(0), 0, 10, None);
        a.failed(&io(Ddir::Write, 4096));
        let r = a.result(3_000_000_000, 42, 7);
        assert_eq!((r.elapsed_ms, r.pid, r.seed, r.ts.job_runtime_ms), (3000, 42, 7, 3000));
        assert_eq!(r.ts.issued, [2, 1, 0, 0]);
        // The writes all failed: no runtime, as in fio 3.33.
        assert_eq!([r.ts.dirs[0].runtime_ms, r.ts.dirs[1].runtime_ms, r.ts.dirs[2].runtime_ms], [3000, 0, 0]);
        // A snapshot leaves the statistics in place; the final result takes them.
        assert_eq!(a.ts.dirs[0].total_ios, 2);
        let last = a.into_result(4_000_000_000, 42, 7);
        assert_eq!((last.elapsed_ms, last.ts.issued[0]), (4000, 2));
    }
}
