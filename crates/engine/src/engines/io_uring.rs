//! `io_uring`, on the io-uring crate. Registers the job's buffers (READ_FIXED/WRITE_FIXED) and
//! files whenever the kernel allows, as fio does with `fixedbufs` and `registerfiles`; those
//! options make a failure to register an error. Also supports `sqthread_poll`/`sqthread_poll_cpu` (SQPOLL),
//! `hipri` (IOPOLL), `nonvectored`, `nowait`, `uncached` and `force_async`. The kernel is probed
//! first, and a missing feature is an error naming it. The ring is set up single-issuer with
//! cooperative (and, when the runner always waits, deferred) task running when the kernel has
//! those flags, falling back to a plain ring when it does not.

use std::io;

use io_uring::{cqueue, opcode, squeue, types, IoUring, Probe};

use crate::{sys, Completion, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

const RWF_NOWAIT: i32 = 0x8;
const RWF_DONTCACHE: i32 = 0x80;

#[derive(Default)]
pub struct Uring {
    ring: Option<IoUring>,
    fixedbufs: bool,
    /// The units share one buffer, registered once: every fixed read names buffer 0.
    shared_bufs: bool,
    registerfiles: bool,
    vectored: bool,
    rw_flags: i32,
    force_async: u64,
    queued_count: u64,
    /// One iovec per unit for the vectored commands; stable while the ring lives.
    iovecs: Vec<libc::iovec>,
    unqueued: u32,
    wait_limit: Option<std::time::Duration>,
    /// `sqthread_poll`: the kernel's thread submits; the job looks for completions by polling
    /// (see [`spin_for`]).
    sqpoll: bool,
    /// `commit` leaves the system call to what comes next (see [`Uring::commit`]) ...
    defer_submit: bool,
    /// ... and has done so: the entries queued so far are owed to the kernel.
    committed: bool,
    /// The ring's registered index for this thread, or -1 (see [`register_ring_fd`]).
    reg: i32,
    /// The setup flags and registrations that took effect, for the report.
    features: Vec<&'static str>,
}

/// The setup flags fiox asks for, newest first; each is recorded when the kernel took it.
/// `SINGLE_ISSUER` lets the kernel drop submit-side locking (one thread submits, the worker);
/// `DEFER_TASKRUN` runs completion work only when the worker asks for completions, batched;
/// without it (a runner that polls), `COOP_TASKRUN` spares interrupting the task to run
/// completion work and `TASKRUN_FLAG` says when an enter is needed to run it; `NO_SQARRAY`
/// drops the submission queue's index array (one cache line less per entry).
const SETUP_FLAGS: [&str; 5] = ["SINGLE_ISSUER", "DEFER_TASKRUN", "COOP_TASKRUN", "TASKRUN_FLAG", "NO_SQARRAY"];

/// Which of [`SETUP_FLAGS`] a job's ring asks for: the first four depend on how the runner
/// waits and on SQPOLL (whose kernel thread is the issuer).
fn wanted_flags(setup: &Setup<'_>) -> Vec<&'static str> {
    let o = &setup.opts.io_uring;
    let mut want = Vec::new();
    if !o.sqthread_poll {
        want.push("SINGLE_ISSUER");
        if setup.waits_for_completions {
            want.push("DEFER_TASKRUN");
        } else {
            want.extend(["COOP_TASKRUN", "TASKRUN_FLAG"]);
        }
    }
    want.push("NO_SQARRAY");
    want
}

fn build(depth: u32, setup: &Setup<'_>, flags: &[&str]) -> io::Result<IoUring> {
    let mut b = IoUring::builder();
    b.setup_cqsize(depth * 2);
    let o = &setup.opts.io_uring;
    if o.sqthread_poll {
        b.setup_sqpoll(1000);
        if let Some(cpu) = o.sqthread_poll_cpu {
            b.setup_sqpoll_cpu(cpu);
        }
    }
    if o.hipri {
        b.setup_iopoll();
    }
    for f in flags {
        match *f {
            "SINGLE_ISSUER" => b.setup_single_issuer(),
            "DEFER_TASKRUN" => b.setup_defer_taskrun(),
            "COOP_TASKRUN" => b.setup_coop_taskrun(),
            "TASKRUN_FLAG" => b.setup_taskrun_flag(),
            _ => b.setup_no_sqarray(),
        };
    }
    b.build(depth)
}

/// Sets up the ring with as many of the wanted flags as the kernel takes: an older kernel
/// refuses an unknown flag with EINVAL, so the newest flag still asked for is dropped and the
/// setup tried again (`NO_SQARRAY` is 6.6, `DEFER_TASKRUN` 6.1, `SINGLE_ISSUER` 6.0, the
/// task-run flags 5.19). Returns the ring and the flags it took.
fn build_ring(depth: u32, setup: &Setup<'_>) -> io::Result<(IoUring, Vec<&'static str>)> {
    let mut flags = wanted_flags(setup);
    loop {
        match build(depth, setup, &flags) {
            Ok(r) => return Ok((r, flags)),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && !flags.is_empty() => {
                // Newest first: NO_SQARRAY, then DEFER_TASKRUN (or TASKRUN_FLAG), and so on.
                let newest = SETUP_FLAGS.iter().rev().position(|f| flags.contains(f)).map(|i| SETUP_FLAGS[4 - i]);
                flags.retain(|f| Some(*f) != newest);
            }
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("io_uring: cannot set up a ring of {depth} entries: {e}"),
                ));
            }
        }
    }
}

