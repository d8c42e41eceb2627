//! Per-job totals (`ThreadStat`, fio's `thread_stat`) and per-group totals (`GroupStat`, fio's
//! `group_run_stats`).

use serde::{Deserialize, Serialize};

use crate::hist::LatHist;
use crate::io_stat::{IoStat, SampleStat};

/// Direction names as fio's JSON uses them, indexed by direction; index [`DDIR_MIXED`] is the
/// merged direction of `unified_rw_reporting`.
pub const DDIR_NAMES: [&str; 4] = ["read", "write", "trim", "mixed"];
/// Index of the merged direction in [`DDIR_NAMES`], [`ThreadStat::dir`] and [`GroupStat`].
pub const DDIR_MIXED: usize = 3;

/// `unified_rw_reporting`: whether reads, writes and trims are reported apart, merged into one
/// `mixed` direction, or both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unified {
    #[default]
    None,
    Mixed,
    Both,
}

/// Upper bounds of the `lat (nsec)` and `lat (usec)` buckets of the normal output.
pub const LAT_NS_BUCKETS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
/// Upper bounds of the `lat (msec)` buckets; one more bucket holds everything from 2000 ms on.
pub const LAT_MS_BUCKETS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// One direction of one job.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DirStat {
    pub io_bytes: u64,
    pub total_ios: u64,
    pub short_ios: u64,
    pub drop_ios: u64,
    pub runtime_ms: u64,
    pub slat: IoStat,
    pub clat: IoStat,
    pub lat: IoStat,
    /// Histograms exist only for directions the job does.
    pub slat_hist: Option<LatHist>,
    pub clat_hist: Option<LatHist>,
    pub lat_hist: Option<LatHist>,
    /// fiox: the intended latency of a paced job's I/Os (`rate`, `rate_iops`): from when each
    /// I/O was due by the job's schedule to its completion, so a stall also counts for the
    /// I/Os it held back (no coordinated omission). The histogram exists only for paced jobs.
    pub intended: IoStat,
    pub intended_hist: Option<LatHist>,
    /// fiox: the time to the answer's first byte of `fiox s3 bench`'s requests, carried in the
    /// report model so that a multi-host bench merges it bucket by bucket as it merges the
    /// whole request's latency. Jobs leave it empty (no histogram).
    #[serde(default)]
    pub ttfb: IoStat,
    #[serde(default)]
    pub ttfb_hist: Option<LatHist>,
    /// Bandwidth samples in KiB/s.
    pub bw: SampleStat,
    pub iops: SampleStat,
    /// Latency by I/O priority, for jobs that send some I/Os with another priority
    /// (`cmdprio_percentage`, `cmdprio_bssplit`); empty otherwise. In fio's order: no priority
    /// first, then the priorities in the order the options name them.
    pub prios: Vec<PrioStat>,
}

/// The latency (completion, or total with `lat_percentiles`) of the I/Os of one priority.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PrioStat {
    /// `class << 13 | level`, 0 for I/Os sent without a priority.
    pub ioprio: u16,
    pub lat: IoStat,
    pub hist: LatHist,
}

impl PrioStat {
    pub fn class(&self) -> u16 {
        self.ioprio >> 13
    }

    pub fn level(&self) -> u16 {
        self.ioprio & 0x1fff
    }
}

impl DirStat {
    /// Prepares the per-priority latency of `ioprios`, so the hot path finds its entry without
    /// allocating.
    pub fn track_prios(&mut self, ioprios: &[u16]) {
        for &p in ioprios {
            if !self.prios.iter().any(|e| e.ioprio == p) {
                self.prios.push(PrioStat { ioprio: p, ..PrioStat::default() });
            }
        }
    }

    /// Records one paced I/O's intended latency: `done - min(due, start)` in ns, where `due` is
    /// its place in the job's schedule and `start` when it really started (an I/O that went
    /// before it was due has its own latency as intended latency). No-op for a direction
    /// without the intended histogram (an unpaced job). Returns the value recorded.
    #[inline]
    pub fn add_intended(&mut self, due: u64, start: u64, done: u64) -> Option<u64> {
        let h = self.intended_hist.as_mut()?;
        let ns = done.saturating_sub(due.min(start));
        h.add(ns);
        self.intended.add(ns);
        Some(ns)
    }

