//! One worker thread: fio's I/O loop for one job clone. It opens and lays out the files, then
//! keeps up to `iodepth` I/Os in flight: prepare, queue, commit in batches, reap, account.
//!
//! Timing follows fio's definitions. For asynchronous engines the clock is read once per
//! submission batch before queueing (start), once after the batch is committed (issue) and once
//! per reaped batch (completion): slat = issue - start, clat = completion - issue,
//! lat = completion - start. Synchronous engines have no submission phase: the clock is read
//! before and after each call, clat = lat = the call's duration, and there is no slat.
//!
//! The loop allocates nothing: units, buffers, timestamps and the completion list are made once.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use fiox_engine::{sys, Completion, Ddir, IoBuffers, IoEngine, IoUnit, MemKind, Queued, Setup};
use fiox_stats::{DirStat, ThreadStat};

use super::clock::{self, Clock};
use super::content::Content;
use super::iogen::{IoGen, NextIo};
use super::logs::JobLogs;
use super::offsets::{mix64, Rng};
use super::pacer::Pacer;
use crate::plan::WorkerPlan;

/// Live counters another thread may read for the status line.
#[derive(Default)]
pub struct Progress {
    pub bytes: [AtomicU64; 3],
    pub ios: [AtomicU64; 3],
    pub done: AtomicBool,
    /// Raised by the status reporter to ask for a snapshot (`--status-interval`); the worker
    /// answers by storing its statistics so far in `snapshot` with the same number.
    pub want: AtomicU64,
    pub snapshot: std::sync::Mutex<Option<(u64, WorkerResult)>>,
}

/// What a worker hands back.
#[derive(Clone, Default)]
pub struct WorkerResult {
    pub ts: ThreadStat,
    pub pid: u32,
    /// Milliseconds since the epoch when measurement started.
    pub start_epoch_ms: u64,
    pub elapsed_ms: u64,
    /// The seed of the worker's random streams (for the run manifest).
    pub seed: u64,
    /// I/Os were still in flight when the job gave up waiting for them (a device that stopped
    /// answering); their buffers must never be freed or reused.
    pub abandoned: bool,
    /// The I/O error that stopped the job, already described.
    pub error: Option<String>,
}

struct Timing {
    start: Vec<u64>,
    issue: Vec<u64>,
}

/// Creates or extends a worker's files to their planned size (fio's "Laying out IO file").
pub fn layout(plan: &WorkerPlan, diag: &mut dyn Write) -> Result<()> {
    // create_on_open: the job's open() creates the files; nothing is laid out beforehand.
    if plan.spec.create_on_open && !plan.spec.rw.reads() {
        return Ok(());
    }
    let need: Vec<&crate::plan::FilePlan> = plan
        .files
        .iter()
        .filter(|f| !f.block_device && std::fs::metadata(&f.path).map(|m| m.len() < f.layout_size).unwrap_or(true))
        .collect();
    if need.is_empty() {
        return Ok(());
    }
    let total: u64 = need.iter().map(|f| f.layout_size).sum();
    // fio prints whole MiB here, so small files show as "0MiB".
    let size = format!("{}MiB", total >> 20);
    let _ = if need.len() == 1 {
        writeln!(diag, "{}: Laying out IO file (1 file / {size})", plan.spec.name)
    } else {
        writeln!(diag, "{}: Laying out IO files ({} files / total {size})", plan.spec.name, need.len())
    };
    for f in need {
        if let Some(dir) = f.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                bail!("job '{}': directory '{}' does not exist", plan.spec.name, dir.display());
            }
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&f.path)
            .with_context(|| format!("job '{}': cannot create '{}'", plan.spec.name, f.path.display()))?;
        let have = file.metadata()?.len();
        // Jobs that only write get the space reserved and no data, as in fio; jobs that read
        // (or overwrite=1) get real data so that reads hit the device.
        if !plan.spec.rw.reads() && !plan.spec.overwrite {
            let how = match plan.spec.fallocate {
                "none" | "truncate" => sys::Prealloc::None,
                "keep" => sys::Prealloc::KeepSize,
                _ => sys::Prealloc::Allocate,
            };
            sys::preallocate(file.as_raw_fd(), how, f.layout_size)
                .with_context(|| format!("job '{}': cannot preallocate '{}'", plan.spec.name, f.path.display()))?;
            // `none` leaves the size to the writes, `keep` reserves without growing the file.
            if how == sys::Prealloc::Allocate || plan.spec.fallocate == "truncate" {
                file.set_len(f.layout_size.max(have))?;
            }
            continue;
        }
        // Written with real data (not just allocated) so that reads hit the device, as in fio.
        let chunk = 1usize << 20;
        let mut buf = vec![0u8; chunk];
        let mut rng = Rng::new(mix64(have ^ f.layout_size));
        if !plan.spec.zero_buffers {
            for w in buf.chunks_mut(8) {
                w.copy_from_slice(&rng.next_u64().to_le_bytes()[..w.len()]);
            }
        }
        let mut off = have;
        while off < f.layout_size {
            let n = chunk.min((f.layout_size - off) as usize);
            std::os::unix::fs::FileExt::write_all_at(&file, &buf[..n], off)
                .with_context(|| format!("job '{}': cannot lay out '{}'", plan.spec.name, f.path.display()))?;
            off += n as u64;
        }
        file.flush()?;
        file.sync_all().ok();
    }
    Ok(())
}