const IORING_REGISTER_RING_FDS: libc::c_uint = 20;
const IORING_UNREGISTER_RING_FDS: libc::c_uint = 21;
const IORING_ENTER_GETEVENTS: libc::c_uint = 1;
const IORING_ENTER_REGISTERED_RING: libc::c_uint = 1 << 4;

/// The kernel's `struct io_uring_rsrc_update`.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// Registers the ring's own descriptor with the calling thread (5.18), so that each enter
/// skips looking up and counting the ring's file; returns its index, or -1 when the kernel
/// cannot. The registration belongs to the thread, which is the one that submits.
pub(super) fn register_ring_fd(fd: i32) -> i32 {
    let mut up = RsrcUpdate { offset: u32::MAX, resv: 0, data: fd as u64 };
    // SAFETY: io_uring_register reads and writes one io_uring_rsrc_update, which `up` is.
    let r = unsafe {
        libc::syscall(libc::SYS_io_uring_register, fd, IORING_REGISTER_RING_FDS, &mut up as *mut RsrcUpdate, 1)
    };
    if r == 1 {
        up.offset as i32
    } else {
        -1
    }
}

/// Undoes [`register_ring_fd`] (when the ring is dropped on the thread that registered it;
/// elsewhere the kernel refuses, and the registration ends with that thread).
pub(super) fn unregister_ring_fd(fd: i32, index: i32) {
    if index >= 0 {
        let mut up = RsrcUpdate { offset: index as u32, resv: 0, data: 0 };
        // SAFETY: as in register_ring_fd.
        unsafe {
            libc::syscall(libc::SYS_io_uring_register, fd, IORING_UNREGISTER_RING_FDS, &mut up as *mut RsrcUpdate, 1)
        };
    }
}