    /// Records one I/O's latency under its priority (no-op for untracked priorities).
    #[inline]
    pub fn add_prio(&mut self, ioprio: u16, ns: u64) {
        if let Some(e) = self.prios.iter_mut().find(|e| e.ioprio == ioprio) {
            e.lat.add(ns);
            e.hist.add(ns);
        }
    }
    /// A direction the job does: histograms allocated up front, so the hot path never allocates.
    pub fn active() -> DirStat {
        DirStat {
            slat_hist: Some(LatHist::default()),
            clat_hist: Some(LatHist::default()),
            lat_hist: Some(LatHist::default()),
            ..DirStat::default()
        }
    }

    fn merge(&mut self, o: &DirStat) {
        self.io_bytes += o.io_bytes;
        self.total_ios += o.total_ios;
        self.short_ios += o.short_ios;
        self.drop_ios += o.drop_ios;
        self.runtime_ms = self.runtime_ms.max(o.runtime_ms);
        self.slat.merge(&o.slat);
        self.clat.merge(&o.clat);
        self.lat.merge(&o.lat);
        merge_hist(&mut self.slat_hist, &o.slat_hist);
        merge_hist(&mut self.clat_hist, &o.clat_hist);
        merge_hist(&mut self.lat_hist, &o.lat_hist);
        self.intended.merge(&o.intended);
        merge_hist(&mut self.intended_hist, &o.intended_hist);
        self.ttfb.merge(&o.ttfb);
        merge_hist(&mut self.ttfb_hist, &o.ttfb_hist);
        self.bw.merge_sum(&o.bw);
        self.iops.merge_sum(&o.iops);
        for p in &o.prios {
            match self.prios.iter_mut().find(|e| e.ioprio == p.ioprio) {
                Some(e) => {
                    e.lat.merge(&p.lat);
                    e.hist.merge(&p.hist);
                }
                None => self.prios.push(p.clone()),
            }
        }
    }
}

fn merge_hist(a: &mut Option<LatHist>, b: &Option<LatHist>) {
    if let Some(b) = b {
        a.get_or_insert_with(LatHist::default).merge(b);
    }
}

/// Everything measured for one job (or, after merging, one group under `group_reporting`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ThreadStat {
    pub dirs: [DirStat; 3],
    /// `block_error_percentiles`: blocks unwritten, trimmed, written, failed to trim, failed to
    /// write (fio's "block lifetime" states).
    pub block_states: Option<[u64; 5]>,
    pub sync_ios: u64,
    pub sync_lat: IoStat,
    /// Created at the first fsync, so jobs that never sync carry none.
    pub sync_hist: Option<LatHist>,
    /// Number of jobs merged into this one.
    pub jobs: u32,
    pub usr_us: u64,
    pub sys_us: u64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
    /// I/Os by queue depth at submission: 1, 2, 4, 8, 16, 32, >=64.
    pub depth_map: [u64; 7],
    /// Submission calls by batch size: 0, 4, 8, 16, 32, 64, >=64.
    pub submit_map: [u64; 7],
    /// Completion calls by batch size, same buckets.
    pub complete_map: [u64; 7],
    /// Completion latency counts in the normal output's buckets.
    pub lat_ns: [u64; 10],
    pub lat_us: [u64; 10],
    pub lat_ms: [u64; 12],
    /// I/Os issued per direction (read, write, trim, sync).
    pub issued: [u64; 4],
    pub short: [u64; 4],
    pub dropped: [u64; 4],
    /// Wall time of the job in ms (what fio's JSON calls `job_runtime`).
    pub job_runtime_ms: u64,
    /// First error (an errno), 0 if none; also when the job went on after it.
    pub error: i32,
    /// I/Os that failed (fio's `total_err`).
    pub total_err: u64,
    /// The errno of the first failed I/O (fio's `first_error`).
    pub first_error: i32,
    /// Zones whose write pointer the job reset (`zonemode=zbd`; fio's `nr_zone_resets`).
    #[serde(default)]
    pub zone_resets: u64,
    /// The merged direction, present only after [`ThreadStat::unify`] with [`Unified::Both`].
    pub mixed: Option<Box<DirStat>>,
}

