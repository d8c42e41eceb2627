//! fio's latency-target mode (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`) and `max_latency`, as a part of the worker loop.
//!
//! The mode caps how many I/Os the job keeps in flight. Each window (`latency_window`, closed at
//! the first completion after it has run its length) is judged: met when at least
//! `latency_percentile` percent of the I/Os completed in it took no longer than the target.
//! The depth to try next comes from the shared [`DepthSearch`]. As fio 3.33 does (observed, see
//! `docs/fio-observed/steadystate.md`): the search starts at depth 1; with `latency_run=0`,
//! once it has settled, the statistics start over and the job ends after one more window at
//! the depth found; a miss at depth 1 fails the job with ETIMEDOUT ("max latency exceeded").
//! With percentile 100 one slow I/O already decides the window, so it is judged at once.

use fiox_engine::{Ddir, Io};
use fiox_options::LatencyTarget;

use crate::runner::depth_search::{DepthSearch, Probe};

/// What a judged window asks of the worker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Verdict {
    /// Go on (possibly at a new depth).
    Continue,
    /// The depth is found: start the statistics over and run one more window.
    Restart,
    /// The last window is over: the job ends.
    End,
    /// Not even depth 1 meets the target: fail the job, naming this I/O and its latency.
    Fail(Io, u64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Searching,
    /// `latency_run`: settled, still checked every window.
    Holding,
    /// `latency_run=0`: settled, measuring one last window.
    Final,
}

pub(super) struct LatencyMode {
    target_ns: u64,
    window_ns: u64,
    percentile: f64,
    run: bool,
    search: DepthSearch,
    /// The depth being tried (the most I/Os the job keeps in flight).
    pub(super) depth: u32,
    state: State,
    window_start: u64,
    ios: u64,
    slow: u64,
    /// The last I/O of the window over the target, and its latency.
    last_slow: Option<(Io, u64)>,
}

impl LatencyMode {
    pub(super) fn new(cfg: &LatencyTarget, max_depth: u32, now: u64) -> LatencyMode {
        let mut search = DepthSearch::latency_target(max_depth);
        let depth = search.next(None).unwrap_or(1);
        LatencyMode {
            target_ns: cfg.target_us.saturating_mul(1000),
            window_ns: cfg.window_us.saturating_mul(1000),
            percentile: cfg.percentile,
            run: cfg.run,
            search,
            depth,
            state: State::Searching,
            window_start: now,
            ios: 0,
            slow: 0,
            last_slow: None,
        }
    }

    /// Books one completed I/O of latency `lat` (ns), seen at clock reading `now`.
    #[inline]
    pub(super) fn completed(&mut self, io: &Io, lat: u64, now: u64) -> Verdict {
        if matches!(io.ddir, Ddir::Sync | Ddir::DataSync | Ddir::SyncRange) {
            return Verdict::Continue;
        }
        self.ios += 1;
        let slow = lat > self.target_ns;
        if slow {
            self.slow += 1;
            self.last_slow = Some((*io, lat));
        }
        let decided_miss = slow && self.percentile >= 100.0 && self.state != State::Final;
        if !decided_miss && now < self.window_start.saturating_add(self.window_ns) {
            return Verdict::Continue;
        }
        let met = !decided_miss && (self.ios - self.slow) as f64 * 100.0 >= self.percentile * self.ios as f64;
        let secs = (now.saturating_sub(self.window_start) as f64 / 1e9).max(1e-9);
        let probe = Probe { depth: self.depth, met, iops: self.ios as f64 / secs };
        let failed = self.last_slow;
        (self.window_start, self.ios, self.slow) = (now, 0, 0);
        match self.state {
            State::Final => Verdict::End,
            State::Holding if met => Verdict::Continue,
            State::Holding => {
                self.search = DepthSearch::latency_target_below(self.depth);
                self.state = State::Searching;
                self.step(None, failed)
            }
            State::Searching => self.step(Some(&probe), failed),
        }
    }

    fn step(&mut self, probe: Option<&Probe>, failed: Option<(Io, u64)>) -> Verdict {
        if let Some(d) = self.search.next(probe) {
            self.depth = d;
            return Verdict::Continue;
        }
        match self.search.deepest_met() {
            Some(d) => {
                self.depth = d;
                if self.run {
                    self.state = State::Holding;
                    Verdict::Continue
                } else {
                    self.state = State::Final;
                    Verdict::Restart
                }
            }
            None => {
                let (io, lat) =
                    failed.unwrap_or((Io { ddir: Ddir::Read, file: 0, offset: 0, len: 0, ioprio: 0 }, self.target_ns));
                Verdict::Fail(io, lat)
            }
        }
    }

    /// The target, for the failure message.
    pub(super) fn target_ns(&self) -> u64 {
        self.target_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io() -> Io {
        Io { ddir: Ddir::Read, file: 0, offset: 4096, len: 4096, ioprio: 0 }
    }

    fn cfg(percentile: f64, run: bool) -> LatencyTarget {
        LatencyTarget { target_us: 1000, window_us: 1000, percentile, run }
    }

    /// Runs one window at the current depth: `n` I/Os, `slow` of them over the target.
    fn window(m: &mut LatencyMode, t: &mut u64, n: u64, slow: u64) -> Verdict {
        let mut v = Verdict::Continue;
        for i in 0..n {
            *t += 1_000_000 / n;
            let lat = if i < slow { 2_000_000 } else { 10_000 };
            v = m.completed(&io(), lat, *t);
            if v != Verdict::Continue {
                break;
            }
        }
        v
    }

    #[test]
    fn the_depth_doubles_then_settles_and_one_more_window_ends_the_job() {
        let mut t = 0;
        let mut m = LatencyMode::new(&cfg(99.0, false), 8, t);
        let mut depths = vec![m.depth];
        // Depths 1, 2 and 4 meet 99% with 1 slow I/O in 100; 8 does not (5 in 100).
        for _ in 0..3 {
            window(&mut m, &mut t, 100, 1);
            depths.push(m.depth);
        }
        assert_eq!(depths, [1, 2, 4, 8]);
        assert_eq!(window(&mut m, &mut t, 100, 5), Verdict::Continue);
        assert_eq!(m.depth, 6);
        window(&mut m, &mut t, 100, 0);
        assert_eq!(m.depth, 7);
        assert_eq!(window(&mut m, &mut t, 100, 50), Verdict::Restart);
        assert_eq!(m.depth, 6);
        assert_eq!(window(&mut m, &mut t, 100, 50), Verdict::End, "the last window is not judged");
    }

    #[test]
    fn at_percentile_100_one_slow_io_at_depth_1_fails_at_once() {
        let mut t = 0;
        let mut m = LatencyMode::new(&cfg(100.0, false), 8, t);
        t += 1000;
        assert_eq!(m.completed(&io(), 10, t), Verdict::Continue);
        assert_eq!(m.completed(&io(), 5_000_000, t + 1), Verdict::Fail(io(), 5_000_000));
    }

    #[test]
    fn latency_run_holds_the_depth_and_searches_below_after_a_miss() {
        let mut t = 0;
        let mut m = LatencyMode::new(&cfg(90.0, true), 2, t);
        window(&mut m, &mut t, 10, 0);
        assert_eq!(window(&mut m, &mut t, 10, 0), Verdict::Continue);
        assert_eq!((m.depth, m.state), (2, State::Holding));
        window(&mut m, &mut t, 10, 0);
        assert_eq!((m.depth, m.state), (2, State::Holding));
        window(&mut m, &mut t, 10, 5);
        assert_eq!((m.depth, m.state), (1, State::Searching));
    }
}
