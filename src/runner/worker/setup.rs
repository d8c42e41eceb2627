//! What a worker does before its first I/O: the thread's CPU, nice and I/O priority settings,
//! locked memory, opening the files (dropping their cache), and the I/O queue with its buffers
//! and engine.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use anyhow::{Context, Result};
use fiox_engine::{sys, IoQueue, QueueConfig, QueueError};
use fiox_options::{Fadvise, JobSpec};

use crate::plan::WorkerPlan;

/// What the thread holds while the job runs: locked memory and its cgroup membership.
pub(super) struct Held {
    _locked: Option<sys::LockedMem>,
    _cgroup: Option<crate::runner::host::CgroupMember>,
}

/// `cpus_allowed`, `nice`, `prioclass`/`prio` and the host settings (user, NUMA, cgroup, I/O
/// scheduler) for the calling thread, and `lockmem` (held while the returned value lives).
pub(super) fn thread_settings(plan: &WorkerPlan) -> Result<Held> {
    let held = thread_settings_inner(plan)?;
    // After affinity and priorities: the host settings end with giving up root (uid=).
    let cgroup = crate::runner::host::apply(plan)?;
    Ok(Held { _locked: held, _cgroup: cgroup })
}

fn thread_settings_inner(plan: &WorkerPlan) -> Result<Option<sys::LockedMem>> {
    let spec = &*plan.spec;
    if !spec.cpus_allowed.is_empty() {
        let cpus = if spec.cpus_split {
            vec![spec.cpus_allowed[plan.clone as usize % spec.cpus_allowed.len()]]
        } else {
            spec.cpus_allowed.clone()
        };
        sys::set_affinity(&cpus).with_context(|| format!("job '{}': cannot set cpus_allowed", spec.name))?;
    }
    if spec.nice != 0 {
        sys::set_nice(spec.nice).with_context(|| format!("job '{}': cannot set nice={}", spec.name, spec.nice))?;
    }
    if let Some((class, level)) = spec.ioprio {
        sys::set_ioprio(class, level)
            .with_context(|| format!("job '{}': cannot set prioclass={class} prio={level}", spec.name))?;
    }
    if spec.lockmem == 0 {
        return Ok(None);
    }
    let locked = sys::LockedMem::new(spec.lockmem as usize)
        .with_context(|| format!("job '{}': cannot lock {} bytes (lockmem)", spec.name, spec.lockmem))?;
    Ok(Some(locked))
}

/// Opens the job's files as the job needs them (`direct`, `sync`, create on open), dropping
/// their cache first with `invalidate=1`. Engines that work on names or touch no file get none.
/// `unlink_each_loop`: opens again, creating them, the job's files fiox created and deleted
/// (`None` for the others), with the flags `open_files` uses.
pub(super) fn create_files(plan: &WorkerPlan) -> Result<Vec<Option<File>>> {
    let spec = &*plan.spec;
    let mut out = Vec::with_capacity(plan.files.len());
    for f in &plan.files {
        if f.block_device || !super::layout::created_here(&f.path) {
            out.push(None);
            continue;
        }
        let mut o = OpenOptions::new();
        o.read(true).write(true).create(true);
        o.custom_flags(open_flags(spec));
        let file =
            o.open(&f.path).with_context(|| format!("job '{}': cannot create '{}'", spec.name, f.path.display()))?;
        out.push(Some(file));
    }
    Ok(out)
}

pub(super) fn open_files(plan: &WorkerPlan) -> Result<Vec<File>> {
    let spec = &*plan.spec;
    if plan.engine.diskless || plan.engine.metadata {
        return Ok(Vec::new());
    }
    let write = spec.rw.writes() || spec.rw.trims() || plan.engine.writes_any_direction;
    let mut files = Vec::with_capacity(plan.files.len());
    for f in &plan.files {
        crate::runner::debug::trace("file", || format!("fd open {}", f.path.display()));
        let file = open_one(&f.path, write, spec)
            .with_context(|| format!("job '{}': cannot open '{}'", spec.name, f.path.display()))?;
        if spec.pre_read {
            // Read the region into the page cache (instead of dropping it), through a buffered
            // descriptor, in blocks of the job's largest read size; not counted as the job's I/O.
            pre_read(&f.path, f.region_start, f.region_len, spec)?;
        } else if spec.invalidate && !is_char_device(&file) {
            // Start from a cold cache, as fio does by default (invalidate=1).
            // Dirty pages cannot be dropped, so they are written back first (another program,
            // or an earlier job, may just have written the file; fio reads those from the cache).
            let fd = file.as_raw_fd();
            crate::runner::debug::trace("file", || {
                format!("invalidate cache {}: {}/{}", f.path.display(), f.region_start, f.region_len)
            });
            // Not fatal, as in fio, which says so on standard output and goes on: a block
            // device may report an earlier write-back error here (seen on an emulated NVMe ZNS
            // namespace as EIO).
            if let Err(e) =
                sys::write_back(fd).and_then(|()| sys::drop_cache(fd, f.block_device, f.region_start, f.region_len))
            {
                println!("fiox: cache invalidation of {} failed: {e}", f.path.display());
            }
        }
        hints(&file, spec).with_context(|| format!("job '{}': '{}'", spec.name, f.path.display()))?;
        files.push(file);
    }
    Ok(files)
}

/// Opens one of the job's files. A job that only reads opens it with `O_NOATIME` where the
/// kernel allows (the file's owner, or root): each read would otherwise check, and now and
/// then write, the file's access time (1.3% of a cached 4 KiB random-read job's CPU time, 0.9%
/// of a direct one's, by `perf`), which `t/io_uring` spares itself the same way. For anyone
/// else the kernel refuses the flag (EPERM) and the file is opened as fio opens it.
fn open_one(path: &std::path::Path, write: bool, spec: &JobSpec) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(write).create(write && spec.create_on_open);
    if !write {
        o.custom_flags(open_flags(spec) | libc::O_NOATIME);
        match o.open(path) {
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {}
            r => return r,
        }
    }
    o.custom_flags(open_flags(spec));
    o.open(path)
}

