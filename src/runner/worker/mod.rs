//! One worker thread: fio's I/O loop for one job clone, as a [`Worker`] that owns named parts
//! and moves through named phases.
//!
//! ```text
//!   setup (startdelay, thread settings, files, queue, buffer contents)
//!   loop {
//!       tick     end rules → Ramp | Measure | Drain(reason) | Done(reason); ramp over → measure
//!       fill     gen → end rules (size) → pacer → cmdprio → content → queue   (not when draining)
//!       submit   commit the batch; one clock read stamps its issue time
//!       liveness (woken by the watchdog: the device stopped answering, or a second Ctrl-C)
//!       reap     queue.reap → accountant | error rule → pacer
//!       observe  publish counters, answer snapshots, samples, minimum rates
//!   }
//!   finish (iolog, logs, result)
//! ```
//!
//! The parts: the [`IoQueue`] (engine, units, buffers; from fiox-engine), [`IoGen`] (what to
//! do next), [`Pacer`] (rates and thinktime), [`Content`] (what writes carry), the
//! [`Accountant`] (statistics and logs), the end rules, the error rule, the depth limits and
//! the minimum rates. A fio feature that changes the loop becomes one part or one method.
//! Parts are concrete types: the only dynamic call per I/O is the engine's, as in fio.
//!
//! Timing follows fio's definitions. For asynchronous engines the clock is read once per
//! submission batch before queueing (start), once after the batch is committed (issue) and once
//! per reaped batch (completion): slat = issue - start, clat = completion - issue,
//! lat = completion - start. Synchronous engines have no submission phase: the clock is read
//! before and after each call, clat = lat = the call's duration, and there is no slat.
//!
//! The loop allocates nothing: units, buffers, timestamps and the completion list are made once.

mod account;
mod blocks;
pub mod flow;
mod iolog;
mod latency;
mod layout;
mod locks;
mod meta;
mod noio;
mod rules;
mod setup;

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};
use fiox_engine::{sys, Completion, Ddir, Io, IoQueue, QueueStatus};
use fiox_options::JobSpec;
use fiox_stats::ThreadStat;

use super::content::Content;
use super::iogen::IoGen;
use super::offsets::Rng;
use super::pacer::Pacer;
use super::source::Source;
use super::verify::Verifier;
use crate::plan::clock::{self, Clock};
use crate::plan::io::NextIo;
use crate::plan::mix64;
use crate::plan::WorkerPlan;
use account::Accountant;
pub use layout::layout;
use rules::{EndReason, EndRules, ErrorRule, MinRate};

/// Live counters another thread may read for the status line.
#[derive(Default)]
pub struct Progress {
    pub bytes: [AtomicU64; 3],
    pub ios: [AtomicU64; 3],
    pub done: AtomicBool,
    /// Raised by the status reporter to ask for a snapshot (`--status-interval`); the worker
    /// answers by storing its statistics so far in `snapshot` with the same number.
    pub want: AtomicU64,
    /// The latest snapshot: the answer to request `.0`, or the worker's own periodic copy, or
    /// (`u64::MAX`) its final result.
    pub snapshot: std::sync::Mutex<Option<(u64, WorkerResult)>>,
    /// I/Os completed so far, in every phase and direction: the watchdog's sign of life.
    pub heartbeat: AtomicU64,
    /// What the worker is doing ([`Activity`]), for the watchdog.
    pub activity: AtomicU8,
    /// The worker thread's id, for waking it out of a wait.
    pub tid: AtomicU32,
    /// I/Os in flight at the last publish.
    pub inflight: AtomicU32,
    /// How long the oldest of them had been in flight at the last publish, nanoseconds (the
    /// Ceph stall watchdog adds the silence since).
    pub oldest_ns: AtomicU64,
    /// Set by the watchdog before it wakes the worker ([`Wake`]).
    pub wake: AtomicU8,
    /// Measurement has started (ramp_time is over): the published counters count from here.
    pub measuring: AtomicBool,
    /// Set by steady-state detection: the job ends as if its runtime were over.
    pub end: AtomicBool,
}

/// What a worker is doing, as the watchdog needs to know it.
pub struct Activity;

impl Activity {
    /// Not started, or deliberately idle (startdelay, thinktime, a rate's pause): silence is
    /// expected.
    pub const IDLE: u8 = 0;
    /// Doing I/O: silence longer than `hang_timeout` means the device stopped answering.
    pub const IO: u8 = 1;
    /// Flushing and closing after its result is final (in the snapshot slot).
    pub const FINISHING: u8 = 2;
}

/// Why the watchdog woke a worker.
pub struct Wake;

impl Wake {
    /// Nothing completed for the job's hang bound: give up on what is in flight.
    pub const HANG: u8 = 1;
    /// A second interrupt: stop at once without waiting for what is in flight.
    pub const ABORT: u8 = 2;
}

impl Progress {
    fn publish(&self, ts: &ThreadStat, completed: u64, inflight: u32, oldest_ns: u64) {
        self.oldest_ns.store(oldest_ns, Ordering::Relaxed);
        for d in 0..3 {
            self.bytes[d].store(ts.dirs[d].io_bytes, Ordering::Relaxed);
            self.ios[d].store(ts.dirs[d].total_ios, Ordering::Relaxed);
        }
        self.heartbeat.store(completed, Ordering::Relaxed);
        self.inflight.store(inflight, Ordering::Relaxed);
    }
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
    /// answering); their buffers are never freed or reused.
    pub abandoned: bool,
    /// The I/O error that stopped the job, already described.
    pub error: Option<String>,
    /// fio's `func=` for the job's error when it is not an I/O error (`max latency exceeded`).
    pub error_func: Option<&'static str>,
    /// Steady-state detection's window, on the worker that carries it (a group's last).
    pub steady: Option<fiox_report::SteadyReport>,
    /// The queue depth latency-target mode settled on.
    pub latency_depth: Option<u32>,
    /// The kernel features the engine set up and that took effect (io_uring's setup flags and
    /// registrations), for the run manifest.
    pub engine_features: Vec<&'static str>,
}

/// The start delay of one clone: a time drawn from `startdelay`'s range with the clone's
/// seed, so `randrepeat=1` (the default) repeats it from run to run and each `randseed`
/// moves it, as fio 3.33 does (docs/fio-observed/values.md).
fn start_delay((lo, hi): (u64, u64), seed: u64) -> u64 {
    match (hi - lo).checked_add(1) {
        _ if hi == lo => lo,
        Some(span) => lo + crate::plan::mix64(seed ^ 0x5354_4152_5444_4c59) % span,
        None => crate::plan::mix64(seed),
    }
}

/// Runs one worker to the end. `stop` asks every worker to finish early (Ctrl-C, exitall).
pub fn run(
    plan: &WorkerPlan,
    seed: u64,
    stop: &AtomicBool,
    progress: &Progress,
    flow: Option<flow::FlowMember>,
    env: JobEnv<'_>,
    diag: &mut dyn Write,
) -> Result<WorkerResult> {
    let spec = &*plan.spec;
    // However the job ends, its flow group stops waiting for it.
    let _flow_done = flow.clone().map(flow::Done);
    if spec.create_only {
        // The files are laid out (before the phase started): the job is done, with no I/O.
        return Ok(WorkerResult { seed, ..WorkerResult::default() });
    }
    if spec.unlink_each_loop && (plan.engine.name == "mmap" || spec.engine.io_uring.registerfiles) {
        // Their files stay mapped or registered: a file replaced between loops would not reach
        // the engine.
        anyhow::bail!("job '{}': unlink_each_loop is not supported with ioengine=mmap or registerfiles", spec.name);
    }
    // As in fio, a delayed job does nothing before its delay has passed: a net sender must not
    // connect before the receiver it was delayed for listens.
    let delay_us = start_delay(spec.startdelay_us, seed);
    if delay_us > 0 {
        let until = Instant::now() + std::time::Duration::from_micros(delay_us);
        while Instant::now() < until && !stop.load(Ordering::Relaxed) {
            std::thread::sleep((until - Instant::now()).min(std::time::Duration::from_millis(100)));
        }
    }
    let _locked = setup::thread_settings(plan)?;
    crate::runner::debug::trace("process", || format!("job {} (clone {}) started", spec.name, plan.clone));
    let files = setup::open_files(plan)?;
    let mut q = setup::queue(plan, files)?;
    let mut content = Content::new(spec, seed)
        .with_context(|| format!("job '{}'", spec.name))?
        .with_working_set(plan.dedupe_set, seed);
    // Only writes carry the buffers' contents; a job that only reads leaves them untouched, so
    // a deep queue costs neither the time to fill them nor resident memory until used.
    if spec.rw.writes() {
        for i in 0..q.depth() {
            content.initial(q.buf_mut(i));
        }
    }
    progress.tid.store(sys::gettid(), Ordering::Relaxed);
    progress.activity.store(Activity::IO, Ordering::Relaxed);
    if let Some(line) = q.banner() {
        (env.notice)(&line);
    }
    if plan.engine.no_io || plan.engine.metadata {
        // Its operations are not I/Os the group counts: it holds nobody back.
        if let Some(f) = &flow {
            f.finish();
        }
    }
    let res = if plan.engine.no_io {
        noio::run(plan, &mut q, stop, progress, env.io_peers)?
    } else if plan.engine.metadata {
        meta::run(plan, &mut q, stop, progress, diag)?
    } else {
        let verify = match &spec.verify {
            Some(v) => Some(Verifier::new(plan, v, q.depth(), seed, run_id())?),
            None => None,
        };
        Worker::new(plan, &mut q, content, seed, stop, progress, diag)?.with_flow(flow).with_verify(verify).run()?
    };
    progress.activity.store(Activity::FINISHING, Ordering::Relaxed);
    // An abandoned queue still has I/O on a device that stopped answering: a flush could wait
    // for it forever.
    // fio syncs at the end only a job that writes (a read job's end_fsync does nothing).
    if (spec.end_fsync || spec.fsync_on_close) && spec.rw.writes() && !res.abandoned {
        for f in q.files() {
            f.sync_all().ok();
        }
    }
    if spec.end_syncfs && spec.rw.writes() && !res.abandoned {
        sync_fs(q.files());
    }
    let engine_features = q.features();
    // Closes the files; the queue keeps (leaks) engine and buffers if I/O is still in flight.
    drop(q);
    if spec.unlink && !plan.engine.diskless {
        for f in &plan.files {
            if !f.block_device {
                std::fs::remove_file(&f.path).ok();
            }
        }
    }
    Ok(WorkerResult { pid: clock::thread_id(plan.number), engine_features, ..res })
}

