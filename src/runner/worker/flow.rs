//! fio's token-based flow control (`flow`, `flow_id`, `flow_sleep`): jobs sharing a `flow_id`
//! keep their I/O counts in proportion to their `flow` weights (flow=8 beside flow=1 does eight
//! I/Os to the other's one), whatever their devices' speeds.
//!
//! Each member publishes how many I/Os it has issued. Before an I/O, a member checks that it is
//! not ahead of any running member of its group: `mine / my_weight <= (theirs + 1) / their_weight`,
//! compared by cross-multiplication. Members that have not started or have finished do not hold
//! the others back. fio's negative weights starve the other jobs (measured: flow=-3 beside flow=1
//! lets the second do one I/O); fiox takes a weight's magnitude.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

/// A member's state in its group.
const WAITING: u8 = 0;
const RUNNING: u8 = 1;
const DONE: u8 = 2;

/// The shared counters of one `flow_id`.
pub struct FlowGroup {
    weights: Vec<u64>,
    issued: Vec<AtomicU64>,
    state: Vec<AtomicU8>,
}

impl FlowGroup {
    /// A group whose members have these `flow` values.
    pub fn new(flows: &[i64]) -> Arc<FlowGroup> {
        Arc::new(FlowGroup {
            weights: flows.iter().map(|f| f.unsigned_abs().max(1)).collect(),
            issued: flows.iter().map(|_| AtomicU64::new(0)).collect(),
            state: flows.iter().map(|_| AtomicU8::new(WAITING)).collect(),
        })
    }
}

/// One job clone's place in its group.
#[derive(Clone)]
pub struct FlowMember {
    pub group: Arc<FlowGroup>,
    pub me: usize,
    /// How long to wait when ahead (`flow_sleep`, µs; 0: yield the CPU).
    pub sleep_us: u64,
}

impl FlowMember {
    pub fn start(&self) {
        self.group.state[self.me].store(RUNNING, Ordering::Relaxed);
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

    /// Waits before checking again.
    pub fn pause(&self) {
        if self.sleep_us == 0 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(self.sleep_us));
        }
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
        a.start();
        b.start();
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
}
