//! The I/O queue: the one owner of a job's engine, its I/O units, their buffers and its files.
//!
//! A unit is either idle or in the engine. `queue` hands an idle unit to the engine; it comes
//! back when the engine answers at once (`QueueStatus::Completed`) or when `reap` returns its
//! completion. Only idle units' buffers are lent out (`buf`, `buf_mut`), and the buffers are
//! freed only when no unit is in the engine. Those two rules are what make the engines' `unsafe`
//! sound, and they are enforced here, in the crate that relies on them, rather than promised by
//! the runner: the runner never sees a buffer's address.
//!
//! The calls mirror fio's engine model: `queue` (fio's `->queue`), `commit`, `reap`
//! (`->getevents` plus `->event`).

use std::fs::File;
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;
use std::time::Duration;

use crate::engines::null::Null;
use crate::mem::IoBuffers;
use crate::sys;
use crate::{Completion, Ddir, EngineInfo, EngineOpts, IoEngine, IoUnit, MemKind, QueueStatus, Setup};

/// One I/O as the runner describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    pub ddir: Ddir,
    /// Index of the file in the job's file list.
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    /// I/O priority (`class << 13 | level`) for engines that pass one per I/O; 0: none.
    pub ioprio: u16,
}

/// What a queue is made of.
pub struct QueueConfig<'a> {
    pub engine: &'static EngineInfo,
    /// The job's open files, in file-index order; the queue keeps them open while the engine
    /// may use them. Empty for engines that open nothing (null, the metadata engines).
    pub files: Vec<File>,
    /// The files' paths, in file-index order (the metadata engines work on names).
    pub paths: &'a [PathBuf],
    /// The extent of each file the job uses (what `mmap` maps).
    pub sizes: &'a [u64],
    /// Whether each file is a block device (trims become BLKDISCARD).
    pub block_devices: &'a [bool],
    /// Whether the job writes (files are open read-write).
    pub writes: bool,
    /// Whether the job reads.
    pub reads: bool,
    pub depth: u32,
    /// Each unit's buffer: at least this many bytes, aligned to `buf_align`, from `mem`.
    pub buf_size: usize,
    pub buf_align: usize,
    pub mem: MemKind,
    /// The huge page size a huge-page pool is rounded up to (`hugepage-size`).
    pub huge_page: usize,
    /// Nobody looks at what the job reads (no verify, no writes that could reuse a read's
    /// buffer, no replayed log that could hold writes): the units may share one buffer. Taken
    /// only by engines that never look at a read's buffer themselves
    /// (`EngineInfo::shares_read_buffers`) and only when `writes` is false; a shared pool's
    /// buffers are never lent out with I/O in flight, and a write on it is refused.
    pub share_read_buffers: bool,
    /// Whether the runner always waits for at least one completion (lets io_uring defer its
    /// task work to the waiting call).
    pub waits_for_completions: bool,
    pub opts: &'a EngineOpts,
    /// The job's name and runtime in microseconds (0: none), for engines that use them (exec).
    pub job_name: &'a str,
    pub runtime_us: u64,
    /// Which of the job's `numjobs` clones this is (0-based): net engines count ports up from it.
    pub clone: u32,
    /// `sync_file_range`'s flags (0: the job does no ranged syncs, and no range is tracked).
    pub sync_range_flags: u32,
    /// `direct` and `invalidate`, for engines that apply them themselves (rbd).
    pub direct: bool,
    pub invalidate: bool,
    /// `sync` (O_SYNC or O_DSYNC): the persistent-memory engines drain after every write.
    pub sync: bool,
}

/// Why a queue could not be made.
#[derive(Debug)]
pub enum QueueError {
    /// The buffer pool could not be allocated.
    Buffers(io::Error),
    /// The engine failed to start.
    Engine(io::Error),
}

