//! `mmap`: maps each file once and copies between the mapping and the I/O buffer; `fsync`
//! becomes `msync`. Trims are refused (EOPNOTSUPP), as a mapping has no discard.

use std::io;

use crate::{Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

struct Map {
    ptr: *mut u8,
    len: usize,
}

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
            self.maps.push(Map { ptr: p.cast(), len: size as usize });
        }
        Ok(())
    }

    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let m = &self.maps[io.file_index as usize];
        let (off, len) = (io.offset as usize, io.len as usize);
        let result = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Read | Ddir::Write if off.checked_add(len).is_none_or(|end| end > m.len) => -(libc::EINVAL as i64),
            Ddir::Read => {
                // SAFETY: off..off+len is inside the mapping (checked above) and the buffer holds
                // at least len bytes; the regions cannot overlap (heap vs file mapping).
                unsafe { std::ptr::copy_nonoverlapping(m.ptr.add(off), io.buf, len) };
                len as i64
            }
            Ddir::Write => {
                // SAFETY: as for reads, in the other direction; the mapping is writable for
                // jobs that write.
                unsafe { std::ptr::copy_nonoverlapping(io.buf, m.ptr.add(off), len) };
                len as i64
            }
            Ddir::Sync | Ddir::DataSync => {
                // SAFETY: msync of the whole mapping made in init.
                if unsafe { libc::msync(m.ptr.cast(), m.len, libc::MS_SYNC) } == 0 {
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
            unsafe { libc::munmap(m.ptr.cast(), m.len) };
        }
    }
}

pub const INFO: EngineInfo = EngineInfo::base("mmap", || Box::new(Mmap::default()));
