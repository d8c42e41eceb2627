//! The run manifest fiox adds to its reports: what is needed to reproduce a result (versions,
//! kernel, CPU, the devices under test with their queue settings and mounts, the random seeds),
//! fiox's own CPU cost per I/O, and warnings about results that look wrong.
//!
//! Reads /proc and /sys; the formatting lives in `fiox-report`.

use std::path::Path;

use fiox_engine::ceph_facts::Facts;
use fiox_report::{CephImage, CephManifest, CephObjects, DeviceInfo, EngineSetup, Manifest, Overhead, RunReport};

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
    // A job that never ran (its phase was cancelled) has no cost to show.
    let overhead: Vec<Overhead> = report
        .jobs
        .iter()
        .filter(|j| j.ts.job_runtime_ms > 0 || j.ts.total_ios() > 0)
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
        clock: plan.workers.first().map_or(crate::plan::clock::Source::Monotonic, |w| w.clock).describe(),
        devices: report.disks.iter().map(|d| device(&d.name)).collect(),
        seeds,
        warnings: warnings(plan, results, report, &overhead),
        overhead,
        repeat: None,
        ceph: ceph(plan, results),
        engine_setup: plan
            .workers
            .iter()
            .zip(results)
            .filter(|(_, r)| !r.engine_features.is_empty())
            .map(|(w, r)| EngineSetup {
                job: w.spec.name.clone(),
                clone: w.clone,
                engine: w.engine.name.to_string(),
                features: r.engine_features.iter().map(|f| f.to_string()).collect(),
            })
            .collect(),
    }
}

/// How long the look at a Ceph job's cluster after the run may take (connecting, then each
/// question): a cluster that stopped answering must not hold up the report.
const CEPH_PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(4);

/// Ceph jobs' entries: the planner's look at the cluster before the run (clone 0's, and every
/// clone's objects), a second look after it, and what follows from the plan (object
/// boundaries crossed, never-written share of the read range).
fn ceph(plan: &Plan, results: &[WorkerResult]) -> Vec<CephManifest> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (wi, before) in &plan.ceph_before {
        let w = &plan.workers[*wi];
        if !seen.insert(w.job_index) {
            continue;
        }
        let spec = &w.spec;
        let clones: Vec<usize> =
            (0..plan.workers.len()).filter(|&i| plan.workers[i].job_index == w.job_index).collect();
        let mut before_objects: Vec<(String, Option<u64>)> = Vec::new();
        for (i, f) in &plan.ceph_before {
            if plan.workers[*i].job_index == w.job_index {
                before_objects.extend(f.objects.iter().cloned());
            }
        }
        let names: Vec<String> = before_objects.iter().map(|(n, _)| n.clone()).collect();
        // After a stall, the cluster is not asked again: it may still not answer.
        let stalled = clones.iter().any(|&i| results.get(i).is_some_and(|r| r.abandoned));
        let after = if stalled {
            Err("not looked at: the cluster stopped answering during the run".to_string())
        } else {
            probe_bounded(spec, names.clone())
        };
        let mut m = CephManifest {
            job: spec.name.clone(),
            engine: spec.ioengine.to_string(),
            rados_version: before.rados_version.clone(),
            rbd_version: before.rbd_version.clone(),
            fsid: before.fsid.clone(),
            conf: before.conf.clone(),
            client: before.client.clone(),
            pool: before.pool.clone(),
            namespace: before.namespace.clone(),
            image: before.image.as_ref().map(|i| CephImage {
                name: i.name.clone(),
                size: i.size,
                order: i.order,
                object_size: i.object_size,
                block_name_prefix: i.block_name_prefix.clone(),
                features: i.features,
                feature_names: i.feature_names.clone(),
                stripe_unit: i.stripe_unit,
                stripe_count: i.stripe_count,
            }),
            rbd_cache: before.rbd_cache.clone(),
            lock_owners_before: before.lock_owners.clone(),
            ..CephManifest::default()
        };
        if let Some(img) = &before.image {
            // librbd splits an I/O at each stripe unit (the object size without striping).
            let unit = if img.stripe_unit > 0 { img.stripe_unit.min(img.object_size) } else { img.object_size };
            let dirs = [("read", spec.rw.reads()), ("write", spec.rw.writes()), ("trim", spec.rw.trims())];
            for (d, (name, on)) in dirs.iter().enumerate() {
                let fixed = spec.bsrange[d].is_none_or(|(lo, hi)| lo == hi) && spec.bssplit[d].is_empty();
                if *on && fixed && spec.bs[d] > 0 {
                    if let Some(f) = w.files.first() {
                        m.object_crossing_share
                            .push((name.to_string(), crossing_share(f.region_start, f.region_len, spec.bs[d], unit)));
                    }
                }
            }
            if spec.rw.reads() {
                if let (Some(written), Some(f)) = (&before.written, w.files.first()) {
                    let end = f.region_start + f.region_len;
                    let covered: u64 =
                        written.iter().map(|&(o, l)| (o + l).min(end).saturating_sub(o.max(f.region_start))).sum();
                    m.unwritten_read_share = Some(1.0 - covered as f64 / f.region_len.max(1) as f64);
                }
            }
        }
        match after {
            Ok(a) => {
                m.lock_owners_after = a.lock_owners.clone();
                if spec.ioengine == "rados" {
                    m.objects = Some(objects(&before_objects, &a));
                }
            }
            Err(e) => m.after_error = Some(e),
        }
        out.push(m);
    }
    out
}

