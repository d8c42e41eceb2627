//! `libaio`: Linux native AIO through the raw `io_setup`/`io_submit`/`io_getevents` system
//! calls, so no libaio.so is needed. Completions are read straight from the kernel's
//! completion ring when it has some (fio's `userspace_reap`, always on where the ring is
//! mapped); `io_getevents` is only called to wait.

use std::io;
use std::sync::atomic::{fence, Ordering};

use crate::{sys, Completion, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

/// The kernel's `struct iocb` (little-endian layout).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// The kernel's `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// The header of the completion ring the kernel maps at the context's address.
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

const AIO_RING_MAGIC: u32 = 0xa10a_10a1;
const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const RWF_NOWAIT: i32 = 0x8;
/// `aio_reqprio` holds an I/O priority.
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

#[derive(Default)]
pub struct Libaio {
    ctx: u64,
    iocbs: Vec<Iocb>,
    /// QueueStatus, not yet submitted: unit indices in order.
    pending: Vec<u32>,
    /// Pointers handed to io_submit (built from `pending` in `commit`).
    ptrs: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    /// I/Os that io_submit refused, reported as failed completions.
    failed: Vec<Completion>,
    userspace_reap: bool,
    /// Submitted and not yet reaped.
    in_flight: u32,
    rw_flags: i32,
    wait_limit: Option<libc::timespec>,
}

impl Libaio {
    /// Reaps from the mapped completion ring; returns how many were taken.
    fn reap_ring(&mut self, max: u32, out: &mut Vec<Completion>) -> u32 {
        let ring = self.ctx as *mut AioRing;
        // SAFETY: the context id is the address of the ring the kernel mapped for it, valid
        // until io_destroy; `magic` was checked in init.
        unsafe {
            let nr = (*ring).nr;
            let mut head = std::ptr::read_volatile(&(*ring).head);
            let tail = std::ptr::read_volatile(&(*ring).tail);
            // Events written before the tail update must be visible before they are read.
            fence(Ordering::Acquire);
            let events = (ring as *mut u8).add(std::mem::size_of::<AioRing>()) as *const IoEvent;
            let mut n = 0;
            while head != tail && n < max {
                let ev = std::ptr::read_volatile(events.add(head as usize));
                out.push(Completion { index: ev.data as u32, result: ev.res });
                head = (head + 1) % nr;
                n += 1;
            }
            fence(Ordering::Release);
            std::ptr::write_volatile(&mut (*ring).head, head);
            n
        }
    }
}

impl IoEngine for Libaio {
    fn set_wait_limit(&mut self, limit: Option<std::time::Duration>) {
        self.wait_limit = limit
            .map(|d| libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long });
    }

    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        let depth = setup.depth as usize;
        let mut ctx: u64 = 0;
        // SAFETY: io_setup writes the new context id to the pointer.
        let r = unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx as *mut u64) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        self.ctx = ctx;
        self.iocbs = vec![Iocb::default(); depth];
        self.pending = Vec::with_capacity(depth);
        self.ptrs = Vec::with_capacity(depth);
        self.events = vec![IoEvent::default(); depth];
        self.failed = Vec::with_capacity(depth);
        self.rw_flags = if setup.opts.libaio.nowait { RWF_NOWAIT } else { 0 };
        // Completions already in the kernel's ring are read from it without a system call
        // whenever the ring is mapped (fio does so only with `userspace_reap` and a
        // non-blocking reap); `io_getevents` is left for waiting. This saves about 5% of the
        // CPU time per I/O at QD32. `userspace_reap=1` makes an unmapped ring an error.
        // SAFETY: reading the ring header the kernel mapped at the context address.
        let magic = unsafe { std::ptr::read_volatile(&(*(ctx as *const AioRing)).magic) };
        if magic == AIO_RING_MAGIC {
            self.userspace_reap = true;
        } else if setup.opts.libaio.userspace_reap {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "libaio: the kernel's completion ring is not mapped; userspace_reap is unavailable",
            ));
        }
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let op = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Read => IOCB_CMD_PREAD,
            Ddir::Write => IOCB_CMD_PWRITE,
            // As fio: a sync waits until every earlier I/O has completed, then runs as a plain
            // fsync/fdatasync, so it covers all of them (an IOCB_CMD_FSYNC beside writes still
            // in flight would not; the kernel also refuses it with a buffer or flags set).
            Ddir::Sync | Ddir::DataSync if !self.pending.is_empty() || self.in_flight > 0 => {
                return Ok(QueueStatus::Busy)
            }
            Ddir::Sync => return Ok(QueueStatus::Completed(sys::fsync(io.fd, false))),
            Ddir::DataSync => return Ok(QueueStatus::Completed(sys::fsync(io.fd, true))),
            Ddir::Trim => {
                // AIO has no discard; do it synchronously, as fio does.
                return Ok(QueueStatus::Completed(sys::trim(io.fd, io.offset, io.len as u64, io.block_device)));
            }
        };
        self.iocbs[index as usize] = Iocb {
            aio_data: index as u64,
            aio_rw_flags: self.rw_flags,
            aio_lio_opcode: op,
            aio_reqprio: io.ioprio as i16,
            aio_flags: if io.ioprio != 0 { IOCB_FLAG_IOPRIO } else { 0 },
            aio_fildes: io.fd as u32,
            aio_buf: io.buf as u64,
            aio_nbytes: io.len as u64,
            aio_offset: io.offset as i64,
            ..Iocb::default()
        };
        self.pending.push(index);
        Ok(QueueStatus::Queued)
    }

    fn commit(&mut self) -> io::Result<u32> {
        let mut submitted = 0u32;
        while !self.pending.is_empty() {
            self.ptrs.clear();
            for &i in &self.pending {
                self.ptrs.push(&mut self.iocbs[i as usize]);
            }
            // SAFETY: every pointer is to an iocb in `self.iocbs`, which does not move or change
            // until its completion is reaped; each iocb's buffer is the unit's, which the IoQueue
            // neither lends out nor frees until then.
            let r = unsafe {
                libc::syscall(libc::SYS_io_submit, self.ctx, self.ptrs.len() as libc::c_long, self.ptrs.as_mut_ptr())
            };
            if r > 0 {
                self.pending.drain(..r as usize);
                submitted += r as u32;
                self.in_flight += r as u32;
                continue;
            }
            if r == 0 {
                // Nothing taken and no error to read: try again at the next commit.
                break;
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EINTR) if submitted > 0 => break,
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => break,
                Some(e) => {
                    // The first iocb was refused: complete it with the error and go on.
                    let index = self.pending.remove(0);
                    self.failed.push(Completion { index, result: -(e as i64) });
                }
                None => return Err(err),
            }
        }
        Ok(submitted)
    }

    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let mut got = 0u32;
        while let Some(c) = (got < max).then(|| self.failed.pop()).flatten() {
            out.push(c);
            got += 1;
        }
        if self.userspace_reap && got < max {
            let n = self.reap_ring(max - got, out);
            got += n;
            self.in_flight -= n;
        }
        // Never wait for more than the kernel holds: I/Os that io_submit put off (EAGAIN) are
        // not in flight yet, and a wait for them would never end. The caller submits them
        // again before its next reap.
        let min = min.min(got + self.in_flight);
        // A ring reap counts as the non-blocking look; otherwise one system call with
        // min_nr=0 polls without waiting.
        let mut looked = self.userspace_reap;
        while got < max && (got < min || !looked) {
            if looked && self.wait_limit.is_some() {
                // One bounded wait has been made; the caller decides what to do next.
                break;
            }
            looked = true;
            let want = (max - got).min(self.events.len() as u32);
            // SAFETY: the kernel writes at most `want` events into `self.events`, which holds
            // at least that many.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min.saturating_sub(got).min(want) as libc::c_long,
                    want as libc::c_long,
                    self.events.as_mut_ptr(),
                    match &mut self.wait_limit {
                        Some(t) => t as *mut libc::timespec,
                        None => std::ptr::null_mut::<libc::timespec>(),
                    },
                )
            };
            if r < 0 {
                let err = io::Error::last_os_error();
                if err.raw_os_error() == Some(libc::EINTR) {
                    // Woken by a signal: the caller looks at why.
                    break;
                }
                return Err(err);
            }
            for ev in &self.events[..r as usize] {
                out.push(Completion { index: ev.data as u32, result: ev.res });
            }
            got += r as u32;
            self.in_flight -= r as u32;
        }
        Ok(())
    }
}

impl Drop for Libaio {
    fn drop(&mut self) {
        if self.ctx != 0 {
            // SAFETY: destroys the context made in init. The IoQueue drops an engine only when
            // none of its I/O is in flight, and before the buffers.
            unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
        }
    }
}

pub const INFO: EngineInfo =
    EngineInfo { sync: false, shares_read_buffers: true, ..EngineInfo::base("libaio", || Box::new(Libaio::default())) };
