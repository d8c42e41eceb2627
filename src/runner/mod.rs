//! Runs a plan: one OS thread per job clone, jobs in phases separated by `stonewall` (a
//! stonewalled job waits for every job before it), and hands back what each worker measured.
//!
//! Architecture Invariant: workers share nothing mutable but the stop flag and their own
//! progress counters; statistics are per worker and merged after the run.

pub mod content;
pub mod debug;
pub mod depth_search;
pub mod diskstats;
pub mod eta;
pub mod exec;
pub mod files;
pub mod host;
pub mod iogen;
pub mod logs;
pub mod logz;
pub mod offsets;
pub mod pacer;
pub mod replay;
pub mod source;
pub mod sprandom;
pub mod steady;
pub mod trigger;
pub mod verify;
pub mod worker;
pub mod zbd;
pub mod zones;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::plan::{Plan, WorkerPlan};
use worker::{Progress, WorkerResult};

/// Set by Ctrl-C / SIGTERM; workers finish their in-flight I/O and stop.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Set by a second Ctrl-C / SIGTERM; workers stop without waiting for their in-flight I/O.
pub static ABORT: AtomicBool = AtomicBool::new(false);

/// Set by `exitall` or `exitall_on_error` with `exit_what=all`: later phases do not run.
static REST_CANCELLED: AtomicBool = AtomicBool::new(false);

/// Seed of a worker's random streams: fixed (per job and clone) with `randrepeat=1`, from the
/// clock otherwise.
fn seed_for(plan: &crate::plan::WorkerPlan) -> u64 {
    let base = if plan.spec.randrepeat {
        plan.spec.randseed
    } else {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    };
    crate::plan::mix64(base ^ crate::plan::mix64(plan.job_index as u64) ^ (plan.clone as u64) << 40)
}

/// How the live status line is shown, if at all.
#[derive(Debug, Clone, Copy)]
pub struct StatusLine {
    pub interval: Duration,
    /// Print each line on its own (`--eta-newline`) instead of rewriting one line.
    pub newline: bool,
}

/// `--status-interval`: every `interval`, the workers' figures so far (in plan order, up to the
/// last worker running) are handed to `report`.
#[derive(Clone, Copy)]
pub struct Interval<'a> {
    pub every: Duration,
    pub report: &'a (dyn Fn(&[WorkerResult]) + Sync),
}

/// What watches a run from outside the workers (the Prometheus figures, the live page, ACT's
/// table, `--status-interval`'s reports, the status line): told the running figures at its own
/// pace and the final ones at the end. Interval calls come from one thread, in turn.
///
/// `Figures` is what the run has to show: a local run's workers' results (through
/// [`Interval`]), or, for a multi-host coordinator, its hosts and their latest reports. An
/// observer called more often than [`every`](RunObserver::every) keeps its own pace.
pub trait RunObserver<Figures: ?Sized = [WorkerResult]>: Sync {
    /// How often it wants the running figures; `None`: only the end.
    fn every(&self) -> Option<Duration>;
    /// Run number `run` (from 1; `--repeat-until` makes several) is about to start.
    fn on_begin(&self, _run: usize) {}
    /// The figures so far (a local run's: one per worker, in the plan's order).
    fn on_interval(&self, partial: &Figures);
    /// The run's final figures.
    fn on_end(&self, results: &Figures) -> Result<()>;
}

/// Where diagnostics go; shared with worker threads that may outlive a phase.
pub type Diag = Arc<dyn Fn(&str) + Send + Sync>;

/// Runs every worker; results are in the plan's worker order. Diagnostics (I/O errors, hung
/// jobs) go to `diag`; fio's "Laying out IO file" lines to `notice` (which fio prints with its
/// normal output, and not at all otherwise); the status line, if any, to standard output.
/// The same as [`prepare`] and then [`run_prepared`].
pub fn run(
    planned: &Plan,
    diag: Diag,
    notice: Diag,
    status: Option<StatusLine>,
    interval: Option<Interval<'_>>,
) -> Result<Outcome> {
    let prepared = prepare(planned, &notice)?;
    run_prepared(planned, prepared, diag, notice, status, interval)
}

