//! `libblkio` (fio 3.42): I/O through libblkio, whose drivers reach files and block devices
//! (`io_uring`), NVMe namespaces (`nvme-io_uring`) and virtio-blk devices (vhost-user, vDPA,
//! VFIO). `libblkio_driver=` names the driver and `libblkio_path=` its `path` property; every
//! job file is that one device, as large as libblkio's `capacity` says, and nothing local is
//! laid out. Each job has an instance of its own with one queue (a poll queue with `hipri`),
//! up to `iodepth` requests in flight; reads, writes (plain or vectored), trims (discards or
//! write-zeroes) and flushes (`fsync=` and friends) are libblkio requests.
//!
//! Properties are set as fio 3.42 sets them: `path` and `direct` (from `direct=1`), then
//! `libblkio_pre_connect_props`; after connecting `num-entries`, `queue-size`, the queue
//! counts, then `libblkio_pre_start_props`. Completions are waited for in `blkioq_do_io`
//! (`libblkio_wait_mode=block`), on the queue's eventfd (`eventfd`) or in a busy loop (`loop`).
//!
//! Unlike fio, jobs run as threads of one process never share an instance: each has its own
//! (fio shares one among `thread` jobs, a queue each). Drivers whose memory must be mapped
//! first (`needs-mem-regions`, the virtio-blk ones) are refused with one line: fiox's buffers
//! are not mapped into libblkio yet.
//!
//! libblkio is loaded at run time (`dl/blkio.rs`): on a machine without it a job is refused
//! before any I/O, naming the library and its package; a driver or path libblkio refuses stops
//! the run while it is planned, with libblkio's reason on one line.

use std::io;
use std::time::{Duration, Instant};

use fiox_options::spec::{LibblkioOpts, LibblkioWaitMode as WaitMode};

use crate::dl::blkio::{Blkio, Completion as BlkioCompletion, Op};
use crate::{Completion, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, RemoteFile};

/// An instance of the job's driver with its pre-connect properties set, connected.
fn connect(o: &LibblkioOpts, direct: bool) -> Result<Blkio, String> {
    let driver = o.driver.as_deref().filter(|d| !d.is_empty()).ok_or_else(|| {
        "ioengine=libblkio needs libblkio_driver= (e.g. io_uring; fio: \"engine libblkio requires option libblkio_driver to be set\")".to_string()
    })?;
    if let Some(why) = o.conflict() {
        return Err(format!("ioengine=libblkio: {why}"));
    }
    crate::dl::blkio::load()?;
    let fail = |why: String| format!("ioengine=libblkio (libblkio_driver={driver}): {why}");
    let mut b = Blkio::create(driver).map_err(fail)?;
    if let Some(path) = &o.path {
        b.set_str("path", path).map_err(fail)?;
    }
    if direct {
        b.set_bool(c"direct", true).map_err(fail)?;
    }
    for (name, value) in &o.pre_connect_props {
        b.set_str(name, value).map_err(fail)?;
    }
    b.connect().map_err(|why| match &o.path {
        Some(p) => fail(format!("{why} (libblkio_path={p})")),
        None => fail(why),
    })?;
    Ok(b)
}

/// The job's files, each the whole device. Starts an instance once to look, so that a missing
/// library, a driver, path or property libblkio refuses, or conflicting options stop the run
/// before any I/O (fio 3.42 also opens the device once while it sets the job up).
fn remote(spec: &fiox_options::JobSpec, _clone: u32, names: &[String]) -> Result<Vec<RemoteFile>, String> {
    if names.len() > 1 {
        // fio 3.42 aborts on an assertion here.
        return Err(format!(
            "ioengine=libblkio does I/O to one device: a job has one file, not {} (nrfiles=1, one filename)",
            names.len()
        ));
    }
    let b = start(&spec.engine.libblkio, spec.direct)?;
    let size = b.get_uint64(c"capacity").map_err(|e| format!("ioengine=libblkio: {e}"))?;
    Ok(names.iter().map(|n| RemoteFile { name: n.clone(), size: Some(size), written: None, facts: None }).collect())
}

