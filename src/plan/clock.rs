//! The workers' clock, and the fixed test clock that makes a run deterministic.
//!
//! Every latency, runtime and sample window comes from [`Clock::now`], in nanoseconds since the
//! worker started. fiox reads the CPU's time stamp counter when it is proven usable: the CPU
//! says its counter runs at a constant rate through sleep states (`constant_tsc` and
//! `nonstop_tsc`) and the kernel itself keeps time with it (clocksource `tsc`), so it is also
//! synchronised across CPUs. Its rate is then measured against CLOCK_MONOTONIC over 2 ms,
//! once per run. A counter read costs a few nanoseconds where `clock_gettime` costs about
//! twenty, and fiox reads the clock two or three times per I/O. Otherwise fiox uses
//! CLOCK_MONOTONIC. `clocksource=` chooses explicitly (`cpu` fails where the counter is not
//! proven); the report's manifest says which clock was used.
//!
//! With the environment variable `FIOX_TEST_CLOCK=N` set, each read advances a per-worker
//! counter by N ns instead, and the other figures that differ run to run are pinned as well:
//! wall-clock times are a fixed instant (2026-01-01 00:00:00 UTC), thread ids are 1000 plus the
//! worker's number, and CPU use is zero. A job on the null engine then reports the same figures
//! on every run, which is what the snapshot tests of the output formats rely on. The variable
//! is for tests only; it is not an option, so a job file cannot set it by accident.

use std::cell::Cell;
use std::sync::OnceLock;

use anyhow::{bail, Result};
use fiox_engine::sys;
use fiox_options::ClockSource;

/// The fixed wall-clock instant of the test clock, in ms since the epoch.
const TEST_EPOCH_MS: u64 = 1_767_225_600_000;

/// The test clock's step, if `FIOX_TEST_CLOCK` is set to a positive number of ns.
pub fn test_step() -> Option<u64> {
    static STEP: OnceLock<Option<u64>> = OnceLock::new();
    *STEP.get_or_init(|| std::env::var("FIOX_TEST_CLOCK").ok().and_then(|v| v.trim().parse().ok()).filter(|&n| n > 0))
}

/// The time stamp counter's rate, as nanoseconds per tick in 32.32 fixed point.
#[derive(Debug, Clone, Copy)]
struct Tsc {
    mult: u64,
}

impl Tsc {
    #[inline]
    fn ns(self, ticks: u64) -> u64 {
        ((ticks as u128 * self.mult as u128) >> 32) as u64
    }

    fn mhz(self) -> f64 {
        (1u64 << 32) as f64 / self.mult as f64 * 1000.0
    }
}

/// Why the counter cannot be trusted here, or its measured rate. Measured once per process.
fn tsc() -> std::result::Result<Tsc, String> {
    static CAL: OnceLock<std::result::Result<Tsc, String>> = OnceLock::new();
    CAL.get_or_init(|| {
        sys::rdtsc().ok_or("this CPU has no time stamp counter")?;
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let flags = cpuinfo.lines().find(|l| l.starts_with("flags")).unwrap_or("");
        for need in ["constant_tsc", "nonstop_tsc"] {
            if !flags.split_whitespace().any(|f| f == need) {
                return Err(format!("the CPU does not report {need}"));
            }
        }
        let source = std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
        if source.trim() != "tsc" {
            return Err(format!("the kernel keeps time with '{}', not the TSC", source.trim()));
        }
        // Each end of the interval is a counter read between two monotonic reads; the pair
        // closest together bounds the error of that end.
        let pair = || {
            (0..5)
                .map(|_| {
                    let a = sys::monotonic_ns();
                    let t = sys::rdtsc().unwrap_or(0);
                    let b = sys::monotonic_ns();
                    (b - a, a + (b - a) / 2, t)
                })
                .min()
                .map(|(_, m, t)| (m, t))
                .unwrap_or((0, 0))
        };
        let (m0, t0) = pair();
        while sys::monotonic_ns() < m0 + 2_000_000 {
            std::hint::spin_loop();
        }
        let (m1, t1) = pair();
        if t1 <= t0 || m1 <= m0 {
            return Err("the counter did not advance".into());
        }
        let mult = (((m1 - m0) as u128) << 32) / (t1 - t0) as u128;
        Ok(Tsc { mult: mult as u64 })
    })
    .clone()
}

/// Which clock a job's `clocksource` gives, checked before any I/O.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    Monotonic,
    GetTimeOfDay,
    Cpu,
}

