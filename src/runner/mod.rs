//! Runs a plan: one OS thread per job clone, jobs in phases separated by `stonewall` (a
//! stonewalled job waits for every job before it), and hands back what each worker measured.
//!
//! Architecture Invariant: workers share nothing mutable but the stop flag and their own
//! progress counters; statistics are per worker and merged after the run.

pub mod iogen;
pub mod offsets;
pub mod pacer;
pub mod worker;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use anyhow::Result;

use crate::plan::Plan;
use worker::{Progress, WorkerResult};

/// Set by Ctrl-C / SIGTERM; workers finish their in-flight I/O and stop.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Seed of a worker's random streams: fixed (per job and clone) with `randrepeat=1`, from the
/// clock otherwise.
fn seed_for(plan: &crate::plan::WorkerPlan) -> u64 {
    let base = if plan.spec.randrepeat {
        plan.spec.randseed
    } else {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    };
    offsets::mix64(base ^ offsets::mix64(plan.job_index as u64) ^ (plan.clone as u64) << 40)
}

/// Runs every worker; results are in the plan's worker order. Diagnostics (layout messages,
/// I/O errors) go to `diag`.
pub fn run(plan: &Plan, diag: &(dyn Fn(&str) + Sync)) -> Result<Vec<WorkerResult>> {
    let mut results: Vec<Option<Result<WorkerResult>>> = (0..plan.workers.len()).map(|_| None).collect();
    let mut phase_start = 0;
    while phase_start < plan.workers.len() {
        // A phase runs until the next worker of a stonewalled job (other than the first).
        let mut end = phase_start + 1;
        while end < plan.workers.len() {
            let w = &plan.workers[end];
            if w.clone == 0 && w.spec.stonewall {
                break;
            }
            end += 1;
        }
        let progress: Vec<Progress> = (phase_start..end).map(|_| Progress::default()).collect();
        let out = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for (k, i) in (phase_start..end).enumerate() {
                let w = &plan.workers[i];
                let p = &progress[k];
                let out = &out;
                s.spawn(move || {
                    let mut buf = DiagBuf(diag);
                    let r = worker::run(w, seed_for(w), &STOP, p, &mut buf);
                    if w.spec.exitall {
                        // exitall: the first job to finish stops all the others.
                        STOP.store(true, Ordering::Relaxed);
                    }
                    out.lock().expect("no worker panics while holding it").push((i, r));
                });
            }
        });
        for (i, r) in out.into_inner().expect("all workers joined") {
            results[i] = Some(r);
        }
        if STOP.load(Ordering::Relaxed) {
            break;
        }
        phase_start = end;
    }
    // Workers of phases that never started (after Ctrl-C) report nothing.
    let mut out = Vec::new();
    for r in results.into_iter().flatten() {
        out.push(r?);
    }
    Ok(out)
}

/// Line-buffers a worker's diagnostics into the shared sink.
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