/// Whether an open file is a character device (io_uring_cmd's /dev/ngXnY, sg's /dev/sgN):
/// such a device has no page cache to drop.
fn is_char_device(file: &File) -> bool {
    use std::os::unix::fs::FileTypeExt;
    file.metadata().is_ok_and(|m| m.file_type().is_char_device())
}

/// `fadvise_hint` and `write_hint` for a file just opened.
fn hints(file: &File, spec: &JobSpec) -> Result<()> {
    let fd = file.as_raw_fd();
    let random = match spec.fadvise {
        Fadvise::None => None,
        Fadvise::FollowRw => Some(spec.rw.is_random()),
        Fadvise::Sequential => Some(false),
        Fadvise::Random => Some(true),
    };
    if let Some(random) = random {
        // fio ignores a refusal (some devices and file systems have no readahead to tune).
        let _ = sys::fadvise_pattern(fd, random);
    }
    if let (Some(hint), true) = (spec.write_hint, spec.rw.writes()) {
        sys::set_write_hint(fd, hint).context("cannot set write_hint (F_SET_RW_HINT)")?;
    }
    Ok(())
}

/// The open(2) flags a job's files take: `direct` and `sync`.
fn open_flags(spec: &JobSpec) -> i32 {
    let direct = if spec.direct { libc::O_DIRECT } else { 0 };
    direct
        | match spec.open_sync {
            Some(true) => libc::O_SYNC,
            Some(false) => libc::O_DSYNC,
            None => 0,
        }
}

/// `pre_read`: reads `len` bytes from `start` of the file, so that the job finds them cached.
fn pre_read(path: &std::path::Path, start: u64, len: u64, spec: &JobSpec) -> Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let what = || format!("job '{}': cannot pre-read '{}'", spec.name, path.display());
    let mut file = File::open(path).with_context(what)?;
    file.seek(SeekFrom::Start(start)).with_context(what)?;
    let chunk = crate::plan::io::max_read_block(spec).clamp(512, 16 << 20) as usize;
    let mut buf = vec![0u8; chunk];
    let mut left = len;
    while left > 0 {
        let n = file.read(&mut buf[..chunk.min(left as usize)]).with_context(what)?;
        if n == 0 {
            break;
        }
        left -= n as u64;
    }
    Ok(())
}

/// Whether nobody looks at the data the job reads, so that its units may share one buffer
/// (the queue takes it only for engines that leave a read's buffer alone): the job only reads
/// (a unit of a mixed job carries reads and writes in turn, and a write's data must not be
/// overwritten by a read in flight), checks nothing it reads (no verify of any kind: verify,
/// `verify_only`, trims verified as zeroes) and replays no log (whose entries may be writes).
fn reads_unseen(plan: &WorkerPlan) -> bool {
    let spec = &plan.spec;
    !spec.rw.writes() && !spec.rw.trims() && spec.verify.is_none() && plan.replay.is_none()
}

/// The job's I/O queue: `iodepth` units (1 for synchronous engines) with buffers as large as
/// the job's largest block, and the engine started on the files.
pub(super) fn queue(plan: &WorkerPlan, files: Vec<File>) -> Result<IoQueue> {
    let spec: &JobSpec = &plan.spec;
    let paths: Vec<std::path::PathBuf> = plan.files.iter().map(|f| f.path.clone()).collect();
    let sizes: Vec<u64> = plan.files.iter().map(|f| f.region_start + f.region_len).collect();
    let block_devices: Vec<bool> = plan.files.iter().map(|f| f.block_device).collect();
    let depth = if plan.engine.sync { 1 } else { spec.iodepth.max(1) };
    let cfg = QueueConfig {
        engine: plan.engine,
        files,
        paths: &paths,
        sizes: &sizes,
        block_devices: &block_devices,
        writes: spec.rw.writes() || spec.rw.trims(),
        reads: spec.rw.reads(),
        depth,
        buf_size: crate::plan::io::max_block(spec) as usize,
        buf_align: (spec.iomem_align as usize).max(4096),
        mem: spec.mem,
        huge_page: spec.hugepage_size as usize,
        share_read_buffers: reads_unseen(plan),
        waits_for_completions: spec.iodepth_batch_complete_min >= 1,
        opts: &spec.engine,
        job_name: &spec.name,
        runtime_us: spec.runtime_us,
        clone: plan.clone,
        sync_range_flags: spec.sync_file_range.map_or(0, |s| s.flags),
        direct: spec.direct,
        invalidate: spec.invalidate,
        sync: spec.open_sync.is_some(),
    };
    crate::runner::debug::trace("mem", || {
        format!(
            "Alloc {} for buffers ({} I/O units, mem={})",
            cfg.depth as u64 * cfg.buf_size as u64,
            cfg.depth,
            spec.mem.name()
        )
    });
    IoQueue::new(cfg).map_err(|e| match e {
        QueueError::Buffers(e) => {
            let hint = if spec.mem.huge() { " (huge pages: see /proc/sys/vm/nr_hugepages)" } else { "" };
            anyhow::Error::new(e).context(format!(
                "job '{}': cannot allocate I/O buffers with mem={}{hint}",
                spec.name,
                spec.mem.name()
            ))
        }
        QueueError::Engine(e) => {
            anyhow::Error::new(e).context(format!("job '{}': ioengine {} failed to start", spec.name, spec.ioengine))
        }
    })
}
