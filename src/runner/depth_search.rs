//! The search for the deepest useful queue: walk the queue depth upwards (doubling from 1, or
//! through a given list) until a latency target is missed or throughput stops growing, then
//! bisect between the last depth that met the target and the first that missed it.
//!
//! It is a pure state machine: [`DepthSearch::next`] says which depth to try and is told what
//! the previous try measured. Keeping the measuring out means the search can be tested without
//! running anything, and drives both `fiox sweep --find-knee` (one child run per depth) and the
//! runner's `latency_target` mode (one latency window per depth, inside a running job). It
//! depends on nothing else in fiox.
//!
//! The two share the walk and the bisection but differ in two rules, on purpose. The knee
//! search pays a whole run for every depth, so it stops early when throughput stops growing
//! and bisects on a log scale for a few steps only. fio's latency target (observed on fio 3.33:
//! depths 1, 2, 4, ..., 32, then 24, 28, 26, 27 on a device that missed at 32) pays only a
//! window per depth and must report the same depth fio would: it ignores throughput, includes
//! the cap in the walk, and halves the interval until the two depths are adjacent.

/// Throughput must grow by at least this factor from one depth to the next to count as growth.
const GROWTH: f64 = 1.03;
/// After this many steps in a row without growth, deeper queues only add latency.
const FLAT_STEPS: u32 = 2;
/// Bisection steps after the walk, each one more run: four leave the boundary within one depth
/// when the walk missed at 32, within two when it missed at 64.
const BISECT_STEPS: u32 = 4;

/// What one try at a queue depth measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    pub depth: u32,
    /// Whether the latency target was met. A try that produced no result counts as a miss, so
    /// the search stays below it.
    pub met: bool,
    /// Throughput at this depth; only compared between tries that met the target.
    pub iops: f64,
}

/// Why a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Throughput stopped growing while the target was still met.
    Plateau,
    /// A depth missed the target (and, when the search bisects, the boundary was narrowed).
    Missed,
    /// Every depth of the walk met the target: the cap (or the list's last depth) was reached.
    Capped,
}

/// How the interval between the deepest depth that met the target and the first that missed
/// is narrowed.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Narrow {
    /// Not at all: the walk's depths are all that is tried.
    No,
    /// Geometric midpoints, at most [`BISECT_STEPS`] of them (the knee search).
    Geometric,
    /// Arithmetic midpoints, rounded down, until the depths are adjacent (fio's latency target).
    Halving,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Walk,
    /// Between `lo` (met the target) and `hi` (missed it), after `steps` bisection tries.
    Bisect {
        lo: u32,
        hi: u32,
        steps: u32,
    },
    Done(End),
}

/// One search, for one setting of everything but the queue depth.
#[derive(Debug, Clone)]
pub struct DepthSearch {
    walk: Vec<u32>,
    narrow: Narrow,
    /// Whether throughput that stops growing ends the walk.
    plateau: bool,
    /// Index into `walk` of the depth to try next.
    at: usize,
    /// The most IOPS among the depths that met the target.
    best_iops: f64,
    /// Depths in a row that met the target without growing throughput.
    flat: u32,
    deepest_met: Option<u32>,
    phase: Phase,
}

impl DepthSearch {
    /// Doubles the depth from 1 while it stays within `max`, then bisects.
    pub fn doubling(max: u32) -> DepthSearch {
        let walk = std::iter::successors(Some(1u32), |d| d.checked_mul(2).filter(|n| *n <= max)).collect();
        DepthSearch::new(walk, Narrow::Geometric, true)
    }

    /// Walks the given depths in order, without bisecting: a user's list names the depths
    /// they care about.
    pub fn over(depths: Vec<u32>) -> DepthSearch {
        DepthSearch::new(depths, Narrow::No, true)
    }

    /// fio's `latency_target` search: doubles from 1 up to `max` (which is tried even when it
    /// is not a power of two), then halves the interval between the deepest depth that met
    /// the target and the first that missed until they are adjacent. Throughput plays no part.
    pub fn latency_target(max: u32) -> DepthSearch {
        let max = max.max(1);
        let mut walk: Vec<u32> = std::iter::successors(Some(1u32), |d| d.checked_mul(2).filter(|n| *n < max)).collect();
        if walk.last() != Some(&max) {
            walk.push(max);
        }
        DepthSearch::new(walk, Narrow::Halving, false)
    }

    /// A new latency-target search below a depth that missed after an earlier search had
    /// settled on it (`latency_run`): nothing below it is known to meet the target any more.
    pub fn latency_target_below(missed: u32) -> DepthSearch {
        let mut s = DepthSearch::new(Vec::new(), Narrow::Halving, false);
        s.phase = Phase::Bisect { lo: 0, hi: missed.max(1), steps: 0 };
        s
    }