impl std::fmt::Display for QueueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueueError::Buffers(e) | QueueError::Engine(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for QueueError {}

/// The engine behind a queue. The null engine is called directly, so that its calls inline
/// into the runner's loop: it exists to measure the tool itself, and three dynamic calls per
/// I/O were 8% of its cost at depth 32 (one `queue`, `commit` and `getevents` each). Every other
/// engine makes a system call per I/O or more, next to which one indirect call is noise.
enum Engine {
    Null(Null),
    Dyn(Box<dyn IoEngine>),
}

impl Engine {
    fn make(info: &EngineInfo) -> Engine {
        match info.name {
            "null" => Engine::Null(Null::default()),
            _ => Engine::Dyn((info.make)()),
        }
    }

    /// The engine for the calls made once per job or per error.
    fn get(&mut self) -> &mut dyn IoEngine {
        match self {
            Engine::Null(n) => n,
            Engine::Dyn(e) => &mut **e,
        }
    }

    fn get_ref(&self) -> &dyn IoEngine {
        match self {
            Engine::Null(n) => n,
            Engine::Dyn(e) => &**e,
        }
    }

    #[inline(always)]
    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        match self {
            Engine::Null(n) => n.queue(index, io),
            Engine::Dyn(e) => e.queue(index, io),
        }
    }

    #[inline(always)]
    fn commit(&mut self) -> io::Result<u32> {
        match self {
            Engine::Null(n) => n.commit(),
            Engine::Dyn(e) => e.commit(),
        }
    }

    #[inline(always)]
    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        match self {
            Engine::Null(n) => n.getevents(min, max, out),
            Engine::Dyn(e) => e.getevents(min, max, out),
        }
    }
}

/// A job's engine with its units, buffers and files. See the module documentation.
pub struct IoQueue {
    // Dropped by hand, engine first (a ring may refer to the buffers until it is torn down), and
    // only when no unit is in the engine: see `Drop`.
    engine: ManuallyDrop<Engine>,
    bufs: ManuallyDrop<IoBuffers>,
    units: Vec<IoUnit>,
    in_engine: Vec<bool>,
    /// Idle units, used as a stack (the most recently freed unit's buffer is the warmest).
    idle: Vec<u32>,
    busy: u32,
    /// The engine moves no data (metadata engines): lengths are file sizes, not buffer sizes.
    metadata: bool,
    files: Vec<File>,
    block_devices: Vec<bool>,
    /// `sync_file_range`: its flags, and per file the range `[first, last)` of the writes
    /// completed since the file's last sync (`None`: nothing written), as fio keeps it.
    sync_range_flags: u32,
    dirty: Vec<Option<(u64, u64)>>,
}

impl IoQueue {
    /// Allocates the buffers and starts the engine on the files.
    pub fn new(cfg: QueueConfig<'_>) -> Result<IoQueue, QueueError> {
        let depth = cfg.depth.max(1);
        let buf_size = if cfg.engine.metadata { 1 } else { cfg.buf_size };
        let shared = cfg.share_read_buffers && cfg.engine.shares_read_buffers && !cfg.writes && depth > 1;
        let bufs = IoBuffers::new(depth as usize, buf_size, cfg.buf_align, cfg.mem, cfg.huge_page, shared)
            .map_err(QueueError::Buffers)?;
        let fds: Vec<RawFd> = cfg.files.iter().map(|f| f.as_raw_fd()).collect();
        let mut engine = Engine::make(cfg.engine);
        engine
            .get()
            .init(&Setup {
                fds: &fds,
                sizes: cfg.sizes,
                writes: cfg.writes,
                reads: cfg.reads,
                paths: cfg.paths,
                buffers: &bufs,
                depth,
                waits_for_completions: cfg.waits_for_completions,
                opts: cfg.opts,
                job_name: cfg.job_name,
                runtime_us: cfg.runtime_us,
                clone: cfg.clone,
                direct: cfg.direct,
                invalidate: cfg.invalidate,
                sync: cfg.sync,
            })
            .map_err(QueueError::Engine)?;
        let units = (0..depth as usize)
            .map(|i| IoUnit {
                ddir: Ddir::Read,
                fd: fds.first().copied().unwrap_or(-1),
                file_index: 0,
                block_device: cfg.block_devices.first().copied().unwrap_or(false),
                offset: 0,
                len: 0,
                buf: bufs.ptr(i),
                ioprio: 0,
            })
            .collect();
        let mut block_devices = cfg.block_devices.to_vec();
        block_devices.resize(cfg.files.len().max(cfg.paths.len()), false);
        Ok(IoQueue {
            engine: ManuallyDrop::new(engine),
            bufs: ManuallyDrop::new(bufs),
            units,
            in_engine: vec![false; depth as usize],
            idle: (0..depth).rev().collect(),
            busy: 0,
            metadata: cfg.engine.metadata,
            dirty: vec![None; cfg.files.len()],
            files: cfg.files,
            block_devices,
            sync_range_flags: cfg.sync_range_flags,
        })
    }

