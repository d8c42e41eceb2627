//! Pacing: `rate` and `rate_iops` (linear or Poisson spacing) and `thinktime`, as one value the
//! worker asks "may the next I/O of this direction start now, and if not, when?". One code path
//! serves every combination, so the I/O loop has no variants.

use super::offsets::Rng;

pub struct Pacer {
    /// Nanoseconds per byte and per I/O, per direction (0: no limit).
    ns_per_byte: [f64; 3],
    ns_per_io: [f64; 3],
    poisson: bool,
    /// Earliest start of the next I/O, per direction.
    next: [u64; 3],
    think_ns: u64,
    think_spin_ns: u64,
    think_blocks: u32,
    since_think: u32,
    /// Count completions (thinktime_blocks_type=complete) rather than submissions.
    think_on_complete: bool,
    /// thinktime_iotime: think after this long of I/O, whatever the block count.
    iotime_ns: u64,
    period_start: Option<u64>,
    /// No I/O before this (thinking).
    hold_until: u64,
    /// `rate_ignore_thinktime=1`: the schedule starts again after each think. By default, as
    /// in fio, the rate counts from the job's start, so the I/Os a think (or a stalled device)
    /// held back go at once afterwards.
    ignore_thinktime: bool,
    rng: Rng,
}

impl Pacer {
    pub fn new(spec: &fiox_options::JobSpec, seed: u64) -> Pacer {
        Pacer {
            ns_per_byte: spec.rate.map(|r| if r > 0 { 1e9 / r as f64 } else { 0.0 }),
            ns_per_io: spec.rate_iops.map(|r| if r > 0 { 1e9 / r as f64 } else { 0.0 }),
            poisson: spec.rate_poisson,
            next: [0; 3],
            think_ns: spec.thinktime_us * 1000,
            think_spin_ns: spec.thinktime_spin_us * 1000,
            think_blocks: spec.thinktime_blocks.max(1),
            since_think: 0,
            think_on_complete: spec.think_on_complete,
            iotime_ns: spec.thinktime_iotime_us * 1000,
            period_start: None,
            hold_until: 0,
            ignore_thinktime: spec.rate_ignore_thinktime,
            rng: Rng::new(seed ^ 0xface),
        }
    }

    pub fn active(&self) -> bool {
        self.think_ns > 0 || self.ns_per_byte.iter().chain(self.ns_per_io.iter()).any(|&v| v > 0.0)
    }

    /// Whether a rate limit applies to reads or writes (thinktime alone does not steer).
    pub fn limits_directions(&self) -> bool {
        self.ns_per_byte.iter().chain(self.ns_per_io.iter()).any(|&v| v > 0.0)
    }

    /// When an I/O of direction `d` may start (`<= now` means now): also when the next one is
    /// due, which the intended latency of a paced job counts from. A think holds I/O back on
    /// purpose, so an I/O is never due before the think ends.
    #[inline]
    pub fn ready_at(&self, d: usize) -> u64 {
        self.hold_until.max(if d < 3 { self.next[d] } else { 0 })
    }

    /// When the I/O of direction `d` about to start at `now` was due: its place in the schedule
    /// (the first of a direction is due when it starts).
    #[inline]
    pub fn due(&self, d: usize, now: u64) -> u64 {
        if d < 3 && self.next[d] == 0 {
            now.max(self.hold_until)
        } else {
            self.ready_at(d)
        }
    }

    /// Records that an I/O of `len` bytes in direction `d` started at `now`.
    #[inline]
    pub fn issued(&mut self, d: usize, len: u64, now: u64) {
        if d < 3 {
            let mut gap = (len as f64 * self.ns_per_byte[d]).max(self.ns_per_io[d]);
            if self.poisson && gap > 0.0 {
                // Exponential gaps with the same mean give Poisson arrivals.
                let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                gap *= -(1.0 - u).ln();
            }
            // The schedule is the job's, not the device's: each I/O is due a gap after the one
            // before was due, however late that one went. A stall (the device, or the job's own
            // thinking) is made up for afterwards by issuing what fell due at once, as fio does
            // (measured: rate_iops=200 over a 1 s pause does its 800 I/Os in 4 s), so the
            // rate holds over the run and each I/O's due time is its place in the schedule,
            // which the intended latency (`Pacer::ready_at`) is measured from.
            // A direction's schedule starts with its first I/O; an unlimited one has none.
            if gap > 0.0 {
                if self.next[d] == 0 {
                    self.next[d] = now;
                }
                self.next[d] += gap as u64;
            }
        }
        if self.think_ns > 0 && self.iotime_ns > 0 {
            let start = *self.period_start.get_or_insert(now);
            if now.saturating_sub(start) >= self.iotime_ns {
                self.think(now);
                self.period_start = Some(self.hold_until);
            }
        } else if self.think_ns > 0 && !self.think_on_complete {
            self.count_blocks(1, now);
        }
    }

    /// Records `n` completions at `now` (thinktime_blocks_type=complete counts these).
    #[inline]
    pub fn completed(&mut self, n: u32, now: u64) {
        if self.think_ns > 0 && self.iotime_ns == 0 && self.think_on_complete {
            self.count_blocks(n, now);
        }
    }

