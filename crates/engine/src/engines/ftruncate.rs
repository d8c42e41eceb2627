//! `ftruncate`: every write is one ftruncate(2) of the file to the write's offset (not its end,
//! as in fio: a sequential pass leaves the file one block short of its region). Reads and trims
//! have no meaning here and fail with EINVAL, as in fio. Each write counts as its full length.
//!
//! fio 3.33 fails `fsync=`/`fdatasync=` with EINVAL too; fiox syncs the file.

use std::io;

use crate::{sys, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

pub struct Ftruncate;

impl IoEngine for Ftruncate {
    fn init(&mut self, _setup: &Setup<'_>) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let result = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Write => match sys::ftruncate(io.fd, io.offset) {
                r if r < 0 => r,
                _ => io.len as i64,
            },
            Ddir::Read | Ddir::Trim => -(libc::EINVAL as i64),
            Ddir::Sync => sys::fsync(io.fd, false),
            Ddir::DataSync => sys::fsync(io.fd, true),
        };
        Ok(QueueStatus::Completed(result))
    }
}

pub const INFO: EngineInfo = EngineInfo::base("ftruncate", || Box::new(Ftruncate));