/// Runs one worker to the end. `stop` asks every worker to finish early (Ctrl-C, exitall).
pub fn run(
    plan: &WorkerPlan,
    seed: u64,
    stop: &AtomicBool,
    progress: &Progress,
    diag: &mut dyn Write,
) -> Result<WorkerResult> {
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
    let _locked = if spec.lockmem > 0 {
        Some(
            sys::LockedMem::new(spec.lockmem as usize)
                .with_context(|| format!("job '{}': cannot lock {} bytes (lockmem)", spec.name, spec.lockmem))?,
        )
    } else {
        None
    };
    // Files stay open (and so valid descriptors) until the engine is gone.
    let mut files: Vec<File> = Vec::new();
    let paths: Vec<std::path::PathBuf> = plan.files.iter().map(|f| f.path.clone()).collect();
    // The metadata engines work on file names; nothing is opened for them.
    if !plan.engine.diskless && !plan.engine.metadata {
        let write = spec.rw.writes() || spec.rw.trims();
        for f in &plan.files {
            let mut o = OpenOptions::new();
            o.read(true).write(write).create(write && spec.create_on_open);
            let mut flags = if spec.direct { libc::O_DIRECT } else { 0 };
            match spec.open_sync {
                Some(true) => flags |= libc::O_SYNC,
                Some(false) => flags |= libc::O_DSYNC,
                None => {}
            }
            o.custom_flags(flags);
            let file =
                o.open(&f.path).with_context(|| format!("job '{}': cannot open '{}'", spec.name, f.path.display()))?;
            if spec.invalidate {
                // Start from a cold cache, as fio does by default (invalidate=1).
                // Dirty pages cannot be dropped, so the file is flushed first (another program, or
                // an earlier job, may just have written it).
                let r = file.sync_data().and_then(|()| sys::drop_cache(file.as_raw_fd(), f.block_device));
                r.with_context(|| format!("job '{}': cannot drop the cache of '{}'", spec.name, f.path.display()))?;
            }
            files.push(file);
        }
    }
    let fds: Vec<RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
    let depth = if plan.engine.sync { 1 } else { spec.iodepth.max(1) };
    let max_bs = super::iogen::max_block(spec) as usize;
    let mem = MemKind::from_name(spec.mem)
        .with_context(|| format!("job '{}': mem={} is not supported yet", spec.name, spec.mem))?;
    let align = (spec.iomem_align as usize).max(4096);
    let mut buffers = IoBuffers::new(depth as usize, max_bs, align, mem).with_context(|| {
        let hint = if spec.mem.ends_with("huge") { " (huge pages: see /proc/sys/vm/nr_hugepages)" } else { "" };
        format!("job '{}': cannot allocate I/O buffers with mem={}{hint}", spec.name, spec.mem)
    })?;
    let mut content = Content::new(spec, seed).with_context(|| format!("job '{}'", spec.name))?;
    for i in 0..depth as usize {
        content.initial(buffers.slice_mut(i));
    }
    let mut engine: Box<dyn IoEngine> = (plan.engine.make)();
    let waits = spec.iodepth_batch_complete_min >= 1;
    let sizes: Vec<u64> = plan.files.iter().map(|f| f.region_start + f.region_len).collect();
    engine
        .init(&Setup {
            fds: &fds,
            sizes: &sizes,
            writes: spec.rw.writes() || spec.rw.trims(),
            paths: &paths,
            buffers: &buffers,
            depth,
            waits_for_completions: waits,
            opts: &spec.engine,
        })
        .with_context(|| format!("job '{}': ioengine {} failed to start", spec.name, spec.ioengine))?;
    if spec.startdelay_us > 0 {
        let until = Instant::now() + std::time::Duration::from_micros(spec.startdelay_us);
        while Instant::now() < until && !stop.load(Ordering::Relaxed) {
            std::thread::sleep((until - Instant::now()).min(std::time::Duration::from_millis(100)));
        }
    }
    let result = if plan.engine.metadata {
        meta_loop(plan, engine.as_mut(), stop, progress, diag)
    } else {
        io_loop(plan, engine.as_mut(), &fds, &mut buffers, &mut content, depth, seed, stop, progress, diag)
    };
    if result.as_ref().is_ok_and(|r| r.abandoned) {
        // The kernel still owns I/O into these buffers; tearing the engine down could wait for
        // the dead device forever, and freeing the buffers would let it write into reused
        // memory. Both are left alone until the process exits.
        std::mem::forget(engine);
        std::mem::forget(buffers);
    } else {
        // The engine goes first: a ring may still reference the buffers until it is torn down.
        drop(engine);
        drop(buffers);
    }
    let mut res = result?;
    if spec.end_fsync || spec.fsync_on_close {
        for f in &files {
            f.sync_all().ok();
        }
    }
    drop(files);
    if spec.unlink && !plan.engine.diskless {
        for f in &plan.files {
            if !f.block_device {
                std::fs::remove_file(&f.path).ok();
            }
        }
    }
    res.pid = clock::thread_id(plan.number);
    Ok(res)
}

