//! The loop of the no-I/O engines (cpuio, exec): one "I/O" after another, each followed by the
//! engine's pause, until the runtime is over, the run is stopped, or (cpuio's
//! `exit_on_io_done=1`) every job of the phase that does I/O has finished. As fio reports them,
//! every "I/O" is a read of no bytes whose duration is its completion and total latency; the
//! direction's runtime stays 0, so no bandwidth is derived, and the normal report has no
//! direction block.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use fiox_engine::{Ddir, Io, IoQueue, QueueStatus};
use fiox_stats::{DirStat, ThreadStat};

use super::account::finish_stats;
use super::{Progress, WorkerResult};
use crate::plan::clock::{self, Clock};
use crate::plan::WorkerPlan;

pub(super) fn run(
    plan: &WorkerPlan,
    q: &mut IoQueue,
    stop: &AtomicBool,
    progress: &Progress,
    io_peers: &[Arc<Progress>],
) -> Result<WorkerResult> {
    let spec = &*plan.spec;
    let mut ts = ThreadStat { jobs: 1, ..ThreadStat::default() };
    ts.dirs[0] = DirStat::active();
    let clock = Clock::start(plan.clock);
    let usage0 = clock::thread_usage();
    let start_epoch_ms = clock::epoch_ms();
    let end_ns = if spec.runtime_us > 0 { spec.runtime_us * 1000 } else { u64::MAX };
    let think = q.think_ns();
    // exit_on_io_done ends the job with the last job doing I/O; with none, it does nothing.
    let watch_peers = spec.engine.cpuio.exit_on_io_done && !io_peers.is_empty();
    let peers_done = || watch_peers && io_peers.iter().all(|p| p.done.load(Ordering::Relaxed));
    let over = |now: u64| stop.load(Ordering::Relaxed) || now >= end_ns || peers_done();
    let book = |ts: &mut ThreadStat, lat: u64| {
        let ds = &mut ts.dirs[0];
        ds.total_ios += 1;
        ds.clat.add(lat);
        ds.lat.add(lat);
        for h in [&mut ds.clat_hist, &mut ds.lat_hist].into_iter().flatten() {
            h.add(lat);
        }
        ts.mark_clat_bucket(lat);
        ts.mark_depth(1, 1);
        ts.submit_map[1] += 1;
        ts.complete_map[1] += 1;
    };
    let mut now = 0;
    let io = Io { ddir: Ddir::Read, file: 0, offset: 0, len: 0, ioprio: 0 };
    // An "I/O" whose pause would reach the end of the runtime is not started: fio's counts
    // (exec: 10 a second plus the final stop; cpuio: runtime / (burn + pause)) come out so.
    while !over(now) && now.saturating_add(think) < end_ns {
        let t0 = clock.now();
        let status = q.queue(0, io).context("engine failed")?;
        now = clock.now();
        let QueueStatus::Completed(_) = status else { unreachable!("no-I/O engines complete every I/O in line") };
        book(&mut ts, now - t0);
        progress.publish(&ts, ts.dirs[0].total_ios, 0, 0);
        // The pause, cut short by the end of the runtime or a stop.
        let until = now.saturating_add(think).min(end_ns);
        while !over(now) && now < until {
            std::thread::sleep(Duration::from_nanos(until - now).min(Duration::from_millis(20)));
            now = clock.now();
        }
    }
    let t0 = clock.now();
    if q.finish() {
        now = clock.now();
        book(&mut ts, now - t0);
        // fio pauses once more after that last step before the job ends.
        std::thread::sleep(Duration::from_nanos(think));
        now = clock.now();
    }
    finish_stats(&mut ts, now / 1_000_000, &usage0);
    // fio derives no bandwidth for these jobs: the direction has I/Os but no runtime.
    ts.dirs[0].runtime_ms = 0;
    progress.publish(&ts, ts.dirs[0].total_ios, 0, 0);
    progress.done.store(true, Ordering::Relaxed);
    Ok(WorkerResult {
        ts,
        pid: clock::thread_id(plan.number),
        start_epoch_ms,
        elapsed_ms: now / 1_000_000,
        seed: 0,
        ..WorkerResult::default()
    })
}