/// `end_syncfs` (fio 3.42): one syncfs(2) for the job's files, on the first one's file system
/// (fio makes one call, whatever the number of files).
fn sync_fs(files: &[std::fs::File]) {
    use std::os::fd::AsRawFd;
    if let Some(f) = files.first() {
        sys::syncfs(f.as_raw_fd()).ok();
    }
}

/// What a job sees of the run around it.
pub struct JobEnv<'a> {
    /// Where the job's own start-up line goes (cpuio's and exec's), with fio's normal output.
    pub notice: &'a (dyn Fn(&str) + Sync),
    /// The progress of the phase's jobs that do I/O (cpuio's `exit_on_io_done` waits for them).
    pub io_peers: &'a [std::sync::Arc<Progress>],
}

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// `ramp_time`: I/O runs, nothing is booked.
    Ramp,
    /// I/O runs and is booked.
    Measure,
    /// An end rule fired; what is in flight completes, nothing new is issued.
    Drain(EndReason),
    Done(EndReason),
}

/// Queue depth and batching: `iodepth_batch_submit`, `iodepth_batch_complete_min/max`,
/// `iodepth_low`.
struct DepthLimits {
    batch_submit: u32,
    complete_min: u32,
    complete_max: u32,
    low: u32,
}

impl DepthLimits {
    fn new(spec: &JobSpec, depth: u32) -> DepthLimits {
        DepthLimits {
            batch_submit: spec.iodepth_batch_submit.max(1),
            complete_min: spec.iodepth_batch_complete_min,
            complete_max: spec.iodepth_batch_complete_max.clamp(1, depth),
            low: spec.iodepth_low.min(depth),
        }
    }

    /// How many completions to wait for with `inflight` I/Os out: when nothing more can be
    /// queued now (`full`), enough to bring the queue down to `iodepth_low` (at least one);
    /// otherwise only what `iodepth_batch_complete_min` demands, so filling goes on.
    #[inline]
    fn reap_min(&self, inflight: u32, full: bool) -> u32 {
        if full {
            self.complete_min.max(inflight.saturating_sub(self.low)).max(1).min(inflight)
        } else {
            self.complete_min.min(inflight)
        }
    }
}

/// `cmdprio_percentage` / `cmdprio_bssplit`: the priority of each I/O, by a draw per I/O.
struct CmdPrio {
    rules: [Vec<fiox_options::PrioRule>; 3],
    rng: Rng,
}

impl CmdPrio {
    fn new(spec: &JobSpec, seed: u64) -> CmdPrio {
        CmdPrio { rules: [0, 1, 2].map(|d| spec.engine.cmdprio.rules(d)), rng: Rng::new(mix64(seed ^ 0x0510)) }
    }

    /// The first rule for this block size decides.
    #[inline]
    fn draw(&mut self, io: &NextIo) -> u16 {
        let rule = self
            .rules
            .get(io.ddir() as usize)
            .and_then(|rules| rules.iter().find(|r| r.bs.is_none_or(|bs| bs == io.len() as u64)));
        match rule {
            Some(r) if (self.rng.below(1_000_000) as f64) < r.pct * 10_000.0 => r.ioprio,
            _ => 0,
        }
    }
}

/// When each unit's I/O was prepared (start) and handed to the kernel (issue), and, for a
/// paced job only, when its rate schedule wanted it to start (due; empty otherwise).
struct Stamps {
    start: Vec<u64>,
    issue: Vec<u64>,
    due: Vec<u64>,
}

/// Observers' view of the worker: progress counters at most every millisecond, snapshots on
/// request and every [`SNAPSHOT_EVERY_NS`].
struct Publisher<'a> {
    progress: &'a Progress,
    next_at: u64,
    /// The last snapshot request answered.
    served: u64,
    next_snapshot_at: u64,
    /// Whether the stall watchdog reads the oldest in-flight I/O's age for this job: only then
    /// is it worth scanning the units in flight at each publish.
    watch_oldest: bool,
}

/// How often a worker leaves a copy of its statistics for the watchdog, which reports a worker
/// stuck in an uninterruptible system call from it.
const SNAPSHOT_EVERY_NS: u64 = 250_000_000;

/// One job clone's I/O loop. See the module documentation.
struct Worker<'a> {
    plan: &'a WorkerPlan,
    spec: &'a JobSpec,
    seed: u64,
    q: &'a mut IoQueue,
    /// What to do next: the generator, zoned or not, or a replayed trace.
    source: Source,
    pacer: Pacer,
    content: Content,
    prio: CmdPrio,
    acct: Accountant,
    end: EndRules,
    errors: ErrorRule,
    min_rate: Option<MinRate>,
    depth: DepthLimits,
    iolog: Option<iolog::IoLog>,
    clock: Clock,
    phase: Phase,
    /// The latest clock reading.
    now: u64,
    /// `now` was read at the end of the last pass of the loop and nothing slow happened since
    /// (no publish, snapshot, log window or ramp end): the next fill may start from it instead
    /// of reading the clock again.
    now_fresh: bool,
    ramp_ns: u64,
    /// `ramp_size` (fio 3.42): bytes still to complete before measurement starts (0: none,
    /// or done).
    ramp_bytes_left: u64,
    /// `thinkcycles` (fio 3.42): busy-loop iterations after each completed I/O.
    thinkcycles: u64,
    /// Something happens between loops (`unlink_each_loop`, `end_syncfs`, `end_fsync`, a
    /// `write_iolog` that logs the files' closing): see [`Worker::between_loops`].
    loop_work: bool,
    /// The loop's end has let its due `fsync=N` sync be drawn (see
    /// [`Worker::loop_ends_on_fsync`]).
    loop_end_sync: bool,
    stamps: Stamps,
    /// Units queued since the last commit.
    batch: Vec<u32>,
    /// Units committed whose issue stamp waits for the reap's clock reading (an `instant`
    /// engine's commit that filled the queue; see `submit`).
    unstamped: Vec<u32>,
    /// The engine is `instant`: its commits may be dated by the next reap's reading.
    defer_issue: bool,
    /// I/Os committed that the engine has not said it submitted (libaio on EAGAIN, a full
    /// ring; an engine that starts I/O when queued and says 0 keeps this above 0): while
    /// there are any, the loop commits again on each pass.
    unsubmitted: u32,
    completions: Vec<Completion>,
    /// An I/O drawn but not yet issued (its rate was not due, or the engine was busy).
    pending: Option<NextIo>,
    /// Pacing is on; with `steer`, a mixed job's direction follows its per-direction rates.
    pacing: bool,
    /// `io_submit_mode=offload`: when the I/O held back is due at this clock reading (0: none
    /// is held for its rate), the reap waits for completions only until then.
    due_at: u64,
    steer: bool,
    /// I/Os completed, in every phase (the heartbeat).
    completed: u64,
    abandoned: bool,
    publisher: Publisher<'a>,
    /// `flow`: the job's place among the jobs whose I/O it keeps in proportion.
    flow: Option<flow::FlowMember>,
    /// Latency-target mode: the depth it allows and its windows.
    latency: Option<latency::LatencyMode>,
    /// `max_latency` in nanoseconds (`u64::MAX`: none).
    max_latency_ns: u64,
    /// `lockfile`: the job's holds on its files' locks.
    locks: Option<locks::JobLocks>,
    /// `verify`: what writes carry, the map of what they left, the checks of reads.
    verify: Option<Verifier>,
    /// Overlapping I/O waits for what it overlaps (`serialize_overlap`, and always under
    /// verify, so the map's order of writes is the device's).
    serialize: bool,
    /// The read-back of a write job's blocks is under way.
    reading_back: bool,
    stop: &'a AtomicBool,
    diag: &'a mut dyn Write,
}

