//! fio 3.33's JSON and JSON+ outputs, with fio's exact keys, nesting and order, printed the way
//! fio's own JSON printer prints them: two-space indentation, `"key" : value`, floats as C
//! `%f` (six decimals), integers plain, and strings escaping only `"` and `\`. That is not
//! serde_json's style, so the document is built as a small tree and printed by hand.
//!
//! JSON+ is JSON plus a `bins` object (bucket midpoint in ns → count, non-empty buckets only)
//! next to every `percentile` object.
//!
//! `--json-lines` (a fiox addition) prints the same document on one line, in serde_json's
//! compact form; see [`render_line`].

use fiox_stats::{IoStat, SampleStat, Unified, DDIR_MIXED, LAT_MS_BUCKETS, LAT_NS_BUCKETS};

use crate::calc::{self, LatKind};
use crate::model::{DiskUtil, JobReport, RunReport, SteadyReport};
use crate::units::cf;

/// A JSON value as fio prints it.
enum V {
    U(u64),
    I(i64),
    F(f64),
    S(String),
    O(Obj),
    A(Vec<V>),
}

/// An object: keys in insertion order.
#[derive(Default)]
struct Obj(Vec<(String, V)>);

impl Obj {
    fn put(&mut self, k: impl Into<String>, v: V) -> &mut Self {
        self.0.push((k.into(), v));
        self
    }
    fn u(&mut self, k: &str, v: u64) -> &mut Self {
        self.put(k, V::U(v))
    }
    fn f(&mut self, k: &str, v: f64) -> &mut Self {
        self.put(k, V::F(v))
    }
    fn s(&mut self, k: &str, v: &str) -> &mut Self {
        self.put(k, V::S(v.to_string()))
    }
    fn o(&mut self, k: &str, v: Obj) -> &mut Self {
        self.put(k, V::O(v))
    }
}

/// fio escapes only the quote and the backslash; everything else is copied as is.
fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
}

fn pad(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn write_val(out: &mut String, v: &V, level: usize) {
    match v {
        V::U(n) => out.push_str(&n.to_string()),
        V::I(n) => out.push_str(&n.to_string()),
        V::F(x) => out.push_str(&cf(*x)),
        V::S(s) => {
            out.push('"');
            escape(s, out);
            out.push('"');
        }
        V::O(o) => {
            out.push_str("{\n");
            for (i, (k, v)) in o.0.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                pad(out, level + 1);
                out.push('"');
                escape(k, out);
                out.push_str("\" : ");
                write_val(out, v, level + 1);
            }
            out.push('\n');
            pad(out, level);
            out.push('}');
        }
        V::A(items) => {
            out.push_str("[\n");
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                pad(out, level + 1);
                write_val(out, v, level + 1);
            }
            out.push('\n');
            pad(out, level);
            out.push(']');
        }
    }
}

/// The whole document, ending with a newline. `plus` selects JSON+ (latency `bins`).
///
/// Top level: `fio version`, `timestamp`, `timestamp_ms`, `time`, `global options` (only when
/// there are global options), `jobs`, `disk_util` (only when there are disks).
pub fn render(r: &RunReport, plus: bool) -> String {
    print(&V::O(document(r, plus)))
}

/// The document of [`render`] on one line (`--json-lines`), ending with a newline: compact,
/// with numbers as serde_json writes the value fio's text stands for (`1.5` for `1.500000`), and
/// a key given twice (an option set twice) once, in its first place with its last value, as
/// JSON readers take it. This is the form `--json-lines` has always printed.
///
/// fio's printer can make text that is not strict JSON (a control character in a string is
/// copied as is, a NaN is printed `nan`); such a document has no faithful compact form, so it
/// is printed as [`render`] prints it.
pub fn render_line(r: &RunReport, plus: bool) -> String {
    let doc = V::O(document(r, plus));
    match strict(&doc) {
        Some(v) => v.to_string() + "\n",
        None => print(&doc),
    }
}

/// A value as strict JSON, or `None` if fio's text for it is not strict JSON. A float becomes
/// the number its six-decimal text reads as, so the compact form shows what the document says.
fn strict(v: &V) -> Option<serde_json::Value> {
    use serde_json::Value;
    // JSON allows no unescaped U+0000 to U+001F in a string, and fio escapes none of them.
    let text = |s: &str| (!s.chars().any(|c| c < ' ')).then(|| s.to_string());
    Some(match v {
        V::U(n) => Value::from(*n),
        V::I(n) => Value::from(*n),
        V::F(x) => Value::Number(cf(*x).parse().ok()?),
        V::S(s) => Value::String(text(s)?),
        V::O(o) => Value::Object(o.0.iter().map(|(k, v)| Some((text(k)?, strict(v)?))).collect::<Option<_>>()?),
        V::A(items) => Value::Array(items.iter().map(strict).collect::<Option<_>>()?),
    })
}

