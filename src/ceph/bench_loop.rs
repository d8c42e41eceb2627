//! The parts of a bench loop that `fiox rados bench` and `fiox rbd bench` share: the slots
//! (one operation each: which are idle, when each busy one's operation was submitted), the
//! pseudo-random numbers both tools draw from C's `rand()`, and the clock and CPU meter a run
//! reports from. Each bench's own state struct holds these beside what only it knows.

use std::time::{Duration, Instant};

use crate::ceph::bench_report;

/// The slots of a bench: at most one operation each, in flight from `submitted` to `done`.
pub struct Slots {
    /// Idle slots, the lowest on top (the order the tools fill them in).
    idle: Vec<u32>,
    submitted_at: Vec<Instant>,
}

impl Slots {
    pub fn new(n: u32) -> Slots {
        Slots { idle: (0..n).rev().collect(), submitted_at: vec![Instant::now(); n as usize] }
    }

    /// An idle slot, now taken, if there is one.
    pub fn take(&mut self) -> Option<u32> {
        self.idle.pop()
    }

    /// A slot taken but not used (its submission failed).
    pub fn put_back(&mut self, slot: u32) {
        self.idle.push(slot);
    }

    /// Starts the clock of `slot`'s operation.
    pub fn submitted(&mut self, slot: u32) {
        self.submitted_at[slot as usize] = Instant::now();
    }

    /// Ends `slot`'s operation, finished at `now`: the slot is idle again. Its latency.
    pub fn done(&mut self, slot: u32, now: Instant) -> Duration {
        self.idle.push(slot);
        now.duration_since(self.submitted_at[slot as usize])
    }

    /// How long the oldest operation in flight has been waiting (zero with none).
    pub fn oldest_in_flight(&self, now: Instant) -> Duration {
        self.submitted_at
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.idle.contains(&(*i as u32)))
            .map(|(_, t)| now.duration_since(*t))
            .max()
            .unwrap_or_default()
    }
}

/// libc-like pseudo-random numbers (both tools seed `rand()` with the time; only the
/// distribution matters): xorshift, seeded from the clock.
pub struct Rand(u64);

impl Rand {
    pub fn from_clock() -> Rand {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        Rand(now.map_or(1, |d| d.as_nanos() as u64) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 >> 1
    }
}

/// When a run started, and the process's CPU time then.
pub struct Meter {
    pub start: Instant,
    cpu0: (f64, f64),
}

impl Meter {
    pub fn start() -> Meter {
        let cpu0 = bench_report::cpu_now();
        Meter { start: Instant::now(), cpu0 }
    }

    /// Seconds since the start.
    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// The process's CPU seconds (user, system) since the start.
    pub fn cpu(&self) -> (f64, f64) {
        let cpu1 = bench_report::cpu_now();
        (cpu1.0 - self.cpu0.0, cpu1.1 - self.cpu0.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_fill_lowest_first_and_time_their_operations() {
        let mut s = Slots::new(3);
        assert_eq!(s.take(), Some(0));
        s.submitted(0);
        assert_eq!(s.take(), Some(1));
        s.submitted(1);
        s.put_back(1);
        assert_eq!(s.take(), Some(1));
        s.submitted(1);
        let later = Instant::now() + Duration::from_millis(5);
        assert!(s.oldest_in_flight(later) >= Duration::from_millis(5));
        assert!(s.done(0, later) >= Duration::from_millis(5));
        let _ = s.done(1, later);
        assert_eq!(s.oldest_in_flight(later), Duration::ZERO);
        assert_eq!([s.take(), s.take(), s.take(), s.take()], [Some(1), Some(0), Some(2), None]);
    }

    #[test]
    fn rand_is_xorshift() {
        let mut r = Rand(1);
        assert_eq!(r.next(), 1082269761 >> 1);
        assert_ne!(Rand::from_clock().next(), Rand(0).next());
    }
}