/// Connects, sets the start-time properties and starts, with one queue.
fn start(o: &LibblkioOpts, direct: bool) -> Result<Blkio, String> {
    let mut b = connect(o, direct)?;
    let driver = o.driver.as_deref().unwrap_or_default();
    let fail = |why: String| format!("ioengine=libblkio (libblkio_driver={driver}): {why}");
    if let Some(n) = o.num_entries {
        b.set_int(c"num-entries", n).map_err(fail)?;
    }
    if let Some(n) = o.queue_size {
        b.set_int(c"queue-size", n).map_err(fail)?;
    }
    let (regular, poll) = if o.hipri { (0, 1) } else { (1, 0) };
    b.set_int(c"num-queues", regular).map_err(fail)?;
    b.set_int(c"num-poll-queues", poll).map_err(fail)?;
    for (name, value) in &o.pre_start_props {
        b.set_str(name, value).map_err(fail)?;
    }
    b.start(o.hipri).map_err(fail)?;
    if b.get_bool(c"needs-mem-regions").map_err(fail)? {
        return Err(fail(
            "the driver needs its I/O buffers in mapped memory regions, which fiox does not map yet".into(),
        ));
    }
    Ok(b)
}

#[derive(Default)]
struct Libblkio {
    b: Option<Blkio>,
    wait: WaitMode,
    vectored: bool,
    write_zeroes: bool,
    /// The queue's completion eventfd (`libblkio_wait_mode=eventfd`).
    event_fd: Option<std::os::fd::RawFd>,
    /// Per unit: its length (a completion reports success only) and its iovec (vectored
    /// requests point at it until they complete).
    lens: Vec<u32>,
    iovs: Vec<libc::iovec>,
    /// Requests queued since the last submission, and requests libblkio holds.
    queued: u32,
    in_flight: u32,
    done: Vec<BlkioCompletion>,
    limit: Option<Duration>,
}