fn print(doc: &V) -> String {
    let mut out = String::new();
    write_val(&mut out, doc, 0);
    out.push('\n');
    out
}

fn document(r: &RunReport, plus: bool) -> Obj {
    let mut top = Obj::default();
    top.s("fio version", &r.version).u("timestamp", r.timestamp).u("timestamp_ms", r.timestamp_ms).s("time", &r.time);
    if let Some(g) = r.global_options.as_ref().filter(|g| !g.is_empty()) {
        top.o("global options", options(g));
    }
    let jobs = r.jobs.iter().map(|j| V::O(job(r, j, plus, None))).collect();
    top.put("jobs", V::A(jobs));
    if !r.disks.is_empty() {
        top.put("disk_util", V::A(r.disks.iter().map(|d| V::O(disk(d))).collect()));
    }
    if let Some(m) = &r.fiox {
        top.o("fiox", manifest(m));
    }
    top
}

fn options(opts: &[(String, String)]) -> Obj {
    let mut o = Obj::default();
    for (k, v) in opts {
        o.s(k, v);
    }
    o
}

/// One job object. `client` is the host (`hostname`, `port`) of a multi-host run's entry: fio's
/// client layout has no `eta` and `elapsed` and ends with the host's `hostname` and `port`.
fn job(r: &RunReport, j: &JobReport, plus: bool, client: Option<(&str, u16)>) -> Obj {
    let ts = &j.ts;
    let mut o = Obj::default();
    o.s("jobname", &j.name).u("groupid", j.groupid as u64);
    if let Some(ms) = j.job_start {
        o.u("job_start", ms);
    }
    o.put("error", V::I(j.error as i64));
    if client.is_none() {
        // fio reports the last ETA its status thread computed: 0 for a finished job, or
        // INT_MAX when the job ended before the thread computed one, which fio 3.33 shows for
        // every job that ran under 2 s (observed: 1.8 s gives 2147483647, 2.1 s gives 0).
        // fiox does the same so that parsers see the same values.
        let eta = if j.elapsed_s <= 2 { i32::MAX as u64 } else { 0 };
        o.u("eta", eta).u("elapsed", j.elapsed_s);
    }
    if !j.job_options.is_empty() && !j.aggregate {
        o.o("job options", options(&j.job_options));
    }
    // Under `unified_rw_reporting=both` fio puts `sync` between `trim` and `mixed`; under
    // `mixed` it leaves `sync` out.
    for &(ddir, name) in calc::report_dirs(j.unified) {
        if ddir == DDIR_MIXED {
            o.o("sync", sync_obj(j, plus));
        }
        o.o(name, dir(r, j, ddir, plus));
    }
    if j.unified == Unified::None {
        o.o("sync", sync_obj(j, plus));
    }
    o.u("job_runtime", ts.job_runtime_ms)
        .f("usr_cpu", calc::cpu_pct(ts.usr_us, ts.job_runtime_ms))
        .f("sys_cpu", calc::cpu_pct(ts.sys_us, ts.job_runtime_ms))
        .u("ctx", ts.ctx)
        .u("majf", ts.majf)
        .u("minf", ts.minf);
    const DEPTHS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
    const BATCH: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
    o.o("iodepth_level", table(&DEPTHS, &calc::depth_pcts(ts)));
    o.o("iodepth_submit", table(&BATCH, &calc::batch_pcts(&ts.submit_map)));
    o.o("iodepth_complete", table(&BATCH, &calc::batch_pcts(&ts.complete_map)));
    let ns_labels: Vec<String> = LAT_NS_BUCKETS.iter().map(|b| b.to_string()).collect();
    let ms_labels: Vec<String> =
        LAT_MS_BUCKETS.iter().map(|b| b.to_string()).chain(std::iter::once(">=2000".to_string())).collect();
    let ns_refs: Vec<&str> = ns_labels.iter().map(String::as_str).collect();
    let ms_refs: Vec<&str> = ms_labels.iter().map(String::as_str).collect();
    o.o("latency_ns", table(&ns_refs, &calc::lat_pcts(&ts.lat_ns, ts)));
    o.o("latency_us", table(&ns_refs, &calc::lat_pcts(&ts.lat_us, ts)));
    o.o("latency_ms", table(&ms_refs, &calc::lat_pcts(&ts.lat_ms, ts)));
    if j.errors_counted {
        o.u("total_err", ts.total_err).put("first_error", V::I(ts.first_error as i64));
    }
    let lt = &j.latency_target;
    if !j.aggregate {
        o.u("latency_depth", j.iodepth as u64)
            .u("latency_target", lt.target_ns)
            .f("latency_percentile", lt.percentile)
            .u("latency_window", lt.window_us);
    }
    if let Some(desc) = j.description.as_deref().filter(|d| !d.is_empty()) {
        o.s("desc", desc);
    }
    if let Some(ss) = &j.steady {
        o.o("steadystate", steady(ss));
    }
    if let Some((host, port)) = client {
        o.s("hostname", host).u("port", port as u64);
    }
    o
}