#[allow(clippy::too_many_arguments)]
fn io_loop(
    plan: &WorkerPlan,
    engine: &mut dyn IoEngine,
    fds: &[RawFd],
    buffers: &mut IoBuffers,
    content: &mut Content,
    depth: u32,
    seed: u64,
    stop: &AtomicBool,
    progress: &Progress,
    diag: &mut dyn Write,
) -> Result<WorkerResult> {
    let spec = &*plan.spec;
    let sync_engine = plan.engine.sync;
    let regions: Vec<(u64, u64)> = plan.files.iter().map(|f| (f.region_start, f.region_len)).collect();
    let mut gen = IoGen::new(spec, &regions, seed);
    let block_dev: Vec<bool> = plan.files.iter().map(|f| f.block_device).collect();

    let mut units: Vec<IoUnit> = (0..depth as usize)
        .map(|i| IoUnit {
            ddir: Ddir::Read,
            fd: fds.first().copied().unwrap_or(-1),
            file_index: 0,
            block_device: false,
            offset: 0,
            len: 0,
            buf: buffers.ptr(i),
            result: 0,
            ioprio: 0,
        })
        .collect();
    let mut timing = Timing { start: vec![0; depth as usize], issue: vec![0; depth as usize] };
    let mut free: Vec<u32> = (0..depth).rev().collect();
    let mut batch: Vec<u32> = Vec::with_capacity(depth as usize);
    let mut completions: Vec<Completion> = Vec::with_capacity(depth as usize);

    // The statistics of a fresh start (and again after ramp_time): the job's directions, with
    // per-priority latency where cmdprio_percentage sends some I/Os with a priority.
    let cmdprio = [0, 1, 2].map(|d| spec.engine.cmdprio_rules(d));
    let new_stats = || {
        let mut ts = ThreadStat { jobs: 1, ..ThreadStat::default() };
        for (d, on) in [spec.rw.reads(), spec.rw.writes(), spec.rw.trims()].into_iter().enumerate() {
            if on {
                ts.dirs[d] = DirStat::active();
                if !cmdprio[d].is_empty() {
                    let prios: Vec<u16> = std::iter::once(0).chain(cmdprio[d].iter().map(|r| r.ioprio)).collect();
                    ts.dirs[d].track_prios(&prios);
                }
            }
        }
        ts
    };
    let mut ts = new_stats();
    let mut prio_rng = Rng::new(mix64(seed ^ 0x0510));
    let clock = Clock::start(plan.clock);
    let ramp_ns = spec.ramp_time_us * 1000;
    let runtime_ns = spec.runtime_us * 1000;
    let end_ns = if runtime_ns > 0 { ramp_ns + runtime_ns } else { u64::MAX };
    let limit = if spec.time_based { u64::MAX } else { plan.io_bytes.saturating_mul(spec.loops as u64) };
    let mut measuring = ramp_ns == 0;
    let mut meas_start = 0u64;
    let mut usage0 = clock::thread_usage();
    let mut start_epoch_ms = clock::epoch_ms();
    let mut issued_bytes = 0u64;
    let mut inflight = 0u32;
    let mut error: Option<String> = None;
    let bw_win = spec.bwavgtime_ms.max(1) * 1_000_000;
    let iops_win = spec.iopsavgtime_ms.max(1) * 1_000_000;
    let mut bw_last = (0u64, [0u64; 3]);
    let mut iops_last = (0u64, [0u64; 3]);
    let batch_submit = spec.iodepth_batch_submit.max(1);
    let complete_max = spec.iodepth_batch_complete_max.clamp(1, depth);
    let low = spec.iodepth_low.min(depth);
    let mut now = 0u64;
    let mut pacer = Pacer::new(spec, seed);
    let pacing = pacer.active();
    let steer = pacing && gen.mixes() && pacer.limits_directions();
    let mut pending: Option<NextIo> = None;
    let mut iolog = spec.write_iolog.as_ref().map(|_| IoLog::new(plan));
    let mut logs = JobLogs::new(spec, plan.number);
    let ios_limit = if spec.number_ios > 0 { spec.number_ios } else { u64::MAX };
    let mut issued_ios = 0u64;
    let mut served = 0u64;
    let mut next_publish = 0u64;
    let mut min_rate = MinRate::new(spec);
    // When the run should have ended (runtime over, or a stop request) and I/O is still in
    // flight, waits become short; one second later the rest is given up as dropped.
    let mut give_up_at: Option<u64> = None;
    let mut abandoned = false;
    // In trimwrite modes every block is trimmed and then written; fio counts only the writes
    // toward the job's size.
    let count_trims = !matches!(spec.rw, fiox_options::RwMode::TrimWrite | fiox_options::RwMode::RandTrimWrite);

    loop {
        // Whether `now` was read during this pass; the pass ends with one read otherwise.
        let mut fresh = false;
        let stopping = stop.load(Ordering::Relaxed)
            || error.is_some()
            || now >= end_ns
            || issued_bytes >= limit
            || issued_ios >= ios_limit;
        if stopping && inflight == 0 && batch.is_empty() {
            break;
        }
        // Ramp over: forget what was measured and start the clock for the report.
        if !measuring && now >= ramp_ns {
            measuring = true;
            meas_start = now;
            usage0 = clock::thread_usage();
            start_epoch_ms = clock::epoch_ms();
            ts = new_stats();
            bw_last = (now, [0; 3]);
            iops_last = (now, [0; 3]);
            // The I/O done while ramping still counts toward the job's size, as in fio: only
            // the statistics start over.
        }

        // Fill the queue, committing every `iodepth_batch_submit` I/Os.
        let mut held = false;
        if !stopping {
            let mut t_fill = if sync_engine { 0 } else { clock.now() };
            while let Some(&idx) = free.last() {
                if issued_bytes >= limit || issued_ios >= ios_limit {
                    break;
                }
                // One clock read serves the rate checks of this I/O.
                let t_pace = if pacing { clock.now() } else { 0 };
                if steer && pending.is_none() {
                    // The direction due first goes; both due: rwmixread decides.
                    let (r, w) = (pacer.ready_at(Ddir::Read as usize), pacer.ready_at(Ddir::Write as usize));
                    gen.steer(match (r <= t_pace, w <= t_pace) {
                        (true, true) => None,
                        _ if r <= w => Some(Ddir::Read),
                        _ => Some(Ddir::Write),
                    });
                }
                let Some(mut next) = pending.take().or_else(|| gen.next()) else {
                    // The pattern is used up (a sequential pass ended on a partial block).
                    issued_bytes = limit;
                    break;
                };
                if let Some(f) = gen.take_new_pass().filter(|_| spec.invalidate) {
                    // fio drops the cache again on every pass over a file (invalidate=1), so a
                    // file smaller than memory is still read from the device.
                    if let Some(&fd) = fds.get(f) {
                        let _ = sys::drop_cache(fd, block_dev[f]);
                    }
                }
                if limit != u64::MAX {
                    match gen.fit(next, limit - issued_bytes) {
                        Some(n) => next = n,
                        None => {
                            // Not even the smallest block fits in what is left: the job is done.
                            issued_bytes = limit;
                            break;
                        }
                    }
                }
                if pacing {
                    let at = pacer.ready_at(next.ddir as usize);
                    if at > t_pace {
                        pending = Some(next);
                        if inflight == 0 && batch.is_empty() {
                            pacer.wait(at.min(end_ns), &|| clock.now(), stop);
                            now = clock.now();
                        }
                        held = true;
                        break;
                    }
                    pacer.issued(next.ddir as usize, next.len as u64, t_pace);
                }
                if let Some(log) = &mut iolog {
                    log.issue(clock.now(), &next);
                }
                let u = &mut units[idx as usize];
                u.ddir = next.ddir;
                u.file_index = next.file as u32;
                u.fd = fds.get(next.file).copied().unwrap_or(-1);
                u.block_device = block_dev.get(next.file).copied().unwrap_or(false);
                u.offset = next.offset;
                u.len = next.len;
                // cmdprio_percentage / cmdprio_bssplit: the first rule for this block size
                // decides, by a draw per I/O.
                let rule = cmdprio
                    .get(next.ddir as usize)
                    .and_then(|rules| rules.iter().find(|r| r.bs.is_none_or(|bs| bs == next.len as u64)));
                u.ioprio = match rule {
                    Some(r) if (prio_rng.below(1_000_000) as f64) < r.pct * 10_000.0 => r.ioprio,
                    _ => 0,
                };
                if next.ddir == Ddir::Write && content.changes() {
                    // Only idle units are touched: this one is not in flight.
                    content.before_write(buffers.slice_mut(idx as usize), next.len as usize, next.offset);
                }
                if sync_engine {
                    let t0 = clock.now();
                    engine.queue(idx, u).context("engine failed")?;
                    now = clock.now();
                    fresh = true;
                    issued_ios += 1;
                    if count_trims || next.ddir != Ddir::Trim {
                        issued_bytes += next.len as u64;
                    }
                    ts.mark_depth(1, 1);
                    let u = units[idx as usize];
                    account(&mut ts, &u, None, t0, now, measuring, &mut error, plan, diag, &mut logs, meas_start);
                    ts.submit_map[1] += 1;
                    ts.complete_map[1] += 1;
                    if pacing {
                        pacer.completed(1, now);
                    }
                    break;
                }
                timing.start[idx as usize] = t_fill;
                match engine.queue(idx, u).context("engine failed")? {
                    Queued::Completed => {
                        // An in-line completion (a trim on a ring engine, the null engine at
                        // depth 1): no submission phase, so no slat, as in fio.
                        issued_ios += 1;
                        if count_trims || next.ddir != Ddir::Trim {
                            issued_bytes += next.len as u64;
                        }
                        now = clock.now();
                        fresh = true;
                        let u = units[idx as usize];
                        account(
                            &mut ts, &u, None, t_fill, now, measuring, &mut error, plan, diag, &mut logs, meas_start,
                        );
                        ts.mark_depth(inflight + 1, 1);
                        ts.submit_map[1] += 1;
                        ts.complete_map[1] += 1;
                        if pacing {
                            pacer.completed(1, now);
                        }
                        // Back to the loop head, which checks the time and the stop flag.
                        break;
                    }
                    Queued::Queued => {
                        free.pop();
                        issued_ios += 1;
                        if count_trims || next.ddir != Ddir::Trim {
                            issued_bytes += next.len as u64;
                        }
                        batch.push(idx);
                        if batch.len() as u32 >= batch_submit {
                            submit(engine, &mut batch, &mut timing, &mut inflight, &mut ts, &clock)?;
                            t_fill = timing.issue[idx as usize];
                        }
                    }
                    Queued::Busy => {
                        pending = Some(next);
                        held = true;
                        break;
                    }
                }
            }
        }
        if !sync_engine && !batch.is_empty() {
            submit(engine, &mut batch, &mut timing, &mut inflight, &mut ts, &clock)?;
        } else if !sync_engine && inflight > 0 {
            // Engines that could not submit everything last time (libaio on EAGAIN) retry now.
            engine.commit().context("submitting I/O failed")?;
        }
        if inflight > 0 && (now >= end_ns || stop.load(Ordering::Relaxed)) {
            let at = *give_up_at.get_or_insert_with(|| {
                engine.set_wait_limit(Some(std::time::Duration::from_millis(100)));
                now + 1_000_000_000
            });
            if now >= at {
                let mut idle = vec![false; depth as usize];
                for &i in &free {
                    idle[i as usize] = true;
                }
                let in_flight = units.iter().enumerate().filter(|(i, _)| !idle[*i] && !batch.contains(&(*i as u32)));
                for (_, u) in in_flight {
                    let d = (u.ddir as usize).min(3);
                    ts.dropped[d] += 1;
                    if d < 3 {
                        ts.dirs[d].drop_ios += 1;
                    }
                }
                let _ = writeln!(
                    diag,
                    "fiox: job '{}': {inflight} I/Os still in flight 1 s after the job should have ended; \
                     the device stopped answering, so they are reported as dropped",
                    spec.name
                );
                abandoned = true;
                break;
            }
        }
        // Reap.
        if inflight > 0 {
            // Block for completions only when nothing more can be queued now; otherwise just
            // collect what has finished (min 0) and go on filling.
            let full = free.is_empty() || held || stopping || issued_bytes >= limit || issued_ios >= ios_limit;
            let min = if full {
                spec.iodepth_batch_complete_min.max(inflight.saturating_sub(low)).max(1).min(inflight)
            } else {
                spec.iodepth_batch_complete_min.min(inflight)
            };
            completions.clear();
            engine.getevents(min, complete_max, &mut completions).context("reaping completions failed")?;
            if !completions.is_empty() {
                now = clock.now();
                ts.complete_map[ThreadStat::batch_bucket(completions.len() as u32)] += 1;
                for c in &completions {
                    let u = &mut units[c.index as usize];
                    u.result = c.result;
                    let u = *u;
                    account(
                        &mut ts,
                        &u,
                        Some(timing.start[c.index as usize]),
                        timing.issue[c.index as usize],
                        now,
                        measuring,
                        &mut error,
                        plan,
                        diag,
                        &mut logs,
                        meas_start,
                    );
                    free.push(c.index);
                }
                inflight -= completions.len() as u32;
                if pacing {
                    pacer.completed(completions.len() as u32, now);
                }
            } else {
                now = clock.now();
            }
            fresh = true;
        }
        if !fresh {
            now = clock.now();
        }
        // Observers (status line, interval reports) get fresh figures at most every millisecond.
        if now >= next_publish {
            next_publish = now + 1_000_000;
            progress_update(progress, &ts);
            maybe_snapshot(progress, &mut served, &ts, now, meas_start, &usage0, start_epoch_ms);
        }
        sample(&mut ts, spec.rw, now, measuring, bw_win, iops_win, &mut bw_last, &mut iops_last);
        if let Some(l) = logs.as_mut().filter(|_| measuring) {
            l.hist_tick(now.saturating_sub(meas_start) / 1_000_000, &ts, spec.bs);
        }
        if let Some(check) = &mut min_rate {
            if measuring && error.is_none() {
                if let Some(msg) = check.check(now, &ts) {
                    let _ = writeln!(diag, "fiox: job '{}': {msg}", spec.name);
                    ts.error = libc::EIO;
                    error = Some(msg);
                }
            }
        }
    }
    if let (Some(log), Some(path)) = (iolog, &spec.write_iolog) {
        log.finish(clock.now(), path)?;
    }
    let elapsed_ms = now.saturating_sub(meas_start) / 1_000_000;
    if let Some(l) = &mut logs {
        l.roll(elapsed_ms);
        l.write()?;
    }
    finish_stats(&mut ts, elapsed_ms, &usage0);
    let result =
        WorkerResult { ts, pid: clock::thread_id(plan.number), start_epoch_ms, elapsed_ms, seed, error, abandoned };
    // The final figures answer every later status request.
    if let Ok(mut slot) = progress.snapshot.lock() {
        *slot = Some((u64::MAX, result.clone()));
    }
    progress.done.store(true, Ordering::Relaxed);
    Ok(result)
}