    fn count_blocks(&mut self, n: u32, now: u64) {
        self.since_think += n;
        if self.since_think >= self.think_blocks {
            self.since_think = 0;
            self.think(now);
        }
    }

    fn think(&mut self, now: u64) {
        self.hold_until = now + self.think_ns;
        if self.ignore_thinktime {
            for next in &mut self.next {
                *next = (*next).max(self.hold_until);
            }
        }
    }

    /// Waits until `until` (ns on the worker clock `now_fn`), spinning for the thinktime_spin part
    /// and sleeping for the rest.
    pub fn wait(&self, until: u64, now_fn: &dyn Fn() -> u64, stop: &std::sync::atomic::AtomicBool) {
        let start = now_fn();
        let spin_end = start + self.think_spin_ns.min(until.saturating_sub(start));
        while now_fn() < spin_end {
            std::hint::spin_loop();
        }
        loop {
            let now = now_fn();
            if now >= until || stop.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            // Sleep in slices of at most 100 ms so that Ctrl-C is honoured promptly.
            std::thread::sleep(std::time::Duration::from_nanos((until - now).min(100_000_000)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_options::{argv, assemble, Ctx};

    fn pacer(args: &[&str]) -> Pacer {
        let mut a = args.to_vec();
        a.extend(["--size=1m", "--name=t"]);
        let spec = assemble(&argv::parse(a).unwrap(), &[], &Ctx::default()).unwrap().jobs[0].spec.clone();
        Pacer::new(&spec, 1)
    }

    #[test]
    fn rate_spaces_ios_by_bytes() {
        let mut p = pacer(&["--rate=1m", "--bs=4k"]);
        assert!(p.active());
        p.issued(0, 4096, 0);
        // 4 KiB at 1 MiB/s: one I/O every 1/256 s.
        assert_eq!(p.ready_at(0), 1_000_000_000 / 256);
        assert_eq!(p.ready_at(1), 0);
    }

    #[test]
    fn rate_iops_and_thinktime() {
        let mut p =
            pacer(&["--rate_iops=1000", "--thinktime=50", "--thinktime_blocks=2", "--thinktime_blocks_type=issue"]);
        p.issued(0, 4096, 0);
        assert_eq!(p.ready_at(0), 1_000_000);
        p.issued(0, 4096, 1_000_000);
        assert_eq!(p.ready_at(1), 1_050_000);
        // The default counts completions.
        let mut p = pacer(&["--thinktime=50", "--thinktime_blocks=2"]);
        p.issued(0, 4096, 0);
        p.issued(0, 4096, 0);
        assert_eq!(p.ready_at(0), 0);
        p.completed(2, 10_000);
        assert_eq!(p.ready_at(0), 60_000);
        // thinktime_iotime: think after 1 ms of I/O.
        let mut p = pacer(&["--thinktime=50", "--thinktime_iotime=1ms"]);
        p.issued(0, 4096, 0);
        p.issued(0, 4096, 500_000);
        assert_eq!(p.ready_at(0), 0);
        p.issued(0, 4096, 1_000_000);
        assert_eq!(p.ready_at(0), 1_050_000);
        assert!(!pacer(&[]).active());
    }

    /// A stall is made up for afterwards, as fio does: I/Os keep their places in the schedule,
    /// the ones that fell due during the stall may go at once, and each is due at its place.
    #[test]
    fn a_stall_is_made_up_for_and_due_times_keep_the_schedule() {
        let mut p = pacer(&["--rate_iops=200"]);
        assert_eq!(p.due(0, 7), 7, "the first I/O is due when it starts");
        p.issued(0, 4096, 7);
        assert_eq!(p.due(0, 1_000_000_000), 5_000_007);
        // The device stood still for a second: the next 199 are due already, in 5 ms steps.
        let mut dues = Vec::new();
        for _ in 0..199 {
            let now = 1_000_000_000;
            assert!(p.ready_at(0) <= now);
            dues.push(p.due(0, now));
            p.issued(0, 4096, now);
        }
        assert_eq!(dues[1] - dues[0], 5_000_000);
        assert_eq!(p.ready_at(0), 1_000_000_007, "back on schedule");
    }

    /// As fio 3.33 measured (rate_iops=100, thinktime=100ms every 10 I/Os, 4 s): 400 I/Os by
    /// default, the rate making up for the thinking; 210 with rate_ignore_thinktime=1.
    #[test]
    fn rate_catches_up_after_thinktime_unless_told_not_to() {
        let count = |ignore: &str| {
            let mut p = pacer(&[
                "--rate_iops=100",
                "--thinktime=100ms",
                "--thinktime_blocks=10",
                "--thinktime_blocks_type=issue",
                ignore,
            ]);
            let (mut now, mut n) = (0u64, 0);
            while now < 4_000_000_000 {
                now = now.max(p.ready_at(0));
                p.issued(0, 4096, now);
                n += 1;
            }
            n
        };
        assert!((395..=405).contains(&count("--rate_ignore_thinktime=0")), "{}", count("--rate_ignore_thinktime=0"));
        assert!((205..=215).contains(&count("--rate_ignore_thinktime=1")), "{}", count("--rate_ignore_thinktime=1"));
    }
}