/// A multi-host run in fio 3.33's client layout: `fio version`, `timestamp`, `time`, `global
/// options`, `client_stats` (every host's jobs in host-list order, each with `hostname` and
/// `port`, then the `All clients` entry) and `disk_util` (entries with `hostname` and `port`),
/// then fiox's `fiox` object (`hosts`, the start skew, whether the merge is degraded).
///
/// Where fiox differs from fio 3.33 on purpose: `global options` is one object when every host
/// has the same, fio 3.39's array of per-host objects when not (fio 3.33 repeats the keys in
/// one object); `All clients` has percentiles and, in json+, the merged `bins`; a lost host's
/// partial entries are kept (flagged in `fiox.hosts`).
pub fn render_clients(c: &crate::model::ClientsReport, plus: bool, line: bool) -> String {
    let mut top = Obj::default();
    top.s("fio version", &c.version).u("timestamp", c.timestamp).s("time", &c.time);
    let reported: Vec<(&crate::model::HostEntry, &RunReport)> =
        c.hosts.iter().filter_map(|h| h.report.as_ref().map(|r| (h, r))).collect();
    let globals: Vec<(&crate::model::HostEntry, &Vec<(String, String)>)> = reported
        .iter()
        .filter_map(|(h, r)| r.global_options.as_ref().filter(|g| !g.is_empty()).map(|g| (*h, g)))
        .collect();
    if let Some((_, first)) = globals.first() {
        if globals.iter().all(|(_, g)| g == first) {
            top.o("global options", options(first));
        } else {
            let per_host = globals
                .iter()
                .map(|(h, g)| {
                    let mut o = options(g);
                    o.s("hostname", &h.hostname).u("port", h.port as u64);
                    V::O(o)
                })
                .collect();
            top.put("global options", V::A(per_host));
        }
    }
    let mut stats = Vec::new();
    for (h, r) in &reported {
        for j in &r.jobs {
            stats.push(V::O(job(r, j, plus, Some((&h.hostname, h.port)))));
        }
    }
    if let Some(all) = &c.all {
        // fio 3.33 gives the aggregate the host and port of the last host that reported;
        // fiox gives the last host's of the list (the same when all report).
        let (host, port) = c.hosts.last().map_or(("", 0), |h| (h.hostname.as_str(), h.port));
        for j in &all.jobs {
            stats.push(V::O(job(all, j, plus, Some((host, port)))));
        }
    }
    top.put("client_stats", V::A(stats));
    let mut disks = Vec::new();
    for (h, r) in &reported {
        for d in &r.disks {
            let mut o = disk(d);
            o.s("hostname", &h.hostname).u("port", h.port as u64);
            disks.push(V::O(o));
        }
    }
    top.put("disk_util", V::A(disks));
    let mut fx = Obj::default();
    let hosts = c
        .hosts
        .iter()
        .map(|h| {
            let mut o = Obj::default();
            o.s("name", &h.name)
                .s("hostname", &h.hostname)
                .u("port", h.port as u64)
                .s("transport", &h.transport)
                .s("status", &h.status)
                .put("error", h.error.as_ref().map_or(V::S(String::new()), |e| V::S(e.clone())))
                .s("fiox_version", &h.fiox_version)
                .u("proto", h.proto as u64)
                .put("clock_offset_ns", V::I(h.clock_offset_ns))
                .put("wallclock_offset_ns", V::I(h.wallclock_offset_ns))
                .u("rtt_ns", h.rtt_ns)
                .put("start_ns", V::I(h.start_ns.unwrap_or(0)))
                .u("late_start", h.late_start as u64)
                .u("runtime_ms", h.runtime_ms)
                .put("job_start_ms", V::I(h.job_start_ms.unwrap_or(0)))
                .u("partial", h.partial as u64);
            if let Some(t) = h.failed_at_s {
                o.f("failed_at_s", t);
            }
            if let Some(m) = h.report.as_ref().and_then(|r| r.fiox.as_ref()) {
                o.s("kernel", &m.kernel).s("cpu", &m.cpu).u("cpus", m.cpus);
            }
            V::O(o)
        })
        .collect();
    fx.s("version", &c.version).put("hosts", V::A(hosts));
    fx.u("start_skew_ns", c.start_skew_ns.unwrap_or(0)).u("skew_bound_ns", c.skew_bound_ns);
    let groups = c.merged_groups.iter().flat_map(|g| g.jobs.iter().map(move |j| V::O(job(g, j, plus, None)))).collect();
    fx.put("merged_groups", V::A(groups));
    if let Some(f) = &c.first_done {
        let mut o = Obj::default();
        o.s("host", &f.host).u("runtime_ms", f.runtime_ms);
        for (d, name) in ["read", "write", "trim"].iter().enumerate() {
            let mut x = Obj::default();
            x.u("io_bytes", f.io_bytes[d]).u("total_ios", f.ios[d]).u("bw_bytes", f.bw_bytes[d]).u("iops", f.iops[d]);
            o.o(name, x);
        }
        fx.o("first_done", o);
    }
    fx.u("degraded", c.degraded.is_some() as u64);
    if let Some(d) = &c.degraded {
        fx.s("degraded_reason", d);
    }
    if let Some(r) = &c.repeat {
        fx.o("repeat_until", repeat_obj(r));
    }
    top.o("fiox", fx);
    let doc = V::O(top);
    if line {
        if let Some(v) = strict(&doc) {
            return v.to_string() + "\n";
        }
    }
    print(&doc)
}