/// Fills in what is only known at the end (or at a snapshot): CPU use, runtimes, issued counts.
fn finish_stats(ts: &mut ThreadStat, elapsed_ms: u64, usage0: &sys::Usage) {
    let usage = clock::thread_usage().since(usage0);
    ts.usr_us = usage.usr_us;
    ts.sys_us = usage.sys_us;
    ts.ctx = usage.ctx;
    ts.majf = usage.majf;
    ts.minf = usage.minf;
    ts.job_runtime_ms = elapsed_ms;
    for (d, ds) in ts.dirs.iter_mut().enumerate() {
        if ds.total_ios > 0 {
            ds.runtime_ms = elapsed_ms.max(1);
        }
        ts.issued[d] = ds.total_ios;
    }
}

/// Answers a snapshot request from the status reporter, if there is one. Costs one relaxed
/// load when there is none.
#[inline]
fn maybe_snapshot(
    p: &Progress,
    served: &mut u64,
    ts: &ThreadStat,
    now: u64,
    meas_start: u64,
    usage0: &sys::Usage,
    start_epoch_ms: u64,
) {
    let want = p.want.load(Ordering::Relaxed);
    if want == *served {
        return;
    }
    *served = want;
    let mut copy = ts.clone();
    let elapsed_ms = now.saturating_sub(meas_start) / 1_000_000;
    finish_stats(&mut copy, elapsed_ms, usage0);
    let r = WorkerResult {
        ts: copy,
        pid: sys::gettid(),
        start_epoch_ms,
        elapsed_ms,
        seed: 0,
        error: None,
        abandoned: false,
    };
    if let Ok(mut slot) = p.snapshot.lock() {
        *slot = Some((want, r));
    }
}