impl Source {
    /// The clock for `clocksource` (`None`: the counter when usable, else CLOCK_MONOTONIC).
    pub fn choose(clocksource: Option<ClockSource>) -> Result<Source> {
        if test_step().is_some() {
            return Ok(Source::Monotonic);
        }
        Ok(match clocksource {
            Some(ClockSource::ClockGettime) => Source::Monotonic,
            Some(ClockSource::GetTimeOfDay) => Source::GetTimeOfDay,
            Some(ClockSource::Cpu) => match tsc() {
                Ok(_) => Source::Cpu,
                Err(why) => bail!("clocksource=cpu: the CPU's time stamp counter cannot be used here: {why}"),
            },
            None if tsc().is_ok() => Source::Cpu,
            None => Source::Monotonic,
        })
    }

    /// For the report's manifest.
    pub fn describe(self) -> String {
        if test_step().is_some() {
            return "fixed test clock (FIOX_TEST_CLOCK)".into();
        }
        match (self, tsc()) {
            (Source::Cpu, Ok(t)) => format!("TSC at {:.1} MHz (calibrated against CLOCK_MONOTONIC)", t.mhz()),
            (Source::GetTimeOfDay, _) => "gettimeofday (clocksource=gettimeofday)".into(),
            (_, Err(why)) => format!("clock_gettime(CLOCK_MONOTONIC); the TSC is not used: {why}"),
            _ => "clock_gettime(CLOCK_MONOTONIC)".into(),
        }
    }
}

enum Kind {
    Monotonic,
    GetTimeOfDay,
    Tsc(Tsc),
    Test(u64),
}

/// One worker's clock. Not shared between threads: the test clock's counter is per worker, so
/// each worker's readings depend only on its own work.
pub struct Clock {
    kind: Kind,
    base: u64,
    fake: Cell<u64>,
}

impl Clock {
    /// A clock of `source` reading 0 now.
    pub fn start(source: Source) -> Clock {
        let kind = match (test_step(), source, tsc()) {
            (Some(step), _, _) => Kind::Test(step),
            (None, Source::Cpu, Ok(t)) => Kind::Tsc(t),
            (None, Source::GetTimeOfDay, _) => Kind::GetTimeOfDay,
            _ => Kind::Monotonic,
        };
        let base = match kind {
            Kind::Tsc(_) => sys::rdtsc().unwrap_or(0),
            Kind::Monotonic => sys::monotonic_ns(),
            Kind::GetTimeOfDay => sys::gettimeofday_ns(),
            Kind::Test(_) => 0,
        };
        Clock { kind, base, fake: Cell::new(0) }
    }

    /// Moves the clock's start `ns` back, as if it had been started that long ago (the test
    /// clock stays as it is).
    pub fn set_back(&mut self, ns: u64) {
        let ticks = match self.kind {
            Kind::Tsc(t) => ((ns as u128) << 32).checked_div(t.mult as u128).unwrap_or(0) as u64,
            Kind::Monotonic | Kind::GetTimeOfDay => ns,
            Kind::Test(_) => 0,
        };
        self.base = self.base.saturating_sub(ticks);
    }

    /// Nanoseconds since [`Clock::start`]. Differences saturate: counters the kernel keeps in
    /// step may still differ by a few cycles between CPUs, and a thread that moves just after
    /// starting must not read 2^64.
    #[inline]
    pub fn now(&self) -> u64 {
        match self.kind {
            Kind::Tsc(t) => t.ns(sys::rdtsc().unwrap_or(0).saturating_sub(self.base)),
            Kind::Monotonic => sys::monotonic_ns().saturating_sub(self.base),
            Kind::GetTimeOfDay => sys::gettimeofday_ns().saturating_sub(self.base),
            Kind::Test(step) => {
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
        let c = Clock::start(Source::Monotonic);
        let a = c.now();
        let b = c.now();
        assert!(a < 1_000_000_000 && b >= a);
    }

    #[test]
    fn a_clock_set_back_reads_that_much_more() {
        let mut c = Clock::start(Source::Monotonic);
        c.set_back(5_000_000_000);
        let t = c.now();
        assert!((5_000_000_000..6_000_000_000).contains(&t), "{t}");
    }

    #[test]
    fn test_clock_advances_by_its_step() {
        let c = Clock { kind: Kind::Test(250), base: 0, fake: Cell::new(0) };
        assert_eq!((c.now(), c.now(), c.now()), (250, 500, 750));
    }

    #[test]
    fn tsc_clock_agrees_with_monotonic() {
        // Only where the counter is usable; elsewhere `choose` must refuse clocksource=cpu.
        match tsc() {
            Ok(_) => {
                let c = Clock::start(Source::Cpu);
                let m0 = sys::monotonic_ns();
                let t0 = c.now();
                std::thread::sleep(std::time::Duration::from_millis(50));
                let (m, t) = (sys::monotonic_ns() - m0, c.now() - t0);
                let err = (m as f64 - t as f64).abs() / m as f64;
                assert!(err < 0.001, "TSC clock {t} ns against monotonic {m} ns");
            }
            Err(_) => assert!(Source::choose(Some(ClockSource::Cpu)).is_err()),
        }
    }
}
