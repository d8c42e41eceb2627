//! `fiox s3 bench`'s reports, pure functions of the merged statistics: warp's text summary and
//! fio's JSON layout (`jobs[]`, one per operation: GET, HEAD and LIST under `read`, PUT,
//! MULTIPART and PART under `write`, DELETE under `trim`).

use std::time::Duration;

use fiox_stats::{IoStat, LatHist};

use super::args::Opts;
use super::sizes::human_size;

/// Operations, in the report's order.
pub const OPS: [&str; 7] = ["GET", "PUT", "DELETE", "STAT", "LIST", "MULTIPART", "PART"];
const PERCENTILES: &[f64] = &[1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99];

/// One operation's statistics: merged from every worker, exactly (histogram bucket counts and
/// integer sums add).
#[derive(Default, Clone)]
pub struct OpStat {
    pub total: IoStat,
    pub total_hist: LatHist,
    pub ttfb: IoStat,
    pub ttfb_hist: LatHist,
    pub bytes: u64,
    pub errors: u64,
}

impl OpStat {
    pub fn merge(&mut self, o: &OpStat) {
        self.total.merge(&o.total);
        self.total_hist.merge(&o.total_hist);
        self.ttfb.merge(&o.ttfb);
        self.ttfb_hist.merge(&o.ttfb_hist);
        self.bytes += o.bytes;
        self.errors += o.errors;
    }

    /// One finished request: its time to first byte and its whole time, in nanoseconds.
    pub fn add(&mut self, ttfb: u64, total: u64, bytes: u64) {
        self.total.add(total);
        self.total_hist.add(total);
        self.ttfb.add(ttfb);
        self.ttfb_hist.add(ttfb);
        self.bytes += bytes;
    }
}

/// What the run was, besides its statistics.
pub struct Run<'a> {
    pub opts: &'a Opts,
    pub elapsed: Duration,
    pub first_error: Option<&'a str>,
    /// Open loop: requests started more than a millisecond after their intended time.
    pub behind: u64,
    /// `--repeat-until`: every run's figure and the verdict (this report is the last run's).
    pub repeat: Option<&'a fiox_report::RepeatSummary>,
}

fn ms(ns: u64) -> String {
    format!("{:.1}ms", ns as f64 / 1e6)
}

/// warp's summary shape, one block per operation seen.
pub fn text(r: &Run, stats: &[OpStat]) -> String {
    let o = r.opts;
    let mut out = String::new();
    let secs = r.elapsed.as_secs_f64().max(1e-9);
    if let Some(rate) = o.rate {
        out.push_str(&format!(
            "Open loop: {rate} requests/s scheduled ({} arrivals), {} started late; latencies count from the intended start\n",
            if o.poisson { "Poisson" } else { "evenly spaced" },
            r.behind
        ));
    }
    for (i, s) in stats.iter().enumerate() {
        let n = s.total.samples;
        if n == 0 && s.errors == 0 {
            continue;
        }
        let p = s.total_hist.percentiles(&[50.0, 90.0, 99.0]);
        let t = s.ttfb_hist.percentiles(&[50.0, 90.0, 99.0]);
        let at = |v: &[(f64, u64)], i: usize| v.get(i).map_or(0, |x| x.1);
        let size = if OPS[i] == "PART" { human_size(o.part_size) } else { o.sizes.describe() };
        out.push_str(&format!(
            "Operation: {}, {} objects, {} concurrent, {:.1}s\n * Throughput: {:.2} MiB/s, {:.2} obj/s ({} ok, {} errors)\n * Requests: avg {}, 50% {}, 90% {}, 99% {}, fastest {}, slowest {}\n * TTFB: avg {}, 50% {}, 90% {}, 99% {}\n",
            OPS[i],
            size,
            o.concurrent,
            secs,
            s.bytes as f64 / secs / 1048576.0,
            n as f64 / secs,
            n,
            s.errors,
            ms(s.total.mean() as u64),
            ms(at(&p, 0)),
            ms(at(&p, 1)),
            ms(at(&p, 2)),
            ms(s.total.min()),
            ms(s.total.max),
            ms(s.ttfb.mean() as u64),
            ms(at(&t, 0)),
            ms(at(&t, 1)),
            ms(at(&t, 2)),
        ));
    }
    if let Some(rep) = r.repeat {
        out.push_str(&fiox_report::normal::repeat_lines(rep));
    }
    out
}

fn lat_json(st: &IoStat, h: &LatHist) -> serde_json::Value {
    let mut pct = serde_json::Map::new();
    for (p, v) in h.percentiles(PERCENTILES) {
        pct.insert(format!("{p:.6}"), v.into());
    }
    serde_json::json!({
        "min": st.min(),
        "max": st.max,
        "mean": st.mean(),
        "stddev": st.stddev(),
        "N": st.samples,
        "percentile": pct,
    })
}