    fn new(walk: Vec<u32>, narrow: Narrow, plateau: bool) -> DepthSearch {
        DepthSearch { walk, narrow, plateau, at: 0, best_iops: 0.0, flat: 0, deepest_met: None, phase: Phase::Walk }
    }

    /// The depths the walk may try, in order, before any bisection.
    pub fn walk(&self) -> &[u32] {
        &self.walk
    }

    /// The depth to try next, given what the previous try measured (`None` on the first call);
    /// `None` once the search is over.
    pub fn next(&mut self, last: Option<&Probe>) -> Option<u32> {
        match self.phase {
            Phase::Done(_) => None,
            Phase::Walk => self.walk_step(last),
            Phase::Bisect { .. } => self.bisect_step(last),
        }
    }

    /// Why the search ended; `None` while it goes on.
    pub fn end(&self) -> Option<End> {
        match self.phase {
            Phase::Done(end) => Some(end),
            _ => None,
        }
    }

    /// The deepest depth tried that met the target.
    pub fn deepest_met(&self) -> Option<u32> {
        self.deepest_met
    }

    fn walk_step(&mut self, last: Option<&Probe>) -> Option<u32> {
        if let Some(p) = last {
            if !p.met {
                return match (self.narrow != Narrow::No, self.deepest_met) {
                    (true, Some(lo)) => {
                        self.phase = Phase::Bisect { lo, hi: p.depth, steps: 0 };
                        self.bisect_step(None)
                    }
                    _ => self.finish(End::Missed),
                };
            }
            self.deepest_met = Some(p.depth);
            let flat = self.best_iops > 0.0 && p.iops < self.best_iops * GROWTH;
            self.flat = if flat { self.flat + 1 } else { 0 };
            self.best_iops = self.best_iops.max(p.iops);
            if self.plateau && self.flat >= FLAT_STEPS {
                return self.finish(End::Plateau);
            }
        }
        match self.walk.get(self.at) {
            Some(&d) => {
                self.at += 1;
                Some(d)
            }
            None => self.finish(End::Capped),
        }
    }

    fn bisect_step(&mut self, last: Option<&Probe>) -> Option<u32> {
        let Phase::Bisect { mut lo, mut hi, mut steps } = self.phase else {
            return None;
        };
        if let Some(p) = last {
            if p.met {
                lo = p.depth;
                self.deepest_met = Some(p.depth);
            } else {
                hi = p.depth;
            }
            steps += 1;
        }
        let limited = self.narrow == Narrow::Geometric && steps >= BISECT_STEPS;
        if limited || hi.saturating_sub(lo) <= 1 {
            return self.finish(End::Missed);
        }
        let mid = match self.narrow {
            // The geometric mean, because the walk's steps are ratios: each try halves hi/lo.
            Narrow::Geometric => ((lo as f64 * hi as f64).sqrt().round() as u32).clamp(lo + 1, hi - 1),
            _ => lo + (hi - lo) / 2,
        };
        self.phase = Phase::Bisect { lo, hi, steps };
        Some(mid)
    }

