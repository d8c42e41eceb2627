//! `read_iolog`'s replay in progress: the trace planned by `plan::replay` handed to the worker
//! one I/O at a time, each at its time unless `replay_no_stall`.

use std::sync::Arc;

use crate::plan::io::NextIo;
use crate::plan::replay::ReplayPlan;

/// The replay in progress: the next I/O and when the last one went.
pub struct Replay {
    plan: Arc<ReplayPlan>,
    next: usize,
    /// Clock reading at which the last I/O went.
    last_ns: Option<u64>,
    /// When the I/O last handed out may go.
    due: u64,
}

impl Replay {
    pub fn new(plan: Arc<ReplayPlan>) -> Replay {
        Replay { plan, next: 0, last_ns: None, due: 0 }
    }

    /// The next I/O, or `None` when the trace is over; [`Replay::due`] says when it may go.
    #[inline]
    pub fn next(&mut self) -> Option<NextIo> {
        let (io, wait) = *self.plan.ios.get(self.next)?;
        self.next += 1;
        // The first I/O goes at once; each later one its wait after the one before.
        self.due = self.last_ns.map_or(0, |l| l.saturating_add(wait));
        Some(io)
    }

    #[inline]
    pub fn due(&self) -> u64 {
        self.due
    }

    /// The I/O last handed out went at clock reading `now`.
    #[inline]
    pub fn went(&mut self, now: u64) {
        self.last_ns = Some(now);
    }
}