impl ThreadStat {
    /// Records a completion latency in the normal output's buckets.
    #[inline]
    pub fn mark_clat_bucket(&mut self, ns: u64) {
        if ns < 1000 {
            self.lat_ns[bucket(ns)] += 1;
        } else if ns < 1_000_000 {
            self.lat_us[bucket(ns / 1000)] += 1;
        } else {
            let ms = ns / 1_000_000;
            let i = LAT_MS_BUCKETS.iter().position(|&b| ms < b).unwrap_or(11);
            self.lat_ms[i] += 1;
        }
    }

    /// Records `n` I/Os submitted while `depth` were in flight (after submitting). Each bucket
    /// covers depths from its value up to the next one's (fio's HOWTO: "16= covers depths from
    /// 16 to 31").
    #[inline]
    pub fn mark_depth(&mut self, depth: u32, n: u64) {
        let i = match depth {
            0..=1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        };
        self.depth_map[i] += n;
    }

    /// Index of a submit or complete batch size in [`ThreadStat::submit_map`].
    #[inline]
    pub fn batch_bucket(n: u32) -> usize {
        match n {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        }
    }

    /// One direction by index, [`DDIR_MIXED`] included (empty unless unified `Both`).
    pub fn dir(&self, ddir: usize) -> &DirStat {
        static EMPTY: DirStat = DirStat {
            io_bytes: 0,
            total_ios: 0,
            short_ios: 0,
            drop_ios: 0,
            runtime_ms: 0,
            slat: IoStat::ZERO,
            clat: IoStat::ZERO,
            lat: IoStat::ZERO,
            slat_hist: None,
            clat_hist: None,
            lat_hist: None,
            intended: IoStat::ZERO,
            intended_hist: None,
            ttfb: IoStat::ZERO,
            ttfb_hist: None,
            bw: SampleStat::ZERO,
            iops: SampleStat::ZERO,
            prios: Vec::new(),
        };
        match ddir {
            0..=2 => &self.dirs[ddir],
            _ => self.mixed.as_deref().unwrap_or(&EMPTY),
        }
    }

    /// Applies `unified_rw_reporting` to a finished job's figures. `Mixed` folds every
    /// direction into the first (the report then names it `mixed`), issued counts included, as
    /// fio does; `Both` keeps the directions and adds the merged one. Latencies merge as
    /// samples of one population; bandwidth and IOPS samples add up (fio's "pure sum"), so the
    /// mixed bandwidth mean is the sum of the directions' means.
    pub fn unify(&mut self, mode: Unified) {
        if mode == Unified::None {
            return;
        }
        let mut mixed = DirStat::default();
        for d in &self.dirs {
            mixed.merge(d);
        }
        if mode == Unified::Both {
            self.mixed = Some(Box::new(mixed));
            return;
        }
        self.dirs = [mixed, DirStat::default(), DirStat::default()];
        for counts in [&mut self.issued, &mut self.short, &mut self.dropped] {
            counts[0] = counts[..3].iter().sum();
            counts[1] = 0;
            counts[2] = 0;
        }
    }