/// fio 3.33's `steadystate` block (observed): the limit and the criterion as `%f` text with a
/// `%` for percentage limits, bandwidth in bytes per second, the means truncated to integers.
fn steady(ss: &SteadyReport) -> Obj {
    let pct = if ss.pct { "%" } else { "" };
    let mut o = Obj::default();
    o.s("ss", &format!("{}:{}{pct}", ss.name, cf(ss.limit)))
        .u("duration", ss.duration_s)
        .u("attained", ss.attained as u64)
        // fio keeps this figure in single precision: a slope of -202315339 prints as
        // -202315344.000000 here but exactly under `slope` (observed).
        .s("criterion", &format!("{}{pct}", cf(ss.criterion as f32 as f64)))
        .f("max_deviation", ss.max_deviation)
        .f("slope", ss.slope);
    let mut data = Obj::default();
    let list = |v: &[u64]| V::A(v.iter().map(|&x| V::U(x)).collect());
    data.u("bw_mean", ss.bw_mean as u64)
        .u("iops_mean", ss.iops_mean as u64)
        .put("iops", list(&ss.iops))
        .put("bw", list(&ss.bw));
    o.o("data", data);
    o
}

fn sync_obj(j: &JobReport, plus: bool) -> Obj {
    let mut sync = Obj::default();
    let sync_pct = calc::sync_hist(j).map(|h| (h, &j.percentile_list[..]));
    sync.u("total_ios", j.ts.sync_ios).o("lat_ns", lat_obj(&j.ts.sync_lat, sync_pct, plus));
    sync
}

fn table(labels: &[&str], values: &[f64]) -> Obj {
    let mut o = Obj::default();
    for (l, v) in labels.iter().zip(values) {
        o.f(l, *v);
    }
    o
}

fn dir(r: &RunReport, j: &JobReport, ddir: usize, plus: bool) -> Obj {
    let d = j.ts.dir(ddir);
    let bw_bytes = calc::bw_bytes(d);
    let mut o = Obj::default();
    o.u("io_bytes", d.io_bytes)
        .u("io_kbytes", d.io_bytes >> 10)
        .u("bw_bytes", bw_bytes)
        .u("bw", bw_bytes / 1024)
        .f("iops", calc::iops_f(d))
        .u("runtime", d.runtime_ms)
        .u("total_ios", d.total_ios)
        .u("short_ios", d.short_ios)
        .u("drop_ios", d.drop_ios);
    let slat = calc::slat(j, ddir);
    let kinds =
        [("slat_ns", &slat, LatKind::Slat), ("clat_ns", &d.clat, LatKind::Clat), ("lat_ns", &d.lat, LatKind::Lat)];
    for (key, st, kind) in kinds {
        let pct = calc::enabled_hist(j, ddir, kind).map(|h| (h, &j.percentile_list[..]));
        o.o(key, lat_obj(st, pct, plus));
    }
    let prios = calc::shown_prios(j, ddir);
    if !prios.list.is_empty() {
        let list = prios
            .list
            .iter()
            .map(|p| {
                let mut e = Obj::default();
                e.u("prioclass", p.class() as u64).u("prio", p.level() as u64);
                let pct = prios.percentiles.then(|| (&p.hist, &j.percentile_list[..]));
                e.o(&format!("{}_ns", prios.kind), lat_obj(&p.lat, pct, plus));
                V::O(e)
            })
            .collect();
        o.put("prios", V::A(list));
    }
    samples(&mut o, "bw", &d.bw, Some(calc::bw_agg_pct(r, j, ddir)), "bw_dev");
    samples(&mut o, "iops", &d.iops, None, "iops_stddev");
    // fiox's addition for paced jobs only, last so that fio's keys keep their order: the
    // intended latency (from when each I/O was due), shaped as `clat_ns`.
    if let Some(h) = calc::intended_hist(d) {
        o.o("fiox_intended_lat_ns", lat_obj(&d.intended, Some((h, &j.percentile_list[..])), plus));
    }
    // `fiox s3 bench` on several hosts: each operation's time to first byte, under the key
    // the bench's own JSON gives it.
    if let Some(h) = calc::ttfb_hist(d) {
        o.o("ttfb_ns", lat_obj(&d.ttfb, Some((h, &j.percentile_list[..])), plus));
    }
    o
}

