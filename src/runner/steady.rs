//! fio's steady-state detection (`steadystate`, `steadystate_duration`,
//! `steadystate_ramp_time`): once a second the IOPS and bandwidth of a job (or, under
//! `group_reporting`, of its whole group) are sampled into a rolling window of `ss_dur`
//! samples; once the window is full, each new sample re-judges it, and a job whose criterion
//! holds is ended as if its runtime were over.
//!
//! [`Window`] is the pure part (samples in, verdict and report out), so its arithmetic is tested
//! without running anything; [`monitor`] is the thread that samples the workers' published
//! counters and asks them to end. What fio 3.33 does, as observed, is written down in
//! `docs/fio-observed/steadystate.md`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fiox_options::SteadyState;
use fiox_report::SteadyReport;

use super::worker::Progress;
use crate::plan::WorkerPlan;

/// The rolling window of one job or group.
#[derive(Debug, Clone)]
pub struct Window {
    cfg: SteadyState,
    /// Samples, oldest first; at most `cfg.dur_s` of them.
    iops: Vec<u64>,
    bw: Vec<u64>,
    attained: bool,
    criterion: f64,
    max_deviation: f64,
    slope: f64,
}

impl Window {
    pub fn new(cfg: SteadyState) -> Window {
        let n = Self::slots(&cfg);
        Window {
            cfg,
            iops: Vec::with_capacity(n),
            bw: Vec::with_capacity(n),
            attained: false,
            criterion: 0.0,
            max_deviation: 0.0,
            slope: 0.0,
        }
    }

    fn len(&self) -> usize {
        Self::slots(&self.cfg)
    }

    /// Samples in a full window: `ss_dur / ss_interval` (fio 3.42; the interval was 1 s).
    fn slots(cfg: &SteadyState) -> usize {
        (cfg.dur_s * 1_000_000 / cfg.interval_us.max(1_000_000)).max(1) as usize
    }

    /// Adds one second's IOPS and bytes per second; returns whether steady state is attained.
    /// The window is judged only once it is full, as in fio: until then the criterion stays 0.
    pub fn push(&mut self, iops: u64, bw: u64) -> bool {
        if self.iops.len() == self.len() {
            self.iops.remove(0);
            self.bw.remove(0);
        }
        self.iops.push(iops);
        self.bw.push(bw);
        if self.iops.len() < self.len() {
            return false;
        }
        let ys: Vec<f64> = if self.cfg.bw { &self.bw } else { &self.iops }.iter().map(|&y| y as f64).collect();
        let n = ys.len() as f64;
        let mean = ys.iter().sum::<f64>() / n;
        // As a share of the mean; samples are never negative, so a zero mean means every
        // sample is 0 and so is the figure.
        let scaled = |v: f64| {
            if !self.cfg.pct {
                v
            } else if mean > 0.0 {
                v / mean * 100.0
            } else {
                0.0
            }
        };
        if self.cfg.slope {
            // Least squares over x = 0, 1, ..., n-1 (one sample a second).
            let xm = (n - 1.0) / 2.0;
            let sxx: f64 = (0..ys.len()).map(|x| (x as f64 - xm).powi(2)).sum();
            let sxy: f64 = ys.iter().enumerate().map(|(x, y)| (x as f64 - xm) * (y - mean)).sum();
            self.slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
            self.max_deviation = 0.0;
            // fio keeps the slope's sign in the criterion it reports, but judges its size.
            self.criterion = scaled(self.slope);
            self.attained = self.criterion.abs() < self.cfg.limit;
        } else {
            self.max_deviation = ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
            self.slope = 0.0;
            self.criterion = scaled(self.max_deviation);
            self.attained = self.criterion <= self.cfg.limit;
        }
        self.attained
    }

    /// The window as fio reports it: samples oldest first, slots not filled yet as zeros at the
    /// end, and means over all `ss_dur` slots (so a window that never filled shows a lower
    /// mean, as in fio).
    pub fn report(&self) -> SteadyReport {
        let n = self.len();
        let pad = |v: &[u64]| {
            let mut v = v.to_vec();
            v.resize(n, 0);
            v
        };
        let (iops, bw) = (pad(&self.iops), pad(&self.bw));
        let mean = |v: &[u64]| v.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        SteadyReport {
            name: self.cfg.name().to_string(),
            limit: self.cfg.limit,
            pct: self.cfg.pct,
            duration_s: self.cfg.dur_s,
            attained: self.attained,
            criterion: self.criterion,
            max_deviation: self.max_deviation,
            slope: self.slope,
            bw_mean: mean(&bw),
            iops_mean: mean(&iops),
            iops,
            bw,
        }
    }
}

/// The workers judged together: one job clone, or every clone of a group under
/// `group_reporting` (fio sums the group's samples).
struct Unit {
    /// Indexes into the phase's workers; the report goes to the last, as fio keeps it with the
    /// group's last job.
    members: Vec<usize>,
    window: Window,
    ramp: Duration,
    /// Time between samples (`ss_interval`).
    interval: Duration,
    /// Still within `ss_ramp` (when set).
    ramping: bool,
    /// When the next sample (or the end of `ss_ramp`) is due; `None` until every member has
    /// started measuring.
    next: Option<Instant>,
    /// Counters at the previous sample: I/Os, bytes, when.
    prev: (u64, u64, Instant),
    over: bool,
}