    /// How many units the queue has (the job's iodepth, or 1 for synchronous engines).
    pub fn depth(&self) -> u32 {
        self.units.len() as u32
    }

    /// The idle unit `queue` would best use next, if any is idle.
    #[inline]
    pub fn next_idle(&self) -> Option<u32> {
        self.idle.last().copied()
    }

    /// How many units are idle.
    #[inline]
    pub fn idle_count(&self) -> u32 {
        self.idle.len() as u32
    }

    /// How many units the engine holds (queued, submitted or in flight).
    #[inline]
    pub fn in_engine(&self) -> u32 {
        self.busy
    }

    /// The units the engine holds, in index order.
    pub fn in_engine_units(&self) -> impl Iterator<Item = u32> + '_ {
        self.in_engine.iter().enumerate().filter(|(_, &b)| b).map(|(i, _)| i as u32)
    }

    /// The I/O unit `i` does (or last did).
    #[inline]
    pub fn io(&self, i: u32) -> Io {
        let u = &self.units[i as usize];
        Io { ddir: u.ddir, file: u.file_index, offset: u.offset, len: u.len, ioprio: u.ioprio }
    }

    /// Unit `i`'s buffer, to fill before a write. Panics unless the unit is idle.
    #[inline]
    pub fn buf_mut(&mut self, i: u32) -> &mut [u8] {
        assert!(!self.in_engine[i as usize], "buffer of unit {i} lent out while the engine holds it");
        self.assert_not_shared_in_flight();
        self.bufs.slice_mut(i as usize)
    }

    /// Unit `i`'s buffer, to check after a read. Panics unless the unit is idle.
    #[inline]
    pub fn buf(&self, i: u32) -> &[u8] {
        assert!(!self.in_engine[i as usize], "buffer of unit {i} lent out while the engine holds it");
        self.assert_not_shared_in_flight();
        self.bufs.slice(i as usize)
    }

    /// In a shared pool every unit's buffer is the same memory, so none is lent out while any
    /// unit is in the engine.
    #[inline]
    fn assert_not_shared_in_flight(&self) {
        assert!(!self.bufs.shared() || self.busy == 0, "the shared read buffer lent out with reads in flight");
    }

    /// Whether the units share one buffer (see `QueueConfig::share_read_buffers`).
    pub fn shares_buffers(&self) -> bool {
        self.bufs.shared()
    }

    /// The job's files, in file-index order.
    pub fn files(&self) -> &[File] {
        &self.files
    }

    /// Hands idle unit `i` to the engine to do `io`. `Completed` returns the unit to the idle
    /// ones at once; `Queued` keeps it in the engine until `reap` returns it; `Busy` leaves it
    /// idle. A length beyond the unit's buffer is refused (EINVAL), never passed on.
    // Always inlined: the runner's loop calls it once per I/O, and the null engine's answer then
    // stays in registers instead of coming back through memory.
    #[inline(always)]
    pub fn queue(&mut self, i: u32, io: Io) -> io::Result<QueueStatus> {
        let idx = i as usize;
        assert!(!self.in_engine[idx], "unit {i} queued twice");
        let moves_data = matches!(io.ddir, Ddir::Read | Ddir::Write) && !self.metadata;
        if moves_data && io.len as usize > self.bufs.unit_size() {
            return Err(self.too_long(io.len));
        }
        if io.ddir == Ddir::Write && self.bufs.shared() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a write on a queue whose reads share one buffer"));
        }
        let u = &mut self.units[idx];
        u.ddir = io.ddir;
        u.file_index = io.file;
        u.fd = self.files.get(io.file as usize).map_or(-1, |f| f.as_raw_fd());
        u.block_device = self.block_devices.get(io.file as usize).copied().unwrap_or(false);
        u.offset = io.offset;
        u.len = io.len;
        u.ioprio = io.ioprio;
        if io.ddir == Ddir::SyncRange {
            return Ok(QueueStatus::Completed(self.sync_range(idx)));
        }
        let status = self.engine.queue(i, &self.units[idx])?;
        if let QueueStatus::Completed(result) = status {
            self.track(idx, result);
        }
        if status == QueueStatus::Queued {
            // Most of the time `i` is the top of the stack (the runner takes `next_idle`).
            match self.idle.last() {
                Some(&top) if top == i => {
                    self.idle.pop();
                }
                _ => {
                    let at = self.idle.iter().position(|&x| x == i).expect("an idle unit is on the idle stack");
                    self.idle.swap_remove(at);
                }
            }
            self.in_engine[idx] = true;
            self.busy += 1;
        }
        Ok(status)
    }

    #[cold]
    fn too_long(&self, len: u32) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("an I/O of {len} bytes does not fit its {}-byte buffer", self.bufs.unit_size()),
        )
    }

    /// Books `io` on idle unit `i` as done by the caller, not the engine, with `result` (bytes
    /// or a negative errno): a trim of a whole sequential zone that the runner turned into a
    /// zone reset (`zonemode=zbd`). The unit stays idle, as after any in-line completion.
    pub fn done_in_place(&mut self, i: u32, io: Io, result: i64) -> QueueStatus {
        assert!(!self.in_engine[i as usize], "unit {i} queued twice");
        let u = &mut self.units[i as usize];
        u.ddir = io.ddir;
        u.file_index = io.file;
        u.offset = io.offset;
        u.len = io.len;
        u.ioprio = io.ioprio;
        QueueStatus::Completed(result)
    }

    /// Does the ranged sync of unit `idx` (its file's written range since the last sync, as fio
    /// computes it: `[lowest offset, highest end)` of the writes completed since) and returns
    /// its result. Nothing written since: no call, result 0, as in fio.
    #[cold]
    fn sync_range(&mut self, idx: usize) -> i64 {
        let file = self.units[idx].file_index as usize;
        let Some((first, last)) = self.dirty.get(file).copied().flatten() else {
            self.units[idx].offset = 0;
            self.units[idx].len = 0;
            return 0;
        };
        let u = &mut self.units[idx];
        u.offset = first;
        u.len = (last - first).min(u32::MAX as u64) as u32;
        let result = sys::sync_range(u.fd, first, last - first, self.sync_range_flags);
        self.dirty[file] = None;
        result
    }

    /// Keeps the written range of unit `idx`'s file up to date after it completed.
    #[inline]
    fn track(&mut self, idx: usize, result: i64) {
        if self.sync_range_flags != 0 {
            let u = &self.units[idx];
            Self::track_in(&mut self.dirty, u.ddir, u.file_index, u.offset, result);
        }
    }

    /// A write that completed widens its file's range; any sync of the file empties it (fio
    /// resets the range when any sync completes).
    fn track_in(dirty: &mut [Option<(u64, u64)>], ddir: Ddir, file: u32, offset: u64, result: i64) {
        let Some(range) = dirty.get_mut(file as usize) else { return };
        match ddir {
            Ddir::Write if result > 0 => {
                let end = offset + result as u64;
                *range = Some(range.map_or((offset, end), |(a, b)| (a.min(offset), b.max(end))));
            }
            Ddir::Sync | Ddir::DataSync | Ddir::SyncRange => *range = None,
            _ => {}
        }
    }

    /// Puts `new` in the place of the job's file `i`, under the same descriptor number, so the
    /// engine goes on with the new file (`unlink_each_loop`). Only with nothing in the engine.
    pub fn replace_file(&mut self, i: usize, new: &File) -> io::Result<()> {
        if self.busy > 0 {
            return Err(io::Error::other("a file cannot be replaced with I/O in flight"));
        }
        let Some(old) = self.files.get(i) else { return Ok(()) };
        sys::replace_fd(old.as_raw_fd(), new.as_raw_fd())?;
        if let Some(d) = self.dirty.get_mut(i) {
            *d = None;
        }
        Ok(())
    }

    /// Submits what was queued; returns how many were submitted. An engine may leave the system
    /// call to the next reap (io_uring folds it into the wait), so a caller reaps after committing
    /// before it waits on anything else.
    #[inline]
    pub fn commit(&mut self) -> io::Result<u32> {
        self.engine.commit()
    }

    /// Waits for at least `min` completions and appends at most `max` to `out`, returning their
    /// units to the idle ones. With a wait limit set, it may return fewer once it has passed.
    // Always in line: called once per reap, and for the null engine at depth (one completion
    // per reap with fio's default batches) the call itself was 6% of the time per I/O.
    #[inline(always)]
    pub fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let from = out.len();
        self.engine.getevents(min.min(self.busy), max, out)?;
        for c in &out[from..] {
            let idx = c.index as usize;
            if !self.in_engine.get(idx).copied().unwrap_or(false) {
                return Err(Self::not_held(c.index));
            }
            if self.sync_range_flags != 0 {
                let (ddir, file, offset) = (self.units[idx].ddir, self.units[idx].file_index, self.units[idx].offset);
                Self::track_in(&mut self.dirty, ddir, file, offset, c.result);
            }
            self.in_engine[idx] = false;
            self.idle.push(c.index);
            self.busy -= 1;
        }
        Ok(())
    }

    #[cold]
    fn not_held(index: u32) -> io::Error {
        io::Error::other(format!("the engine completed unit {index} that it did not hold"))
    }

    /// Why unit `i`'s last I/O failed, in the engine's words, if it says more than the errno;
    /// given once.
    pub fn error_detail(&mut self, i: u32) -> Option<crate::ErrorDetail> {
        self.engine.get().error_detail(i)
    }

    /// No-I/O engines: the pause after each "I/O", in nanoseconds (0 for the others).
    pub fn think_ns(&self) -> u64 {
        self.engine.get_ref().think_ns()
    }

    /// The kernel features the engine set up and that took effect (io_uring), for the report.
    pub fn features(&self) -> Vec<&'static str> {
        self.engine.get_ref().features()
    }

    /// The line the engine prints when the job starts, if any (cpuio, exec).
    pub fn banner(&self) -> Option<String> {
        self.engine.get_ref().banner()
    }

    /// Lets the engine wind down when the job's time is up (exec stops its program). Returns
    /// true when that counts as one more I/O.
    pub fn finish(&mut self) -> bool {
        self.busy == 0 && self.engine.get().finish()
    }

    /// Whether the peer has ended the stream (net): an I/O that moved nothing is then the end
    /// of the job, not an error.
    pub fn peer_done(&self) -> bool {
        self.engine.get_ref().peer_done()
    }

    /// Once the peer has ended: whether the I/O that saw it counts as one I/O of no bytes.
    pub fn end_counts(&mut self) -> bool {
        self.engine.get().end_counts()
    }

    /// Bounds how long one `reap` may wait (`None`: as long as it takes).
    pub fn set_wait_limit(&mut self, limit: Option<Duration>) {
        self.engine.get().set_wait_limit(limit);
    }
}

