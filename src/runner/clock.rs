//! The workers' clock, and the fixed test clock that makes a run deterministic.
//!
//! Every latency, runtime and sample window comes from [`Clock::now`], in nanoseconds since the
//! worker started. Normally it reads CLOCK_MONOTONIC. With the environment variable
//! `FIOX_TEST_CLOCK=N` set, each read advances a per-worker counter by N ns instead, and the
//! other figures that differ run to run are pinned as well: wall-clock times are a fixed
//! instant (2026-01-01 00:00:00 UTC), thread ids are 1000 plus the worker's number, and CPU
//! use is zero. A job on the null engine then reports the same figures on every run, which is
//! what the snapshot tests of the output formats rely on. The variable is for tests only; it is
//! not an option, so a job file cannot set it by accident.

use std::cell::Cell;
use std::sync::OnceLock;

use fiox_engine::sys;

/// The fixed wall-clock instant of the test clock, in ms since the epoch.
const TEST_EPOCH_MS: u64 = 1_767_225_600_000;

/// The test clock's step, if `FIOX_TEST_CLOCK` is set to a positive number of ns.
pub fn test_step() -> Option<u64> {
    static STEP: OnceLock<Option<u64>> = OnceLock::new();
    *STEP.get_or_init(|| std::env::var("FIOX_TEST_CLOCK").ok().and_then(|v| v.trim().parse().ok()).filter(|&n| n > 0))
}

/// One worker's clock. Not shared between threads: the test clock's counter is per worker, so
/// each worker's readings depend only on its own work.
pub struct Clock {
    base: u64,
    step: Option<u64>,
    fake: Cell<u64>,
}

impl Clock {
    /// A clock reading 0 now.
    pub fn start() -> Clock {
        let step = test_step();
        Clock { base: if step.is_some() { 0 } else { sys::monotonic_ns() }, step, fake: Cell::new(0) }
    }

    /// Nanoseconds since [`Clock::start`].
    #[inline]
    pub fn now(&self) -> u64 {
        match self.step {
            None => sys::monotonic_ns().wrapping_sub(self.base),
            Some(step) => {
                let t = self.fake.get() + step;
                self.fake.set(t);
                t
            }
        }
    }
}

/// Milliseconds since the epoch (the test clock's fixed instant under `FIOX_TEST_CLOCK`).
pub fn epoch_ms() -> u64 {
    if test_step().is_some() {
        return TEST_EPOCH_MS;
    }
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The calling thread's CPU use so far (zero under the test clock).
pub fn thread_usage() -> sys::Usage {
    if test_step().is_some() {
        return sys::Usage::default();
    }
    sys::thread_usage()
}

/// The calling thread's id, as fio prints a job's pid (1000 + `number` under the test clock).
pub fn thread_id(number: usize) -> u32 {
    if test_step().is_some() {
        return 1000 + number as u32;
    }
    sys::gettid()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_starts_near_zero_and_advances() {
        let c = Clock { base: sys::monotonic_ns(), step: None, fake: Cell::new(0) };
        let a = c.now();
        let b = c.now();
        assert!(a < 1_000_000_000 && b >= a);
    }

    #[test]
    fn test_clock_advances_by_its_step() {
        let c = Clock { base: 0, step: Some(250), fake: Cell::new(0) };
        assert_eq!((c.now(), c.now(), c.now()), (250, 500, 750));
    }
}