/// `write_iolog`: every issued I/O, in fio's iolog version 3 text (`<ms> <file> <action>
/// <offset> <length>`), kept in memory and written when the job ends.
struct IoLog {
    text: String,
    names: Vec<String>,
    opened: Vec<bool>,
}

impl IoLog {
    fn new(plan: &WorkerPlan) -> IoLog {
        let names: Vec<String> = plan.files.iter().map(|f| f.path.display().to_string()).collect();
        let mut text = String::from("fio version 3 iolog\n");
        for n in &names {
            text.push_str(&format!("0 {n} add\n"));
        }
        IoLog { opened: vec![false; names.len()], names, text }
    }

    fn issue(&mut self, now_ns: u64, io: &NextIo) {
        use std::fmt::Write as _;
        let ms = now_ns / 1_000_000;
        let name = &self.names[io.file];
        // fio opens files on first use and logs it.
        if !self.opened[io.file] {
            self.opened[io.file] = true;
            let _ = writeln!(self.text, "{ms} {name} open");
        }
        let action = match io.ddir {
            Ddir::Read => "read",
            Ddir::Write => "write",
            Ddir::Trim => "trim",
            Ddir::Sync => "sync",
            Ddir::DataSync => "datasync",
        };
        if matches!(io.ddir, Ddir::Sync | Ddir::DataSync) {
            let _ = writeln!(self.text, "{ms} {name} {action}");
        } else {
            let _ = writeln!(self.text, "{ms} {name} {action} {} {}", io.offset, io.len);
        }
    }