/// The look after the run, on a thread so that the report waits at most a little longer than
/// the probe's own timeouts.
fn probe_bounded(spec: &fiox_options::JobSpec, names: Vec<String>) -> Result<Facts, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (engine, opts, direct) = (spec.ioengine, spec.engine.ceph.clone(), spec.direct);
    std::thread::Builder::new()
        .name("fiox-ceph-probe".into())
        .spawn(move || {
            let _ = tx.send(fiox_engine::ceph_facts::probe(engine, &opts, direct, &names, CEPH_PROBE_TIMEOUT));
        })
        .map_err(|e| format!("cannot start a thread: {e}"))?;
    rx.recv_timeout(CEPH_PROBE_TIMEOUT * 2)
        .unwrap_or_else(|_| Err(format!("no answer within {} s", (CEPH_PROBE_TIMEOUT * 2).as_secs())))
}

/// A rados job's objects: how many the run created, removed and left.
fn objects(before: &[(String, Option<u64>)], after: &Facts) -> CephObjects {
    let now: std::collections::HashMap<&str, Option<u64>> =
        after.objects.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    let mut o = CephObjects { named: before.len() as u64, ..CephObjects::default() };
    for (name, was) in before {
        let is = now.get(name.as_str()).copied().flatten();
        o.existed_before += was.is_some() as u64;
        o.created += (was.is_none() && is.is_some()) as u64;
        o.removed += (was.is_some() && is.is_none()) as u64;
        o.left += is.is_some() as u64;
        o.left_bytes += is.unwrap_or(0);
    }
    o
}

/// The share of `bs`-byte I/Os at the `bs`-aligned offsets of `[start, start + len)` that
/// cross a multiple of `unit` (librbd then makes two RADOS operations of one). Sequential jobs
/// issue every such offset and uniform random ones draw from them, so it is the share of
/// either's I/Os; over a million offsets, an even sample of a million stands for them.
fn crossing_share(start: u64, len: u64, bs: u64, unit: u64) -> f64 {
    let n = len / bs.max(1);
    if n == 0 || unit == 0 {
        return 0.0;
    }
    let step = (n / (1 << 20)).max(1);
    let (mut crossing, mut total) = (0u64, 0u64);
    let mut k = 0;
    while k < n {
        let off = start + k * bs;
        crossing += (off % unit + bs > unit) as u64;
        total += 1;
        k += step;
    }
    crossing as f64 / total as f64
}

