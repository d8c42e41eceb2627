//! fio's token-based flow control (`flow`, `flow_id`, `flow_sleep`): jobs sharing a `flow_id`
//! keep their I/O counts in proportion to their `flow` weights (flow=8 beside flow=1 does eight
//! I/Os to the other's one), whatever their devices' speeds.
//!
//! Each member publishes how many I/Os it has issued. Before an I/O, a member checks that it is
//! not ahead of any running member of its group: `mine / my_weight <= (theirs + 1) / their_weight`,
//! compared by cross-multiplication. Members that have finished do not hold the others back.
//! The members start together: each waits, its files open, until every other member has
//! started or ended (fio starts a group's jobs at once). Members starting one after the other
//! let the first run unchecked until the last arrived, and, each counting its runtime from its
//! own start, let the last run unchecked after the first had ended: on a loaded machine, a
//! thread started milliseconds late skewed 1:8 to 1:7.1, or to 1:0.9 when one waited for a CPU
//! for a tenth of the run. fio's negative weights starve the other jobs (measured: flow=-3 beside flow=1
//! lets the second do one I/O); fiox takes a weight's magnitude.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use fiox_engine::sys;

/// A member's state in its group.
const WAITING: u8 = 0;
const RUNNING: u8 = 1;
const DONE: u8 = 2;

/// The shared counters of one `flow_id`.
pub struct FlowGroup {
    weights: Vec<u64>,
    issued: Vec<AtomicU64>,
    state: Vec<AtomicU8>,
    /// CLOCK_MONOTONIC when the last member started (0: not yet).
    started_ns: AtomicU64,
}

impl FlowGroup {
    /// A group whose members have these `flow` values.
    pub fn new(flows: &[i64]) -> Arc<FlowGroup> {
        Arc::new(FlowGroup {
            weights: flows.iter().map(|f| f.unsigned_abs().max(1)).collect(),
            issued: flows.iter().map(|_| AtomicU64::new(0)).collect(),
            state: flows.iter().map(|_| AtomicU8::new(WAITING)).collect(),
            started_ns: AtomicU64::new(0),
        })
    }
}

/// One job clone's place in its group.
#[derive(Clone)]
pub struct FlowMember {
    pub group: Arc<FlowGroup>,
    pub me: usize,
    /// How long to wait when ahead (`flow_sleep`, µs; 0: the shortest sleep).
    pub sleep_us: u64,
}

impl FlowMember {
    /// Joins the running members, then waits until no member is still to start (or `stop` is
    /// set): members whose setup took longer (a bigger file to open, a thread scheduled late)
    /// would otherwise find the others already ahead. Returns how long ago, in nanoseconds,
    /// the group started (its last member arrived): the job's time counts from then, so that
    /// the members' runtimes end together however late each woke.
    pub fn start_together(&self, stop: &AtomicBool) -> u64 {
        let g = &*self.group;
        g.state[self.me].store(RUNNING, Ordering::Release);
        while g.state.iter().any(|s| s.load(Ordering::Acquire) == WAITING) && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
        let now = sys::monotonic_ns();
        // The first member to see the group complete sets its start; the others read it.
        let start = match g.started_ns.compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => now,
            Err(earlier) => earlier,
        };
        now.saturating_sub(start)
    }

    pub fn finish(&self) {
        self.group.state[self.me].store(DONE, Ordering::Relaxed);
    }

    /// Whether this member may issue its next I/O now.
    #[inline]
    pub fn may_issue(&self) -> bool {
        let g = &*self.group;
        let mine = g.issued[self.me].load(Ordering::Relaxed) as u128;
        let my_w = g.weights[self.me] as u128;
        (0..g.weights.len()).filter(|&j| j != self.me).all(|j| {
            g.state[j].load(Ordering::Relaxed) != RUNNING
                || mine * g.weights[j] as u128 <= (g.issued[j].load(Ordering::Relaxed) as u128 + 1) * my_w
        })
    }

    #[inline]
    pub fn issued(&self) {
        self.group.issued[self.me].fetch_add(1, Ordering::Relaxed);
    }

    /// Waits before checking again: `flow_sleep`, or without it the shortest sleep (about
    /// 50 µs with the kernel's timer slack). Not a yield: on a loaded machine a yielding thread
    /// goes behind every other runnable one, a timeslice each, where a sleeper is woken ahead
    /// of them; yielding, fio's t0011 (flow 1 at rate_iops=1000 beside flow 8) fell to 885 and
    /// 568 IOPS beside three spinning threads.
    pub fn pause(&self) {
        std::thread::sleep(std::time::Duration::from_micros(self.sleep_us.max(1)));
    }
}

/// Marks its member finished when dropped, on every way out of a job.
pub struct Done(pub FlowMember);

impl Drop for Done {
    fn drop(&mut self) {
        self.0.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_keep_their_weights_ratio() {
        let g = FlowGroup::new(&[8, 1]);
        let a = FlowMember { group: g.clone(), me: 0, sleep_us: 0 };
        let b = FlowMember { group: g, me: 1, sleep_us: 0 };
        let stop = AtomicBool::new(false);
        b.group.state[b.me].store(RUNNING, Ordering::Relaxed);
        a.start_together(&stop);
        b.start_together(&stop);
        let (mut na, mut nb) = (0, 0);
        // Alternate turns; each issues when allowed.
        for _ in 0..9000 {
            if a.may_issue() {
                a.issued();
                na += 1;
            }
            if b.may_issue() {
                b.issued();
                nb += 1;
            }
        }
        let ratio = na as f64 / nb as f64;
        assert!((7.9..8.1).contains(&ratio), "{na} : {nb}");
        // A finished member holds nobody back.
        b.finish();
        for _ in 0..100 {
            assert!(a.may_issue());
            a.issued();
        }
    }

    #[test]
    fn members_start_together_and_count_from_the_last_arrival() {
        let g = FlowGroup::new(&[1, 1]);
        let a = FlowMember { group: g.clone(), me: 0, sleep_us: 0 };
        let b = FlowMember { group: g, me: 1, sleep_us: 0 };
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let first = s.spawn(|| a.start_together(&stop));
            std::thread::sleep(std::time::Duration::from_millis(30));
            assert!(!first.is_finished(), "the first member waits for the second");
            let late_b = b.start_together(&stop);
            let late_a = first.join().unwrap();
            // Each counts from the second's arrival: neither from its own, 30 ms earlier.
            assert!(late_a < 20_000_000 && late_b < 20_000_000, "{late_a} {late_b}");
        });
        // A member that never starts (its job failed first) releases the others.
        let g = FlowGroup::new(&[1, 1]);
        let (a, b) = (FlowMember { group: g.clone(), me: 0, sleep_us: 0 }, FlowMember { group: g, me: 1, sleep_us: 0 });
        b.finish();
        a.start_together(&stop);
    }
}
