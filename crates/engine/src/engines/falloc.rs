//! `falloc`: every I/O is one fallocate(2) on the file. A read reserves the range without
//! changing the file's size (FALLOC_FL_KEEP_SIZE), a write allocates it (mode 0, extending the
//! file), a trim punches a hole. Each I/O counts as its full length, as in fio.
//!
//! fio 3.33 turns `fsync=`/`fdatasync=` into a zero-length fallocate, which fails with EINVAL
//! and ends the job; fiox syncs the file.

use std::io;

use crate::{sys, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

pub struct Falloc;

impl IoEngine for Falloc {
    fn init(&mut self, _setup: &Setup<'_>) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let (off, len) = (io.offset, io.len as u64);
        let result = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Read => sys::fallocate(io.fd, libc::FALLOC_FL_KEEP_SIZE, off, len),
            Ddir::Write => sys::fallocate(io.fd, 0, off, len),
            Ddir::Trim => sys::fallocate(io.fd, libc::FALLOC_FL_KEEP_SIZE | libc::FALLOC_FL_PUNCH_HOLE, off, len),
            Ddir::Sync => sys::fsync(io.fd, false),
            Ddir::DataSync => sys::fsync(io.fd, true),
        };
        Ok(QueueStatus::Completed(result))
    }
}

pub const INFO: EngineInfo =
    EngineInfo { writes_any_direction: true, ..EngineInfo::base("falloc", || Box::new(Falloc)) };