/// A plan whose first phase's files are laid out, made by [`prepare`] and spent by
/// [`run_prepared`].
#[must_use]
pub struct Prepared {
    /// The first phase's workers (`0..first_phase`), whose files are laid out.
    first_phase: usize,
}

/// What happens before the first job starts: the first phase's files laid out (preallocated,
/// filled for reading jobs), so that neither the layout's time nor its I/O is counted. A
/// multi-host server does this while it prepares, before the start barrier, so that a host
/// with files to lay out does not start later than the others; later phases lay theirs out
/// when they come, as in a local run.
pub fn prepare(plan: &Plan, notice: &Diag) -> Result<Prepared> {
    ABORT.store(false, Ordering::Relaxed);
    REST_CANCELLED.store(false, Ordering::Relaxed);
    fiox_engine::sys::abort_on_second_signal(&ABORT);
    fiox_engine::sys::install_wake_signal();
    let first_phase = phase_end(plan, 0);
    // The first phase has nothing to size: only a later phase's files can be deferred.
    debug_assert!(plan.workers[..first_phase].iter().all(|w| !w.deferred));
    layout_phase(&plan.workers[..first_phase], notice)?;
    Ok(Prepared { first_phase })
}

/// Where the phase starting at worker `start` ends: at the next worker of a stonewalled job
/// (other than the first), or at the end.
fn phase_end(plan: &Plan, start: usize) -> usize {
    let mut end = start + 1;
    while end < plan.workers.len() {
        let w = &plan.workers[end];
        if w.clone == 0 && w.spec.stonewall {
            break;
        }
        end += 1;
    }
    end.min(plan.workers.len())
}