    /// Adds another job's figures, as group reporting does.
    pub fn merge(&mut self, o: &ThreadStat) {
        for (a, b) in self.dirs.iter_mut().zip(o.dirs.iter()) {
            a.merge(b);
        }
        if let Some(b) = &o.mixed {
            self.mixed.get_or_insert_with(Default::default).merge(b);
        }
        if let Some(b) = o.block_states {
            let a = self.block_states.get_or_insert([0; 5]);
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
        self.sync_ios += o.sync_ios;
        self.sync_lat.merge(&o.sync_lat);
        merge_hist(&mut self.sync_hist, &o.sync_hist);
        self.jobs += o.jobs;
        self.usr_us += o.usr_us;
        self.sys_us += o.sys_us;
        self.ctx += o.ctx;
        self.majf += o.majf;
        self.minf += o.minf;
        add(&mut self.depth_map, &o.depth_map);
        add(&mut self.submit_map, &o.submit_map);
        add(&mut self.complete_map, &o.complete_map);
        add(&mut self.lat_ns, &o.lat_ns);
        add(&mut self.lat_us, &o.lat_us);
        add(&mut self.lat_ms, &o.lat_ms);
        add(&mut self.issued, &o.issued);
        add(&mut self.short, &o.short);
        add(&mut self.dropped, &o.dropped);
        // fio adds the jobs' runtimes, so merged CPU percentages are averages over the jobs.
        self.job_runtime_ms += o.job_runtime_ms;
        if self.error == 0 {
            self.error = o.error;
        }
        self.total_err += o.total_err;
        self.zone_resets += o.zone_resets;
        if self.first_error == 0 {
            self.first_error = o.first_error;
        }
    }

    /// What happened since `earlier` (a snapshot of the same job): counts, sums and histograms
    /// subtract; latency min/max come from the interval's histogram; bandwidth and IOPS samples
    /// are not kept (an interval is usually about one sample long).
    pub fn since(&self, earlier: &ThreadStat, interval_ms: u64) -> ThreadStat {
        let sub = |a: &[u64], b: &[u64], out: &mut [u64]| {
            for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
                *o = x.saturating_sub(*y);
            }
        };
        let mut out = ThreadStat {
            jobs: self.jobs,
            error: self.error,
            total_err: self.total_err.saturating_sub(earlier.total_err),
            zone_resets: self.zone_resets.saturating_sub(earlier.zone_resets),
            first_error: self.first_error,
            job_runtime_ms: interval_ms,
            ..ThreadStat::default()
        };
        for (d, (now, then)) in self.dirs.iter().zip(earlier.dirs.iter()).enumerate() {
            let hist = |a: &Option<LatHist>, b: &Option<LatHist>| match (a, b) {
                (Some(a), Some(b)) => Some(a.since(b)),
                (Some(a), None) => Some(a.clone()),
                _ => None,
            };
            let (slat_h, clat_h, lat_h, intended_h, ttfb_h) = (
                hist(&now.slat_hist, &then.slat_hist),
                hist(&now.clat_hist, &then.clat_hist),
                hist(&now.lat_hist, &then.lat_hist),
                hist(&now.intended_hist, &then.intended_hist),
                hist(&now.ttfb_hist, &then.ttfb_hist),
            );
            let total_ios = now.total_ios.saturating_sub(then.total_ios);
            out.dirs[d] = DirStat {
                io_bytes: now.io_bytes.saturating_sub(then.io_bytes),
                total_ios,
                short_ios: now.short_ios.saturating_sub(then.short_ios),
                drop_ios: now.drop_ios.saturating_sub(then.drop_ios),
                runtime_ms: if total_ios > 0 { interval_ms.max(1) } else { 0 },
                slat: now.slat.since(&then.slat, slat_h.as_ref()),
                clat: now.clat.since(&then.clat, clat_h.as_ref()),
                lat: now.lat.since(&then.lat, lat_h.as_ref()),
                intended: now.intended.since(&then.intended, intended_h.as_ref()),
                ttfb: now.ttfb.since(&then.ttfb, ttfb_h.as_ref()),
                slat_hist: slat_h,
                clat_hist: clat_h,
                lat_hist: lat_h,
                intended_hist: intended_h,
                ttfb_hist: ttfb_h,
                ..DirStat::default()
            };
        }
        out.sync_ios = self.sync_ios.saturating_sub(earlier.sync_ios);
        let sync_h = match (&self.sync_hist, &earlier.sync_hist) {
            (Some(a), Some(b)) => Some(a.since(b)),
            (a, _) => a.clone(),
        };
        out.sync_lat = self.sync_lat.since(&earlier.sync_lat, sync_h.as_ref());
        out.sync_hist = sync_h;
        out.usr_us = self.usr_us.saturating_sub(earlier.usr_us);
        out.sys_us = self.sys_us.saturating_sub(earlier.sys_us);
        out.ctx = self.ctx.saturating_sub(earlier.ctx);
        out.majf = self.majf.saturating_sub(earlier.majf);
        out.minf = self.minf.saturating_sub(earlier.minf);
        sub(&self.depth_map, &earlier.depth_map, &mut out.depth_map);
        sub(&self.submit_map, &earlier.submit_map, &mut out.submit_map);
        sub(&self.complete_map, &earlier.complete_map, &mut out.complete_map);
        sub(&self.lat_ns, &earlier.lat_ns, &mut out.lat_ns);
        sub(&self.lat_us, &earlier.lat_us, &mut out.lat_us);
        sub(&self.lat_ms, &earlier.lat_ms, &mut out.lat_ms);
        sub(&self.issued, &earlier.issued, &mut out.issued);
        sub(&self.short, &earlier.short, &mut out.short);
        sub(&self.dropped, &earlier.dropped, &mut out.dropped);
        out
    }