/// One `io_uring_enter` submitting what the submission queue holds and, with `want` > 0,
/// waiting for that many completions; through the registered ring index when there is one
/// (`reg` >= 0, never with SQPOLL), otherwise as the io-uring crate does it.
fn enter<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: &mut IoUring<S, C>,
    reg: i32,
    want: u32,
) -> io::Result<usize> {
    if reg < 0 {
        return ring.submit_and_wait(want as usize);
    }
    let iopoll = ring.params().is_setup_iopoll();
    let sq = ring.submission();
    let to_submit = sq.len() as libc::c_uint;
    // Completion work (deferred or flagged) and an overflowed completion queue are only dealt
    // with by an enter that asks for completions.
    let get = want > 0 || iopoll || sq.cq_overflow() || sq.taskrun();
    drop(sq);
    let flags = IORING_ENTER_REGISTERED_RING | if get { IORING_ENTER_GETEVENTS } else { 0 };
    // SAFETY: a plain io_uring_enter without an argument structure; the entries it submits
    // were pushed by `queue`, whose buffers stay the units' until reaped.
    let r = unsafe {
        libc::syscall(libc::SYS_io_uring_enter, reg, to_submit, want, flags, std::ptr::null::<libc::c_void>(), 0usize)
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

impl Uring {
    fn ring(&mut self) -> &mut IoUring {
        self.ring.as_mut().expect("io_uring used before init")
    }

    /// Submits the entries a deferred commit left (see [`Uring::commit`]).
    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        if self.committed {
            if self.unqueued > 0 {
                let ring = self.ring.as_mut().expect("io_uring used before init");
                commit(ring, self.reg, &mut self.unqueued)?;
            }
            // A full completion queue (EBUSY) kept them: still owed, tried again next time.
            self.committed = self.unqueued > 0;
        }
        Ok(())
    }
}

impl IoEngine for Uring {
    fn set_wait_limit(&mut self, limit: Option<std::time::Duration>) {
        self.wait_limit = limit;
    }

    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        let depth = setup.depth.max(1).next_power_of_two();
        let (ring, flags) = build_ring(depth, setup)?;
        self.features = flags;
        let mut probe = Probe::new();
        ring.submitter()
            .register_probe(&mut probe)
            .map_err(|e| io::Error::new(e.kind(), format!("io_uring: cannot probe the kernel's operations: {e}")))?;
        let o = &setup.opts.io_uring;
        let need = |code: u8, name: &str| -> io::Result<()> {
            if probe.is_supported(code) {
                Ok(())
            } else {
                Err(io::Error::new(io::ErrorKind::Unsupported, format!("io_uring: kernel lacks IORING_OP_{name}")))
            }
        };
        self.vectored = match o.nonvectored {
            0 => true,
            1 => {
                need(opcode::Read::CODE, "READ")?;
                need(opcode::Write::CODE, "WRITE")?;
                false
            }
            _ => !(probe.is_supported(opcode::Read::CODE) && probe.is_supported(opcode::Write::CODE)),
        };
        // Registered buffers spare the kernel pinning each I/O's pages, and registered files
        // spare it looking up each I/O's file. fio does this only when asked (`fixedbufs`,
        // `registerfiles`); fiox does it whenever the kernel allows, and fails only when the
        // user asked for it and it cannot be done.
        let fixed_ok = probe.is_supported(opcode::ReadFixed::CODE) && probe.is_supported(opcode::WriteFixed::CODE);
        if o.fixedbufs {
            need(opcode::ReadFixed::CODE, "READ_FIXED")?;
            need(opcode::WriteFixed::CODE, "WRITE_FIXED")?;
        }
        if fixed_ok && setup.buffers.count() <= u16::MAX as usize {
            let iovecs: Vec<libc::iovec> =
                setup.buffers.regions().map(|(p, l)| libc::iovec { iov_base: p.cast(), iov_len: l }).collect();
            // SAFETY: the buffers belong to the job's pool, which the IoQueue keeps alive until
            // after this engine (and so the ring and its registration) is dropped.
            match unsafe { ring.submitter().register_buffers(&iovecs) } {
                Ok(()) => {
                    self.fixedbufs = true;
                    self.shared_bufs = setup.buffers.shared();
                    self.features.push("FIXED_BUFFERS");
                }
                Err(e) if o.fixedbufs => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("io_uring: cannot register {} buffers (fixedbufs; check ulimit -l): {e}", iovecs.len()),
                    ));
                }
                Err(_) => {}
            }
        }
        match ring.submitter().register_files(setup.fds) {
            Ok(()) => {
                self.registerfiles = true;
                self.features.push("FIXED_FILES");
            }
            Err(e) if o.registerfiles => {
                return Err(io::Error::new(e.kind(), format!("io_uring: cannot register files: {e}")));
            }
            Err(_) => {}
        }
        self.rw_flags = (if o.nowait { RWF_NOWAIT } else { 0 }) | (if o.uncached { RWF_DONTCACHE } else { 0 });
        self.force_async = o.force_async;
        self.sqpoll = o.sqthread_poll;
        self.defer_submit = !o.sqthread_poll;
        self.iovecs = vec![libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; setup.buffers.count()];
        self.reg = -1;
        if !o.sqthread_poll {
            use std::os::fd::AsRawFd;
            self.reg = register_ring_fd(ring.as_raw_fd());
            if self.reg >= 0 {
                self.features.push("REGISTERED_RING");
            }
        }
        self.ring = Some(ring);
        Ok(())
    }

    fn features(&self) -> Vec<&'static str> {
        self.features.clone()
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        self.flush()?;
        let user_data = index as u64;
        let entry = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Trim => {
                // io_uring has no discard command for regular files; do it in line.
                return Ok(QueueStatus::Completed(sys::trim(io.fd, io.offset, io.len as u64, io.block_device)));
            }
            Ddir::Sync | Ddir::DataSync => {
                let mut f = opcode::Fsync::new(types::Fd(io.fd));
                if io.ddir == Ddir::DataSync {
                    f = f.flags(types::FsyncFlags::DATASYNC);
                }
                if self.registerfiles {
                    let mut f = opcode::Fsync::new(types::Fixed(io.file_index));
                    if io.ddir == Ddir::DataSync {
                        f = f.flags(types::FsyncFlags::DATASYNC);
                    }
                    f.build()
                } else {
                    f.build()
                }
            }
            Ddir::Read | Ddir::Write => self.rw_entry(index, io),
        };
        let mut entry = entry.user_data(user_data);
        self.queued_count += 1;
        if self.force_async > 0 && self.queued_count % self.force_async == 0 {
            entry = entry.flags(squeue::Flags::ASYNC);
        }
        // SAFETY: the entry's buffer (and iovec, for vectored commands) belong to unit `index`;
        // the IoQueue lends that buffer to nobody and frees no buffer until this unit's
        // completion is reaped.
        let pushed = unsafe { self.ring().submission().push(&entry) };
        match pushed {
            Ok(()) => {
                self.unqueued += 1;
                Ok(QueueStatus::Queued)
            }
            Err(_) => Ok(QueueStatus::Busy),
        }
    }

    /// Counts the queued entries as submitted and leaves the system call to whichever comes
    /// first: the next `queue` (another I/O is ready, so these go to the kernel before it is
    /// queued, and each I/O is still submitted as soon as the next one could be) or the next
    /// `getevents` (the runner reaps after every commit and waits on nothing else in between).
    /// When that reap has to wait, one `io_uring_enter` submits and waits, as `t/io_uring`
    /// does, instead of one to submit and one to wait: case e of `bench/vs-fio` (fio's
    /// defaults) goes from 1.05 enters per I/O to 1.0, case u (batches of 32) from 2 per batch
    /// to 1. With SQPOLL the kernel's thread takes entries as they are queued and commit only
    /// wakes it, so it is done at once.
    fn commit(&mut self) -> io::Result<u32> {
        if self.defer_submit {
            self.committed = self.unqueued > 0;
            return Ok(self.unqueued);
        }
        let ring = self.ring.as_mut().expect("io_uring used before init");
        commit(ring, self.reg, &mut self.unqueued)
    }

    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let ring = self.ring.as_mut().expect("io_uring used before init");
        let done = |cqe: &cqueue::Entry| Completion { index: cqe.user_data() as u32, result: cqe.result() as i64 };
        if self.sqpoll && self.wait_limit.is_none() && min > 0 {
            spin_for(ring, min);
        }
        reap(ring, self.reg, &mut self.unqueued, self.wait_limit, min, max, out, done)?;
        // Nothing had to be waited for: the committed entries are submitted now. A full
        // completion queue leaves them queued for the next call.
        self.flush()
    }
}