/// Runs a plan [`prepare`] laid out the first phase of: the jobs start at once.
pub fn run_prepared(
    planned: &Plan,
    prepared: Prepared,
    diag: Diag,
    notice: Diag,
    status: Option<StatusLine>,
    interval: Option<Interval<'_>>,
) -> Result<Outcome> {
    // A plan with workers sized at their phase's start is copied once, to be completed as the
    // phases go; the caller's stays as planned.
    let mut sized = std::borrow::Cow::Borrowed(planned);
    let plan = planned;
    let mut results: Vec<Option<Result<WorkerResult>>> = (0..plan.workers.len()).map(|_| None).collect();
    // The block devices under the jobs' files, in job and file order, as fio lists them.
    let sys = std::path::Path::new("/sys");
    let paths: Vec<std::path::PathBuf> = plan
        .workers
        .iter()
        .filter(|w| !w.engine.diskless && w.spec.disk_util)
        .flat_map(|w| w.files.iter().map(|f| f.path.clone()))
        .collect();
    let mut disks = DiskTotals::default();
    let mut phase_start = 0;
    while phase_start < plan.workers.len() {
        let end = phase_end(plan, phase_start);
        for i in phase_start..end {
            if sized.workers[i].deferred {
                crate::plan::size_deferred(&mut sized.to_mut().workers[i])?;
            }
        }
        let plan: &Plan = &sized;
        // Files are laid out before the phase starts, so that neither the layout's time nor its
        // I/O is counted (in the jobs' statistics or the disk statistics); the first phase's
        // were by `prepare`.
        if !(phase_start == 0 && end == prepared.first_phase) {
            layout_phase(&plan.workers[phase_start..end], &notice)?;
        }
        let devices = if phase_start == 0 || disks.devices.is_empty() {
            crate::runner::diskstats::devices_for(&paths, sys)
        } else {
            disks.devices.clone()
        };
        let before = crate::runner::diskstats::snapshot(&devices, sys);
        let phase_clock = Instant::now();
        let progress: Vec<Arc<Progress>> = (phase_start..end).map(|_| Arc::new(Progress::default())).collect();
        let phase_done = AtomicBool::new(false);
        // The phase's own stop request: a signal's (copied in by the watchdog), or exitall's
        // and exitall_on_error's, which end the jobs running now and leave later phases alone
        // unless exit_what=all.
        let phase_stop = Arc::new(AtomicBool::new(STOP.load(Ordering::Relaxed)));
        // Worker threads are not scoped: one stuck in a system call on a device that stopped
        // answering must not keep the run from reporting. Status threads only read counters.
        let (tx, rx) = std::sync::mpsc::channel();
        let flows = flow_members(&plan.workers[phase_start..end]);
        for (k, i) in (phase_start..end).enumerate() {
            let w = plan.workers[i].clone();
            let p = progress[k].clone();
            let waits: Vec<Arc<Progress>> = match &w.spec.wait_for {
                // Clones of the job waited for that run in this phase; earlier phases are over.
                Some(target) => (phase_start..i)
                    .filter(|&j| &plan.workers[j].spec.name == target)
                    .map(|j| progress[j - phase_start].clone())
                    .collect(),
                None => Vec::new(),
            };
            let (tx, diag, stop, notice) = (tx.clone(), diag.clone(), phase_stop.clone(), notice.clone());
            let flow = flows[k].clone();
            let io_peers: Vec<Arc<Progress>> = (phase_start..end)
                .filter(|&j| j != i && !plan.workers[j].engine.no_io)
                .map(|j| progress[j - phase_start].clone())
                .collect();
            std::thread::spawn(move || {
                while !waits.iter().all(|p| p.done.load(Ordering::Relaxed)) && !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                let r = run_job(&w, &stop, &p, flow, &io_peers, &*diag, &*notice);
                let failed = r.as_ref().map_or(true, |r| r.error.is_some());
                // exitall: the first job to finish stops the others; exitall_on_error: the
                // first to fail does.
                if w.spec.exitall || (w.spec.exitall_on_error && failed) {
                    stop.store(true, Ordering::Relaxed);
                    if w.spec.exit_what == fiox_options::ExitWhat::All {
                        REST_CANCELLED.store(true, Ordering::Relaxed);
                    }
                }
                // Boxed: the channel allocates its slots 31 at a time, and a 2.8 KiB result
                // in each makes that an 87 KiB block, zeroed by the job thread that sends
                // (16 psync jobs: peak RssAnon 3,972 -> 3,712 KiB).
                let _ = tx.send((i, Box::new(r)));
            });
        }
        drop(tx);
        let earlier: Vec<WorkerResult> = results[..phase_start]
            .iter()
            .map(|r| r.as_ref().and_then(|r| r.as_ref().ok()).cloned().unwrap_or_default())
            .collect();
        std::thread::scope(|s| {
            if let Some(st) = status {
                let (progress, phase_done) = (&progress, &phase_done);
                s.spawn(move || status_loop(plan, phase_start, progress, phase_done, st));
            }
            if let Some(iv) = interval {
                let (progress, phase_done) = (&progress, &phase_done);
                s.spawn(move || interval_loop(earlier, progress, phase_done, iv));
            }
            let steady = {
                let (progress, phase_done) = (&progress, &phase_done);
                let workers = &plan.workers[phase_start..end];
                s.spawn(move || steady::monitor(workers, progress, phase_done))
            };
            let view = PhaseView { first: phase_start, progress: &progress, stop: &phase_stop, clock: phase_clock };
            wait_for_workers(plan, view, &rx, &mut results, &*diag);
            phase_done.store(true, Ordering::Relaxed);
            for (k, report) in steady.join().unwrap_or_default() {
                if let Some(Ok(r)) = results[phase_start + k].as_mut() {
                    r.steady = Some(report);
                }
            }
        });
        let after = crate::runner::diskstats::snapshot(&devices, sys);
        let ms = phase_clock.elapsed().as_millis() as u64;
        disks.add(&devices, crate::runner::diskstats::deltas(&before, &after, ms), ms);
        if STOP.load(Ordering::Relaxed) || REST_CANCELLED.load(Ordering::Relaxed) {
            break;
        }
        phase_start = end;
    }
    // Workers of phases that never started (after a signal, or exit_what=all) are reported
    // with nothing done, as fio lists them: a job file's jobs are all in the report.
    let mut out = Vec::new();
    for r in results {
        out.push(r.unwrap_or_else(|| Ok(WorkerResult::default()))?);
    }
    Ok(Outcome { workers: out, disks: disks.finish() })
}

