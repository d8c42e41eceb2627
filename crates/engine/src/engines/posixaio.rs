//! `posixaio`: POSIX asynchronous I/O (`aio_read`, `aio_write`, `aio_fsync`), completed by
//! polling `aio_error` and waiting in `aio_suspend`. glibc implements it with helper threads, so
//! it is mostly useful for comparison with systems that have nothing better.

use std::io;

use crate::{sys, Completion, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

#[derive(Default)]
pub struct PosixAio {
    cbs: Vec<libc::aiocb>,
    /// Units in flight, in submission order.
    inflight: Vec<u32>,
    /// Pointers for aio_suspend, rebuilt before each wait.
    list: Vec<*const libc::aiocb>,
    wait_limit: Option<libc::timespec>,
}

impl IoEngine for PosixAio {
    fn set_wait_limit(&mut self, limit: Option<std::time::Duration>) {
        self.wait_limit = limit
            .map(|d| libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long });
    }

    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        // SAFETY: aiocb is plain data; zeroed is a valid, idle control block.
        self.cbs = (0..setup.depth).map(|_| unsafe { std::mem::zeroed() }).collect();
        self.inflight = Vec::with_capacity(setup.depth as usize);
        self.list = Vec::with_capacity(setup.depth as usize);
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        if io.ddir == Ddir::Trim {
            return Ok(QueueStatus::Completed(sys::trim(io.fd, io.offset, io.len as u64, io.block_device)));
        }
        let cb = &mut self.cbs[index as usize];
        // SAFETY: resetting the unit's own control block, which is idle (its unit is free).
        *cb = unsafe { std::mem::zeroed() };
        cb.aio_fildes = io.fd;
        cb.aio_buf = io.buf.cast();
        cb.aio_nbytes = io.len as usize;
        cb.aio_offset = io.offset as libc::off_t;
        // SAFETY: the control block and the buffer stay untouched until the completion is
        // reaped (the control block lives in `self.cbs`, which is not resized after init).
        let r = unsafe {
            match io.ddir {
                Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
                Ddir::Read => libc::aio_read(cb),
                Ddir::Write => libc::aio_write(cb),
                Ddir::Sync => libc::aio_fsync(libc::O_SYNC, cb),
                Ddir::DataSync => libc::aio_fsync(libc::O_DSYNC, cb),
                Ddir::Trim => unreachable!("handled above"),
            }
        };
        if r != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EAGAIN) {
                return Ok(QueueStatus::Busy);
            }
            return Ok(QueueStatus::Completed(-(e.raw_os_error().unwrap_or(libc::EIO) as i64)));
        }
        self.inflight.push(index);
        Ok(QueueStatus::Queued)
    }

    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let mut got = 0u32;
        loop {
            let mut i = 0;
            while i < self.inflight.len() && got < max {
                let idx = self.inflight[i];
                let cb = &mut self.cbs[idx as usize];
                // SAFETY: cb was submitted by queue and not yet reaped.
                let err = unsafe { libc::aio_error(cb) };
                if err == libc::EINPROGRESS {
                    i += 1;
                    continue;
                }
                // SAFETY: the request has finished (aio_error is no longer EINPROGRESS).
                let ret = unsafe { libc::aio_return(cb) };
                let result = if err != 0 { -(err as i64) } else { ret as i64 };
                out.push(Completion { index: idx, result });
                self.inflight.swap_remove(i);
                got += 1;
            }
            if got >= min || got >= max || self.inflight.is_empty() {
                return Ok(());
            }
            self.list.clear();
            for &idx in &self.inflight {
                self.list.push(&self.cbs[idx as usize]);
            }
            let limit = self.wait_limit.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
            // SAFETY: every pointer is to an in-flight control block in `self.cbs`; the limit,
            // if any, lives in `self` for the call.
            let r = unsafe { libc::aio_suspend(self.list.as_ptr(), self.list.len() as i32, limit) };
            if r != 0 {
                match io::Error::last_os_error().raw_os_error() {
                    // The wait limit passed, or a signal woke the caller: it looks at why.
                    Some(libc::EAGAIN) if self.wait_limit.is_some() => return Ok(()),
                    Some(libc::EINTR) => return Ok(()),
                    _ => {}
                }
            }
        }
    }
}

impl Drop for PosixAio {
    fn drop(&mut self) {
        // Requests still in flight must finish before their control blocks go away.
        for &idx in &self.inflight {
            let cb = &mut self.cbs[idx as usize];
            // SAFETY: cb is in flight; aio_cancel and aio_error only read it.
            unsafe {
                libc::aio_cancel(cb.aio_fildes, cb);
                while libc::aio_error(cb) == libc::EINPROGRESS {
                    let list = [cb as *const libc::aiocb];
                    libc::aio_suspend(list.as_ptr(), 1, std::ptr::null());
                }
                libc::aio_return(cb);
            }
        }
    }
}

pub const INFO: EngineInfo = EngineInfo {
    sync: false,
    shares_read_buffers: true,
    ..EngineInfo::base("posixaio", || Box::new(PosixAio::default()))
};
