//! `null`: accepts every I/O and completes it at once without touching any file. It measures
//! the tool itself. Like fio's, it behaves as an asynchronous engine: I/Os are queued and
//! reported by `getevents`, so queue depth and batching are exercised.

use std::collections::VecDeque;
use std::io;

use crate::{Completion, EngineInfo, IoEngine, IoUnit, QueueStatus};

#[derive(Default)]
pub struct Null {
    /// At depth 1 fio's null engine completes each I/O inside `queue`; deeper, it queues.
    inline: bool,
    /// Queued I/Os in order, the committed ones first: completions come back in the order the
    /// I/Os were queued, so one ring and a count serve for both states (no moving between
    /// lists at each commit). A ring, not a vector: a deep queue reaped a few at a time must
    /// not shift the rest.
    ios: VecDeque<Completion>,
    /// How many of `ios`, from the front, are committed (and so complete).
    committed: usize,
}

impl IoEngine for Null {
    fn init(&mut self, setup: &crate::Setup<'_>) -> io::Result<()> {
        self.inline = setup.depth <= 1;
        self.ios.reserve(setup.depth as usize);
        Ok(())
    }

    #[inline]
    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        if self.inline {
            return Ok(QueueStatus::Completed(io.len as i64));
        }
        self.ios.push_back(Completion { index, result: io.len as i64 });
        Ok(QueueStatus::Queued)
    }

    #[inline]
    fn commit(&mut self) -> io::Result<u32> {
        let n = self.ios.len() - self.committed;
        self.committed = self.ios.len();
        Ok(n as u32)
    }

    #[inline]
    fn getevents(&mut self, _min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        for _ in 0..self.committed.min(max as usize) {
            if let Some(c) = self.ios.pop_front() {
                out.push(c);
            }
            self.committed -= 1;
        }
        Ok(())
    }
}

pub const INFO: EngineInfo =
    EngineInfo { sync: false, diskless: true, instant: true, ..EngineInfo::base("null", || Box::new(Null::default())) };