/// Lays out the files of a phase's workers. filecreate makes its own files; filestat and
/// filedelete need them laid out, as in fio. create_serialize=1 (fio's default) lays jobs out
/// one after another, in job order; the jobs that set it to 0 then lay out their own files at
/// the same time, each on its own thread, as fio's job processes do (measured: fallocate calls
/// from each child).
fn layout_phase(workers: &[WorkerPlan], notice: &Diag) -> Result<()> {
    let laid: Vec<&WorkerPlan> = workers.iter().filter(|w| !w.engine.diskless && !w.engine.creates_files).collect();
    for w in laid.iter().filter(|w| w.spec.create_serialize) {
        worker::layout(w, &mut DiagBuf(&**notice))?;
    }
    std::thread::scope(|s| {
        let parallel: Vec<_> = laid
            .iter()
            .filter(|w| !w.spec.create_serialize)
            .map(|w| {
                s.spawn(|| {
                    // Each job's lines go out whole, so parallel layouts cannot interleave them.
                    let mut lines = Vec::new();
                    let r = worker::layout(w, &mut lines);
                    notice(&String::from_utf8_lossy(&lines));
                    r
                })
            })
            .collect();
        parallel.into_iter().try_for_each(|h| h.join().unwrap_or_else(|_| Err(anyhow::anyhow!("layout panicked"))))
    })
}

/// What a run measured.
pub struct Outcome {
    pub workers: Vec<WorkerResult>,
    /// Utilisation of the block devices under the jobs' files, over all phases.
    pub disks: Vec<fiox_report::DiskUtil>,
}

/// Disk figures summed over phases; utilisation weighted by each phase's length.
#[derive(Default)]
struct DiskTotals {
    devices: Vec<String>,
    sum: Vec<fiox_report::DiskUtil>,
    elapsed_ms: u64,
}

impl DiskTotals {
    fn add(&mut self, devices: &[String], deltas: Vec<crate::runner::diskstats::DiskDelta>, elapsed_ms: u64) {
        if self.devices.is_empty() {
            self.devices = devices.to_vec();
        }
        self.elapsed_ms += elapsed_ms;
        for d in deltas {
            let i = match self.sum.iter().position(|s| s.name == d.name) {
                Some(i) => i,
                None => {
                    self.sum.push(fiox_report::DiskUtil { name: d.name.clone(), ..Default::default() });
                    self.sum.len() - 1
                }
            };
            let s = &mut self.sum[i];
            // Utilisation is a share of time: summed as busy time here, divided in `finish`.
            s.figures.add_weighted(&d.figures, elapsed_ms);
            if let Some(a) = &d.aggr {
                s.aggr.get_or_insert_with(Default::default).add_weighted(a, elapsed_ms);
            }
        }
    }

    fn finish(mut self) -> Vec<fiox_report::DiskUtil> {
        let total = self.elapsed_ms.max(1) as f64;
        for s in &mut self.sum {
            s.util = (s.util / total).min(100.0);
            if let Some(a) = &mut s.aggr {
                a.util = (a.util / total).min(100.0);
            }
        }
        self.sum
    }
}

/// Line-buffers a worker's diagnostics into the shared sink.
/// The flow groups of a phase's workers (`flow` set, grouped by `flow_id`): each worker's place
/// in its group, or `None`.
fn flow_members(workers: &[WorkerPlan]) -> Vec<Option<worker::flow::FlowMember>> {
    let mut out: Vec<Option<worker::flow::FlowMember>> = vec![None; workers.len()];
    let mut ids: Vec<u64> = workers.iter().filter(|w| w.spec.flow != 0).map(|w| w.spec.flow_id).collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let members: Vec<usize> =
            (0..workers.len()).filter(|&i| workers[i].spec.flow != 0 && workers[i].spec.flow_id == id).collect();
        let flows: Vec<i64> = members.iter().map(|&i| workers[i].spec.flow).collect();
        let group = worker::flow::FlowGroup::new(&flows);
        for (me, &i) in members.iter().enumerate() {
            let sleep_us = workers[i].spec.flow_sleep_us;
            out[i] = Some(worker::flow::FlowMember { group: group.clone(), me, sleep_us });
        }
    }
    out
}