/// `{min, max, mean, stddev, N[, percentile{...}][, bins{...}]}`.
fn lat_obj(st: &IoStat, pct: Option<(&fiox_stats::LatHist, &[f64])>, plus: bool) -> Obj {
    let mut o = Obj::default();
    o.u("min", st.min()).u("max", st.max).f("mean", st.mean()).f("stddev", st.stddev());
    o.u("N", st.samples);
    if let Some((h, list)) = pct {
        let mut p = Obj::default();
        for (pc, v) in h.percentiles(list) {
            p.u(&cf(pc), v);
        }
        o.o("percentile", p);
        if plus {
            let mut b = Obj::default();
            for (v, c) in h.bins() {
                b.u(&v.to_string(), c);
            }
            o.o("bins", b);
        }
    }
    o
}

/// `bw_min, bw_max, bw_agg, bw_mean, bw_dev, bw_samples` or the `iops_` equivalents (which
/// have no `agg` and call the deviation `iops_stddev`).
fn samples(o: &mut Obj, prefix: &str, s: &SampleStat, agg: Option<f64>, dev_key: &str) {
    o.u(&format!("{prefix}_min"), s.min).u(&format!("{prefix}_max"), s.max);
    if let Some(a) = agg {
        o.f(&format!("{prefix}_agg"), a);
    }
    o.f(&format!("{prefix}_mean"), s.mean).f(dev_key, s.stddev()).u(&format!("{prefix}_samples"), s.samples);
}

/// fiox's addition, last in the document so fio parsers that ignore unknown keys are unaffected.
fn manifest(m: &crate::model::Manifest) -> Obj {
    let mut o = Obj::default();
    o.s("version", &m.version).s("kernel", &m.kernel).s("cpu", &m.cpu).u("cpus", m.cpus).s("clock", &m.clock);
    let devices = m
        .devices
        .iter()
        .map(|d| {
            let mut x = Obj::default();
            x.s("name", &d.name)
                .s("model", &d.model)
                .s("scheduler", &d.scheduler)
                .u("rotational", d.rotational as u64)
                .u("logical_block_size", d.logical_block_size)
                .u("physical_block_size", d.physical_block_size)
                .u("nr_requests", d.nr_requests)
                .u("read_ahead_kb", d.read_ahead_kb)
                .s("write_cache", &d.write_cache);
            let mounts = d
                .mounts
                .iter()
                .map(|(mp, fs, opts)| {
                    let mut y = Obj::default();
                    y.s("mountpoint", mp).s("fstype", fs).s("options", opts);
                    V::O(y)
                })
                .collect();
            x.put("mounts", V::A(mounts));
            V::O(x)
        })
        .collect();
    o.put("devices", V::A(devices));
    let seeds = m
        .seeds
        .iter()
        .map(|(job, clone, seed)| {
            let mut x = Obj::default();
            x.s("job", job).u("clone", *clone as u64).u("seed", *seed);
            V::O(x)
        })
        .collect();
    o.put("seeds", V::A(seeds));
    let overhead = m
        .overhead
        .iter()
        .map(|w| {
            let mut x = Obj::default();
            x.s("job", &w.job)
                .f("usr_ns_per_io", w.usr_ns_per_io)
                .f("sys_ns_per_io", w.sys_ns_per_io)
                .f("busy_pct", w.busy_pct)
                .u("saturated", w.saturated() as u64);
            V::O(x)
        })
        .collect();
    o.put("self_overhead", V::A(overhead));
    o.put("warnings", V::A(m.warnings.iter().map(|w| V::S(w.clone())).collect()));
    if !m.ceph.is_empty() {
        o.put("ceph", V::A(m.ceph.iter().map(|c| V::O(ceph(c))).collect()));
    }
    if !m.engine_setup.is_empty() {
        let setups = m
            .engine_setup
            .iter()
            .map(|e| {
                let mut x = Obj::default();
                x.s("job", &e.job).u("clone", e.clone as u64).s("engine", &e.engine);
                x.put("features", V::A(e.features.iter().map(|f| V::S(f.clone())).collect()));
                V::O(x)
            })
            .collect();
        o.put("engine_setup", V::A(setups));
    }
    if let Some(r) = &m.repeat {
        o.o("repeat_until", repeat_obj(r));
    }
    o
}