    pub fn total_ios(&self) -> u64 {
        self.dirs.iter().map(|d| d.total_ios).sum()
    }
}

fn bucket(v: u64) -> usize {
    LAT_NS_BUCKETS.iter().position(|&b| v < b).unwrap_or(9)
}

fn add<const N: usize>(a: &mut [u64; N], b: &[u64; N]) {
    for (x, y) in a.iter_mut().zip(b.iter()) {
        *x += y;
    }
}

/// Totals of one reporting group per direction (the "Run status group" lines).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupStat {
    pub groupid: u32,
    /// Which directions the group's lines show (its first job's `unified_rw_reporting`).
    pub unified: Unified,
    /// Per direction, [`DDIR_MIXED`] included.
    pub io_bytes: [u64; 4],
    /// Aggregate bandwidth in bytes/s: the group's bytes over its longest job runtime.
    pub agg_bw: [u64; 4],
    /// Slowest and fastest job's bandwidth in bytes/s.
    pub min_bw: [u64; 4],
    pub max_bw: [u64; 4],
    /// Shortest and longest job runtime in ms.
    pub min_run: [u64; 4],
    pub max_run: [u64; 4],
}

impl GroupStat {
    /// Totals over the jobs of one group (each job's own, unmerged stats).
    /// Jobs that went through [`ThreadStat::unify`] contribute their merged direction too.
    pub fn from_jobs<'a>(groupid: u32, jobs: impl Iterator<Item = &'a ThreadStat>) -> GroupStat {
        let mut g = GroupStat { groupid, min_bw: [u64::MAX; 4], min_run: [u64::MAX; 4], ..GroupStat::default() };
        for ts in jobs {
            for d in 0..4 {
                let ds = ts.dir(d);
                if ds.runtime_ms == 0 {
                    continue;
                }
                let bw = ds.io_bytes * 1000 / ds.runtime_ms;
                g.io_bytes[d] += ds.io_bytes;
                g.min_bw[d] = g.min_bw[d].min(bw);
                g.max_bw[d] = g.max_bw[d].max(bw);
                g.min_run[d] = g.min_run[d].min(ds.runtime_ms);
                g.max_run[d] = g.max_run[d].max(ds.runtime_ms);
            }
        }
        for d in 0..4 {
            if let Some(bw) = (g.io_bytes[d] * 1000).checked_div(g.max_run[d]) {
                g.agg_bw[d] = bw;
            } else {
                g.min_bw[d] = 0;
                g.min_run[d] = 0;
            }
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_buckets_use_upper_bounds() {
        let mut ts = ThreadStat::default();
        ts.mark_clat_bucket(1); // < 2 ns
        ts.mark_clat_bucket(150_000); // 150 us: the "250" bucket
        ts.mark_clat_bucket(1_500_000); // 1.5 ms: the "2" ms bucket
        ts.mark_clat_bucket(5_000_000_000); // 5 s: ">=2000"
        assert_eq!(ts.lat_ns[0], 1);
        assert_eq!(ts.lat_us[6], 1);
        assert_eq!(ts.lat_ms[0], 1);
        assert_eq!(ts.lat_ms[11], 1);
    }

    /// A paced job's schedule over a stall, simulated: 200 I/Os a second, each served in
    /// 100 µs, one at a time, the device stopped for 1 s from the 500th I/O's due time; the
    /// job issues what fell due at once afterwards. The completion latency sees one slow I/O
    /// (p99 stays at the service time); the intended latency sees every I/O the stall held
    /// back, so its p99 is most of the stall and its maximum the stall itself, within the
    /// histogram's resolution (1/128). An unpaced direction records nothing.
    #[test]
    fn intended_latency_shows_a_stall_that_completion_latency_hides() {
        let (gap, service, stall_at, stall) = (5_000_000u64, 100_000u64, 2_500_000_000u64, 1_000_000_000u64);
        let mut d = DirStat::active();
        d.intended_hist = Some(LatHist::default());
        let (mut free_at, mut waited) = (0u64, 0u64);
        for k in 0..2000u64 {
            let due = k * gap;
            let start = due.max(free_at);
            // The I/O in service when the stall begins (or issued during it) ends after it.
            let mut done = start + service;
            if done > stall_at && start < stall_at + stall {
                done = done.max(stall_at + stall + service);
            }
            free_at = done;
            d.clat.add(done - start);
            d.clat_hist.as_mut().unwrap().add(done - start);
            assert_eq!(d.add_intended(due, start, done), Some(done - due.min(start)));
            waited += u64::from(done - due > 2 * service);
        }
        let p99 = |h: &LatHist| h.percentiles(&[99.0])[0].1;
        assert!(p99(d.clat_hist.as_ref().unwrap()) < 2 * service, "clat p99 hides the stall");
        assert!(d.clat.max >= stall, "one I/O waited through it");
        let h = d.intended_hist.as_ref().unwrap();
        assert!(p99(h) > stall / 2, "intended p99 {} shows the stall", p99(h));
        // Everything due during the stall waited (200 I/Os and the one in service), and the
        // few that fell due while the backlog drained (20 ms: 4 more).
        assert!((200..=206).contains(&waited), "{waited} I/Os waited");
        assert_eq!(d.intended.samples, 2000);
        let max = d.intended.max;
        assert!(max >= stall && max <= stall + 2 * service, "intended max {max}");
        let top = h.percentiles(&[100.0])[0].1;
        assert!(top.abs_diff(max) <= max / 128, "the histogram's top bucket {top} holds the max {max}");
        // An I/O that went before it was due (a burst allowed by `rate`) counts its own latency.
        assert_eq!(d.add_intended(10_000, 5_000, 8_000), Some(3_000));
        let mut unpaced = DirStat::active();
        assert_eq!(unpaced.add_intended(0, 10, 20), None);
        assert_eq!(unpaced.intended.samples, 0);
    }

    #[test]
    fn depth_buckets_are_lower_bounds() {
        let mut ts = ThreadStat::default();
        for d in [1, 3, 7, 8, 15, 16, 64] {
            ts.mark_depth(d, 1);
        }
        assert_eq!(ts.depth_map, [1, 1, 1, 2, 1, 0, 1]);
    }

    #[test]
    fn since_gives_the_interval() {
        let mut a = ThreadStat { jobs: 1, ..ThreadStat::default() };
        a.dirs[0] = DirStat::active();
        for v in [100, 200, 300] {
            a.dirs[0].clat.add(v);
            a.dirs[0].clat_hist.as_mut().unwrap().add(v);
        }
        a.dirs[0].total_ios = 3;
        a.dirs[0].io_bytes = 3 * 4096;
        let earlier = a.clone();
        for v in [1000, 3000] {
            a.dirs[0].clat.add(v);
            a.dirs[0].clat_hist.as_mut().unwrap().add(v);
        }
        a.dirs[0].total_ios = 5;
        a.dirs[0].io_bytes = 5 * 4096;
        let d = a.since(&earlier, 1000);
        assert_eq!((d.dirs[0].total_ios, d.dirs[0].io_bytes, d.dirs[0].runtime_ms), (2, 8192, 1000));
        assert_eq!(d.dirs[0].clat.samples, 2);
        assert_eq!(d.dirs[0].clat.mean(), 2000.0);
        // Min and max come from the interval's buckets (1/128 resolution).
        let (lo, hi) = (d.dirs[0].clat.min(), d.dirs[0].clat.max);
        assert!(
            (lo as f64 - 1000.0).abs() <= 1000.0 / 128.0 && (hi as f64 - 3000.0).abs() <= 3000.0 / 128.0,
            "{lo} {hi}"
        );
    }

    fn job(ios: [u64; 3], bw: [&[u64]; 3]) -> ThreadStat {
        let mut ts = ThreadStat { jobs: 1, ..ThreadStat::default() };
        for d in 0..3 {
            if ios[d] == 0 {
                continue;
            }
            ts.dirs[d] = DirStat::active();
            for i in 0..ios[d] {
                ts.dirs[d].clat.add(1000 * (d as u64 + 1) + i);
                ts.dirs[d].clat_hist.as_mut().unwrap().add(1000 * (d as u64 + 1) + i);
            }
            ts.dirs[d].total_ios = ios[d];
            ts.dirs[d].io_bytes = ios[d] * 4096;
            ts.dirs[d].runtime_ms = 1000 + d as u64;
            for &v in bw[d] {
                ts.dirs[d].bw.add(v);
            }
            ts.issued[d] = ios[d];
        }
        ts
    }

    #[test]
    fn unified_mixed_folds_every_direction_into_one() {
        let mut ts = job([3, 2, 0], [&[100, 120], &[50, 70], &[]]);
        ts.unify(Unified::Mixed);
        let m = &ts.dirs[0];
        assert_eq!((m.total_ios, m.io_bytes, m.runtime_ms), (5, 5 * 4096, 1001));
        assert_eq!((m.clat.samples, m.clat.min(), m.clat.max), (5, 1000, 2001));
        assert_eq!(m.clat_hist.as_ref().unwrap().total(), 5);
        // Bandwidth samples add up: 4 samples, mean 110 + 60, extremes summed.
        assert_eq!((m.bw.samples, m.bw.mean, m.bw.min, m.bw.max), (4, 170.0, 150, 190));
        assert_eq!(ts.issued, [5, 0, 0, 0]);
        assert_eq!(ts.dirs[1].total_ios, 0);
        assert!(ts.mixed.is_none());
    }

    #[test]
    fn unified_both_keeps_directions_and_adds_the_merged_one() {
        let mut a = job([3, 2, 0], [&[100], &[50], &[]]);
        a.unify(Unified::Both);
        assert_eq!((a.dirs[0].total_ios, a.dirs[1].total_ios, a.issued), (3, 2, [3, 2, 0, 0]));
        assert_eq!(a.dir(DDIR_MIXED).total_ios, 5);
        let mut b = job([1, 1, 0], [&[10], &[10], &[]]);
        b.unify(Unified::Both);
        let g = GroupStat::from_jobs(0, [&a, &b].into_iter());
        assert_eq!(g.io_bytes[DDIR_MIXED], 7 * 4096);
        a.merge(&b);
        assert_eq!(a.dir(DDIR_MIXED).total_ios, 7);
        assert_eq!(ThreadStat::default().dir(DDIR_MIXED).total_ios, 0);
    }

    #[test]
    fn group_totals() {
        let mut a = ThreadStat::default();
        a.dirs[0].io_bytes = 4000;
        a.dirs[0].runtime_ms = 1000;
        let mut b = a.clone();
        b.dirs[0].io_bytes = 2000;
        b.dirs[0].runtime_ms = 2000;
        let g = GroupStat::from_jobs(0, [&a, &b].into_iter());
        assert_eq!(g.io_bytes[0], 6000);
        assert_eq!(g.agg_bw[0], 3000);
        assert_eq!((g.min_bw[0], g.max_bw[0]), (1000, 4000));
        assert_eq!((g.min_run[0], g.max_run[0]), (1000, 2000));
        assert_eq!(g.agg_bw[1], 0);
    }
}
