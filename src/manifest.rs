//! The run manifest fiox adds to its reports: what is needed to reproduce a result (versions,
//! kernel, CPU, the devices under test with their queue settings and mounts, the random seeds),
//! fiox's own CPU cost per I/O, and warnings about results that look wrong.
//!
//! Reads /proc and /sys; the formatting lives in `fiox-report`.

use std::path::Path;

use fiox_report::{DeviceInfo, Manifest, Overhead, RunReport};

use crate::plan::Plan;
use crate::runner::worker::WorkerResult;

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_default()
}

fn read_u64(p: impl AsRef<Path>) -> u64 {
    read(p).parse().unwrap_or(0)
}

fn device(name: &str) -> DeviceInfo {
    let q = Path::new("/sys/block").join(name).join("queue");
    let sched = read(q.join("scheduler"));
    // The active scheduler is the one in brackets: "[none] mq-deadline".
    let scheduler = sched.split('[').nth(1).and_then(|s| s.split(']').next()).unwrap_or(&sched).to_string();
    let mut mounts = Vec::new();
    for line in read("/proc/self/mounts").lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let dev = f.first().and_then(|d| d.strip_prefix("/dev/")).unwrap_or("");
        if f.len() >= 4 && !dev.is_empty() && (dev == name || dev.starts_with(name)) {
            mounts.push((f[1].to_string(), f[2].to_string(), f[3].to_string()));
        }
    }
    DeviceInfo {
        name: name.to_string(),
        model: read(Path::new("/sys/block").join(name).join("device/model")),
        scheduler,
        rotational: read(q.join("rotational")) == "1",
        logical_block_size: read_u64(q.join("logical_block_size")),
        physical_block_size: read_u64(q.join("physical_block_size")),
        nr_requests: read_u64(q.join("nr_requests")),
        read_ahead_kb: read_u64(q.join("read_ahead_kb")),
        write_cache: read(q.join("write_cache")),
        mounts,
    }
}

pub fn build(plan: &Plan, results: &[WorkerResult], report: &RunReport) -> Manifest {
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_string())
        .unwrap_or_default();
    let seeds = plan.workers.iter().zip(results).map(|(w, r)| (w.spec.name.clone(), w.clone, r.seed)).collect();
    let overhead: Vec<Overhead> = report
        .jobs
        .iter()
        .map(|j| {
            let ts = &j.ts;
            let ios = ts.total_ios().max(1) as f64;
            let runtime_us = (ts.job_runtime_ms.max(1) * 1000) as f64;
            Overhead {
                job: j.name.clone(),
                usr_ns_per_io: ts.usr_us as f64 * 1000.0 / ios,
                sys_ns_per_io: ts.sys_us as f64 * 1000.0 / ios,
                // job_runtime sums over merged jobs, so this stays per worker.
                busy_pct: (ts.usr_us + ts.sys_us) as f64 * 100.0 / runtime_us,
            }
        })
        .collect();
    Manifest {
        version: env!("CARGO_PKG_VERSION").to_string(),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpu,
        cpus: fiox_engine::sys::machine().1,
        clock: "clock_gettime(CLOCK_MONOTONIC)".into(),
        devices: report.disks.iter().map(|d| device(&d.name)).collect(),
        seeds,
        warnings: warnings(plan, results, report, &overhead),
        overhead,
    }
}

/// Results that deserve a second look before anyone believes them.
fn warnings(plan: &Plan, results: &[WorkerResult], report: &RunReport, overhead: &[Overhead]) -> Vec<String> {
    let mut out = Vec::new();
    let device_reads: u64 = report.disks.iter().map(|d| d.read_ios).sum();
    let device_writes: u64 = report.disks.iter().map(|d| d.write_ios).sum();
    let (mut buffered_reads, mut direct_writes) = (0u64, 0u64);
    for (w, r) in plan.workers.iter().zip(results) {
        if w.engine.diskless {
            continue;
        }
        if !w.spec.direct {
            buffered_reads += r.ts.dirs[0].total_ios;
        }
        if w.spec.direct && w.files.iter().any(|f| !f.block_device) {
            direct_writes += r.ts.dirs[1].total_ios;
        }
    }
    // Devices merge requests, so only a large gap means anything.
    if !report.disks.is_empty() && buffered_reads > 1000 && device_reads * 10 < buffered_reads {
        out.push(format!(
            "the jobs read {buffered_reads} blocks with direct=0 but the devices saw {device_reads} reads: \
             most reads came from the page cache, not the device (use direct=1 to measure the device)"
        ));
    }
    if !report.disks.is_empty() && direct_writes > 1000 && device_writes * 10 < direct_writes {
        out.push(format!(
            "the jobs wrote {direct_writes} blocks with direct=1 but the devices saw {device_writes} writes: \
             a cache below the file system absorbed them"
        ));
    }
    for o in overhead {
        if o.saturated() {
            out.push(format!(
                "job '{}' kept a CPU core {:.0}% busy: the result may be limited by fiox, not the device",
                o.job, o.busy_pct
            ));
        }
    }
    out
}