/// One job clone: `exec_prerun`, the I/O, `exec_postrun` (also after an error). A failing
/// prerun ends the job before any I/O; a failing postrun fails it, keeping its results.
fn run_job(
    w: &WorkerPlan,
    stop: &AtomicBool,
    progress: &Progress,
    flow: Option<worker::flow::FlowMember>,
    io_peers: &[Arc<Progress>],
    diag: &(dyn Fn(&str) + Sync),
    notice: &(dyn Fn(&str) + Sync),
) -> Result<WorkerResult> {
    let spec = &w.spec;
    if let Some(cmd) = &spec.exec_prerun {
        exec::run(&spec.name, cmd, exec::When::Pre, notice)?;
    }
    let env = worker::JobEnv { notice, io_peers };
    let mut r = worker::run(w, seed_for(w), stop, progress, flow, env, &mut DiagBuf(diag));
    if let Some(cmd) = &spec.exec_postrun {
        if let Err(e) = exec::run(&spec.name, cmd, exec::When::Post, notice) {
            match &mut r {
                Ok(res) => {
                    diag(&format!("fiox: {e:#}\n"));
                    res.error.get_or_insert(format!("{e:#}"));
                }
                Err(_) => diag(&format!("fiox: {e:#}\n")),
            }
        }
    }
    r
}

struct DiagBuf<'a>(&'a (dyn Fn(&str) + Sync));

impl Write for DiagBuf<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        (self.0)(&String::from_utf8_lossy(buf));
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The state letter fio shows for a running job.
pub(crate) fn state_char(spec: &fiox_options::JobSpec) -> char {
    let c = match (spec.rw.reads(), spec.rw.writes(), spec.rw.trims()) {
        (true, true, _) => 'm',
        (true, false, _) => 'r',
        (false, true, false) => 'w',
        _ => 'd',
    };
    if spec.rw.is_random() {
        c
    } else {
        c.to_ascii_uppercase()
    }
}