    fn finish(mut self, now_ns: u64, path: &str) -> Result<()> {
        for (n, open) in self.names.iter().zip(&self.opened) {
            if *open {
                self.text.push_str(&format!("{} {n} close\n", now_ns / 1_000_000));
            }
        }
        std::fs::write(path, self.text).with_context(|| format!("cannot write write_iolog file '{path}'"))
    }
}

/// The loop of the metadata engines (filecreate, filestat, filedelete): one operation per file,
/// in file order, counted as `filesize` bytes in the job's direction and timed as completion
/// latency only, as fio reports them (no slat, no lat).
fn meta_loop(
    plan: &WorkerPlan,
    engine: &mut dyn IoEngine,
    stop: &AtomicBool,
    progress: &Progress,
    diag: &mut dyn Write,
) -> Result<WorkerResult> {
    let spec = &*plan.spec;
    let d = if spec.rw.writes() { 1 } else { 0 };
    let mut ts = ThreadStat { jobs: 1, ..ThreadStat::default() };
    ts.dirs[d] = DirStat::active();
    let clock = Clock::start(plan.clock);
    let usage0 = clock::thread_usage();
    let start_epoch_ms = clock::epoch_ms();
    let end_ns = if spec.runtime_us > 0 { spec.runtime_us * 1000 } else { u64::MAX };
    let passes = if spec.time_based { u64::MAX } else { spec.loops.max(1) as u64 };
    let mut error = None;
    let mut now = 0;
    'passes: for _ in 0..passes {
        for (i, f) in plan.files.iter().enumerate() {
            if stop.load(Ordering::Relaxed) || now >= end_ns || error.is_some() {
                break 'passes;
            }
            let mut u = IoUnit {
                ddir: if d == 1 { Ddir::Write } else { Ddir::Read },
                fd: -1,
                file_index: i as u32,
                block_device: f.block_device,
                offset: 0,
                len: f.region_len.min(u32::MAX as u64) as u32,
                buf: std::ptr::null_mut(),
                result: 0,
                ioprio: 0,
            };
            let t0 = clock.now();
            engine.queue(0, &mut u).context("engine failed")?;
            now = clock.now();
            if u.result < 0 {
                let e = std::io::Error::from_raw_os_error((-u.result) as i32);
                let msg = format!("{} failed on {}: {e}", spec.ioengine, f.path.display());
                let _ = writeln!(diag, "fiox: {msg}");
                ts.error = (-u.result) as i32;
                error = Some(msg);
                break 'passes;
            }
            let ds = &mut ts.dirs[d];
            let clat = now - t0;
            ds.io_bytes += u.len as u64;
            ds.total_ios += 1;
            ds.clat.add(clat);
            if let Some(h) = &mut ds.clat_hist {
                h.add(clat);
            }
            ts.mark_clat_bucket(clat);
            ts.mark_depth(1, 1);
            ts.submit_map[1] += 1;
            ts.complete_map[1] += 1;
        }
    }
    finish_stats(&mut ts, now / 1_000_000, &usage0);
    progress_update(progress, &ts);
    progress.done.store(true, Ordering::Relaxed);
    Ok(WorkerResult {
        ts,
        pid: clock::thread_id(plan.number),
        start_epoch_ms,
        elapsed_ms: now / 1_000_000,
        seed: 0,
        error,
        abandoned: false,
    })
}