/// `fiox.repeat_until`: `--repeat-until`'s runs, their figures and the verdict.
fn repeat_obj(r: &crate::model::RepeatSummary) -> Obj {
    let mut x = Obj::default();
    x.s("metric", &r.metric)
        .s("unit", &r.unit)
        .f("bound_pct", r.bound_pct)
        .u("runs", r.values.len() as u64)
        .u("max_runs", r.max_runs as u64)
        .f("mean", r.mean)
        .f("ci95", r.ci95)
        .f("ci95_pct", r.ci95_pct)
        .u("met", r.met as u64);
    x.put("values", V::A(r.values.iter().map(|&v| V::F(v)).collect()));
    x
}

/// A Ceph job's manifest entry (`fiox.ceph[]`).
fn ceph(c: &crate::model::CephManifest) -> Obj {
    let strings = |v: &[String]| V::A(v.iter().map(|s| V::S(s.clone())).collect());
    let mut o = Obj::default();
    o.s("job", &c.job)
        .s("engine", &c.engine)
        .s("rados_version", &c.rados_version)
        .s("rbd_version", &c.rbd_version)
        .s("fsid", &c.fsid)
        .s("conf", &c.conf)
        .s("client", &c.client)
        .s("pool", &c.pool)
        .s("namespace", &c.namespace);
    if let Some(i) = &c.image {
        let mut x = Obj::default();
        x.s("name", &i.name)
            .u("size", i.size)
            .u("order", i.order as u64)
            .u("object_size", i.object_size)
            .s("block_name_prefix", &i.block_name_prefix)
            .u("features", i.features)
            .put("feature_names", strings(&i.feature_names))
            .u("stripe_unit", i.stripe_unit)
            .u("stripe_count", i.stripe_count);
        o.o("image", x);
    }
    if !c.rbd_cache.is_empty() {
        let mut x = Obj::default();
        for (k, v) in &c.rbd_cache {
            x.s(k, v);
        }
        o.o("rbd_cache", x);
    }
    if !c.object_crossing_share.is_empty() {
        let mut x = Obj::default();
        for (d, v) in &c.object_crossing_share {
            x.f(d, *v);
        }
        o.o("object_crossing_share", x);
    }
    if let Some(u) = c.unwritten_read_share {
        o.f("unwritten_read_share", u);
    }
    if let Some(b) = &c.lock_owners_before {
        o.put("lock_owners_before", strings(b));
    }
    if let Some(a) = &c.lock_owners_after {
        o.put("lock_owners_after", strings(a));
    }
    if let Some(x) = &c.objects {
        let mut y = Obj::default();
        y.u("named", x.named)
            .u("existed_before", x.existed_before)
            .u("created", x.created)
            .u("removed", x.removed)
            .u("left", x.left)
            .u("left_bytes", x.left_bytes);
        o.o("objects", y);
    }
    if let Some(e) = &c.after_error {
        o.s("after_error", e);
    }
    o
}