impl Libblkio {
    /// Takes up to `max` completions libblkio has, waiting for `min` of them (within `left`).
    fn take(&mut self, min: usize, max: usize, left: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<usize> {
        let b = self.b.as_mut().ok_or_else(|| io::Error::other("libblkio: not started"))?;
        let n = match b.do_io(&mut self.done[..max], min, left) {
            Ok(n) => n,
            Err(e) if e == -libc::ETIME || e == -libc::EINTR => 0,
            Err(e) => {
                return Err(io::Error::other(format!("libblkio: blkioq_do_io() failed: {}", b.last_error(e))));
            }
        };
        for c in &self.done[..n] {
            let index = c.user_data() as u32;
            let len = self.lens.get(index as usize).copied().unwrap_or(0);
            let result = if c.ret() == 0 { len as i64 } else { c.ret() as i64 };
            out.push(Completion { index, result });
        }
        self.in_flight -= n as u32;
        Ok(n)
    }

    /// Waits on the eventfd for libblkio's next event, at most `left`.
    fn wait_event(fd: std::os::fd::RawFd, left: Option<Duration>) {
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        let ms = left.map_or(-1, |d| d.as_millis().clamp(1, i32::MAX as u128) as i32);
        // SAFETY: one live pollfd for the call.
        if unsafe { libc::poll(&mut pfd, 1, ms) } > 0 {
            let mut word = [0u8; 8];
            // SAFETY: reads at most 8 bytes into `word`; the eventfd is non-blocking, so a
            // spurious wake-up returns EAGAIN, which is harmless.
            unsafe { libc::read(fd, word.as_mut_ptr().cast(), word.len()) };
        }
    }
}

impl IoEngine for Libblkio {
    fn init(&mut self, setup: &crate::Setup<'_>) -> io::Result<()> {
        let o = &setup.opts.libblkio;
        let mut b = start(o, setup.direct).map_err(io::Error::other)?;
        if o.wait_mode == WaitMode::Eventfd || o.force_enable_completion_eventfd {
            let fd = b.completion_fd();
            self.event_fd = (o.wait_mode == WaitMode::Eventfd).then_some(fd);
        }
        let units = setup.depth.max(setup.buffers.count() as u32).max(1) as usize;
        self.lens = vec![0; units];
        self.iovs = vec![libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; units];
        self.done = vec![BlkioCompletion::EMPTY; units];
        self.wait = o.wait_mode;
        self.vectored = o.vectored;
        self.write_zeroes = o.write_zeroes_on_trim;
        self.b = Some(b);
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let i = index as usize;
        if i >= self.lens.len() {
            return Err(io::Error::other(format!("libblkio: unit {index} beyond the queue depth")));
        }
        let op = match io.ddir {
            Ddir::Read if self.vectored => Op::Readv,
            Ddir::Read => Op::Read,
            Ddir::Write if self.vectored => Op::Writev,
            Ddir::Write => Op::Write,
            Ddir::Trim if self.write_zeroes => Op::WriteZeroes,
            Ddir::Trim => Op::Discard,
            Ddir::Sync | Ddir::DataSync => Op::Flush,
            Ddir::SyncRange => return Ok(QueueStatus::Completed(-(libc::EINVAL as i64))),
        };
        self.lens[i] = io.len;
        self.iovs[i] = libc::iovec { iov_base: io.buf.cast(), iov_len: io.len as usize };
        let iov: *mut libc::iovec = &mut self.iovs[i];
        let b = self.b.as_mut().ok_or_else(|| io::Error::other("libblkio: not started"))?;
        // SAFETY: the unit's buffer holds at least `len` bytes for reads and writes and is left
        // alone until its completion is reaped (the IoQueue's rule); its iovec in `iovs` is
        // not moved or rewritten until then either (a unit is queued again only once reaped).
        unsafe { b.queue(op, io.offset, io.buf, io.len as u64, iov, i) };
        self.queued += 1;
        self.in_flight += 1;
        Ok(QueueStatus::Queued)
    }

    fn commit(&mut self) -> io::Result<u32> {
        let n = std::mem::take(&mut self.queued);
        if n == 0 {
            return Ok(0);
        }
        let b = self.b.as_mut().ok_or_else(|| io::Error::other("libblkio: not started"))?;
        // Submits without waiting or taking completions (none fit in an empty array).
        b.do_io(&mut [], 0, None)
            .map_err(|e| io::Error::other(format!("libblkio: blkioq_do_io() failed: {}", b.last_error(e))))?;
        Ok(n)
    }

    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let max = (max as usize).min(self.done.len());
        // blkioq_do_io refuses to wait for more completions than requests in flight.
        let min = (min as usize).min(self.in_flight as usize).min(max);
        let deadline = self.limit.map(|l| Instant::now() + l);
        let left = || deadline.map(|d| d.saturating_duration_since(Instant::now()));
        match self.wait {
            WaitMode::Block => {
                self.take(min, max, self.limit, out)?;
            }
            WaitMode::Loop | WaitMode::Eventfd => {
                let mut got = 0;
                loop {
                    got += self.take(0, max - got, None, out)?;
                    if got >= min || got >= max || left().is_some_and(|l| l.is_zero()) {
                        break;
                    }
                    match self.event_fd {
                        Some(fd) => Self::wait_event(fd, left()),
                        None => std::hint::spin_loop(),
                    }
                }
            }
        }
        Ok(())
    }

    fn set_wait_limit(&mut self, limit: Option<Duration>) {
        self.limit = limit;
    }
}

fn make() -> Box<dyn IoEngine> {
    Box::new(Libblkio::default())
}

/// No local file is opened or laid out (`diskless`); the planner asks `remote` for the device.
pub const INFO: EngineInfo =
    EngineInfo { sync: false, diskless: true, remote: Some(remote), ..EngineInfo::base("libblkio", make) };