/// `rate_min` / `rate_iops_min`: every `rate_cycle`, each direction must have moved at least
/// that much, or the job stops with an error (as fio does).
struct MinRate {
    bytes: [u64; 3],
    ios: [u64; 3],
    cycle_ns: u64,
    next: u64,
    last: ([u64; 3], [u64; 3]),
}

impl MinRate {
    fn new(spec: &fiox_options::JobSpec) -> Option<MinRate> {
        // Only the directions the job does are held to a minimum (`rate_min=1m` means every one).
        let on = [spec.rw.reads(), spec.rw.writes(), spec.rw.trims()];
        let only = |v: [u64; 3]| [0, 1, 2].map(|d| if on[d] { v[d] } else { 0 });
        let (bytes, ios) = (only(spec.rate_min), only(spec.rate_iops_min));
        (bytes.iter().chain(&ios).any(|&v| v > 0)).then(|| MinRate {
            bytes,
            ios,
            cycle_ns: spec.rate_cycle_ms * 1_000_000,
            next: 0,
            last: ([0; 3], [0; 3]),
        })
    }

    fn check(&mut self, now: u64, ts: &ThreadStat) -> Option<String> {
        if self.next == 0 {
            self.next = now + self.cycle_ns;
            self.last = (ts.dirs.clone().map(|d| d.io_bytes), ts.dirs.clone().map(|d| d.total_ios));
            return None;
        }
        if now < self.next {
            return None;
        }
        let secs = (now - self.next + self.cycle_ns) as f64 / 1e9;
        self.next = now + self.cycle_ns;
        let mut verdict = None;
        for d in 0..3 {
            let (b, i) = (ts.dirs[d].io_bytes - self.last.0[d], ts.dirs[d].total_ios - self.last.1[d]);
            let (bw, iops) = ((b as f64 / secs) as u64, (i as f64 / secs) as u64);
            if self.bytes[d] > 0 && bw < self.bytes[d] && verdict.is_none() {
                verdict = Some(format!("min rate {} not met, got {} KiB/s", self.bytes[d] / 1024, bw / 1024));
            }
            if self.ios[d] > 0 && iops < self.ios[d] && verdict.is_none() {
                verdict = Some(format!("min iops rate {} not met, got {iops}", self.ios[d]));
            }
            self.last.0[d] = ts.dirs[d].io_bytes;
            self.last.1[d] = ts.dirs[d].total_ios;
        }
        verdict
    }
}

/// Commits a batch: one clock read stamps the issue time of all of it.
fn submit(
    engine: &mut dyn IoEngine,
    batch: &mut Vec<u32>,
    timing: &mut Timing,
    inflight: &mut u32,
    ts: &mut ThreadStat,
    clock: &Clock,
) -> Result<()> {
    engine.commit().context("submitting I/O failed")?;
    let t_issue = clock.now();
    for &i in batch.iter() {
        timing.issue[i as usize] = t_issue;
    }
    *inflight += batch.len() as u32;
    ts.mark_depth(*inflight, batch.len() as u64);
    ts.submit_map[ThreadStat::batch_bucket(batch.len() as u32)] += 1;
    batch.clear();
    Ok(())
}