impl<'a> Worker<'a> {
    fn new(
        plan: &'a WorkerPlan,
        q: &'a mut IoQueue,
        content: Content,
        seed: u64,
        stop: &'a AtomicBool,
        progress: &'a Progress,
        diag: &'a mut dyn Write,
    ) -> Result<Box<Worker<'a>>> {
        let spec = &*plan.spec;
        let regions: Vec<(u64, u64)> = plan.files.iter().map(|f| (f.region_start, f.region_len)).collect();
        let mut gen = IoGen::new(spec, &regions, seed);
        if spec.randrepeat {
            gen.follow_fio(spec.randseed, plan.number as u64, spec);
        }
        if spec.write_iolog.is_some() {
            gen.track_closes();
        }
        if rules::room_past_region(plan) {
            let ends: Vec<u64> = plan.files.iter().map(|f| f.file_end).collect();
            gen.set_rooms(&ends);
        }
        let mut zone_resets = 0;
        let source = match (&plan.replay, spec.zones.mode) {
            (Some(r), _) => Source::Replay(super::replay::Replay::new(r.clone())),
            (None, fiox_options::ZoneMode::Strided) => {
                let align = crate::plan::io::min_block_size(spec);
                let zones = super::zones::Zones::new(&spec.zones, &regions, align, spec.rw.is_random(), seed);
                Source::Zoned(gen, zones)
            }
            (None, fiox_options::ZoneMode::Zbd) => {
                let (zbd, resets) = super::zbd::Zbd::new(plan, q.files())?;
                zone_resets = resets;
                Source::Zbd(gen, Box::new(zbd))
            }
            _ => Source::Gen(gen),
        };
        let depth = q.depth();
        let prio = CmdPrio::new(spec, seed);
        let clock = Clock::start(plan.clock);
        let ramp_ns = spec.ramp_time_us * 1000;
        let end = EndRules::new(plan);
        let ramping = ramp_ns > 0 || spec.ramp_size > 0;
        let mut acct = Accountant::new(spec, plan.number, !ramping);
        acct.ts.zone_resets = zone_resets;
        if spec.block_error_percentiles {
            let sizes: Vec<u64> = plan.files.iter().map(|f| f.region_start + f.region_len).collect();
            acct.track_blocks(&sizes, crate::plan::io::min_block_size(spec));
        }
        let pacer = Pacer::new(spec, seed);
        let pacing = pacer.active();
        let steer = pacing && source.mixes() && pacer.limits_directions();
        // On the heap: the worker is several KiB, and each move of it by value (through
        // `Result`, the builder calls, `run`) took another copy's room in the thread's stack
        // frames, all of it touched memory once the stack probes had run.
        Ok(Box::new(Worker {
            plan,
            spec,
            seed,
            q,
            source,
            pacer,
            content,
            prio,
            acct,
            end,
            errors: ErrorRule::new(spec),
            min_rate: MinRate::new(spec),
            depth: DepthLimits::new(spec, depth),
            iolog: spec.write_iolog.as_ref().map(|_| iolog::IoLog::new(plan)),
            clock,
            phase: if ramping { Phase::Ramp } else { Phase::Measure },
            now: 0,
            now_fresh: false,
            ramp_ns,
            ramp_bytes_left: spec.ramp_size,
            thinkcycles: spec.thinkcycles,
            loop_end_sync: false,
            loop_work: spec.unlink_each_loop
                || spec.end_syncfs
                || spec.end_fsync
                || spec.fsync_on_close
                || spec.write_iolog.is_some()
                || ((spec.fsync > 0 || spec.fdatasync > 0 || spec.sync_file_range.is_some_and(|r| r.every > 0))
                    && plan.engine.sync),
            stamps: Stamps {
                start: vec![0; depth as usize],
                issue: vec![0; depth as usize],
                due: if account::paced(spec) { vec![0; depth as usize] } else { Vec::new() },
            },
            batch: Vec::with_capacity(depth as usize),
            unstamped: Vec::with_capacity(depth as usize),
            defer_issue: plan.engine.instant,
            unsubmitted: 0,
            completions: Vec::with_capacity(depth as usize),
            pending: None,
            pacing,
            due_at: 0,
            steer,
            completed: 0,
            abandoned: false,
            publisher: Publisher {
                progress,
                next_at: 0,
                served: 0,
                next_snapshot_at: SNAPSHOT_EVERY_NS,
                watch_oldest: super::stall_watched(spec),
            },
            flow: None,
            latency: spec.latency_target.as_ref().map(|lt| latency::LatencyMode::new(lt, depth, 0)),
            max_latency_ns: match spec.max_latency_us {
                0 => u64::MAX,
                us => us.saturating_mul(1000),
            },
            locks: {
                let paths: Vec<&std::path::Path> = plan.files.iter().map(|f| f.path.as_path()).collect();
                locks::JobLocks::new(spec.lockfile, plan.number as u64, &paths)
            },
            verify: None,
            serialize: spec.serialize_overlap || (spec.verify.is_some() && spec.rw.writes() && depth > 1),
            reading_back: false,
            stop,
            diag,
        }))
    }

    /// Puts the job in its flow group.
    fn with_flow(mut self: Box<Self>, flow: Option<flow::FlowMember>) -> Box<Self> {
        self.flow = flow;
        self
    }

    /// Gives the job its verification.
    fn with_verify(mut self: Box<Self>, verify: Option<Verifier>) -> Box<Self> {
        self.verify = verify;
        self
    }

    fn run(mut self: Box<Self>) -> Result<WorkerResult> {
        self.join_flow();
        if self.acct.measuring {
            self.publisher.progress.measuring.store(true, Ordering::Relaxed);
        }
        let only = self.verify.as_ref().is_some_and(|v| v.only);
        if self.verify.as_ref().is_some_and(|v| v.only && v.from_journal) {
            // The journal says which blocks the writer wrote: nothing to draw.
            self.phase = Phase::Done(EndReason::Done);
        } else if only {
            self.plan_only();
        } else {
            self.run_until_done()?;
        }
        // With verify, each loop's writes are read back before the next loop, as in fio.
        let laps = if only { 1 } else { self.spec.loops.max(1) };
        for lap in 0..laps {
            if self.phase != Phase::Done(EndReason::Done) || !self.verify.as_ref().is_some_and(|v| v.read_back) {
                break;
            }
            if lap > 0 {
                self.start_write_loop();
                self.run_until_done()?;
                if self.phase != Phase::Done(EndReason::Done) {
                    break;
                }
            }
            self.start_read_back();
            self.run_until_done()?;
        }
        self.finish()
    }

    /// Waits for the job's flow group to start together; the job's time then counts from the
    /// group's start.
    fn join_flow(&mut self) {
        let Some(f) = &self.flow else { return };
        let activity = &self.publisher.progress.activity;
        activity.store(Activity::IDLE, Ordering::Relaxed);
        let late_ns = f.start_together(self.stop);
        activity.store(Activity::IO, Ordering::Relaxed);
        self.clock = Clock::start(self.plan.clock);
        self.clock.set_back(late_ns);
        if self.acct.measuring {
            self.acct.start_measuring(0);
        }
    }

    /// The next loop of a verifying write job, after the read-back of the last one.
    #[cold]
    fn start_write_loop(&mut self) {
        self.reading_back = false;
        if let Some(v) = &mut self.verify {
            v.end_read_back();
        }
        self.end = EndRules::new(self.plan);
        self.pending = None;
        self.phase = Phase::Measure;
    }

    /// The loop drawn in the module documentation, until the job is done.
    fn run_until_done(&mut self) -> Result<()> {
        loop {
            self.tick();
            if let Phase::Done(_) = self.phase {
                break;
            }
            let mut fresh = false;
            let mut held = false;
            if matches!(self.phase, Phase::Ramp | Phase::Measure) {
                (fresh, held) = self.fill()?;
            }
            self.submit_rest()?;
            if self.liveness() {
                break;
            }
            if self.inflight() > 0 {
                self.reap(held)?;
                fresh = true;
            }
            if !fresh {
                self.now = self.clock.now();
                self.now_fresh = true;
                self.stamp_issued(self.now);
            }
            self.observe();
        }
        Ok(())
    }

    /// `verify_only`: the job's writes are drawn as if made, and remembered to be read back;
    /// nothing is written.
    fn plan_only(&mut self) {
        while let Some(next) = self.next_io(0) {
            if next.ddir() == Ddir::Write {
                if let Some(v) = &mut self.verify {
                    if !v.within_state(next.file(), next.offset) {
                        break;
                    }
                    v.planned(next.file(), next.offset, next.len());
                }
            }
            self.end.issued(&next);
        }
        self.phase = Phase::Done(EndReason::Done);
    }

    /// After the writes, what they left is read back and checked: the files are flushed and
    /// their cached pages dropped (so the device is read, not memory), and the map of blocks
    /// becomes the source of reads.
    #[cold]
    fn start_read_back(&mut self) {
        for (f, fp) in self.q.files().iter().zip(&self.plan.files) {
            use std::os::fd::AsRawFd;
            let _ = f.sync_all();
            let _ = sys::drop_cache(f.as_raw_fd(), fp.block_device, fp.region_start, fp.region_len);
        }
        if let Some(v) = &mut self.verify {
            v.start_read_back();
        }
        self.reading_back = true;
        self.pending = None;
        self.end = EndRules::read_back();
        self.phase = Phase::Measure;
        if !self.acct.measuring {
            self.acct.start_measuring(self.now);
        }
    }

    /// Applies the end rules and starts measuring once the ramp is over.
    #[inline]
    fn tick(&mut self) {
        let stop = self.stop.load(Ordering::Relaxed);
        if self.publisher.progress.end.load(Ordering::Relaxed) {
            // Steady state attained: the runtime is over now.
            self.end.end_ns = self.end.end_ns.min(self.now);
        }
        if let Some(reason) = self.end.verdict(self.now, stop, self.errors.failed()) {
            let idle = self.q.in_engine() == 0;
            self.phase = if idle { Phase::Done(reason) } else { Phase::Drain(reason) };
            if idle {
                return;
            }
        }
        self.ramp_check();
    }

    /// Ends the ramp once the clock has passed it. Measurement starts at the ramp's end, not
    /// when the loop notices: with a deep queue of slow I/Os, one wait can outlast the ramp.
    #[inline]
    fn ramp_check(&mut self) {
        // A ramp_size ramp ends on bytes (see `ramp_bytes_done`), not on the clock.
        if !self.acct.measuring && self.ramp_bytes_left == 0 && self.now >= self.ramp_ns {
            self.end_ramp(self.ramp_ns);
        }
    }

    /// Measurement starts at clock reading `at`.
    fn end_ramp(&mut self, at: u64) {
        // Slow work: the next fill reads the clock again.
        self.now_fresh = false;
        self.acct.start_measuring(at);
        self.publisher.progress.measuring.store(true, Ordering::Relaxed);
        if self.phase == Phase::Ramp {
            self.phase = Phase::Measure;
        }
    }

    /// `ramp_size`: `bytes` more completed during the ramp; once the ramp's bytes are done,
    /// measurement starts, and the runtime counts from then, as after a ramp_time.
    #[cold]
    fn ramp_bytes_done(&mut self, bytes: u64) {
        self.ramp_bytes_left = self.ramp_bytes_left.saturating_sub(bytes);
        if self.ramp_bytes_left == 0 {
            self.end.ramp_over(self.now, self.spec.runtime_us * 1000);
            self.end_ramp(self.now);
        }
    }

    /// `thinkcycles`: the job stalls this long in its own loop, as an application would
    /// while processing what it read.
    #[cold]
    fn think_cycles(&self, completions: u64) {
        let mut x = 0u64;
        for i in 0..self.thinkcycles.saturating_mul(completions) {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        std::hint::black_box(x);
    }

    /// Before `next` goes to the engine in unit `idx`: verify's record of it, and a write's
    /// buffer sealed (verify) or refreshed (changing content).
    #[inline(always)]
    fn prepare_buffer(&mut self, idx: u32, next: &NextIo) -> Result<()> {
        if let Some(v) = &mut self.verify {
            v.issue(idx, next);
        }
        if next.ddir() == Ddir::Write {
            if let Some(v) = &mut self.verify {
                v.seal(idx, &mut self.q.buf_mut(idx)[..next.len() as usize], next.file(), next.offset);
                v.flush_journal()
                    .with_context(|| format!("job '{}': cannot write its verify journal", self.spec.name))?;
            } else if self.content.changes() {
                self.content.before_write(self.q.buf_mut(idx), next.len() as usize, next.offset);
            }
        }
        Ok(())
    }

    /// Fills the queue, committing every `iodepth_batch_submit` I/Os. Returns whether the
    /// clock was read after an I/O completed in line, and whether an I/O is held back (not
    /// due yet, or the engine was busy), which makes the reap wait.
    fn fill(&mut self) -> Result<(bool, bool)> {
        let sync_engine = self.plan.engine.sync;
        // The batch's start: the clock reading that ended the loop's last pass (the reap, as a
        // rule), when nothing slow has happened since; so a pass reads the clock once for its
        // completions and the next batch's start together, as fio 3.42 reads it once per batch.
        // The start then includes the booking of the completions just reaped (tens of
        // nanoseconds per completion) in the slat and lat of the batch's I/Os.
        let mut t_fill = match (sync_engine, std::mem::take(&mut self.now_fresh)) {
            (true, _) => 0,
            (false, true) => self.now,
            (false, false) => self.clock.now(),
        };
        while let Some(idx) = self.q.next_idle() {
            if self.end.issued_all() || self.at_latency_depth() {
                break;
            }
            if let Some(f) = &self.flow {
                if !f.may_issue() {
                    // Ahead of its flow group: wait for its own I/O, or pause when it has none.
                    if self.q.in_engine() == 0 {
                        let activity = &self.publisher.progress.activity;
                        activity.store(Activity::IDLE, Ordering::Relaxed);
                        f.pause();
                        activity.store(Activity::IO, Ordering::Relaxed);
                        self.now = self.clock.now();
                    }
                    return Ok((false, true));
                }
            }
            if self.loop_work && self.end.loop_ended() && (!self.loop_end_due() || !self.between_loops()?) {
                return Ok((false, true));
            }
            // One clock read serves the rate checks of this I/O.
            let t_pace = if self.pacing { self.clock.now() } else { 0 };
            let Some(next) = self.next_io(t_pace) else {
                if self.source.zbd_mut().is_some_and(|z| z.waiting()) {
                    // A write waits for its zone: for the job's own I/O to complete (the reap
                    // waits for it), or else for another job's.
                    if self.q.in_engine() == 0 {
                        std::thread::sleep(std::time::Duration::from_micros(20));
                    }
                    return Ok((false, self.q.in_engine() > 0));
                }
                break;
            };
            if self.source.zbd_mut().is_some_and(|z| z.reset_due().is_some()) && !self.reset_zone()? {
                self.pending = Some(next);
                return Ok((false, true));
            }
            if self.serialize && self.overlaps_inflight(&next) {
                // serialize_overlap: held until the I/O it overlaps completes (fio answers
                // "busy" and reaps).
                self.pending = Some(next);
                return Ok((false, true));
            }
            if self.pacing {
                let at = self.pacer.ready_at(next.ddir() as usize);
                if at > t_pace {
                    self.pending = Some(next);
                    self.wait_until_due(at);
                    return Ok((false, true));
                }
            }
            if self.locks.is_some() && !self.lock_file(&next) {
                // Another job has the file: this job's own I/O finishes first (see locks.rs).
                self.pending = Some(next);
                return Ok((false, self.q.in_engine() > 0));
            }
            if self.pacing {
                let d = next.ddir() as usize;
                if let Some(due) = self.stamps.due.get_mut(idx as usize) {
                    *due = self.pacer.due(d, t_pace);
                }
                self.pacer.issued(d, next.len() as u64, t_pace);
            }
            // Logged once the engine took it (see `log_issue`).
            let t_log = if self.iolog.is_some() { self.clock.now() } else { 0 };
            // The engine's view of the I/O is made where it is used, never kept in a variable
            // whose address is taken (`debug_io`): that put it in memory, written field by field
            // and copied as wider words on every I/O (a stalled store-to-load forward).
            let ioprio = self.prio.draw(&next);
            self.prepare_buffer(idx, &next)?;
            // Synchronous engines are timed around the call itself.
            let t_start = if sync_engine { self.clock.now() } else { t_fill };
            self.stamps.start[idx as usize] = t_start;
            if crate::runner::debug::io_on() {
                debug_io("queue", idx, &engine_io(next, ioprio), self.plan);
            }
            if let Some(z) = self.source.zbd_mut() {
                z.issued();
            }
            let status = self.queue_io(idx, engine_io(next, ioprio))?;
            if !matches!(status, QueueStatus::Busy) && self.iolog.is_some() {
                self.log_issue(t_log, &next);
            }
            match status {
                QueueStatus::Completed(result) => {
                    // Done in line (a synchronous engine; a trim on a ring engine; the null
                    // engine at depth 1): no submission phase, so no slat, as in fio.
                    self.issued(&next);
                    self.now = self.clock.now();
                    self.now_fresh = true;
                    self.completed_in_line(idx, result, t_start);
                    // Back to the loop head, which checks the time and the stop flag.
                    return Ok((true, false));
                }
                QueueStatus::Queued => {
                    self.issued(&next);
                    self.batch.push(idx);
                    if self.batch.len() as u32 >= self.depth.batch_submit {
                        self.submit()?;
                        if !self.unstamped.is_empty() {
                            break; // No unit is idle: the reap comes next and dates the batch.
                        }
                        t_fill = self.stamps.issue[idx as usize];
                        // A submission can block for a long time (libaio waits for request
                        // slots when the device queue is full: tens of milliseconds per 8 MiB
                        // I/O). Filling a deep queue must not run past the job's end, so the
                        // clock read that stamped the batch is checked against it here.
                        if t_fill >= self.end.end_ns || self.stop.load(Ordering::Relaxed) {
                            self.now = t_fill;
                            return Ok((true, false));
                        }
                    }
                }
                QueueStatus::Busy => {
                    if let Some(l) = &mut self.locks {
                        l.release(next.file(), next.ddir());
                    }
                    self.pending = Some(next);
                    return Ok((false, true));
                }
            }
        }
        Ok((false, false))
    }

    /// `write_iolog`: the files the file service closed since the last I/O, then `next`,
    /// issued at `t`. Called once the engine took the I/O: one it answered busy (a sync
    /// waiting for the I/O in flight) comes back to be issued again, and is logged once.
    #[cold]
    fn log_issue(&mut self, t: u64, next: &NextIo) {
        let closed = self.source.take_closed();
        if let Some(log) = &mut self.iolog {
            for f in closed {
                log.close(t, f);
            }
            log.issue(t, next);
        }
    }

    /// Between two loops of a job with `unlink_each_loop`, `end_syncfs`, `end_fsync` or
    /// `write_iolog`: once the loop's I/O has completed (false until then), the files' closing
    /// in the iolog, `end_fsync`'s sync of the files (fio
    /// syncs at the end of every loop, not only the last), fio 3.42's syncfs after a loop of
    /// writes, then the files deleted and made again.
    #[cold]
    fn between_loops(&mut self) -> Result<bool> {
        if self.q.in_engine() > 0 {
            return Ok(false);
        }
        // fio ends each loop of a writing job with a sync under end_fsync or fsync_on_close,
        // and under fsync_on_close syncs again as it closes the files for the next loop: 2N-1
        // syncs a file over N loops (strace of fio 3.33; one at the job's end).
        // In fio's iolog a synchronous engine's files close as the loop's last I/O completes,
        // and the loop's sync opens each again; an asynchronous engine syncs them first, while
        // they are open, then closes them (fio 3.33's logs with psync, libaio and io_uring).
        let sync_engine = self.plan.engine.sync;
        let Some(due) = self.loop_ends_on_fsync() else {
            // The due sync is drawn, issued and counted as any I/O, then the loop ends.
            return Ok(true);
        };
        let tried = self.source.take_pass_end_at();
        if let (Some(log), Some(at)) = (&mut self.iolog, tried) {
            log.tried(at);
        }
        if sync_engine {
            self.log_found_closed();
        }
        let closes = self.source.loops_close();
        let used = match &mut self.iolog {
            Some(l) if sync_engine && closes => l.loop_closed(self.clock.now()),
            _ => Vec::new(),
        };
        if (self.spec.end_fsync || self.spec.fsync_on_close) && self.spec.rw.writes() && !due {
            self.sync_files(if self.spec.fsync_on_close { 2 } else { 1 });
            match &mut self.iolog {
                Some(log) if sync_engine => log.loop_synced(&used, self.clock.now()),
                Some(log) => log.end_sync(self.clock.now()),
                None => {}
            }
        }
        if !sync_engine {
            self.log_found_closed();
        }
        if let Some(log) = self.iolog.as_mut().filter(|_| !sync_engine && closes) {
            log.loop_closed(self.clock.now());
        }
        if self.spec.end_syncfs && self.spec.rw.writes() {
            sync_fs(self.q.files());
        }
        if self.spec.unlink_each_loop {
            self.unlink_loop()?;
        }
        self.source.new_loop();
        self.end.next_loop();
        Ok(true)
    }

    /// The end of the job's last pass, before its closing sync, as fio 3.33 makes it with a
    /// synchronous engine: a job that ended on a block its file had no room for closes its
    /// files first (its sync opens them again, `sync` at that block's offset); a time-based
    /// job ends its pass as a loop, closing the files and syncing them under `end_fsync` or
    /// `fsync_on_close` (once more under the latter), so that the job's own sync comes after
    /// (fio's iolog and strace: 2 fsync calls at the end of a time-based job with end_fsync,
    /// 3 with fsync_on_close).
    #[cold]
    fn last_loop_end(&mut self) {
        let syncs = (self.spec.end_fsync || self.spec.fsync_on_close) && self.spec.rw.writes() && !self.abandoned;
        let (time_based, closes) = (self.spec.time_based, self.end.ended_on_pass());
        if !self.plan.engine.sync || !(closes || time_based && syncs) {
            return;
        }
        // A time-based job's pass found over but not ended yet: on one file, fio has not
        // tried the block (`sync 4096` after `write 4096`); on several it has (`sync 12288`
        // after each file's `write 8192`, regions of 10 KiB).
        let tried = self.source.take_pass_end_at().filter(|_| closes || self.plan.files.len() > 1);
        let now = self.clock.now();
        if time_based && syncs {
            self.sync_files(if self.spec.fsync_on_close { 2 } else { 1 });
        }
        let Some(log) = &mut self.iolog else { return };
        if let Some(at) = tried {
            log.tried(at);
        }
        let used = log.loop_closed(now);
        if time_based && syncs {
            log.loop_synced(&used, now);
        }
        // The job's own sync then opens the same files again.
        log.mark_used(&used);
    }

    /// `times` fsync calls on each of the job's files.
    fn sync_files(&self, times: usize) {
        for _ in 0..times {
            for f in self.q.files() {
                f.sync_all().ok();
            }
        }
    }

    /// `write_iolog` at a loop's end: the files the pass found done close first, in the
    /// order it found them (a mixed job's last draws), before the loop closes the rest.
    fn log_found_closed(&mut self) {
        let closed = self.source.take_closed();
        if let Some(log) = &mut self.iolog {
            for f in closed {
                log.close(self.clock.now(), f);
            }
        }
    }

    /// Whether a loop's end may be made now: under a rate limit, once the next I/O is due, as
    /// fio tries the block that ends the pass only then (a time-based job whose runtime ends
    /// first ends without that loop's end: fio 3.33's iolog with rate_iops). Waits for it
    /// otherwise.
    fn loop_end_due(&mut self) -> bool {
        if self.clock.now() >= self.end.end_ns {
            // The runtime is over: the job ends without this loop's end (see `last_loop_end`).
            return false;
        }
        if !self.pacing || self.source.due_fsync().is_some() {
            // An `fsync=N` sync due goes first, unpaced.
            return true;
        }
        let rw = self.spec.rw;
        let used = [rw.reads(), rw.writes(), rw.trims()];
        let at = (0..3).filter(|&d| used[d]).map(|d| self.pacer.ready_at(d)).min().unwrap_or(0);
        if at <= self.clock.now() {
            return true;
        }
        self.wait_until_due(at);
        false
    }

    /// A synchronous engine's loop that ends on an `fsync=N` sync makes it before the files
    /// close, as fio 3.33 does: the file is then clean, so `end_fsync`'s and `fsync_on_close`'s
    /// sync between loops is not made, and the next loop starts with the same sync again
    /// (fio's iolog, JSON and strace: sync, close, open, sync). `None` while that sync is still
    /// to be drawn; then whether the loop ended on one.
    fn loop_ends_on_fsync(&mut self) -> Option<bool> {
        if std::mem::take(&mut self.loop_end_sync) {
            self.source.rearm_sync();
            return Some(true);
        }
        let due = self.source.due_fsync().is_some() && self.plan.engine.sync && self.spec.rw.writes();
        self.loop_end_sync = due;
        (!due).then_some(false)
    }

    /// The zone reset that goes before the next write, once the job's I/O in flight has
    /// completed (false until then: it may be writing the zone).
    #[cold]
    fn reset_zone(&mut self) -> Result<bool> {
        if self.q.in_engine() > 0 {
            return Ok(false);
        }
        if let Some(z) = self.source.zbd_mut() {
            z.do_reset(self.q.files()).with_context(|| format!("job '{}': cannot reset a zone", self.spec.name))?;
            self.acct.ts.zone_resets += 1;
        }
        Ok(true)
    }

    /// Hands `io` on unit `idx` to the engine; a trim that `zonemode=zbd` made a zone reset is
    /// done here instead.
    // Zoned devices take a call of their own, so that the engine's answer is not merged
    // through memory with theirs on every I/O.
    #[inline(always)]
    fn queue_io(&mut self, idx: u32, io: Io) -> Result<QueueStatus> {
        if self.source.zbd_mut().is_some() {
            return self.queue_zbd(idx, io);
        }
        self.q.queue(idx, io).context("engine failed")
    }

    /// [`Self::queue_io`] under `zonemode=zbd`: a trim due on a zone is done here.
    #[inline(never)]
    fn queue_zbd(&mut self, idx: u32, io: Io) -> Result<QueueStatus> {
        if let Some(t) = self.source.zbd_mut().and_then(|z| z.take_trim()) {
            let result = self.trim_zone(t, &io);
            return Ok(self.q.done_in_place(idx, io, result));
        }
        self.q.queue(idx, io).context("engine failed")
    }

    /// A trim of a sequential zone, done as fio does it: the zone's write pointer reset when
    /// the zone holds data (and the reset counted), nothing when it is empty, EINVAL when the
    /// trim does not start at the zone's start. Returns the trim's result.
    #[cold]
    fn trim_zone(&mut self, t: super::zbd::ZoneTrim, io: &Io) -> i64 {
        use super::zbd::ZoneTrim;
        match t {
            ZoneTrim::Empty => io.len as i64,
            ZoneTrim::Misaligned => {
                eprintln!("Trim offset not at zone start ({})", io.offset);
                -(libc::EINVAL as i64)
            }
            ZoneTrim::Reset(r) => {
                let done = self.source.zbd_mut().map(|z| z.trim_reset(self.q.files(), r));
                match done {
                    Some(Err(e)) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                    _ => {
                        self.acct.ts.zone_resets += 1;
                        io.len as i64
                    }
                }
            }
        }
    }

    /// A paced I/O is due at `at`: with nothing in flight, the job sleeps until then (a
    /// deliberate pause, so the watchdog is told to expect silence).
    fn wait_until_due(&mut self, at: u64) {
        self.due_at = at;
        if self.q.in_engine() == 0 {
            let activity = &self.publisher.progress.activity;
            activity.store(Activity::IDLE, Ordering::Relaxed);
            let clock = &self.clock;
            self.pacer.wait(at.min(self.end.end_ns), &|| clock.now(), self.stop);
            activity.store(Activity::IO, Ordering::Relaxed);
            self.now = self.clock.now();
        }
    }

    /// `unlink_each_loop` between two loops, with nothing in flight: as fio, each of the job's
    /// files is deleted and created again, empty, under the descriptor the engine uses (fio
    /// closes, unlinks and reopens with O_CREAT; it does not lay the file out again, so its
    /// jobs that read fail on the missing file: fiox lays those out again instead). Only files
    /// fiox created in this run are deleted; an existing file the user named, and a block
    /// device, are kept and reused as they are.
    #[cold]
    fn unlink_loop(&mut self) -> Result<()> {
        let spec = self.spec;
        let mut any = false;
        for f in &self.plan.files {
            if f.block_device || !layout::created_here(&f.path) {
                continue;
            }
            std::fs::remove_file(&f.path)
                .with_context(|| format!("job '{}': cannot delete '{}'", spec.name, f.path.display()))?;
            any = true;
        }
        if !any {
            return Ok(());
        }
        if spec.rw.reads() {
            // Real data again for the reads (fio's jobs fail here); the layout's line is fio's
            // first-layout message, not printed again.
            layout::layout(self.plan, &mut std::io::sink())?;
        }
        let fresh = setup::create_files(self.plan)?;
        for (i, f) in fresh.iter().enumerate() {
            if let Some(file) = f {
                self.q.replace_file(i, file).with_context(|| format!("job '{}': cannot reopen its file", spec.name))?;
            }
        }
        Ok(())
    }

    /// Whether `io` overlaps an I/O the engine holds on the same file (`serialize_overlap`).
    /// Syncs overlap nothing. O(depth), and only with the option set.
    fn overlaps_inflight(&self, io: &NextIo) -> bool {
        if !matches!(io.ddir(), Ddir::Read | Ddir::Write | Ddir::Trim) {
            return false;
        }
        let (start, end) = (io.offset, io.offset + io.len() as u64);
        self.q.in_engine_units().any(|i| {
            let o = self.q.io(i);
            o.file as usize == io.file()
                && matches!(o.ddir, Ddir::Read | Ddir::Write | Ddir::Trim)
                && o.offset < end
                && start < o.offset + o.len as u64
        })
    }

    /// `lockfile`: takes the file of `next` for it. With I/O of its own in flight the job
    /// only tries (false: reap first); holding nothing, it waits for the other jobs, as idle
    /// for the watchdog. False too when a stop ends the wait.
    #[cold]
    fn lock_file(&mut self, next: &NextIo) -> bool {
        let Some(l) = &mut self.locks else { return true };
        if l.try_take(next.file(), next.ddir()) {
            return true;
        }
        if self.q.in_engine() > 0 {
            return false;
        }
        let activity = &self.publisher.progress.activity;
        activity.store(Activity::IDLE, Ordering::Relaxed);
        let stop = self.stop;
        let end_ns = self.end.end_ns;
        let clock = &self.clock;
        let ok = l.take(next.file(), next.ddir(), &|| stop.load(Ordering::Relaxed) || clock.now() >= end_ns);
        activity.store(Activity::IO, Ordering::Relaxed);
        self.now = self.clock.now();
        ok
    }

    /// Whether latency-target mode allows no more I/O in flight now.
    #[inline]
    fn at_latency_depth(&self) -> bool {
        self.latency.as_ref().is_some_and(|l| self.q.in_engine() >= l.depth)
    }

    /// Counts an I/O the engine took: toward the job's size, and in its flow group.
    #[inline]
    fn issued(&mut self, next: &NextIo) {
        self.end.issued(next);
        if let Some(f) = &self.flow {
            f.issued();
        }
    }

    /// The next I/O to issue: the one held back, or a new one from the generator, fitted to
    /// what is left of the job's size. `None` ends the filling (and, when the pattern or the
    /// size is used up, the job).
    // Always inlined, with the source's draw inlined into it: returned through memory, the
    // drawn I/O was written field by field and read back whole, a stalled store-to-load
    // forward per call (perf: a fifth of a null job's samples on the two returns).
    #[inline(always)]
    fn next_io(&mut self, t_pace: u64) -> Option<NextIo> {
        if self.steer && self.pending.is_none() {
            // The direction due first goes; both due: rwmixread decides.
            let (r, w) = (self.pacer.ready_at(Ddir::Read as usize), self.pacer.ready_at(Ddir::Write as usize));
            self.source.steer(match (r <= t_pace, w <= t_pace) {
                (true, true) => None,
                _ if r <= w => Some(Ddir::Read),
                _ => Some(Ddir::Write),
            });
        }
        // The held I/O is taken only when there is one: `take` on the common `None` would
        // copy the whole `Option` back and forth through memory (a store-forwarding stall the
        // profile showed at 7% of a null job's time).
        let held = if self.pending.is_some() { self.pending.take() } else { None };
        let next = match held {
            Some(held) => held,
            None => {
                if self.source.take_pass_over() && !self.pass_ended() {
                    return None;
                }
                // Without verify the source's draw is inlined here and its I/O stays in
                // registers; verify's draw is a call of its own, so that the two never share a
                // slot in memory written field by field and read back whole (a store-forwarding
                // stall on every I/O).
                let mut drawn = if self.verify.is_none() { self.source.next() } else { self.verify_draw() };
                if drawn.is_none() && self.source.take_pass_over() {
                    // A mixed job's pass ended on the direction drawn.
                    if !self.pass_ended() {
                        return None;
                    }
                    drawn = self.source.next();
                }
                let Some(next) = drawn else {
                    if self.source.zbd_mut().is_some_and(|z| z.waiting()) {
                        // A write waits for its zone's write in flight: not the end.
                        return None;
                    }
                    // The pattern is used up (a sequential pass ended on a partial block, or
                    // the replayed trace is over).
                    self.end.exhausted();
                    return None;
                };
                if self.source.replay_mut().is_some() {
                    self.replay_wait();
                }
                next
            }
        };
        let new_pass = self.source.take_new_pass();
        if let Some(f) = new_pass.filter(|_| self.spec.invalidate) {
            self.drop_pass_cache(f);
        }
        if next.check() {
            // A verify read reads the block as it was written.
            return Some(next);
        }
        self.end.fit(next, &self.source, new_pass.is_some())
    }

    /// fio drops the cache again on every pass over a file (invalidate=1), so a file smaller
    /// than memory is still read from the device: file `f`'s, or every file's when each starts
    /// a pass ([`crate::runner::iogen::ALL_FILES`]: fio opens each again).
    #[cold]
    #[inline(never)]
    fn drop_pass_cache(&mut self, f: usize) {
        use std::os::fd::AsRawFd;
        for (i, (file, fp)) in self.q.files().iter().zip(&self.plan.files).enumerate() {
            if i == f || f == crate::runner::iogen::ALL_FILES {
                let _ = sys::drop_cache(file.as_raw_fd(), fp.block_device, fp.region_start, fp.region_len);
            }
        }
    }

    /// A sequential pass ended (see [`IoGen::set_rooms`]): whether the next I/O is drawn now.
    /// When another pass starts, the files are closed between the two (by `between_loops`,
    /// when the loop's end has work), as between loops.
    #[cold]
    #[inline(never)]
    fn pass_ended(&mut self) -> bool {
        if !self.end.another_pass() {
            return false;
        }
        if self.loop_work {
            return false;
        }
        self.source.new_loop();
        self.end.next_loop();
        true
    }

    /// The next I/O of a job that verifies: verify's own I/O first (the read-back's reads only,
    /// while it runs), then the source's.
    #[inline(never)]
    fn verify_draw(&mut self) -> Option<NextIo> {
        let verifying = match &mut self.verify {
            Some(v) if self.reading_back => Some(v.map.as_mut().and_then(|m| m.next_read())),
            Some(v) => v.trim_next().or_else(|| v.backlog_next()).map(Some),
            None => None,
        };
        match verifying {
            Some(drawn) => drawn,
            None => self.source.next(),
        }
    }

    /// Waits until the replayed I/O just drawn is due: the log's time after the previous one
    /// (scaled by `replay_time_scale`), or not at all under `replay_no_stall`.
    fn replay_wait(&mut self) {
        let due = self.source.replay_mut().map_or(0, |r| r.due());
        if due > self.clock.now() {
            // A deliberate pause: the watchdog expects silence.
            let activity = &self.publisher.progress.activity;
            activity.store(Activity::IDLE, Ordering::Relaxed);
            let clock = &self.clock;
            self.pacer.wait(due.min(self.end.end_ns), &|| clock.now(), self.stop);
            activity.store(Activity::IO, Ordering::Relaxed);
        }
        self.now = self.clock.now();
        let now = self.now;
        if let Some(r) = self.source.replay_mut() {
            r.went(now);
        }
    }

    /// I/Os committed to the engine and not yet reaped (the queue also holds the batch not yet
    /// committed).
    #[inline]
    fn inflight(&self) -> u32 {
        self.q.in_engine() - self.batch.len() as u32
    }

    /// Books an I/O that completed inside `queue`, timed from `t_start` to now.
    #[inline]
    fn completed_in_line(&mut self, idx: u32, result: i64, t_start: u64) {
        self.completed += 1;
        self.ramp_check();
        self.finish_io(idx, result, None, t_start);
        let ts = &mut self.acct.ts;
        ts.mark_depth(self.q.in_engine() - self.batch.len() as u32 + 1, 1);
        ts.submit_map[1] += 1;
        ts.complete_map[1] += 1;
        if self.pacing {
            self.pacer.completed(1, self.now);
        }
        if self.thinkcycles > 0 {
            self.think_cycles(1);
        }
    }

    /// Books one finished I/O of unit `idx` (completed at `self.now`): into the statistics, or
    /// to the error rule.
    #[inline]
    fn finish_io(&mut self, idx: u32, result: i64, start: Option<u64>, issue: u64) {
        let io = self.q.io(idx);
        if crate::runner::debug::io_on() {
            debug_io("complete", idx, &io, self.plan);
        }
        if io.ddir == Ddir::Write {
            if let Some(z) = self.source.zbd_mut() {
                z.completed(io.file as usize, io.offset);
            }
        }
        if let Some(l) = &mut self.locks {
            l.release(io.file as usize, io.ddir);
        }
        if result == -(libc::EINTR as i64) && self.publisher.progress.wake.load(Ordering::Relaxed) != 0 {
            // A synchronous call the watchdog interrupted (a FUSE file, say): not the device's
            // error; `liveness` reports the job.
            self.acct.ts.dropped[(io.ddir as usize).min(3)] += 1;
            return;
        }
        if result == 0 && io.len > 0 && self.q.peer_done() {
            // The peer ended the stream (net): the job is over, and this I/O did not happen,
            // unless the engine counts it as fio does (one I/O of no bytes).
            if self.q.end_counts() {
                self.acct.empty_io(&io);
            }
            self.end.exhausted();
            return;
        }
        // A read or write that moved nothing (a file truncated under the job) makes no progress:
        // an error, as fio's synchronous engines report it ("full resid"), never a success.
        let result = if result == 0 && io.len > 0 && matches!(io.ddir, Ddir::Read | Ddir::Write) {
            -(libc::EIO as i64)
        } else {
            result
        };
        if result < 0 {
            self.acct.failed(&io);
            if let (Some(v), Ddir::Write) = (&mut self.verify, io.ddir) {
                v.write_failed(idx, io.file as usize, io.offset, io.len);
            }
            // fill_device: a full file system is the end the job was written for, not an error.
            if self.spec.fill_device
                && io.ddir == Ddir::Write
                && [libc::ENOSPC, libc::EDQUOT].contains(&(-result as i32))
            {
                self.end.exhausted();
                return;
            }
            let detail = self.q.error_detail(idx);
            self.errors.io_failed(&io, (-result) as i32, detail, self.plan, &mut self.acct.ts, self.diag);
            return;
        }
        // Only a paced job keeps due times: an unpaced one pays one bounds check here.
        let due = self.stamps.due.get(idx as usize).copied();
        self.acct.complete(&io, result, start, issue, self.now, due);
        if self.ramp_bytes_left > 0 && !self.acct.measuring {
            self.ramp_bytes_done(result as u64);
        }
        if self.verify.is_some() {
            self.verify_io(idx, &io, result);
        }
        let lat = self.now.saturating_sub(start.unwrap_or(issue));
        if lat > self.max_latency_ns || self.latency.is_some() {
            self.judge_latency(&io, lat);
        }
    }

    /// Under verify: a completed write enters the map; a read that is checked is checked.
    fn verify_io(&mut self, idx: u32, io: &Io, result: i64) {
        let Some(v) = &mut self.verify else { return };
        match io.ddir {
            Ddir::Write => v.written(idx, io.file as usize, io.offset, io.len),
            Ddir::Trim if v.checks(idx) => v.trimmed(io.file as usize, io.offset, io.len),
            Ddir::Read if v.checks(idx) => {
                if !self.spec.rw.writes() && !v.within_state(io.file as usize, io.offset) {
                    // verify_state_load: past the point the writes reached.
                    self.end.exhausted();
                    return;
                }
                let len = (result.max(0) as usize).min(io.len as usize);
                let Some(fp) = self.plan.files.get(io.file as usize) else { return };
                let buf = &mut self.q.buf_mut(idx)[..len];
                if let Some(verdict) = v.check(buf, io.file as usize, &fp.path, io.offset) {
                    let fatal = v.fatal;
                    self.errors.verify_failed(&verdict.message, fatal, &mut self.acct.ts, self.diag);
                    if self.errors.func.is_none() {
                        // Where fio's error comes from: its verify threads, or the completion path.
                        let asynchronous = self.spec.verify.as_ref().is_some_and(|s| s.async_threads > 0);
                        self.errors.func = Some(match (asynchronous, self.plan.engine.sync) {
                            (true, _) => "async_verify",
                            (false, true) => "io_u_sync_complete",
                            (false, false) => "io_u_queued_complete",
                        });
                    }
                }
            }
            _ => {}
        }
    }

    /// `max_latency` and latency-target mode, for one I/O that took `lat` nanoseconds. Not
    /// marked cold: in latency-target mode every I/O comes here.
    fn judge_latency(&mut self, io: &Io, lat: u64) {
        if lat > self.max_latency_ns {
            self.latency_failed(io, lat, self.max_latency_ns);
            return;
        }
        let Some(mode) = &mut self.latency else { return };
        match mode.completed(io, lat, self.now) {
            latency::Verdict::Continue => {}
            latency::Verdict::Restart => {
                // fio reports the window measured at the depth found, not the search.
                self.acct.start_measuring(self.now);
            }
            latency::Verdict::End => self.end.end_ns = self.end.end_ns.min(self.now),
            latency::Verdict::Fail(slow, slow_lat) => {
                let target = mode.target_ns();
                self.latency_failed(&slow, slow_lat, target);
            }
        }
    }

    /// Fails the job as fio does when an I/O is slower than `max_latency` (or than the
    /// latency target at depth 1): ETIMEDOUT, "max latency exceeded".
    fn latency_failed(&mut self, io: &Io, lat: u64, max: u64) {
        if self.errors.failed() {
            return;
        }
        let file = self.plan.files.get(io.file as usize).map(|f| f.path.display().to_string()).unwrap_or_default();
        let what = match io.ddir {
            Ddir::Read => "read",
            Ddir::Write => "write",
            Ddir::Trim => "trim",
            Ddir::Sync | Ddir::DataSync | Ddir::SyncRange => "sync",
        };
        let msg =
            format!("latency of {lat} nsec exceeds specified max ({max} nsec): {file} {what} {} {}", io.offset, io.len);
        self.errors.job_failed(msg, libc::ETIMEDOUT, self.spec, &mut self.acct.ts, self.diag);
        self.errors.func = Some("max latency exceeded");
    }

    /// Commits the batch: one clock read stamps the issue time of all of it.
    ///
    /// With an `instant` engine (null), a commit that leaves no unit idle is followed by the
    /// reap and nothing else, so the batch is dated by the reap's own clock reading instead of
    /// one of its own (`stamp_issued`): the issue stamp is late by the reap call, a few
    /// nanoseconds of memory operations, which move from slat to clat; lat is unchanged. This
    /// halves the clock reads per I/O at depth with fio's batches of one; every other engine,
    /// whose commit or reap may make a system call or wait, is dated right after its commit.
    #[inline]
    fn submit(&mut self) -> Result<()> {
        let submitted = self.q.commit().context("submitting I/O failed")?;
        self.unsubmitted = self.unsubmitted.saturating_add(self.batch.len() as u32).saturating_sub(submitted);
        let n = self.batch.len() as u32;
        if self.defer_issue && self.unstamped.is_empty() && self.q.idle_count() == 0 {
            std::mem::swap(&mut self.batch, &mut self.unstamped);
        } else {
            let t_issue = self.clock.now();
            self.stamp_issued(t_issue);
            for &i in &self.batch {
                self.stamps.issue[i as usize] = t_issue;
            }
        }
        self.acct.ts.mark_depth(self.q.in_engine(), n as u64);
        self.acct.ts.submit_map[ThreadStat::batch_bucket(n)] += 1;
        self.batch.clear();
        Ok(())
    }

    /// Dates the commits `submit` left unstamped with the clock reading `t`, taken right after
    /// the reap that followed them.
    #[inline]
    fn stamp_issued(&mut self, t: u64) {
        if !self.unstamped.is_empty() {
            for &i in &self.unstamped {
                self.stamps.issue[i as usize] = t;
            }
            self.unstamped.clear();
        }
    }

    /// Commits what the fill left in the batch; engines that could not submit everything last
    /// time (libaio on EAGAIN) retry now.
    fn submit_rest(&mut self) -> Result<()> {
        if self.plan.engine.sync {
            return Ok(());
        }
        if !self.batch.is_empty() {
            self.submit()
        } else if self.q.in_engine() == 0 {
            self.unsubmitted = 0;
            Ok(())
        } else if self.unsubmitted > 0 {
            let submitted = self.q.commit().context("submitting I/O failed")?;
            self.unsubmitted = self.unsubmitted.saturating_sub(submitted);
            Ok(())
        } else {
            Ok(())
        }
    }

    /// Whether the job stops waiting for its in-flight I/O now. The watchdog (in the runner)
    /// judges liveness by progress, not by the clock: it wakes a worker whose I/O has not
    /// completed for `hang_timeout` (5 s after a stop request), or every worker on a second
    /// interrupt. The I/O still in flight is then reported as dropped and left to the kernel.
    fn liveness(&mut self) -> bool {
        let wake = self.publisher.progress.wake.load(Ordering::Relaxed);
        if wake == 0 {
            return false;
        }
        let now = self.clock.now();
        self.stamp_issued(now);
        let mut oldest = u64::MAX;
        let mut files = Vec::new();
        for i in self.q.in_engine_units() {
            let io = self.q.io(i);
            let d = (io.ddir as usize).min(3);
            self.acct.ts.dropped[d] += 1;
            if d < 3 {
                self.acct.ts.dirs[d].drop_ios += 1;
            }
            oldest = oldest.min(self.stamps.issue[i as usize]);
            if !files.contains(&io.file) {
                files.push(io.file);
            }
        }
        let names: Vec<String> = files
            .iter()
            .filter_map(|&f| self.plan.files.get(f as usize))
            .map(|f| f.path.display().to_string())
            .collect();
        let inflight = self.inflight();
        let what = if inflight > 0 {
            let age = self.now.saturating_sub(oldest) as f64 / 1e9;
            format!("{} I/Os in flight on {}, the oldest issued {age:.1} s ago", inflight, names.join(", "))
        } else {
            // A synchronous engine: the call the watchdog interrupted was the one in flight.
            let files: Vec<String> = self.plan.files.iter().map(|f| f.path.display().to_string()).collect();
            format!("a synchronous I/O on {}", files.join(", "))
        };
        if wake == Wake::ABORT {
            let _ = writeln!(
                self.diag,
                "fiox: job '{}': stopped without waiting for {what} (second interrupt); they are reported as dropped",
                self.spec.name
            );
        } else {
            let msg = format!("no I/O completed within the hang bound; the device stopped answering ({what})");
            self.errors.job_failed(msg, libc::ETIMEDOUT, self.spec, &mut self.acct.ts, self.diag);
        }
        self.abandoned = true;
        true
    }

    /// Reaps completions. It blocks only when nothing more can be queued now (the queue is
    /// full, an I/O is held back, or the job is draining); otherwise it collects what has
    /// finished and filling goes on.
    fn reap(&mut self, held: bool) -> Result<()> {
        let full = self.q.idle_count() == 0
            || held
            || matches!(self.phase, Phase::Drain(_))
            || self.end.issued_all()
            || self.at_latency_depth();
        let min = self.depth.reap_min(self.inflight(), full);
        self.completions.clear();
        // io_submit_mode=offload: fio's job thread hands each I/O to a submission thread when
        // it is due and never waits for completions, so a rate-limited job issues on
        // schedule however slowly the device answers (inline, it waits for the queue). fiox
        // gets the same schedule on the job's own thread: with an I/O held back for its rate
        // and a unit free to carry it, the wait for completions ends when that I/O is due.
        let offload_wait = self.spec.offload
            && held
            && self.due_at > self.now
            && self.q.idle_count() > 0
            && !matches!(self.phase, Phase::Drain(_));
        if offload_wait {
            let ns = (self.due_at - self.now).max(1_000);
            self.q.set_wait_limit(Some(std::time::Duration::from_nanos(ns)));
        }
        let reaped = self.q.reap(min, self.depth.complete_max, &mut self.completions);
        if offload_wait {
            self.q.set_wait_limit(None);
        }
        self.due_at = 0;
        reaped.context("reaping completions failed")?;
        self.now = self.clock.now();
        self.now_fresh = true;
        self.stamp_issued(self.now);
        let n = self.completions.len();
        if n == 0 {
            return Ok(());
        }
        self.completed += n as u64;
        self.ramp_check();
        self.acct.ts.complete_map[ThreadStat::batch_bucket(n as u32)] += 1;
        for k in 0..n {
            let c = self.completions[k];
            let (start, issue) = (self.stamps.start[c.index as usize], self.stamps.issue[c.index as usize]);
            self.finish_io(c.index, c.result, Some(start), issue);
        }
        if self.pacing {
            self.pacer.completed(n as u32, self.now);
        }
        if self.thinkcycles > 0 {
            self.think_cycles(n as u64);
        }
        Ok(())
    }

    /// What observers and the per-window rules see: progress counters (at most every
    /// millisecond), snapshot answers, samples and logs, minimum rates.
    #[inline]
    fn observe(&mut self) {
        let now = self.now;
        if now >= self.publisher.next_at || self.acct.logs.is_some() {
            // Publishing, snapshots and log windows take time: the next fill reads the clock.
            self.now_fresh = false;
        }
        if now >= self.publisher.next_at {
            self.publisher.next_at = now + 1_000_000;
            // At most once a millisecond: the oldest I/O in flight, for the stall watchdog, when
            // it watches this job (a scan of up to `iodepth` units the other jobs need not pay).
            let oldest = match self.publisher.watch_oldest {
                true => self.q.in_engine_units().map(|i| self.stamps.issue[i as usize]).min().unwrap_or(now),
                false => now,
            };
            self.publisher.progress.publish(&self.acct.ts, self.completed, self.inflight(), now.saturating_sub(oldest));
            self.answer_snapshot();
        }
        self.acct.sample(now, self.spec.bs);
        if let Some(check) = &mut self.min_rate {
            if self.acct.measuring && !self.errors.failed() {
                if let Some(msg) = check.check(now, &self.acct.ts) {
                    self.errors.job_failed(msg, libc::EIO, self.spec, &mut self.acct.ts, self.diag);
                }
            }
        }
    }

    /// Answers a snapshot request from the status reporter, if there is one. Costs one relaxed
    /// load when there is none.
    #[inline]
    fn answer_snapshot(&mut self) {
        let p = self.publisher.progress;
        let want = p.want.load(Ordering::Relaxed);
        if want == self.publisher.served && self.now < self.publisher.next_snapshot_at {
            return;
        }
        // A periodic copy keeps the number of the last request answered, so that it never
        // passes for the answer to a newer one.
        self.publisher.served = want;
        self.publisher.next_snapshot_at = self.now + SNAPSHOT_EVERY_NS;
        if let Ok(mut slot) = p.snapshot.lock() {
            // The previous copy is dropped before the new one is made, so that the allocator
            // hands its histograms' memory to the new copy: the worker holds two sets of them
            // (its own and the slot's), never three. Readers wait on the lock meanwhile.
            *slot = None;
            let r = WorkerResult { error: self.errors.first.clone(), ..self.acct.result(self.now, sys::gettid(), 0) };
            *slot = Some((want, r));
        }
    }

    /// Writes the iolog and the logs, and hands back the result, which also answers every
    /// later status request.
    fn finish(mut self: Box<Self>) -> Result<WorkerResult> {
        if let Some(v) = &mut self.verify {
            if let Err(e) = v.close_journal() {
                let msg = format!("cannot write its verify journal: {e}");
                self.errors.job_failed(
                    msg,
                    e.raw_os_error().unwrap_or(libc::EIO),
                    self.spec,
                    &mut self.acct.ts,
                    self.diag,
                );
            }
        }
        if let Some(v) = &self.verify {
            if self.spec.rw.writes() && !v.only && self.spec.verify.as_ref().is_some_and(|s| s.state_save) {
                // fio's record of where the writes stopped, for a later verify_state_load.
                let path = super::verify::state_path(self.plan);
                let bytes = v.state(self.plan, self.q.depth()).encode();
                if let Err(e) = std::fs::write(&path, bytes) {
                    let _ = writeln!(self.diag, "fiox: job '{}': cannot write '{path}': {e}", self.spec.name);
                }
            }
        }
        self.last_loop_end();
        if let (Some(mut log), Some(path)) = (self.iolog.take(), &self.spec.write_iolog) {
            // The job's closing sync (made by the caller, after this) is logged as fio logs it.
            if (self.spec.end_fsync || self.spec.fsync_on_close) && self.spec.rw.writes() && !self.abandoned {
                log.end_sync(self.clock.now());
            }
            log.finish(self.clock.now(), path)?;
        }
        let elapsed_ms = self.acct.elapsed_ms(self.now);
        if let Some(l) = &mut self.acct.logs {
            l.end_windows(elapsed_ms);
            // A log that could not be written fails the run, but never costs its results.
            for msg in l.finish() {
                let _ = writeln!(self.diag, "fiox: job '{}': {msg}", self.spec.name);
                self.errors.first.get_or_insert(msg);
            }
        }
        let progress = self.publisher.progress;
        let result = WorkerResult {
            error: self.errors.first,
            error_func: self.errors.func,
            latency_depth: self.latency.as_ref().map(|l| l.depth),
            abandoned: self.abandoned,
            ..self.acct.into_result(self.now, clock::thread_id(self.plan.number), self.seed)
        };
        if let Ok(mut slot) = progress.snapshot.lock() {
            // As in `answer_snapshot`: the old copy's memory serves the new one.
            *slot = None;
            *slot = Some((u64::MAX, result.clone()));
        }
        progress.done.store(true, Ordering::Relaxed);
        Ok(result)
    }
}

/// The engine's description of the drawn I/O `next`.
#[inline(always)]
fn engine_io(next: NextIo, ioprio: u16) -> Io {
    Io { ddir: next.ddir(), file: next.file() as u32, offset: next.offset, len: next.len(), ioprio }
}

/// An id for this run, the same for all its jobs and different from any earlier run's, so
/// that blocks an earlier run left are never taken for this run's (see `verify.rs`).
fn run_id() -> u64 {
    static ID: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *ID.get_or_init(|| {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        mix64(t ^ (u64::from(std::process::id()) << 32))
    })
}

/// Prints fio's `--debug=io` line for one I/O (the unit's index stands where fio prints its
/// io_u's address). Cold and out of line: the I/O path only tests one bit for it.
#[cold]
#[inline(never)]
fn debug_io(what: &str, idx: u32, io: &fiox_engine::Io, plan: &WorkerPlan) {
    let file = plan.files.get(io.file as usize).map(|f| f.path.display().to_string()).unwrap_or_default();
    crate::runner::debug::trace("io", || {
        format!("{what}: io_u {idx:#x}: off={:#x},len={:#x},ddir={},file={file}", io.offset, io.len, io.ddir as u8)
    });
}