/// How long a job with `sqthread_poll` polls its completion queue before it sleeps in the
/// kernel: longer than a fast device's latency, short enough that the runner's watchdog, which
/// signals a stuck worker again on every pass, finds it asleep and interruptible soon.
const SQPOLL_SPIN: std::time::Duration = std::time::Duration::from_millis(1);

/// Polls the completion queue until it holds `want` completions or [`SQPOLL_SPIN`] has passed.
/// With `sqthread_poll` the kernel's thread submits and nothing of the job's runs in the
/// kernel; sleeping in `io_uring_enter` for each completion and being woken made fiox 0.67x
/// fio's IOPS at depth 1 (fio polls the queue in user space with that option, without bound).
/// A user who asks for a polling kernel thread has given the job a CPU to poll on.
fn spin_for(ring: &mut IoUring, want: u32) {
    let start = std::time::Instant::now();
    for n in 1u32.. {
        if ring.completion().len() >= want as usize {
            return;
        }
        std::hint::spin_loop();
        if n % 256 == 0 && start.elapsed() >= SQPOLL_SPIN {
            return;
        }
    }
}

/// Submits the `unqueued` entries; returns how many. A full completion queue (EBUSY, EAGAIN)
/// submits nothing: the runner reaps and commits again. Shared with io_uring_cmd's ring.
pub(super) fn commit<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: &mut IoUring<S, C>,
    reg: i32,
    unqueued: &mut u32,
) -> io::Result<u32> {
    if *unqueued == 0 {
        return Ok(0);
    }
    loop {
        match enter(ring, reg, 0) {
            Ok(_) => break,
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EBUSY) | Some(libc::EAGAIN)) => return Ok(0),
            Err(e) => return Err(e),
        }
    }
    Ok(std::mem::take(unqueued))
}

