//! Test fixtures shared by the format tests: a small hand-built run whose latencies (and so
//! percentiles) are known, and the reference fio 3.33 run rebuilt from its json+ output
//! (`bins` give the exact completion-latency histograms, so percentiles match fio's).

use fiox_stats::{DirStat, GroupStat, IoStat, LatHist, SampleStat, ThreadStat};
use serde_json::Value;

use crate::model::{DiskUtil, JobReport, RunReport, Units, DEFAULT_PERCENTILES};

/// The reference files; the comparison tests must fail, not pass, without them.
pub(crate) const REFERENCE_JSON: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/reference/fio-3.33-example.json");
pub(crate) const REFERENCE_TXT: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/reference/fio-3.33-example.txt");

pub(crate) fn read_reference(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "reference file {path} cannot be read ({e}); these tests compare against it and must not pass without it"
        )
    })
}

fn samples(min: u64, max: u64, n: u64, mean: f64, stddev: f64) -> SampleStat {
    SampleStat { min, max, samples: n, mean, m2: stddev * stddev * n.saturating_sub(1) as f64 }
}

/// The hand-built run: job `known` reads 1000 x 4 KiB with completion latencies of 1, 2, ...,
/// 1000 us, submission latencies of 3007 + 7k ns, and writes 10 x 4 KiB at 10 us each; job
/// `idle` did nothing (and failed). One group, one disk.
pub(crate) fn simple_report() -> RunReport {
    let mut ts = ThreadStat { jobs: 1, ..ThreadStat::default() };
    let r = &mut ts.dirs[0];
    *r = DirStat::active();
    for i in 1..=1000u64 {
        let (slat, clat) = (3000 + 7 * i, 1000 * i);
        r.slat.add(slat);
        r.clat.add(clat);
        r.lat.add(slat + clat);
        r.slat_hist.as_mut().unwrap().add(slat);
        r.clat_hist.as_mut().unwrap().add(clat);
        r.lat_hist.as_mut().unwrap().add(slat + clat);
    }
    r.io_bytes = 1000 * 4096;
    r.total_ios = 1000;
    r.runtime_ms = 1000;
    for v in [4000, 4100, 3900] {
        r.bw.add(v);
    }
    for v in [1000, 1025, 975] {
        r.iops.add(v);
    }
    let w = &mut ts.dirs[1];
    *w = DirStat::active();
    for _ in 0..10 {
        w.slat.add(5000);
        w.clat.add(10_000);
        w.lat.add(15_000);
        w.slat_hist.as_mut().unwrap().add(5000);
        w.clat_hist.as_mut().unwrap().add(10_000);
        w.lat_hist.as_mut().unwrap().add(15_000);
    }
    w.io_bytes = 10 * 4096;
    w.total_ios = 10;
    w.runtime_ms = 1000;
    for i in 1..=1000u64 {
        ts.mark_clat_bucket(1000 * i);
    }
    for _ in 0..10 {
        ts.mark_clat_bucket(10_000);
    }
    ts.issued = [1000, 10, 0, 0];
    ts.depth_map[0] = 1010;
    ts.submit_map[1] = 1010;
    ts.complete_map[1] = 1010;
    ts.usr_us = 100_000;
    ts.sys_us = 250_000;
    ts.ctx = 1234;
    ts.minf = 12;
    ts.job_runtime_ms = 1000;

    let known = JobReport {
        name: "known".into(),
        groupid: 0,
        pid: 4242,
        job_options: vec![("rw".into(), "randrw".into()), ("bs".into(), "4k".into())],
        ts,
        has_slat: true,
        clat_percentiles: true,
        percentile_list: DEFAULT_PERCENTILES.to_vec(),
        units: Units::default(),
        iodepth: 1,
        elapsed_s: 2,
        ctime: "Sat Nov 21 07:09:51 2026".into(),
        ..JobReport::default()
    };
    let idle = JobReport {
        name: "idle".into(),
        groupid: 0,
        pid: 4243,
        error: 21,
        error_text: "file:filesetup.c:150, func=unlink, error=Is a directory".into(),
        description: Some("does \"nothing\" \\ at all".into()),
        ts: ThreadStat { jobs: 1, ..ThreadStat::default() },
        clat_percentiles: true,
        percentile_list: DEFAULT_PERCENTILES.to_vec(),
        iodepth: 1,
        ctime: "Sat Nov 21 07:09:51 2026".into(),
        ..JobReport::default()
    };
    let group = GroupStat::from_jobs(0, [&known.ts, &idle.ts].into_iter());
    RunReport {
        version: "fio-3.33".into(),
        timestamp: 1795244991,
        timestamp_ms: 1795244991442,
        time: "Sat Nov 21 07:09:51 2026".into(),
        global_options: None,
        jobs: vec![known, idle],
        groups: vec![group],
        fiox: None,
        disks: vec![DiskUtil {
            name: "vda".into(),
            figures: crate::model::DiskFigures {
                read_ios: 1000,
                write_ios: 10,
                read_merges: 1,
                write_merges: 2,
                read_ticks: 300,
                write_ticks: 40,
                in_queue: 340,
                util: 50.0,
                ..Default::default()
            },
            aggr: None,
        }],
    }
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an unsigned integer: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn options(v: &Value) -> Vec<(String, String)> {
    v.as_object()
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
        .unwrap_or_default()
}

/// An `IoStat` with fio's minimum, maximum and count. Its mean and deviation are not fio's:
/// they live in private sums that only real samples can set, so tests skip them.
fn io_stat(v: &Value) -> IoStat {
    let mut s = IoStat::default();
    if u(&v["N"]) > 0 {
        s.min = u(&v["min"]);
        s.max = u(&v["max"]);
        s.samples = u(&v["N"]);
    }
    s
}

fn hist_from_bins(v: &Value) -> Option<LatHist> {
    let bins = v.get("bins")?.as_object()?;
    let mut h = LatHist::default();
    for (k, c) in bins {
        let ns: u64 = k.parse().expect("bin key");
        for _ in 0..u(c) {
            h.add(ns);
        }
    }
    Some(h)
}

/// Counts that reproduce fio's batch percentages, which are relative to the map's own total
/// (calls, not I/Os): the smallest total whose counts (one per clamped 0.1 % entry) add up to
/// it and print every percentage exactly as fio did.
fn batch_counts(obj: &Value, keys: &[&str], ios: u64) -> [u64; 7] {
    let pcts: Vec<f64> = keys.iter().map(|k| f(&obj[*k])).collect();
    if pcts.iter().all(|&p| p == 0.0) {
        return [0; 7];
    }
    let fits = |t: u64| {
        let c: Vec<u64> =
            pcts.iter().map(|&p| if p == 0.1 { 1 } else { (p * t as f64 / 100.0).round() as u64 }).collect();
        let exact = c
            .iter()
            .zip(&pcts)
            .all(|(&c, &p)| p == 0.1 || format!("{:.6}", c as f64 * 100.0 / t as f64) == format!("{p:.6}"));
        (c.iter().sum::<u64>() == t && exact).then(|| c.try_into().unwrap())
    };
    (1..=ios.max(1) * 2).find_map(fits).unwrap_or_else(|| counts(obj, keys, ios, 0.1))
}

/// Counts that reproduce fio's percentages of `total`: a clamped 0.01 % or 0.1 % entry was
/// a handful of I/Os, so it becomes one.
fn counts<const N: usize>(obj: &Value, keys: &[&str], total: u64, floor: f64) -> [u64; N] {
    let mut out = [0u64; N];
    for (i, k) in keys.iter().enumerate() {
        let p = f(&obj[*k]);
        out[i] = if p == floor { 1 } else { (p * total as f64 / 100.0).round() as u64 };
    }
    out
}

fn dir(v: &Value) -> DirStat {
    DirStat {
        io_bytes: u(&v["io_bytes"]),
        total_ios: u(&v["total_ios"]),
        short_ios: u(&v["short_ios"]),
        drop_ios: u(&v["drop_ios"]),
        runtime_ms: u(&v["runtime"]),
        slat: io_stat(&v["slat_ns"]),
        clat: io_stat(&v["clat_ns"]),
        lat: io_stat(&v["lat_ns"]),
        slat_hist: None,
        clat_hist: hist_from_bins(&v["clat_ns"]),
        lat_hist: None,
        intended: Default::default(),
        intended_hist: None,
        ttfb: Default::default(),
        ttfb_hist: None,
        bw: samples(u(&v["bw_min"]), u(&v["bw_max"]), u(&v["bw_samples"]), f(&v["bw_mean"]), f(&v["bw_dev"])),
        iops: samples(
            u(&v["iops_min"]),
            u(&v["iops_max"]),
            u(&v["iops_samples"]),
            f(&v["iops_mean"]),
            f(&v["iops_stddev"]),
        ),
        prios: Vec::new(),
    }
}

/// The reference run (libaio randrw QD8 in group 0, psync sequential read in group 1, one
/// disk) rebuilt from `fio-3.33-example.json`, with the pids and times of the normal output.
pub(crate) fn reference_report() -> RunReport {
    let doc: Value = serde_json::from_str(&read_reference(REFERENCE_JSON)).expect("reference json");
    report_from_fio_json(&doc, &[8871, 8982], "Sat Nov 21 07:09:51 2026")
}

/// An option's value from a job's own options or, failing that, the global ones.
fn opt<'a>(doc: &'a Value, job: &'a Value, name: &str) -> Option<&'a str> {
    job["job options"][name].as_str().or_else(|| doc["global options"][name].as_str())
}

/// A run rebuilt from fio's json+ output (one report per job, no group_reporting): exact
/// except the latency means and deviations, which live in sums only real samples can set.
pub(crate) fn report_from_fio_json(doc: &Value, pids: &[u32], ctime: &str) -> RunReport {
    let mut jobs = Vec::new();
    for (n, j) in doc["jobs"].as_array().expect("jobs").iter().enumerate() {
        let mut ts = ThreadStat { jobs: 1, ..ThreadStat::default() };
        for (d, name) in ["read", "write", "trim"].iter().enumerate() {
            ts.dirs[d] = dir(&j[*name]);
            ts.dirs[d].slat_hist = hist_from_bins(&j[*name]["slat_ns"]);
            ts.dirs[d].lat_hist = hist_from_bins(&j[*name]["lat_ns"]);
        }
        let total: u64 = ts.dirs.iter().map(|d| d.total_ios).sum();
        ts.issued = [ts.dirs[0].total_ios, ts.dirs[1].total_ios, ts.dirs[2].total_ios, 0];
        ts.sync_ios = u(&j["sync"]["total_ios"]);
        ts.issued[3] = ts.sync_ios;
        ts.sync_lat = io_stat(&j["sync"]["lat_ns"]);
        ts.job_runtime_ms = u(&j["job_runtime"]);
        ts.usr_us = (f(&j["usr_cpu"]) * ts.job_runtime_ms as f64 * 10.0).round() as u64;
        ts.sys_us = (f(&j["sys_cpu"]) * ts.job_runtime_ms as f64 * 10.0).round() as u64;
        ts.ctx = u(&j["ctx"]);
        ts.majf = u(&j["majf"]);
        ts.minf = u(&j["minf"]);
        let depths = ["1", "2", "4", "8", "16", "32", ">=64"];
        let batch = ["0", "4", "8", "16", "32", "64", ">=64"];
        ts.depth_map = counts(&j["iodepth_level"], &depths, total, 0.1);
        ts.submit_map = batch_counts(&j["iodepth_submit"], &batch, total);
        ts.complete_map = batch_counts(&j["iodepth_complete"], &batch, total);
        let us = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"];
        let ms = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"];
        ts.lat_ns = counts(&j["latency_ns"], &us, total, 0.01);
        ts.lat_us = counts(&j["latency_us"], &us, total, 0.01);
        ts.lat_ms = counts(&j["latency_ms"], &ms, total, 0.01);
        let flag = |name: &str, default: bool| opt(doc, j, name).map_or(default, |v| v != "0");
        let num = |name: &str, default: u64| opt(doc, j, name).map_or(default, |v| v.parse().unwrap());
        let list = opt(doc, j, "percentile_list")
            .map_or(DEFAULT_PERCENTILES.to_vec(), |l| l.split(':').map(|p| p.parse().unwrap()).collect());
        jobs.push(JobReport {
            name: j["jobname"].as_str().expect("jobname").to_string(),
            groupid: u(&j["groupid"]) as u32,
            pid: pids[n],
            error: u(&j["error"]) as i32,
            description: j["desc"].as_str().map(String::from),
            job_options: options(&j["job options"]),
            has_slat: ["read", "write", "trim"].iter().any(|d| u(&j[*d]["slat_ns"]["N"]) > 0),
            clat_percentiles: flag("clat_percentiles", true),
            lat_percentiles: flag("lat_percentiles", false),
            slat_percentiles: flag("slat_percentiles", false),
            percentile_list: list,
            ts,
            units: Units {
                kb_base: num("kb_base", 1024),
                unit_base: num("unit_base", 0),
                sig_figs: num("significant_figures", 4) as u32,
            },
            iodepth: u(&j["latency_depth"]) as u32,
            elapsed_s: u(&j["elapsed"]),
            ctime: ctime.into(),
            ..JobReport::default()
        });
    }
    let mut groups: Vec<GroupStat> = Vec::new();
    let mut ids: Vec<u32> = jobs.iter().map(|j| j.groupid).collect();
    ids.dedup();
    for g in ids {
        groups.push(GroupStat::from_jobs(g, jobs.iter().filter(|j| j.groupid == g).map(|j| &j.ts)));
    }
    let disks = doc["disk_util"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|d| DiskUtil {
            name: d["name"].as_str().expect("name").to_string(),
            figures: crate::model::DiskFigures {
                read_ios: u(&d["read_ios"]),
                write_ios: u(&d["write_ios"]),
                read_merges: u(&d["read_merges"]),
                write_merges: u(&d["write_merges"]),
                read_ticks: u(&d["read_ticks"]),
                write_ticks: u(&d["write_ticks"]),
                in_queue: u(&d["in_queue"]),
                util: f(&d["util"]),
                ..Default::default()
            },
            aggr: None,
        })
        .collect();
    RunReport {
        version: doc["fio version"].as_str().expect("version").to_string(),
        timestamp: u(&doc["timestamp"]),
        timestamp_ms: u(&doc["timestamp_ms"]),
        time: doc["time"].as_str().expect("time").to_string(),
        global_options: doc.get("global options").map(options),
        jobs,
        groups,
        disks,
        fiox: None,
    }
}