/// Prints the status line every interval until the phase is over.
fn status_loop(plan: &Plan, first: usize, progress: &[Arc<Progress>], done: &AtomicBool, st: StatusLine) {
    let start = Instant::now();
    let mut last = (Instant::now(), [0u64; 3], [0u64; 3]);
    let mut next = start + st.interval;
    let mut width = 0usize;
    let kb_base = plan.workers.first().map_or(1024, |w| w.spec.kb_base);
    loop {
        let finished = done.load(Ordering::Relaxed);
        if !finished && Instant::now() < next {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        next += st.interval;
        let now = Instant::now();
        let mut e = eta::JobsEta::default();
        let (mut bytes, mut ios) = ([0u64; 3], [0u64; 3]);
        let mut eta_s = 0f64;
        let mut frac_min = 1f64;
        for (k, w) in plan.workers.iter().enumerate() {
            let p = k.checked_sub(first).and_then(|i| progress.get(i));
            let running = p.is_some_and(|p| !p.done.load(Ordering::Relaxed));
            e.states.push(match (k < first, p, running) {
                (true, _, _) => '_',
                (_, Some(_), true) => state_char(&w.spec),
                (_, Some(_), false) => '_',
                _ => 'P',
            });
            let Some(p) = p else { continue };
            for d in 0..3 {
                bytes[d] += p.bytes[d].load(Ordering::Relaxed);
                ios[d] += p.ios[d].load(Ordering::Relaxed);
            }
            if running {
                e.running += 1;
                e.files += w.files.len() as u32;
                let elapsed = now.duration_since(start).as_secs_f64();
                let total_s = (w.spec.ramp_time_us + w.spec.runtime_us) as f64 / 1e6;
                let done_b: u64 = (0..3).map(|d| p.bytes[d].load(Ordering::Relaxed)).sum();
                let frac_t = if total_s > 0.0 { (elapsed / total_s).min(1.0) } else { 0.0 };
                let frac_b = if w.spec.time_based {
                    0.0
                } else {
                    done_b as f64 / (w.io_bytes.max(1) * w.spec.loops as u64) as f64
                };
                let frac = frac_t.max(frac_b).clamp(0.0001, 1.0);
                frac_min = frac_min.min(frac);
                eta_s = eta_s.max(elapsed * (1.0 - frac) / frac);
            }
        }
        let dt = now.duration_since(last.0).as_secs_f64().max(1e-3);
        for d in 0..3 {
            e.bw[d] = ((bytes[d].saturating_sub(last.1[d])) as f64 / dt) as u64;
            e.iops[d] = ((ios[d].saturating_sub(last.2[d])) as f64 / dt) as u64;
        }
        last = (now, bytes, ios);
        e.percent = if finished { 100.0 } else { frac_min * 100.0 };
        e.eta_secs = if finished { 0 } else { eta_s.ceil() as u64 };
        let line = eta::render_line(&e, kb_base);
        let mut out = std::io::stdout().lock();
        if st.newline {
            let _ = writeln!(out, "{line}");
        } else {
            // Pad over the previous, possibly longer, line.
            let pad = width.saturating_sub(line.len());
            let _ = write!(out, "\r{line}{}", " ".repeat(pad));
            width = line.len();
            if finished {
                let _ = writeln!(out);
            }
        }
        let _ = out.flush();
        if finished {
            return;
        }
    }
}

/// Asks the running workers for their figures every interval and hands them on.
fn interval_loop(earlier: Vec<WorkerResult>, progress: &[Arc<Progress>], done: &AtomicBool, iv: Interval<'_>) {
    let mut generation = 0u64;
    let mut next = Instant::now() + iv.every;
    loop {
        while Instant::now() < next {
            if done.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        next += iv.every;
        generation += 1;
        for p in progress {
            p.want.store(generation, Ordering::Relaxed);
        }
        // Workers answer between I/O batches; one stuck in a long I/O is reported as it was.
        let deadline = Instant::now() + Duration::from_millis(200);
        let answered = |p: &Arc<Progress>| {
            p.snapshot.lock().map(|s| s.as_ref().is_some_and(|s| s.0 >= generation)).unwrap_or(true)
        };
        while !progress.iter().all(answered) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut all = earlier.clone();
        for p in progress {
            all.push(p.snapshot.lock().ok().and_then(|s| s.as_ref().map(|s| s.1.clone())).unwrap_or_default());
        }
        (iv.report)(&all);
    }
}

/// How long a job may go without completing any I/O once a stop was requested (Ctrl-C,
/// SIGTERM, exitall) before its in-flight I/O is given up: a stop should not wait out a dead
/// device's full `hang_timeout`.
const STOP_QUIET: Duration = Duration::from_secs(5);

/// How long a woken worker has to return before it is reported from its last snapshot: it is
/// then stuck in a system call no signal interrupts (a synchronous read of a dead device).
const WAKE_GRACE: Duration = Duration::from_secs(2);

/// A running phase as the watchdog sees it: its first worker's index in the plan, the
/// workers' progress, its stop request and when it started.
struct PhaseView<'a> {
    first: usize,
    progress: &'a [Arc<Progress>],
    stop: &'a AtomicBool,
    clock: Instant,
}

/// The watchdog's view of one worker.
struct Watch {
    heartbeat: u64,
    /// When the heartbeat last changed, or the worker last stopped being deliberately idle.
    since: Instant,
    /// When it was first woken.
    woken: Option<Instant>,
    /// The Ceph stall watchdog spoke about the current silence.
    stall_told: bool,
}

/// Whether the Ceph stall watchdog watches a job: a Ceph engine with `ceph_stall_warn` set.
pub(crate) fn stall_watched(spec: &fiox_options::JobSpec) -> bool {
    spec.engine.ceph.stall_warn_us > 0 && matches!(spec.ioengine, "rbd" | "rados")
}

/// How long the stall watchdog's health question may take (connecting, then asking).
const HEALTH_TIMEOUT: Duration = Duration::from_secs(3);

/// The Ceph stall watchdog (fiox's `ceph_stall_warn`): a Ceph job whose I/O has waited that
/// long is named on stderr with its oldest I/O's age, and the monitors are asked for the
/// cluster's health on a thread of its own (a dead cluster must not hold up the watchdog),
/// whose answer is printed when it comes. fio 3.33 shows nothing and waits forever.
fn stall_warning(
    w: &crate::plan::WorkerPlan,
    p: &Progress,
    quiet: Duration,
    health: &mut Vec<std::sync::mpsc::Receiver<String>>,
    diag: &(dyn Fn(&str) + Send + Sync),
) {
    let spec = &w.spec;
    let ceph = &spec.engine.ceph;
    let oldest = Duration::from_nanos(p.oldest_ns.load(Ordering::Relaxed)) + quiet;
    let target = match spec.ioengine {
        "rbd" => format!("image '{}'", ceph.rbdname.as_deref().unwrap_or("")),
        _ => format!("{} object(s)", w.files.len()),
    };
    diag(&format!(
        "fiox: watchdog: job '{}': no {} I/O completed for {:.1} s; {} in flight on {target} in pool '{}', the oldest issued {:.1} s ago\n",
        spec.name,
        spec.ioengine,
        quiet.as_secs_f64(),
        p.inflight.load(Ordering::Relaxed).max(1),
        ceph.pool.as_deref().unwrap_or(""),
        oldest.as_secs_f64(),
    ));
    let (tx, rx) = std::sync::mpsc::channel();
    let (name, engine, opts) = (spec.name.clone(), spec.ioengine, ceph.clone());
    let spawned = std::thread::Builder::new().name("fiox-ceph-health".into()).spawn(move || {
        let line = match fiox_engine::ceph_facts::health(engine, &opts, HEALTH_TIMEOUT) {
            Ok(h) => format!("fiox: watchdog: job '{name}': cluster health (from the monitors): {h}\n"),
            Err(e) => format!("fiox: watchdog: job '{name}': cluster health unknown: {e}\n"),
        };
        let _ = tx.send(line);
    });
    if spawned.is_ok() {
        health.push(rx);
    }
}

/// Collects the phase's results, and watches the workers while they run. Liveness is judged by
/// progress, not by the clock: a worker doing I/O is hung only when none of its I/O completes
/// for its `hang_timeout` (5 s after a stop request). It is then woken (its wait interrupted)
/// and reports what it did, with the I/O still in flight counted as dropped; one that does not
/// return (stuck in an uninterruptible system call) is reported from its last snapshot and
/// left behind. A second interrupt wakes every worker at once.
fn wait_for_workers(
    plan: &Plan,
    phase: PhaseView<'_>,
    rx: &std::sync::mpsc::Receiver<(usize, Box<Result<WorkerResult>>)>,
    results: &mut [Option<Result<WorkerResult>>],
    diag: &(dyn Fn(&str) + Send + Sync),
) {
    let PhaseView { first, progress, stop: phase_stop, clock: phase_clock } = phase;
    let start = Instant::now();
    let mut watch: Vec<Watch> =
        progress.iter().map(|_| Watch { heartbeat: 0, since: start, woken: None, stall_told: false }).collect();
    let mut pending = progress.len();
    let mut health: Vec<std::sync::mpsc::Receiver<String>> = Vec::new();
    while pending > 0 {
        // The stall watchdog's answers from the monitors, as they come.
        health.retain(|rx| match rx.try_recv() {
            Ok(line) => {
                diag(&line);
                false
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => true,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => false,
        });
        if trigger::check() {
            // As fio: the trigger ends every job (each saves its state as it ends).
            STOP.store(true, Ordering::Relaxed);
        }
        if STOP.load(Ordering::Relaxed) {
            phase_stop.store(true, Ordering::Relaxed);
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok((i, r)) => {
                if results[i].is_none() {
                    results[i] = Some(*r);
                    pending -= 1;
                }
                continue;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let now = Instant::now();
        let (stop, abort) = (phase_stop.load(Ordering::Relaxed), ABORT.load(Ordering::Relaxed));
        for (k, p) in progress.iter().enumerate() {
            let i = first + k;
            if results[i].is_some() {
                continue;
            }
            let w = &mut watch[k];
            let beat = p.heartbeat.load(Ordering::Relaxed);
            let activity = p.activity.load(Ordering::Relaxed);
            if beat != w.heartbeat || activity == worker::Activity::IDLE {
                (w.heartbeat, w.since, w.stall_told) = (beat, now, false);
            }
            let spec = &plan.workers[i].spec;
            let stall_warn = Duration::from_micros(spec.engine.ceph.stall_warn_us);
            if !w.stall_told
                && stall_watched(spec)
                && activity == worker::Activity::IO
                && p.inflight.load(Ordering::Relaxed) > 0
                && now.duration_since(w.since) >= stall_warn
            {
                w.stall_told = true;
                stall_warning(&plan.workers[i], p, now.duration_since(w.since), &mut health, diag);
            }
            let mut bound = Duration::from_micros(spec.hang_timeout_us.max(1));
            if stop {
                bound = bound.min(STOP_QUIET);
            }
            let hung = activity != worker::Activity::IDLE && now.duration_since(w.since) >= bound;
            if !(hung || abort) {
                continue;
            }
            if w.woken.is_none() {
                w.woken = Some(now);
                p.wake.store(if abort { worker::Wake::ABORT } else { worker::Wake::HANG }, Ordering::Relaxed);
            }
            // Sent again every pass: a signal that arrives just before the worker starts to wait
            // would otherwise be lost.
            let tid = p.tid.load(Ordering::Relaxed);
            if tid != 0 {
                fiox_engine::sys::wake_thread(tid);
            }
            if w.woken.is_some_and(|t| now.duration_since(t) >= WAKE_GRACE) {
                results[i] =
                    Some(Ok(stuck_worker(&plan.workers[i], p, now.duration_since(w.since), phase_clock, diag)));
                pending -= 1;
            }
        }
    }
    // A health answer still on its way when the phase ended: a short wait, not the full
    // timeout (the run is over; a dead cluster's answer is not worth holding the exit).
    let deadline = Instant::now() + Duration::from_millis(500);
    for rx in health {
        if let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            diag(&line);
        }
    }
}

/// The report of a worker stuck in a system call that no signal interrupts: its last snapshot
/// (at most [`worker`]'s snapshot period old when it stopped making progress), flagged.
fn stuck_worker(
    w: &crate::plan::WorkerPlan,
    p: &Progress,
    quiet: Duration,
    phase_clock: Instant,
    diag: &(dyn Fn(&str) + Send + Sync),
) -> WorkerResult {
    let last = p.snapshot.lock().ok().and_then(|s| s.as_ref().map(|s| s.1.clone()));
    if let Some(r) = last.as_ref().filter(|_| p.activity.load(Ordering::Relaxed) == worker::Activity::FINISHING) {
        // Its result was final; only closing its files hangs.
        diag(&format!(
            "fiox: job '{}': flushing or closing its files did not return for {:.0} s; the device stopped answering\n",
            w.spec.name,
            quiet.as_secs_f64()
        ));
        return WorkerResult { abandoned: true, ..r.clone() };
    }
    let files: Vec<String> = w.files.iter().map(|f| f.path.display().to_string()).collect();
    let msg = format!(
        "job '{}' is stuck in a system call on {}: no I/O completed for {:.0} s ({} in flight); \
         reporting its figures as of its last snapshot",
        w.spec.name,
        if files.is_empty() { "no file".to_string() } else { files.join(", ") },
        quiet.as_secs_f64(),
        p.inflight.load(Ordering::Relaxed).max(1),
    );
    diag(&format!("fiox: {msg}\n"));
    let mut r = last.unwrap_or_else(|| {
        // No snapshot yet: the published counters are all there is.
        let elapsed_ms = phase_clock.elapsed().as_millis() as u64;
        let mut ts = fiox_stats::ThreadStat { jobs: 1, job_runtime_ms: elapsed_ms, ..Default::default() };
        for d in 0..3 {
            ts.dirs[d].io_bytes = p.bytes[d].load(Ordering::Relaxed);
            ts.dirs[d].total_ios = p.ios[d].load(Ordering::Relaxed);
            if ts.dirs[d].total_ios > 0 {
                ts.dirs[d].runtime_ms = elapsed_ms.max(1);
            }
            ts.issued[d] = ts.dirs[d].total_ios;
        }
        WorkerResult { ts, elapsed_ms, ..Default::default() }
    });
    r.ts.error = libc::ETIMEDOUT;
    r.error = Some(msg);
    r.abandoned = true;
    r
}