/// Moves at least `min` and at most `max` completions to `out`, each made a [`Completion`] by
/// `done`: what the completion queue holds, then waits (submitting what is unqueued, and for no
/// longer than `wait_limit`) for the rest. Shared with io_uring_cmd's ring, whose completions
/// are of another size and say other things.
#[allow(clippy::too_many_arguments)]
pub(super) fn reap<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: &mut IoUring<S, C>,
    reg: i32,
    unqueued: &mut u32,
    wait_limit: Option<std::time::Duration>,
    min: u32,
    max: u32,
    out: &mut Vec<Completion>,
    done: impl Fn(&C) -> Completion,
) -> io::Result<()> {
    let drain = |ring: &mut IoUring<S, C>, max: u32, out: &mut Vec<Completion>| {
        let before = out.len();
        out.extend(ring.completion().take(max as usize).map(|cqe| done(&cqe)));
        (out.len() - before) as u32
    };
    let mut got = drain(ring, max, out);
    while got < min && got < max {
        let want = (min - got) as usize;
        let r = match wait_limit {
            Some(limit) => {
                let ts = types::Timespec::new().sec(limit.as_secs()).nsec(limit.subsec_nanos());
                let args = types::SubmitArgs::new().timespec(&ts);
                ring.submitter().submit_with_args(want, &args)
            }
            None => enter(ring, reg, want as u32),
        };
        match r {
            Ok(_) => *unqueued = 0,
            // Woken by a signal (the runner's watchdog, or a stop request), or the wait limit
            // passed: hand back what there is, so the caller can look at why.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::ETIME)) => {
                *unqueued = 0;
                drain(ring, max - got, out);
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        got += drain(ring, max - got, out);
    }
    Ok(())
}

impl Uring {
    fn rw_entry(&mut self, index: u32, io: &IoUnit) -> squeue::Entry {
        let write = io.ddir == Ddir::Write;
        let buf_index = if self.shared_bufs { 0 } else { index as u16 };
        macro_rules! with_fd {
            ($fd:expr) => {
                if self.fixedbufs {
                    if write {
                        opcode::WriteFixed::new($fd, io.buf, io.len, buf_index)
                            .offset(io.offset)
                            .rw_flags(self.rw_flags)
                            .ioprio(io.ioprio)
                            .build()
                    } else {
                        opcode::ReadFixed::new($fd, io.buf, io.len, buf_index)
                            .offset(io.offset)
                            .rw_flags(self.rw_flags)
                            .ioprio(io.ioprio)
                            .build()
                    }
                } else if self.vectored {
                    let iov = &mut self.iovecs[index as usize];
                    *iov = libc::iovec { iov_base: io.buf.cast(), iov_len: io.len as usize };
                    let iov: *const libc::iovec = iov;
                    if write {
                        opcode::Writev::new($fd, iov, 1)
                            .offset(io.offset)
                            .rw_flags(self.rw_flags)
                            .ioprio(io.ioprio)
                            .build()
                    } else {
                        opcode::Readv::new($fd, iov, 1)
                            .offset(io.offset)
                            .rw_flags(self.rw_flags)
                            .ioprio(io.ioprio)
                            .build()
                    }
                } else if write {
                    opcode::Write::new($fd, io.buf, io.len)
                        .offset(io.offset)
                        .rw_flags(self.rw_flags)
                        .ioprio(io.ioprio)
                        .build()
                } else {
                    opcode::Read::new($fd, io.buf, io.len)
                        .offset(io.offset)
                        .rw_flags(self.rw_flags)
                        .ioprio(io.ioprio)
                        .build()
                }
            };
        }
        if self.registerfiles {
            with_fd!(types::Fixed(io.file_index))
        } else {
            with_fd!(types::Fd(io.fd))
        }
    }
}

impl Drop for Uring {
    fn drop(&mut self) {
        if let Some(ring) = &self.ring {
            use std::os::fd::AsRawFd;
            unregister_ring_fd(ring.as_raw_fd(), self.reg);
        }
    }
}

pub const INFO: EngineInfo = EngineInfo {
    sync: false,
    shares_read_buffers: true,
    ..EngineInfo::base("io_uring", || Box::new(Uring::default()))
};