/// Samples the phase's workers that asked for steady-state detection once a second until the
/// phase is over (`done`), ends each unit whose criterion holds, and hands back each unit's
/// report with the index (within the phase) of the worker that carries it.
pub fn monitor(workers: &[WorkerPlan], progress: &[Arc<Progress>], done: &AtomicBool) -> Vec<(usize, SteadyReport)> {
    let mut units: Vec<Unit> = Vec::new();
    for (k, w) in workers.iter().enumerate() {
        let Some(cfg) = w.spec.steadystate else { continue };
        if w.spec.group_reporting {
            if let Some(u) = units.iter_mut().find(|u| workers[u.members[0]].groupid == w.groupid) {
                u.members.push(k);
                continue;
            }
        }
        units.push(Unit {
            members: vec![k],
            window: Window::new(cfg),
            ramp: Duration::from_micros(cfg.ramp_us),
            interval: Duration::from_micros(cfg.interval_us.max(1_000_000)),
            ramping: cfg.ramp_us > 0,
            next: None,
            prev: (0, 0, Instant::now()),
            over: false,
        });
    }
    if units.is_empty() {
        return Vec::new();
    }
    let totals = |members: &[usize]| -> (u64, u64) {
        let mut t = (0, 0);
        for &k in members {
            for d in 0..3 {
                t.0 += progress[k].ios[d].load(Ordering::Relaxed);
                t.1 += progress[k].bytes[d].load(Ordering::Relaxed);
            }
        }
        t
    };
    while !done.load(Ordering::Relaxed) && units.iter().any(|u| !u.over) {
        std::thread::sleep(Duration::from_millis(5));
        let now = Instant::now();
        for u in units.iter_mut().filter(|u| !u.over) {
            // A member that finished ends the unit's sampling: a part-second after it would
            // not be a full sample.
            if u.members.iter().any(|&k| progress[k].done.load(Ordering::Relaxed)) {
                u.over = true;
                continue;
            }
            if u.next.is_none() {
                // Samples count from the start of measurement (after ramp_time), when the
                // published counters start from zero; ss_ramp delays the first.
                if u.members.iter().all(|&k| progress[k].measuring.load(Ordering::Relaxed)) {
                    u.prev = (0, 0, now);
                    u.next = Some(now + if u.ramping { u.ramp } else { u.interval });
                }
                continue;
            }
            let Some(next) = u.next.filter(|&t| now >= t) else { continue };
            let (ios, bytes) = totals(&u.members);
            u.next = Some(next + u.interval);
            if u.ramping {
                // The end of ss_ramp: what came before it is not sampled.
                u.prev = (ios, bytes, now);
                u.ramping = false;
                continue;
            }
            let secs = now.duration_since(u.prev.2).as_secs_f64().max(1e-3);
            let iops = (ios.saturating_sub(u.prev.0) as f64 / secs) as u64;
            let bw = (bytes.saturating_sub(u.prev.1) as f64 / secs) as u64;
            u.prev = (ios, bytes, now);
            if u.window.push(iops, bw) {
                for &k in &u.members {
                    progress[k].end.store(true, Ordering::Relaxed);
                }
                u.over = true;
            }
        }
    }
    units.iter().map(|u| (*u.members.last().expect("a unit has members"), u.window.report())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(text: (bool, bool, f64, bool), dur_s: u64) -> SteadyState {
        let (bw, slope, limit, pct) = text;
        SteadyState { bw, slope, limit, pct, dur_s, ramp_us: 0, interval_us: 1_000_000 }
    }

    #[test]
    fn deviation_is_judged_once_the_window_is_full() {
        // fio 3.33's figures (docs/fio-observed/steadystate.md): ss=iops:5%, ss_dur=5.
        let mut w = Window::new(cfg((false, false, 5.0, true), 5));
        let iops = [8112798, 7899967, 8236395, 8237393, 7735891];
        for (i, &v) in iops.iter().enumerate() {
            let attained = w.push(v, v * 4096);
            assert_eq!(attained, i == 4, "sample {i}");
        }
        let r = w.report();
        assert!((r.max_deviation - 308597.8).abs() < 1e-6, "{}", r.max_deviation);
        assert!((r.criterion - 3.836139).abs() < 1e-6, "{}", r.criterion);
        assert_eq!((r.iops_mean as u64, r.slope), (8044488, 0.0));
        assert_eq!(r.iops, iops);
    }

    #[test]
    fn slope_keeps_its_sign_and_is_judged_by_its_size() {
        // fio 3.33: ss=iops_slope:0.3%, ss_dur=4 gave slope 352837.1, criterion 4.608407%.
        let mut w = Window::new(cfg((false, true, 0.3, true), 4));
        for v in [6688796, 8164697, 7778308, 7993716] {
            w.push(v, 0);
        }
        let r = w.report();
        assert!((r.slope - 352837.1).abs() < 1e-6 && (r.criterion - 4.608407).abs() < 1e-6, "{r:?}");
        assert!(!r.attained);
        // A falling bandwidth: fio reported slope -202315339 for bw_slope:1000.
        let mut w = Window::new(cfg((true, true, 1000.0, false), 3));
        for v in [358010506890, 354294569769, 357605876212] {
            w.push(0, v);
        }
        assert_eq!((w.report().slope, w.report().criterion, w.report().attained), (-202315339.0, -202315339.0, false));
        let mut w = Window::new(cfg((true, true, 1.0, true), 3));
        for v in [1000, 999, 998] {
            w.push(0, v);
        }
        assert!(w.report().attained && w.report().criterion < 0.0);
    }

    #[test]
    fn the_window_rolls_and_an_unfilled_window_pads_with_zeros() {
        let mut w = Window::new(cfg((false, false, 1.0, false), 3));
        assert!(!w.push(100, 1));
        let r = w.report();
        assert_eq!((r.iops, r.iops_mean, r.criterion), (vec![100, 0, 0], 100.0 / 3.0, 0.0));
        for v in [50, 100, 100, 100] {
            w.push(v, 1);
        }
        assert_eq!(w.report().iops, [100, 100, 100]);
        assert!(w.report().attained);
    }
}