    fn finish(&mut self, end: End) -> Option<u32> {
        self.phase = Phase::Done(end);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search against a made-up device: the depths tried, in order.
    fn drive(mut s: DepthSearch, device: impl Fn(u32) -> (bool, f64)) -> (Vec<u32>, DepthSearch) {
        let mut tried = Vec::new();
        let mut last = None;
        while let Some(d) = s.next(last.as_ref()) {
            assert!(tried.len() < 100, "the search does not end: {tried:?}");
            tried.push(d);
            let (met, iops) = device(d);
            last = Some(Probe { depth: d, met, iops });
        }
        (tried, s)
    }

    #[test]
    fn a_plateau_stops_the_walk_early() {
        // Throughput grows up to depth 4, then stays; the target is always met.
        let (tried, s) = drive(DepthSearch::doubling(1024), |d| (true, 1000.0 * d.min(4) as f64));
        assert_eq!(tried, [1, 2, 4, 8, 16]);
        assert_eq!((s.end(), s.deepest_met()), (Some(End::Plateau), Some(16)));
        // Growth of 3% or more is growth: the walk goes on.
        let (tried, _) = drive(DepthSearch::doubling(64), |d| (true, 1000.0 * 1.03f64.powi(d.ilog2() as i32)));
        assert_eq!(tried, [1, 2, 4, 8, 16, 32, 64]);
    }

    #[test]
    fn a_miss_at_depth_one_ends_the_search() {
        let (tried, s) = drive(DepthSearch::doubling(1024), |_| (false, 5000.0));
        assert_eq!(tried, [1]);
        assert_eq!((s.end(), s.deepest_met()), (Some(End::Missed), None));
    }

    #[test]
    fn bisection_narrows_the_boundary() {
        // The target holds up to depth 20: doubling misses at 32, bisection closes in from both
        // sides and lands on 20.
        let (tried, s) = drive(DepthSearch::doubling(1024), |d| (d <= 20, d as f64));
        assert_eq!(tried, [1, 2, 4, 8, 16, 32, 23, 19, 21, 20]);
        assert_eq!((s.end(), s.deepest_met()), (Some(End::Missed), Some(20)));
        // Up to 41: doubling misses at 64, and 41 is found exactly.
        let (tried, s) = drive(DepthSearch::doubling(1024), |d| (d <= 41, d as f64));
        assert_eq!(tried, [1, 2, 4, 8, 16, 32, 64, 45, 38, 41, 43]);
        assert_eq!(s.deepest_met(), Some(41));
        // Every boundary from 16 to 63: never above it, within one depth below a miss at 32 and
        // within two below a miss at 64, in at most four bisection steps.
        for b in 16..64 {
            let (tried, s) = drive(DepthSearch::doubling(1024), |d| (d <= b, d as f64));
            let walked = if b < 32 { 6 } else { 7 };
            assert!(tried.len() <= walked + BISECT_STEPS as usize, "boundary {b}: {tried:?}");
            let found = s.deepest_met().unwrap();
            let slack = if b < 32 { 1 } else { 2 };
            assert!(found <= b && b - found <= slack, "boundary {b}: found {found}, tried {tried:?}");
        }
    }

    #[test]
    fn the_walk_stops_at_the_max_depth() {
        let (tried, s) = drive(DepthSearch::doubling(100), |d| (true, d as f64));
        assert_eq!(tried, [1, 2, 4, 8, 16, 32, 64]);
        assert_eq!((s.end(), s.deepest_met()), (Some(End::Capped), Some(64)));
        let (tried, _) = drive(DepthSearch::doubling(1), |d| (true, d as f64));
        assert_eq!(tried, [1]);
    }

    #[test]
    fn the_latency_target_search_halves_to_adjacent_depths() {
        // fio 3.33 on this machine's disk (docs/fio-observed/steadystate.md): 32 missed, and
        // the depths tried after it were 24, 28, 26, 27 (settling on 27), or 24, 28, 26, 25.
        let (tried, s) = drive(DepthSearch::latency_target(64), |d| (d <= 27, 1.0));
        assert_eq!(tried, [1, 2, 4, 8, 16, 32, 24, 28, 26, 27]);
        assert_eq!(s.deepest_met(), Some(27));
        let (tried, s) = drive(DepthSearch::latency_target(64), |d| (d <= 25, 1.0));
        assert_eq!(tried, [1, 2, 4, 8, 16, 32, 24, 28, 26, 25]);
        assert_eq!(s.deepest_met(), Some(25));
        // Flat throughput does not stop it, and the cap is tried even when not a power of two.
        let (tried, s) = drive(DepthSearch::latency_target(100), |_| (true, 1.0));
        assert_eq!(tried, [1, 2, 4, 8, 16, 32, 64, 100]);
        assert_eq!((s.end(), s.deepest_met()), (Some(End::Capped), Some(100)));
        let (tried, s) = drive(DepthSearch::latency_target(64), |_| (false, 1.0));
        assert_eq!((tried, s.deepest_met()), (vec![1], None));
    }

    #[test]
    fn a_search_below_a_settled_depth_that_missed() {
        let (tried, s) = drive(DepthSearch::latency_target_below(25), |d| (d <= 20, 1.0));
        assert_eq!(tried, [12, 18, 21, 19, 20]);
        assert_eq!(s.deepest_met(), Some(20));
        let (tried, s) = drive(DepthSearch::latency_target_below(1), |_| (true, 1.0));
        assert_eq!((tried, s.deepest_met()), (vec![], None));
    }

    #[test]
    fn a_listed_walk_does_not_bisect() {
        let s = DepthSearch::over(vec![1, 4, 16, 64]);
        assert_eq!(s.walk(), [1, 4, 16, 64]);
        let (tried, s) = drive(s, |d| (d <= 20, d as f64));
        assert_eq!(tried, [1, 4, 16, 64]);
        assert_eq!((s.end(), s.deepest_met()), (Some(End::Missed), Some(16)));
    }
}