/// Accounts one finished I/O.
#[inline]
#[allow(clippy::too_many_arguments)]
fn account(
    ts: &mut ThreadStat,
    u: &IoUnit,
    start: Option<u64>,
    issue: u64,
    done: u64,
    measuring: bool,
    error: &mut Option<String>,
    plan: &WorkerPlan,
    diag: &mut dyn Write,
    logs: &mut Option<JobLogs>,
    meas_start: u64,
) {
    if u.result < 0 {
        if error.is_none() {
            let errno = (-u.result) as i32;
            let e = std::io::Error::from_raw_os_error(errno);
            let file = plan.files.get(u.file_index as usize).map(|f| f.path.display().to_string()).unwrap_or_default();
            let what = match u.ddir {
                Ddir::Read => "read",
                Ddir::Write => "write",
                Ddir::Trim => "trim",
                Ddir::Sync | Ddir::DataSync => "sync",
            };
            let msg = format!("io_u error on file {file}: {e}: {what} offset={}, buflen={}", u.offset, u.len);
            let _ = writeln!(diag, "fiox: {msg}");
            ts.error = errno;
            *error = Some(msg);
        }
        return;
    }
    if !measuring {
        return;
    }
    let d = match u.ddir {
        Ddir::Read => 0,
        Ddir::Write => 1,
        Ddir::Trim => 2,
        Ddir::Sync | Ddir::DataSync => {
            ts.sync_ios += 1;
            ts.sync_lat.add(done - issue);
            ts.sync_hist.get_or_insert_with(Default::default).add(done - issue);
            ts.issued[3] += 1;
            return;
        }
    };
    let clat = done.saturating_sub(issue);
    let ds = &mut ts.dirs[d];
    ds.io_bytes += u.result as u64;
    ds.total_ios += 1;
    if (u.result as u64) < u.len as u64 {
        ds.short_ios += 1;
        ts.short[d] += 1;
    }
    ds.clat.add(clat);
    if let Some(h) = &mut ds.clat_hist {
        h.add(clat);
    }
    let lat = match start {
        Some(s) => {
            let slat = issue.saturating_sub(s);
            ds.slat.add(slat);
            if let Some(h) = &mut ds.slat_hist {
                h.add(slat);
            }
            done.saturating_sub(s)
        }
        None => clat,
    };
    ds.lat.add(lat);
    if let Some(h) = &mut ds.lat_hist {
        h.add(lat);
    }
    if !ds.prios.is_empty() {
        // fio keeps per-priority completion latency, or total latency with lat_percentiles.
        ds.add_prio(u.ioprio, if plan.spec.lat_percentiles { lat } else { clat });
    }
    if let Some(l) = logs {
        let slat = start.map(|s| issue.saturating_sub(s));
        l.io(done.saturating_sub(meas_start) / 1_000_000, d, u.len, u.offset, slat, clat, lat);
    }
    ts.mark_clat_bucket(clat);
}

fn progress_update(p: &Progress, ts: &ThreadStat) {
    for d in 0..3 {
        p.bytes[d].store(ts.dirs[d].io_bytes, Ordering::Relaxed);
        p.ios[d].store(ts.dirs[d].total_ios, Ordering::Relaxed);
    }
}

/// Takes bandwidth and IOPS samples when their windows have passed (fio's `bwavgtime`,
/// `iopsavgtime`), for the directions the job does.
#[allow(clippy::too_many_arguments)]
#[inline]
fn sample(
    ts: &mut ThreadStat,
    rw: fiox_options::RwMode,
    now: u64,
    measuring: bool,
    bw_win: u64,
    iops_win: u64,
    bw_last: &mut (u64, [u64; 3]),
    iops_last: &mut (u64, [u64; 3]),
) {
    if !measuring {
        return;
    }
    let on = [rw.reads(), rw.writes(), rw.trims()];
    if now - bw_last.0 >= bw_win {
        let ms = (now - bw_last.0) / 1_000_000;
        for (d, _) in on.iter().enumerate().filter(|(_, on)| **on) {
            {
                let delta = ts.dirs[d].io_bytes - bw_last.1[d];
                ts.dirs[d].bw.add(delta * 1000 / ms.max(1) / 1024);
                bw_last.1[d] = ts.dirs[d].io_bytes;
            }
        }
        bw_last.0 = now;
    }
    if now - iops_last.0 >= iops_win {
        let ms = (now - iops_last.0) / 1_000_000;
        for (d, _) in on.iter().enumerate().filter(|(_, on)| **on) {
            {
                let delta = ts.dirs[d].total_ios - iops_last.1[d];
                ts.dirs[d].iops.add(delta * 1000 / ms.max(1));
                iops_last.1[d] = ts.dirs[d].total_ios;
            }
        }
        iops_last.0 = now;
    }
}
