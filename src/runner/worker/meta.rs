//! The loop of the metadata engines (filecreate, filestat, filedelete): one operation per file,
//! in file order, counted as `filesize` bytes in the job's direction and timed as completion
//! latency only, as fio reports them (no slat, no lat, no samples). Each operation completes
//! inside `queue`, so there is nothing to submit, reap or drain.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

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
            let io = Io {
                ddir: if d == 1 { Ddir::Write } else { Ddir::Read },
                file: i as u32,
                offset: 0,
                len: f.region_len.min(u32::MAX as u64) as u32,
                ioprio: 0,
            };
            let t0 = clock.now();
            let status = q.queue(0, io).context("engine failed")?;
            now = clock.now();
            let QueueStatus::Completed(result) = status else {
                unreachable!("metadata engines complete every operation in line")
            };
            if result < 0 {
                let e = std::io::Error::from_raw_os_error((-result) as i32);
                let msg = format!("{} failed on {}: {e}", spec.ioengine, f.path.display());
                let _ = writeln!(diag, "fiox: {msg}");
                ts.error = (-result) as i32;
                error = Some(msg);
                break 'passes;
            }
            let ds = &mut ts.dirs[d];
            let clat = now - t0;
            ds.io_bytes += io.len as u64;
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
    progress.publish(&ts, ts.dirs[d].total_ios, 0, 0);
    progress.done.store(true, Ordering::Relaxed);
    Ok(WorkerResult {
        ts,
        pid: clock::thread_id(plan.number),
        start_epoch_ms,
        elapsed_ms: now / 1_000_000,
        seed: 0,
        error,
        ..WorkerResult::default()
    })
}