/// fio's JSON layout: one `jobs[]` entry per operation, its figures under the direction fio
/// would use, `clat_ns` the whole request and `ttfb_ns` (fiox) the time to the answer's first
/// byte, `iops` operations per second, `bw` KiB/s. In the open loop both count from the
/// request's intended start.
pub fn json(r: &Run, stats: &[OpStat]) -> String {
    let o = r.opts;
    let secs = r.elapsed.as_secs_f64().max(1e-9);
    let runtime_ms = r.elapsed.as_millis() as u64;
    let mut jobs = Vec::new();
    for (i, s) in stats.iter().enumerate() {
        if s.total.samples == 0 && s.errors == 0 {
            continue;
        }
        let dir = match OPS[i] {
            "PUT" | "MULTIPART" | "PART" => "write",
            "DELETE" => "trim",
            _ => "read",
        };
        let block = serde_json::json!({
            "io_bytes": s.bytes,
            "io_kbytes": s.bytes / 1024,
            "bw_bytes": (s.bytes as f64 / secs) as u64,
            "bw": (s.bytes as f64 / secs / 1024.0) as u64,
            "iops": s.total.samples as f64 / secs,
            "runtime": runtime_ms,
            "total_ios": s.total.samples,
            "clat_ns": lat_json(&s.total, &s.total_hist),
            "ttfb_ns": lat_json(&s.ttfb, &s.ttfb_hist),
        });
        let mut job = serde_json::json!({
            "jobname": OPS[i].to_lowercase(),
            "groupid": 0,
            "error": if s.errors > 0 { libc::EIO } else { 0 },
            "total_err": s.errors,
            "job options": {
                "mode": o.mode, "host": o.hosts.join(","), "bucket": o.bucket, "prefix": o.prefix,
                "concurrent": o.concurrent, "obj.size": o.sizes.describe(), "duration": o.duration.as_secs_f64(),
            },
        });
        if let Some(rate) = o.rate {
            job["job options"]["rate"] = rate.into();
        }
        if o.mode.starts_with("multipart") {
            job["job options"]["part.size"] = o.part_size.into();
        }
        if o.mode == "multipart" {
            job["job options"]["parts"] = o.parts.into();
        }
        for d in ["read", "write", "trim"] {
            job[d] = if d == dir {
                block.clone()
            } else {
                serde_json::json!({"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0})
            };
        }
        jobs.push(job);
    }
    let mut bench = serde_json::json!({ "mode": o.mode, "first_error": r.first_error, "seconds": secs });
    if let Some(rate) = o.rate {
        let process = if o.poisson { "poisson" } else { "linear" };
        bench["open_loop"] = serde_json::json!({ "rate": rate, "process": process, "started_late": r.behind });
    }
    let mut fiox = serde_json::json!({ "s3 bench": bench });
    if let Some(rep) = r.repeat {
        // The keys of the jobs' `fiox.repeat_until`.
        fiox["repeat_until"] = serde_json::json!({
            "metric": rep.metric, "unit": rep.unit, "bound_pct": rep.bound_pct, "runs": rep.values.len(),
            "max_runs": rep.max_runs, "mean": rep.mean, "ci95": rep.ci95, "ci95_pct": rep.ci95_pct,
            "met": rep.met as u64, "values": rep.values,
        });
    }
    let doc = serde_json::json!({
        "fio version": crate::VERSION_STRING,
        "timestamp": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        "jobs": jobs,
        "fiox": fiox,
    });
    format!("{}\n", serde_json::to_string_pretty(&doc).unwrap_or_default())
}

/// fio's report model of a bench (a host's share of a multi-host bench): a job per operation
/// seen, named as in the JSON (`get`, `put`, ...), its group the operation's place in [`OPS`]
/// (every host agrees on it, so the coordinator's per-group merges are per operation), the
/// whole request as `clat` and `lat` with its histogram, so merged percentiles are exact, and
/// the time to first byte as `ttfb` with its own.
pub fn run_report(r: &Run, stats: &[OpStat]) -> fiox_report::RunReport {
    use fiox_stats::{GroupStat, ThreadStat};
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let ctime = fiox_engine::sys::ctime(now.as_secs() as i64);
    let runtime_ms = r.elapsed.as_millis() as u64;
    let o = r.opts;
    let (mut jobs, mut groups) = (Vec::new(), Vec::new());
    for (i, s) in stats.iter().enumerate().filter(|(_, s)| s.total.samples > 0 || s.errors > 0) {
        let d = match OPS[i] {
            "PUT" | "MULTIPART" | "PART" => 1,
            "DELETE" => 2,
            _ => 0,
        };
        let mut ts = ThreadStat::default();
        let dir = &mut ts.dirs[d];
        dir.io_bytes = s.bytes;
        dir.total_ios = s.total.samples;
        dir.runtime_ms = runtime_ms;
        dir.clat = s.total;
        dir.lat = s.total;
        dir.clat_hist = Some(s.total_hist.clone());
        dir.ttfb = s.ttfb;
        dir.ttfb_hist = Some(s.ttfb_hist.clone());
        ts.issued[d] = s.total.samples + s.errors;
        ts.total_err = s.errors;
        ts.error = if s.errors > 0 { libc::EIO } else { 0 };
        ts.job_runtime_ms = runtime_ms;
        ts.jobs = 1;
        groups.push(GroupStat::from_jobs(i as u32, std::iter::once(&ts)));
        jobs.push(fiox_report::JobReport {
            name: OPS[i].to_lowercase(),
            groupid: i as u32,
            pid: std::process::id(),
            error: ts.error,
            errors_counted: true,
            job_options: vec![
                ("mode".into(), o.mode.clone()),
                ("host".into(), o.hosts.join(",")),
                ("bucket".into(), o.bucket.clone()),
                ("prefix".into(), o.prefix.clone()),
                ("concurrent".into(), o.concurrent.to_string()),
                ("obj.size".into(), o.sizes.describe()),
            ],
            ts,
            clat_percentiles: true,
            percentile_list: fiox_report::DEFAULT_PERCENTILES.to_vec(),
            iodepth: o.concurrent as u32,
            elapsed_s: r.elapsed.as_secs(),
            ctime: ctime.clone(),
            ..Default::default()
        });
    }
    fiox_report::RunReport {
        version: crate::VERSION_STRING.to_string(),
        timestamp: now.as_secs(),
        timestamp_ms: now.as_millis() as u64,
        time: ctime,
        jobs,
        groups,
        ..Default::default()
    }
}
