//! `splice`: data moves between the file and the job's buffer through a pipe, never through
//! read(2)/write(2). A read splices the file into the pipe (at most the pipe's 64 KiB at a
//! time, SPLICE_F_MORE while more follows) and vmsplices each piece out of the pipe into the
//! buffer. A write waits for room in the pipe, vmsplices the buffer into it (non-blocking, so
//! it takes what fits) and splices that much from the pipe into the file. Trims and syncs are
//! those of the synchronous engines. One pipe per job, made at start.
//!
//! fio 3.33 first tries to map the read buffer page by page (SPLICE_F_MOVE into a fresh
//! mapping), which fails with EFAULT on the first read and falls back to copying; fiox copies
//! from the start. A trim on a regular file fails with EIO ("full resid") in fio 3.33 and with
//! EOPNOTSUPP/ENOTTY's error here, as with psync.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::{sys, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

/// The pipe's default capacity, the most one splice into it moves.
const PIPE_CHUNK: usize = 65536;

#[derive(Default)]
pub struct Splice {
    pipe: Option<(OwnedFd, OwnedFd)>,
}

impl Splice {
    fn read(&self, io: &IoUnit) -> i64 {
        let (r, w) = self.pipe.as_ref().map(|(r, w)| (r.as_raw_fd(), w.as_raw_fd())).expect("started");
        let len = io.len as usize;
        let mut off = io.offset as i64;
        let mut done = 0usize;
        while done < len {
            let left = len - done;
            let chunk = left.min(PIPE_CHUNK);
            let flags = if left > PIPE_CHUNK { libc::SPLICE_F_MORE } else { 0 };
            let n = sys::splice(io.fd, Some(&mut off), w, None, chunk, flags);
            if n <= 0 {
                // End of file (0) or an error: what was read so far, or the error.
                return if done > 0 { done as i64 } else { n };
            }
            let mut left_in_pipe = n as usize;
            while left_in_pipe > 0 {
                // SAFETY: `done + left_in_pipe <= len`, within the unit's buffer, which nothing
                // else touches while the engine holds the unit.
                let m = unsafe { sys::vmsplice(r, io.buf.add(done), left_in_pipe, 0) };
                if m <= 0 {
                    return if m < 0 { m } else { -(libc::EIO as i64) };
                }
                done += m as usize;
                left_in_pipe -= m as usize;
            }
        }
        done as i64
    }

    fn write(&self, io: &IoUnit) -> i64 {
        let (r, w) = self.pipe.as_ref().map(|(r, w)| (r.as_raw_fd(), w.as_raw_fd())).expect("started");
        let len = io.len as usize;
        let mut off = io.offset as i64;
        let mut done = 0usize;
        while done < len {
            let p = sys::wait_writable(w);
            if p < 0 {
                return p;
            }
            // SAFETY: `done < len`: the rest of the unit's buffer, which nothing writes while
            // the engine holds the unit. The pipe holds references to these pages until they
            // are spliced to the file below, before this call returns.
            let n = unsafe { sys::vmsplice(w, io.buf.add(done), len - done, libc::SPLICE_F_NONBLOCK) };
            if n == -(libc::EAGAIN as i64) {
                continue;
            }
            if n <= 0 {
                return if n < 0 { n } else { -(libc::EIO as i64) };
            }
            let mut in_pipe = n as usize;
            while in_pipe > 0 {
                let m = sys::splice(r, None, io.fd, Some(&mut off), in_pipe, 0);
                if m <= 0 {
                    return if m < 0 { m } else { -(libc::EIO as i64) };
                }
                in_pipe -= m as usize;
            }
            done += n as usize;
        }
        done as i64
    }
}

impl IoEngine for Splice {
    fn init(&mut self, _setup: &Setup<'_>) -> io::Result<()> {
        self.pipe = Some(sys::pipe()?);
        Ok(())
    }

    #[inline]
    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let result = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Read => self.read(io),
            Ddir::Write => self.write(io),
            Ddir::Trim => sys::trim(io.fd, io.offset, io.len as u64, io.block_device),
            Ddir::Sync => sys::fsync(io.fd, false),
            Ddir::DataSync => sys::fsync(io.fd, true),
        };
        Ok(QueueStatus::Completed(result))
    }
}

pub const INFO: EngineInfo = EngineInfo::base("splice", || Box::<Splice>::default());
