//! The synchronous engines: `sync` (lseek + read/write), `psync` (pread/pwrite, fio's default
//! on Linux), `vsync` (readv/writev), `pvsync` (preadv/pwritev) and `pvsync2` (preadv2/pwritev2
//! with RWF_HIPRI, RWF_NOWAIT, RWF_DONTCACHE). Each I/O completes inside `queue`.
//!
//! fio's `vsync` merges adjacent I/Os into one vector call; fiox issues one vector per I/O,
//! which is what happens anyway at iodepth=1, the only depth a synchronous engine uses.

use std::io;

use crate::{sys, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Call {
    Sync,
    Psync,
    Vsync,
    Pvsync,
    Pvsync2,
}

pub struct SyncEngine {
    call: Call,
    /// preadv2/pwritev2 flags (pvsync2 only), RWF_HIPRI left out: see `hipri`.
    flags: i32,
    /// pvsync2 with `hipri`: the share of I/Os (percent) sent with RWF_HIPRI
    /// (`hipri_percentage`, fio's default 100); 0 without `hipri`.
    hipri: u32,
    /// The draw per I/O, as fio's pvsync2 draws one (xorshift64; a fixed seed, so a run's
    /// sequence of polled and unpolled I/Os repeats).
    rng: u64,
}

impl SyncEngine {
    const fn new(call: Call) -> SyncEngine {
        SyncEngine { call, flags: 0, hipri: 0, rng: 0x9e37_79b9_7f4a_7c15 }
    }

    /// The flags of the next preadv2/pwritev2: RWF_HIPRI on `hipri_percentage` percent of them.
    #[inline]
    fn next_flags(&mut self) -> i32 {
        match self.hipri {
            0 => self.flags,
            100.. => self.flags | RWF_HIPRI,
            pct => {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                // 1..=100 as fio's rand_between(1, 100) <= pct.
                if (self.rng % 100) < pct as u64 {
                    self.flags | RWF_HIPRI
                } else {
                    self.flags
                }
            }
        }
    }
}

const RWF_HIPRI: i32 = 0x1;
const RWF_NOWAIT: i32 = 0x8;
const RWF_DONTCACHE: i32 = 0x80;

impl IoEngine for SyncEngine {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        if self.call == Call::Pvsync2 {
            let o = &setup.opts.pvsync2;
            self.hipri = if o.hipri { o.hipri_percentage.min(100) } else { 0 };
            self.flags = (if o.nowait { RWF_NOWAIT } else { 0 }) | (if o.uncached { RWF_DONTCACHE } else { 0 });
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let len = io.len as usize;
        let flags = if self.call == Call::Pvsync2 { self.next_flags() } else { 0 };
        let result = match io.ddir {
            Ddir::Read | Ddir::Write => {
                let write = io.ddir == Ddir::Write;
                // SAFETY: the queue hands an engine a unit whose buffer holds at least `len`
                // bytes and which nothing else touches until this call has returned.
                unsafe {
                    match self.call {
                        Call::Psync if write => sys::pwrite(io.fd, io.buf, len, io.offset),
                        Call::Psync => sys::pread(io.fd, io.buf, len, io.offset),
                        Call::Sync => sys::seek_rw(io.fd, io.buf, len, io.offset, write),
                        Call::Vsync => sys::vector_rw(io.fd, io.buf, len, io.offset, write, false, 0),
                        Call::Pvsync | Call::Pvsync2 => {
                            sys::vector_rw(io.fd, io.buf, len, io.offset, write, true, flags)
                        }
                    }
                }
            }
            Ddir::Trim => sys::trim(io.fd, io.offset, io.len as u64, io.block_device),
            Ddir::Sync => sys::fsync(io.fd, false),
            Ddir::DataSync => sys::fsync(io.fd, true),
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
        };
        Ok(QueueStatus::Completed(result))
    }
}

const fn info(name: &'static str, call: Call) -> EngineInfo {
    EngineInfo::base(
        name,
        match call {
            Call::Sync => || Box::new(SyncEngine::new(Call::Sync)),
            Call::Psync => || Box::new(SyncEngine::new(Call::Psync)),
            Call::Vsync => || Box::new(SyncEngine::new(Call::Vsync)),
            Call::Pvsync => || Box::new(SyncEngine::new(Call::Pvsync)),
            Call::Pvsync2 => || Box::new(SyncEngine::new(Call::Pvsync2)),
        },
    )
}

pub const SYNC: EngineInfo = info("sync", Call::Sync);
pub const PSYNC: EngineInfo = info("psync", Call::Psync);
pub const VSYNC: EngineInfo = info("vsync", Call::Vsync);
pub const PVSYNC: EngineInfo = info("pvsync", Call::Pvsync);
pub const PVSYNC2: EngineInfo = info("pvsync2", Call::Pvsync2);
