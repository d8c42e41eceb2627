//! `mmap`: maps each file once and copies between the mapping and the I/O buffer; `fsync`
//! becomes `msync`. Trims are refused (EOPNOTSUPP), as a mapping has no discard.

use std::io;

use crate::map::Map;
use crate::{Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

#[derive(Default)]
pub struct Mmap {
    maps: Vec<Map>,
}

impl IoEngine for Mmap {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        for (&fd, &size) in setup.fds.iter().zip(setup.sizes) {
            let prot = libc::PROT_READ | if setup.writes { libc::PROT_WRITE } else { 0 };
            // SAFETY: a new shared mapping of an open file; no existing memory is touched.
            let p = unsafe { libc::mmap(std::ptr::null_mut(), size as usize, prot, libc::MAP_SHARED, fd, 0) };
            if p == libc::MAP_FAILED {
                return Err(io::Error::new(
                    io::Error::last_os_error().kind(),
                    format!("mmap: cannot map {size} bytes: {}", io::Error::last_os_error()),
                ));
            }
            // SAFETY: the mapping just made, unmapped only when the engine is dropped.
            self.maps.push(unsafe { Map::new(p.cast(), size as usize) });
        }
        Ok(())
    }

    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let m = &self.maps[io.file_index as usize];
        let result = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Read | Ddir::Write => m.transfer(io, |dst, src, len| {
                // SAFETY: transfer hands a span inside the mapping, writable for jobs that
                // write, and the unit's buffer, `len` bytes each and apart.
                unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
            }),
            Ddir::Sync | Ddir::DataSync => {
                // SAFETY: msync of the whole mapping made in init.
                if unsafe { libc::msync(m.base().cast(), m.len(), libc::MS_SYNC) } == 0 {
                    0
                } else {
                    -(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64)
                }
            }
            Ddir::Trim => -(libc::EOPNOTSUPP as i64),
        };
        Ok(QueueStatus::Completed(result))
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        for m in &self.maps {
            // SAFETY: each mapping made in init, unmapped once.
            unsafe { libc::munmap(m.base().cast(), m.len()) };
        }
    }
}

pub const INFO: EngineInfo = EngineInfo::base("mmap", || Box::new(Mmap::default()));
