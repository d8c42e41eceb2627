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
    /// Queued but not yet committed, then committed but not yet reaped.
    queued: Vec<Completion>,
    /// A ring, not a vector: a deep queue reaped a few at a time must not shift the rest.
    done: VecDeque<Completion>,
}

impl IoEngine for Null {
    fn init(&mut self, setup: &crate::Setup<'_>) -> io::Result<()> {
        self.inline = setup.depth <= 1;
        self.queued.reserve(setup.depth as usize);
        self.done.reserve(setup.depth as usize);
        Ok(())
    }

    #[inline]
    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        if self.inline {
            return Ok(QueueStatus::Completed(io.len as i64));
        }
        self.queued.push(Completion { index, result: io.len as i64 });
        Ok(QueueStatus::Queued)
    }

    #[inline]
    fn commit(&mut self) -> io::Result<u32> {
        let n = self.queued.len() as u32;
        self.done.extend(self.queued.drain(..));
        Ok(n)
    }

    #[inline]
    fn getevents(&mut self, _min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let n = self.done.len().min(max as usize);
        out.extend(self.done.drain(..n));
        Ok(())
    }
}

pub const INFO: EngineInfo =
    EngineInfo { sync: false, diskless: true, ..EngineInfo::base("null", || Box::new(Null::default())) };