impl Drop for IoQueue {
    fn drop(&mut self) {
        if self.busy > 0 {
            // Collect whatever has finished without waiting.
            let mut out = Vec::with_capacity(self.busy as usize);
            let _ = self.reap(0, self.busy, &mut out);
        }
        if self.busy > 0 {
            // The kernel still owns I/O into these buffers (a device that stopped answering, or
            // a run that ended on an error with I/O in flight). Tearing the engine down could wait
            // for the dead device forever, and freeing the buffers would let the kernel write into
            // memory handed out again, so both are left alone until the process exits.
            return;
        }
        // SAFETY: each field is dropped exactly once, here, and never used again; the engine goes
        // first because a ring may refer to the buffers until it is torn down.
        unsafe {
            ManuallyDrop::drop(&mut self.engine);
            ManuallyDrop::drop(&mut self.bufs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a test queue differs in: its engine, its one file (if any) and what it does.
    struct TestQueue<'a> {
        engine: &'static str,
        file: Option<&'a std::path::Path>,
        depth: u32,
        buf: usize,
        writes: bool,
        share: bool,
    }

    fn test_queue(t: TestQueue) -> IoQueue {
        let opts = EngineOpts::default();
        let files: Vec<std::fs::File> = t
            .file
            .map(|p| std::fs::OpenOptions::new().read(true).write(t.writes).open(p).unwrap())
            .into_iter()
            .collect();
        let (sizes, block_devices): (&[u64], &[bool]) =
            if files.is_empty() { (&[], &[]) } else { (&[1 << 16], &[false]) };
        IoQueue::new(QueueConfig {
            engine: crate::find(t.engine).unwrap(),
            files,
            paths: &[],
            sizes,
            block_devices,
            writes: t.writes,
            reads: true,
            depth: t.depth,
            buf_size: t.buf,
            buf_align: 4096,
            mem: MemKind::Malloc,
            huge_page: 2 << 20,
            share_read_buffers: t.share,
            waits_for_completions: true,
            opts: &opts,
            job_name: "t",
            runtime_us: 0,
            clone: 0,
            sync_range_flags: 0,
            direct: false,
            invalidate: false,
            sync: false,
        })
        .unwrap()
    }

    /// A queue of `depth` units of `buf` bytes on the null engine, which opens no file.
    fn null_queue(depth: u32, buf: usize) -> IoQueue {
        test_queue(TestQueue { engine: "null", file: None, depth, buf, writes: true, share: false })
    }

    fn io(ddir: Ddir, offset: u64, len: u32) -> Io {
        Io { ddir, file: 0, offset, len, ioprio: 0 }
    }

    #[test]
    fn at_depth_one_the_null_engine_completes_inside_queue() {
        let mut q = null_queue(1, 4096);
        assert_eq!((q.depth(), q.idle_count(), q.in_engine()), (1, 1, 0));
        let i = q.next_idle().unwrap();
        assert_eq!(q.queue(i, io(Ddir::Write, 8192, 4096)).unwrap(), QueueStatus::Completed(4096));
        // Completed at once: the unit never left the idle ones, and remembers its I/O.
        assert_eq!((q.idle_count(), q.in_engine()), (1, 0));
        assert_eq!(q.io(i), io(Ddir::Write, 8192, 4096));
        assert_eq!(q.buf(i).len(), 4096);
    }

    #[test]
    fn queued_units_are_busy_until_reaped() {
        let mut q = null_queue(4, 4096);
        // The idle stack hands out units from the top: 0, 1, 2, 3.
        let mut taken = Vec::new();
        for n in 0..3u64 {
            let i = q.next_idle().unwrap();
            assert_eq!(q.queue(i, io(Ddir::Read, n * 4096, 4096)).unwrap(), QueueStatus::Queued);
            taken.push(i);
        }
        assert_eq!(taken, [0, 1, 2]);
        assert_eq!((q.idle_count(), q.in_engine()), (1, 3));
        assert_eq!(q.in_engine_units().collect::<Vec<_>>(), [0, 1, 2]);
        assert!(!q.finish(), "no winding down with I/O in the engine");
        assert_eq!(q.commit().unwrap(), 3);
        let mut out = Vec::new();
        // At most `max` come back; the rest stay in the engine.
        q.reap(1, 2, &mut out).unwrap();
        assert_eq!(out.iter().map(|c| (c.index, c.result)).collect::<Vec<_>>(), [(0, 4096), (1, 4096)]);
        assert_eq!((q.idle_count(), q.in_engine()), (3, 1));
        assert_eq!(q.in_engine_units().collect::<Vec<_>>(), [2]);
        // The most recently freed unit is the next one out (its buffer is the warmest).
        assert_eq!(q.next_idle(), Some(1));
        q.reap(1, 8, &mut out).unwrap();
        assert_eq!(out.len(), 3, "appended after the first two");
        assert_eq!(out[2].index, 2);
        assert_eq!((q.idle_count(), q.in_engine()), (4, 0));
    }

    #[test]
    fn a_unit_other_than_the_top_of_the_stack_can_be_queued() {
        let mut q = null_queue(3, 4096);
        assert_eq!(q.queue(2, io(Ddir::Read, 0, 512)).unwrap(), QueueStatus::Queued);
        assert_eq!(q.idle_count(), 2);
        assert_eq!(q.in_engine_units().collect::<Vec<_>>(), [2]);
        // The other two are still handed out, each once.
        let mut rest = Vec::new();
        while let Some(i) = q.next_idle() {
            assert_eq!(q.queue(i, io(Ddir::Read, 0, 512)).unwrap(), QueueStatus::Queued);
            rest.push(i);
        }
        rest.sort();
        assert_eq!(rest, [0, 1]);
        assert_eq!(q.in_engine(), 3);
    }

    #[test]
    fn a_length_beyond_the_units_buffer_is_refused() {
        let mut q = null_queue(2, 4096);
        let e = q.queue(0, io(Ddir::Write, 0, 4097)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("4097 bytes does not fit its 4096-byte buffer"), "{e}");
        assert_eq!((q.idle_count(), q.in_engine()), (2, 0), "nothing reached the engine");
        // The buffer's own size fits, and a trim moves no data through the buffer at all.
        assert_eq!(q.queue(0, io(Ddir::Write, 0, 4096)).unwrap(), QueueStatus::Queued);
        assert_eq!(q.queue(1, io(Ddir::Trim, 0, 1 << 20)).unwrap(), QueueStatus::Queued);
    }

    #[test]
    #[should_panic(expected = "unit 0 queued twice")]
    fn a_unit_in_the_engine_cannot_be_queued_again() {
        let mut q = null_queue(2, 4096);
        q.queue(0, io(Ddir::Read, 0, 4096)).unwrap();
        let _ = q.queue(0, io(Ddir::Read, 4096, 4096));
    }

    #[test]
    #[should_panic(expected = "lent out while the engine holds it")]
    fn a_unit_in_the_engine_lends_out_no_buffer() {
        let mut q = null_queue(2, 4096);
        q.queue(0, io(Ddir::Read, 0, 4096)).unwrap();
        let _ = q.buf_mut(0);
    }

    #[test]
    fn a_ranged_sync_with_nothing_written_makes_no_call() {
        let mut q = null_queue(1, 4096);
        let status = q.queue(0, io(Ddir::SyncRange, 123, 456)).unwrap();
        assert_eq!(status, QueueStatus::Completed(0));
        assert_eq!(q.io(0), io(Ddir::SyncRange, 0, 0), "no range to sync");
    }

    #[test]
    fn the_written_range_widens_with_writes_and_empties_on_a_sync() {
        let mut dirty = vec![None, None];
        IoQueue::track_in(&mut dirty, Ddir::Write, 0, 8192, 4096);
        IoQueue::track_in(&mut dirty, Ddir::Write, 0, 0, 4096);
        IoQueue::track_in(&mut dirty, Ddir::Read, 0, 65536, 4096);
        // A failed or empty write widens nothing; a short one counts what it moved.
        IoQueue::track_in(&mut dirty, Ddir::Write, 0, 1 << 20, -5);
        IoQueue::track_in(&mut dirty, Ddir::Write, 0, 16384, 100);
        assert_eq!(dirty, [Some((0, 16484)), None]);
        IoQueue::track_in(&mut dirty, Ddir::Write, 1, 4096, 4096);
        IoQueue::track_in(&mut dirty, Ddir::DataSync, 0, 0, 0);
        assert_eq!(dirty, [None, Some((4096, 8192))], "a sync of one file leaves the other's range");
        // A file index past the list is ignored, not a panic.
        IoQueue::track_in(&mut dirty, Ddir::Write, 7, 0, 4096);
    }

    #[test]
    fn a_file_cannot_be_replaced_with_io_in_flight() {
        let mut q = null_queue(2, 4096);
        q.queue(0, io(Ddir::Read, 0, 4096)).unwrap();
        let f = File::open("/dev/null").unwrap();
        assert!(q.replace_file(0, &f).is_err());
        q.commit().unwrap();
        q.reap(1, 1, &mut Vec::new()).unwrap();
        // Idle again, and the null engine has no file 0: nothing to replace.
        assert!(q.replace_file(0, &f).is_ok());
    }

    /// A libaio queue of `depth` 4 KiB units on the 64 KiB file at `path`, opened for writing
    /// when `writes`.
    fn libaio_queue(path: &std::path::Path, depth: u32, writes: bool, share: bool) -> IoQueue {
        test_queue(TestQueue { engine: "libaio", file: Some(path), depth, buf: 4096, writes, share })
    }

    #[test]
    fn reads_share_one_buffer_only_when_asked_and_nothing_writes() {
        let dir = std::env::temp_dir().join(format!("fiox-shared-reads-{}", std::process::id()));
        std::fs::write(&dir, vec![7u8; 1 << 16]).unwrap();
        // Asked, read-only, an engine that never looks at a read's buffer: one buffer.
        let mut q = libaio_queue(&dir, 4, false, true);
        assert!(q.shares_buffers());
        assert!(q.units.iter().all(|u| u.buf == q.units[0].buf));
        for i in 0..4u32 {
            assert_eq!(q.queue(i, io(Ddir::Read, i as u64 * 4096, 4096)).unwrap(), QueueStatus::Queued);
        }
        q.commit().unwrap();
        let lent = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| q.buf(0).len()));
        assert!(lent.is_err(), "no unit's buffer is lent out while reads into it are in flight");
        let mut out = Vec::new();
        while q.in_engine() > 0 {
            q.reap(1, 4, &mut out).unwrap();
        }
        assert_eq!(out.iter().map(|c| c.result).collect::<Vec<_>>(), [4096; 4]);
        assert!(q.buf(3).iter().all(|&b| b == 7), "idle again: the data is there to see");
        assert!(q.queue(0, io(Ddir::Write, 0, 4096)).is_err(), "a write on shared buffers is refused");
        // A job that writes, or one that did not ask, keeps a buffer per unit.
        for (writes, share) in [(true, true), (false, false)] {
            let q = libaio_queue(&dir, 4, writes, share);
            assert!(!q.shares_buffers());
            let mut bufs: Vec<_> = q.units.iter().map(|u| u.buf as usize).collect();
            bufs.dedup();
            assert_eq!(bufs.len(), 4);
        }
        std::fs::remove_file(&dir).unwrap();
    }
}