/// Results that deserve a second look before anyone believes them.
fn warnings(plan: &Plan, results: &[WorkerResult], report: &RunReport, overhead: &[Overhead]) -> Vec<String> {
    let mut out = plan.fiox_warnings.clone();
    // A stacked device and its slaves are both listed, so these sums can overstate what moved:
    // that can hide a problem but never raise a false alarm.
    let device_reads: u64 = report.disks.iter().map(|d| d.read_ios).sum();
    let device_bytes = [
        report.disks.iter().map(|d| d.read_bytes).sum::<u64>(),
        report.disks.iter().map(|d| d.write_bytes).sum::<u64>(),
    ];
    let mut buffered_reads = 0u64;
    let mut direct_bytes = [0u64; 2];
    for (w, r) in plan.workers.iter().zip(results) {
        if w.engine.diskless {
            continue;
        }
        if !w.spec.direct {
            buffered_reads += r.ts.dirs[0].total_ios;
        } else {
            direct_bytes[0] += r.ts.dirs[0].io_bytes;
            direct_bytes[1] += r.ts.dirs[1].io_bytes;
        }
    }
    if !report.disks.is_empty() {
        out.extend(cache_warnings(buffered_reads, direct_bytes, device_reads, device_bytes));
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

/// What the devices' own counters say about the jobs' claims: buffered reads the devices never
/// saw came from the page cache; direct I/O the devices did not move went somewhere else.
fn cache_warnings(
    buffered_reads: u64,
    direct_bytes: [u64; 2],
    device_reads: u64,
    device_bytes: [u64; 2],
) -> Vec<String> {
    let mut out = Vec::new();
    // Devices merge requests, so only a large gap means anything.
    if buffered_reads > 1000 && device_reads * 10 < buffered_reads {
        out.push(format!(
            "the jobs read {buffered_reads} blocks with direct=0 but the devices saw {device_reads} reads: \
             most reads came from the page cache, not the device (use direct=1 to measure the device)"
        ));
    }
    // Direct I/O bypasses the page cache, so the devices must move at least what the jobs
    // claim; far less means a cache below the file system (a loop device over a cached file, a
    // controller, a hypervisor) or a file system that stores the data elsewhere.
    for (d, (verb, past)) in [("read", "read"), ("write", "written")].iter().enumerate() {
        let (claimed, moved) = (direct_bytes[d], device_bytes[d]);
        if claimed >= 4 << 20 && moved * 2 < claimed {
            out.push(format!(
                "the jobs {past} {} with direct=1 but the devices under their files moved {}: \
                 the {verb}s were served by something other than those devices",
                human(claimed),
                human(moved)
            ));
        }
    }
    out
}

/// Bytes in IEC units with one decimal (`12.5 MiB`).
fn human(bytes: u64) -> String {
    let mut v = bytes as f64;
    for unit in ["B", "KiB", "MiB", "GiB", "TiB"] {
        if v < 1024.0 || unit == "TiB" {
            return if unit == "B" { format!("{bytes} B") } else { format!("{v:.1} {unit}") };
        }
        v /= 1024.0;
    }
    unreachable!()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_warnings_compare_claims_with_device_counters() {
        // Buffered reads the devices saw a tenth of: page cache.
        let w = cache_warnings(50_000, [0, 0], 100, [400 << 10, 0]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("page cache"), "{w:?}");
        // Direct reads of 64 MiB with 10 MiB moved: something else served them.
        let w = cache_warnings(0, [64 << 20, 0], 2_560, [10 << 20, 0]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("read 64.0 MiB with direct=1") && w[0].contains("moved 10.0 MiB"), "{w:?}");
        // Direct writes fully seen (merged into fewer requests): nothing to say.
        assert!(cache_warnings(0, [0, 64 << 20], 0, [0, 64 << 20]).is_empty());
        // Small runs are not judged.
        assert!(cache_warnings(500, [1 << 20, 1 << 20], 0, [0, 0]).is_empty());
    }

    #[test]
    fn crossing_shares() {
        // The seed's "4M": 4,096,000-byte I/Os on 4 MiB objects cross at 24 of every 25 offsets
        // (reference/ceph.md §0); true 4 MiB and 4 KiB I/Os never do.
        let share = crossing_share(0, 4096000 * 1024, 4096000, 4 << 20);
        assert!((share - 0.977).abs() < 0.01, "{share}");
        assert_eq!(crossing_share(0, 64 << 20, 4 << 20, 4 << 20), 0.0);
        assert_eq!(crossing_share(0, 64 << 20, 4096, 4 << 20), 0.0);
        // Offset by 2 KiB, one 4 KiB I/O in 1024 straddles each boundary.
        assert!((crossing_share(2048, 64 << 20, 4096, 4 << 20) - 1.0 / 1024.0).abs() < 1e-9);
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(3 << 19), "1.5 MiB");
        assert_eq!(human(5 << 40), "5.0 TiB");
    }
}