fn disk(d: &DiskUtil) -> Obj {
    let mut o = Obj::default();
    o.s("name", &d.name)
        .u("read_ios", d.read_ios)
        .u("write_ios", d.write_ios)
        .u("read_merges", d.read_merges)
        .u("write_merges", d.write_merges)
        .u("read_ticks", d.read_ticks)
        .u("write_ticks", d.write_ticks)
        .u("in_queue", d.in_queue)
        .f("util", d.util);
    if let Some(a) = &d.aggr {
        // fio 3.33 spells one key in the singular: `aggr_write_merge`.
        o.u("aggr_read_ios", a.read_ios)
            .u("aggr_write_ios", a.write_ios)
            .u("aggr_read_merges", a.read_merges)
            .u("aggr_write_merge", a.write_merges)
            .u("aggr_read_ticks", a.read_ticks)
            .u("aggr_write_ticks", a.write_ticks)
            .u("aggr_in_queue", a.in_queue)
            .f("aggr_util", a.util);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{read_reference, reference_report, simple_report, REFERENCE_JSON};
    use serde_json::Value;

    /// The key structure of a document, recursively and in order, ignoring values and the
    /// per-bucket keys of `bins` (which depend on the latencies).
    fn shape(v: &Value, path: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                for (k, v) in o {
                    let p = format!("{path}/{k}");
                    out.push(p.clone());
                    if k != "bins" {
                        shape(v, &p, out);
                    }
                }
            }
            Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    shape(v, &format!("{path}[{i}]"), out);
                }
            }
            _ => {}
        }
    }

    fn keys(text: &str) -> Vec<String> {
        let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{text}"));
        let mut out = Vec::new();
        shape(&v, "", &mut out);
        out
    }

    #[test]
    fn reference_key_structure() {
        let want = keys(&read_reference(REFERENCE_JSON));
        let got = keys(&render(&reference_report(), true));
        assert!(want.len() > 200, "the reference file looks truncated");
        assert_eq!(got, want);
    }

    /// Line for line the same text as fio's json+, printer style included, except the
    /// latency means and deviations (which the rebuilt report cannot hold) and `bw_agg`
    /// (fio divides by an aggregate computed from microsecond runtimes).
    #[test]
    fn reference_text() {
        let want = read_reference(REFERENCE_JSON);
        let got = render(&reference_report(), true);
        assert!(got.ends_with("}\n") && want.ends_with("}\n"));
        let (got, want): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let key = w.trim_start().split(" : ").next().unwrap_or("");
            match key {
                "\"mean\"" | "\"stddev\"" => {
                    assert!(g.starts_with(&w[..w.find(':').unwrap()]), "line {i}: {g}")
                }
                "\"bw_agg\"" => {
                    let num = |l: &str| l.split(" : ").nth(1).unwrap().trim_end_matches(',').parse::<f64>().unwrap();
                    assert!((num(g) - num(w)).abs() < 0.01, "line {i}: {g} vs {w}");
                }
                _ => assert_eq!(g, w, "line {i}"),
            }
        }
    }

    /// A paced job's directions end with `fiox_intended_lat_ns`, shaped as `clat_ns`
    /// (bins under JSON+); an unpaced job's have no such key.
    #[test]
    fn intended_latency_only_for_paced_jobs() {
        let mut r = simple_report();
        assert!(!render(&r, true).contains("intended"));
        let d = &mut r.jobs[0].ts.dirs[0];
        let mut h = fiox_stats::LatHist::default();
        for v in [1_000_000, 2_000_000, 900_000_000] {
            h.add(v);
            d.intended.add(v);
        }
        d.intended_hist = Some(h);
        for plus in [false, true] {
            let out: Value = serde_json::from_str(&render(&r, plus)).unwrap();
            let read = out["jobs"][0]["read"].as_object().unwrap();
            assert_eq!(read.keys().next_back().map(|k| k.as_str()), Some("fiox_intended_lat_ns"));
            let (i, c) = (&read["fiox_intended_lat_ns"], &read["clat_ns"]);
            let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(i), keys(c), "plus {plus}");
            assert_eq!(keys(&i["percentile"]), keys(&c["percentile"]));
            assert_eq!(i["max"], 900_000_000);
            assert!(out["jobs"][0]["write"].get("fiox_intended_lat_ns").is_none());
        }
    }

    #[test]
    fn known_job() {
        let r = simple_report();
        let out = render(&r, false);
        assert!(out.starts_with(
            "{\n  \"fio version\" : \"fio-3.33\",\n  \"timestamp\" : 1795244991,\n  \"timestamp_ms\" : 1795244991442,\n  \"time\" : \"Sat Nov 21 07:09:51 2026\",\n  \"jobs\" : [\n    {\n      \"jobname\" : \"known\",\n"
        ), "{out}");
        assert!(out.contains(
            "      \"job options\" : {\n        \"rw\" : \"randrw\",\n        \"bs\" : \"4k\"\n      },\n      \"read\" : {\n        \"io_bytes\" : 4096000,\n        \"io_kbytes\" : 4000,\n        \"bw_bytes\" : 4096000,\n        \"bw\" : 4000,\n        \"iops\" : 1000.000000,\n        \"runtime\" : 1000,\n"
        ), "{out}");
        assert!(out.contains(
            "        \"slat_ns\" : {\n          \"min\" : 3007,\n          \"max\" : 10000,\n          \"mean\" : 6503.500000,\n          \"stddev\" : 2021.736053,\n          \"N\" : 1000\n        },\n"
        ), "{out}");
        assert!(out.contains("          \"N\" : 1000,\n          \"percentile\" : {\n            \"1.000000\" : 10048,\n            \"5.000000\" : 49920,\n"), "{out}");
        assert!(
            out.contains("            \"99.990000\" : 1003520\n          }\n        },\n        \"lat_ns\" : {\n"),
            "{out}"
        );
        assert!(!out.contains("bins"));
        assert!(out.contains("        \"bw_agg\" : 100.000000,\n        \"bw_mean\" : 4000.000000,\n        \"bw_dev\" : 100.000000,\n        \"bw_samples\" : 3,\n        \"iops_min\" : 975,\n"), "{out}");
        assert!(
            out.contains("      \"latency_us\" : {\n        \"2\" : 0.099010,\n        \"4\" : 0.198020,\n"),
            "{out}"
        );
        assert!(out.contains("      \"usr_cpu\" : 10.000000,\n      \"sys_cpu\" : 25.000000,\n"), "{out}");
        // The idle job: no options, an error, and its description escaped fio's way.
        assert!(out.contains("      \"jobname\" : \"idle\",\n      \"groupid\" : 0,\n      \"error\" : 21,\n      \"eta\" : 2147483647,\n      \"elapsed\" : 0,\n      \"read\" : {\n"), "{out}");
        assert!(out.contains("      \"latency_window\" : 0,\n      \"desc\" : \"does \\\"nothing\\\" \\\\ at all\"\n    }\n  ],\n  \"disk_util\" : [\n    {\n      \"name\" : \"vda\",\n"), "{out}");
        assert!(out.ends_with("      \"util\" : 50.000000\n    }\n  ]\n}\n"), "{out}");
        assert!(!out.contains("global options"));
        serde_json::from_str::<Value>(&out).expect("valid JSON");
    }

    /// JSON+ adds `bins` next to each `percentile`; slat and lat get theirs only when their
    /// percentiles are enabled; engines without slat report an empty slat.
    #[test]
    fn plus_bins_and_enabled_percentiles() {
        let mut r = simple_report();
        let out: Value = serde_json::from_str(&render(&r, true)).unwrap();
        let read = &out["jobs"][0]["read"];
        let bins = read["clat_ns"]["bins"].as_object().unwrap();
        assert_eq!(bins.values().map(|v| v.as_u64().unwrap()).sum::<u64>(), 1000);
        assert_eq!(bins["10048"], 1);
        assert_eq!(out["jobs"][0]["write"]["clat_ns"]["bins"]["10048"], 10);
        assert!(read["slat_ns"].get("percentile").is_none());
        assert!(out["jobs"][0]["trim"]["clat_ns"].get("percentile").is_none());
        assert!(out["jobs"][1]["read"]["clat_ns"].get("bins").is_none());

        r.jobs[0].slat_percentiles = true;
        r.jobs[0].lat_percentiles = true;
        r.jobs[0].clat_percentiles = false;
        r.jobs[0].percentile_list = vec![99.0, 50.0];
        r.global_options = Some(vec![("ioengine".into(), "null".into())]);
        let out: Value = serde_json::from_str(&render(&r, true)).unwrap();
        assert_eq!(out["global options"]["ioengine"], "null");
        let read = &out["jobs"][0]["read"];
        let p: Vec<&String> = read["slat_ns"]["percentile"].as_object().unwrap().keys().collect();
        assert_eq!(p, ["50.000000", "99.000000"]);
        assert_eq!(read["lat_ns"]["percentile"]["50.000000"], 505856);
        assert!(read["lat_ns"].get("bins").is_some());
        assert!(read["clat_ns"].get("percentile").is_none() && read["clat_ns"].get("bins").is_none());

        r.jobs[0].has_slat = false;
        let out: Value = serde_json::from_str(&render(&r, true)).unwrap();
        let slat = &out["jobs"][0]["read"]["slat_ns"];
        assert_eq!((slat["N"].as_u64(), slat["min"].as_u64()), (Some(0), Some(0)));
        assert!(slat.get("percentile").is_none());
    }

    #[test]
    fn printer_style() {
        let mut o = Obj::default();
        o.s("a\"b\\c", "x\ty\"").put("n", V::I(-3)).f("f", 1.5).put("e", V::A(vec![V::U(1), V::U(2)]));
        let mut s = String::new();
        write_val(&mut s, &V::O(o), 0);
        assert_eq!(s, "{\n  \"a\\\"b\\\\c\" : \"x\ty\\\"\",\n  \"n\" : -3,\n  \"f\" : 1.500000,\n  \"e\" : [\n    1,\n    2\n  ]\n}");
    }

    /// `--json-lines` is the document serde_json's compact writer makes of the pretty one (that
    /// is how the form began, and what scripts read), without printing and parsing it.
    #[test]
    fn one_line_form() {
        let mut r = simple_report();
        // An option set twice, as `--bs=4k --bs=8k` echoes it.
        r.jobs[0].job_options.push(("bs".into(), "8k".into()));
        for plus in [false, true] {
            let line = render_line(&r, plus);
            let pretty: Value = serde_json::from_str(&render(&r, plus)).unwrap();
            assert_eq!(line, pretty.to_string() + "\n");
            assert_eq!(line.lines().count(), 1);
        }
        let line = render_line(&r, false);
        assert!(line.contains(r#""job options":{"rw":"randrw","bs":"8k"},"read":{"io_bytes":4096000,"#), "{line}");
        assert!(line.contains(r#""iops":1000.0,"#) && line.contains(r#""latency_us":{"2":0.09901,"#), "{line}");
        assert!(line.contains(r#""desc":"does \"nothing\" \\ at all""#), "{line}");
        // Text fio's printer makes that is not strict JSON stays as fio prints it.
        r.jobs[1].description = Some("tab\there".into());
        assert_eq!(render_line(&r, false), render(&r, false));
        r.jobs[1].description = None;
        r.disks[0].util = f64::NAN;
        assert!(render(&r, false).contains("\"util\" : nan"));
        assert_eq!(render_line(&r, false), render(&r, false));
    }
}
