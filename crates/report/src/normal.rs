//! fio 3.33's normal (human-readable) output: the job header lines printed before a run, the
//! `Starting N processes` line, and everything printed after it (per-job reports, the
//! `Run status group` summaries and the disk statistics).
//!
//! Layout, widths and unit choices follow fio 3.33's observed output: the reference run
//! `fio-3.33-example.txt`, kept in `shared/reference/` beside the repository (the tests compare
//! against it), and runs of fio 3.33 itself.

use std::fmt::Write;

use fiox_stats::{IoStat, LatHist, SampleStat, ThreadStat, LAT_MS_BUCKETS, LAT_NS_BUCKETS};

use crate::calc::{self, LatKind};
use crate::model::{DiskUtil, JobReport, RunReport, Units};
use crate::units::{self, cfmt, num2str, percentile_unit, stat_lat_unit, LatUnit, Unit};

/// What the line printed for each job before the run is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct JobHeader<'a> {
    pub name: &'a str,
    pub groupid: u32,
    /// The `rw` setting as fio names it: `read`, `randrw`, `rw`, `trimwrite`, ...
    pub rw: &'a str,
    /// Minimum and maximum block size for reads, writes and trims, in bytes.
    pub bs: [(u64, u64); 3],
    pub ioengine: &'a str,
    pub iodepth: u32,
    /// fio prints the header once per job section and adds a `...` line when the job is
    /// cloned (`numjobs` > 1).
    pub numjobs: u32,
}

/// The line(s) fio prints for a job section before starting it:
/// `name: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B,
/// ioengine=libaio, iodepth=8`, followed by `...` when `numjobs` > 1. Block sizes use the
/// job's significant figures and `kb_base` (`12.3kB` with `kb_base=1000`). Ends with a
/// newline.
pub fn job_header(h: &JobHeader<'_>, units: &Units) -> String {
    let bs = |i: usize| {
        let (lo, hi) = h.bs[i];
        format!("{}-{}", units::size(lo, units), units::size(hi, units))
    };
    let mut s = format!(
        "{}: (g={}): rw={}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}\n",
        h.name,
        h.groupid,
        h.rw,
        bs(0),
        bs(1),
        bs(2),
        h.ioengine,
        h.iodepth
    );
    if h.numjobs > 1 {
        s.push_str("...\n");
    }
    s
}

/// `Starting 2 processes`, `Starting 1 thread`, or with both kinds
/// `Starting 1 thread and 2 processes` (threads first, singular for one). Ends with a newline.
pub fn starting_line(processes: u32, threads: u32) -> String {
    let procs = format!("{} process{}", processes, if processes == 1 { "" } else { "es" });
    let thr = format!("{} thread{}", threads, if threads == 1 { "" } else { "s" });
    match (processes, threads) {
        (_, 0) => format!("Starting {procs}\n"),
        (0, _) => format!("Starting {thr}\n"),
        _ => format!("Starting {thr} and {procs}\n"),
    }
}

/// Everything fio prints once the run is over: a blank line, each job's report (jobs that
/// issued no I/O are skipped), a `Run status group N (all jobs):` section per group, each
/// preceded by a blank line, and the `Disk stats (read/write):` section when there are
/// disks.
pub fn render(r: &RunReport) -> String {
    let mut s = String::from("\n");
    for job in &r.jobs {
        s.push_str(&job_report(r, job));
    }
    for g in &r.groups {
        let _ = writeln!(s, "\nRun status group {} (all jobs):", g.groupid);
        let units = r.jobs.iter().find(|j| j.groupid == g.groupid).map(|j| j.units.clone());
        let units = units.unwrap_or_default();
        for &(d, name) in calc::report_dirs(g.unified) {
            let label = name.to_uppercase();
            if g.io_bytes[d] == 0 && g.max_run[d] == 0 {
                continue;
            }
            let (agg1, agg2) = units::bw_pair(g.agg_bw[d], &units);
            let (min1, min2) = units::bw_pair(g.min_bw[d], &units);
            let (max1, max2) = units::bw_pair(g.max_bw[d], &units);
            let (io1, io2) = units::size_pair(g.io_bytes[d], &units);
            let _ = writeln!(
                s,
                "{label:>7}: bw={agg1} ({agg2}), {min1}-{max1} ({min2}-{max2}), io={io1} ({io2}), run={}-{}msec",
                g.min_run[d], g.max_run[d]
            );
        }
    }
    if !r.disks.is_empty() {
        s.push_str("\nDisk stats (read/write):\n");
        for disk in &r.disks {
            s.push_str(&disk_line(disk));
        }
    }
    if let Some(m) = &r.fiox {
        s.push_str(&fiox_section(m));
    }
    s
}

/// A multi-host run after it ended (the probe lines and the hosts' job headers were printed
/// before it started): each host's report in host-list order, introduced by `<name> ` as fio
/// prefixes a host's text, then `All clients` (with percentiles and units, which fio 3.33's
/// lacks; labelled when a host was lost), then fiox's `Hosts:` table (status, clock offset,
/// round trip, start, runtime).
pub fn render_clients(c: &crate::model::ClientsReport) -> String {
    let mut s = String::new();
    for h in &c.hosts {
        let Some(r) = &h.report else { continue };
        let mut r = r.clone();
        r.fiox = None;
        let _ = write!(s, "<{}> ", h.name);
        if h.partial {
            let _ = write!(
                s,
                "(partial: lost{} at {:.1} s; figures up to its last interval report)",
                h.error.as_deref().map(|e| format!(": {e},")).unwrap_or_default().trim_end_matches(','),
                h.failed_at_s.unwrap_or(0.0)
            );
        }
        s.push_str(&render(&r));
    }
    if let Some(all) = &c.all {
        for job in &all.jobs {
            let mut block = job_report(all, job);
            if let Some(d) = &c.degraded {
                // The first line names the merge; say right there that it is not over every host.
                if let Some(end) = block.find(':') {
                    block.insert_str(end, &format!(" (degraded: {d})"));
                }
            }
            s.push_str(&block);
        }
    }
    s.push_str(&hosts_table(c));
    if let Some(r) = &c.repeat {
        s.push_str(&repeat_lines(r));
    }
    s
}

fn us(ns: i64) -> String {
    let a = ns.unsigned_abs();
    let sign = if ns < 0 { "-" } else { "+" };
    if a >= 10_000_000 {
        format!("{sign}{:.1}ms", a as f64 / 1e6)
    } else {
        format!("{sign}{}us", a / 1000)
    }
}

/// fiox's table of hosts after a multi-host run.
fn hosts_table(c: &crate::model::ClientsReport) -> String {
    let count = |st: &str| c.hosts.iter().filter(|h| h.status == st).count();
    let mut s = format!("\nHosts: {} ok, {} failed", count("ok"), count("failed"));
    if count("running") > 0 {
        let _ = write!(s, ", {} running", count("running"));
    }
    if let Some(skew) = c.start_skew_ns {
        let _ = write!(s, "; start skew {}us (bound ±{}us)", skew / 1000, c.skew_bound_ns / 1000);
    }
    s.push('\n');
    let width = c.hosts.iter().map(|h| h.name.len()).max().unwrap_or(0);
    for h in &c.hosts {
        let _ = write!(s, "  {:width$}  {:6}", h.name, h.status);
        if let Some(st) = h.start_ns {
            let _ = write!(s, " start {}", us(st));
        }
        let _ = write!(s, " offset {} rtt {}us", us(h.clock_offset_ns), h.rtt_ns / 1000);
        if h.wallclock_offset_ns.unsigned_abs() >= 1_000_000_000 {
            let _ = write!(s, " wallclock {:+.1}s", h.wallclock_offset_ns as f64 / 1e9);
        }
        let _ = write!(s, " runtime {}ms", h.runtime_ms);
        if h.late_start {
            s.push_str(" late-start");
        }
        if let Some(e) = &h.error {
            let _ = write!(s, " ({e})");
        }
        s.push('\n');
    }
    s
}

/// fiox's additions, after everything fio prints: its own CPU cost per I/O (and whether a worker
/// was the bottleneck) and any result that looks wrong.
fn fiox_section(m: &crate::model::Manifest) -> String {
    let mut s = String::from("\nfiox (tool overhead, per I/O):\n");
    let ns = |v: f64| if v >= 10_000.0 { format!("{:.1}us", v / 1000.0) } else { format!("{v:.0}ns") };
    for o in &m.overhead {
        let _ = write!(
            s,
            "  {}: usr={}, sys={}, busy={}% of a core",
            o.job,
            ns(o.usr_ns_per_io),
            ns(o.sys_ns_per_io),
            cfmt(o.busy_pct, 1, 1)
        );
        if o.saturated() {
            s.push_str(" - saturated: this result may be limited by fiox, not the device");
        }
        s.push('\n');
    }
    for c in &m.ceph {
        s.push_str(&ceph_lines(c));
    }
    for w in &m.warnings {
        let _ = writeln!(s, "fiox warning: {w}");
    }
    if let Some(r) = &m.repeat {
        s.push_str(&repeat_lines(r));
    }
    s
}

/// A Ceph job's manifest in the `fiox` section: what the JSON `fiox.ceph[]` entry holds.
fn ceph_lines(c: &crate::model::CephManifest) -> String {
    let mut s = String::new();
    let rbd = if c.rbd_version.is_empty() { String::new() } else { format!(", librbd {}", c.rbd_version) };
    let conf = if c.conf.is_empty() { "no configuration file" } else { &c.conf };
    let ns = if c.namespace.is_empty() { String::new() } else { format!(", namespace {}", c.namespace) };
    let _ = writeln!(
        s,
        "fiox ceph: {} ({}): librados {}{rbd}, fsid {}, {conf}, {}, pool {}{ns}",
        c.job, c.engine, c.rados_version, c.fsid, c.client, c.pool
    );
    if let Some(i) = &c.image {
        let _ = writeln!(
            s,
            "  image {}: {} bytes, order {} ({}-byte objects), features {}, stripe unit {} count {}",
            i.name,
            i.size,
            i.order,
            i.object_size,
            if i.feature_names.is_empty() { "none".to_string() } else { i.feature_names.join(",") },
            i.stripe_unit,
            i.stripe_count
        );
    }
    if !c.rbd_cache.is_empty() {
        let kv: Vec<String> = c.rbd_cache.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(s, "  {}", kv.join(", "));
    }
    let mut facts = Vec::new();
    for (d, v) in &c.object_crossing_share {
        facts.push(format!("{d} I/Os crossing an object boundary: {}%", cfmt(v * 100.0, 1, 1)));
    }
    if let Some(u) = c.unwritten_read_share {
        facts.push(format!("read range never written: {}%", cfmt(u * 100.0, 1, 1)));
    }
    if !facts.is_empty() {
        let _ = writeln!(s, "  {}", facts.join("; "));
    }
    if c.lock_owners_before.is_some() || c.lock_owners_after.is_some() {
        let show = |o: &Option<Vec<String>>| match o {
            None => "unknown".to_string(),
            Some(v) if v.is_empty() => "none".to_string(),
            Some(v) => v.join(" "),
        };
        let _ = writeln!(
            s,
            "  exclusive lock owner: before {}, after {}",
            show(&c.lock_owners_before),
            show(&c.lock_owners_after)
        );
    }
    if let Some(o) = &c.objects {
        let _ = writeln!(
            s,
            "  objects: {} named, {} existed before, {} created, {} removed, {} left ({} bytes)",
            o.named, o.existed_before, o.created, o.removed, o.left, o.left_bytes
        );
    }
    if let Some(e) = &c.after_error {
        let _ = writeln!(s, "  after the run: {e}");
    }
    s
}

/// `--repeat-until`'s summary: the runs, the mean and its 95% confidence interval, and whether
/// the bound was reached.
pub fn repeat_lines(r: &crate::model::RepeatSummary) -> String {
    let verdict = if r.met {
        "within the bound".to_string()
    } else {
        format!("NOT within the bound after {} runs (--repeat-max)", r.values.len())
    };
    let values: Vec<String> = r.values.iter().map(|v| format!("{v:.2}")).collect();
    format!(
        "\nfiox repeat-until {}:{}%: {} runs, mean={:.2} {}, 95% CI=±{:.2} (±{:.2}%): {verdict}\n  runs: {}\n",
        r.metric,
        r.bound_pct,
        r.values.len(),
        r.mean,
        r.unit,
        r.ci95,
        r.ci95_pct,
        values.join(", ")
    )
}

fn disk_line(d: &DiskUtil) -> String {
    // A stacked device is indented further and carries its slaves' figures.
    let indent = if d.aggr.is_some() { "    " } else { "  " };
    let mut line = format!(
        "{indent}{}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={}%",
        d.name,
        d.read_ios,
        d.write_ios,
        d.read_merges,
        d.write_merges,
        d.read_ticks,
        d.write_ticks,
        d.in_queue,
        cfmt(d.util, 3, 2)
    );
    if let Some(a) = &d.aggr {
        line.push_str(&format!(
            ", aggrios={}/{}, aggrmerge={}/{}, aggrticks={}/{}, aggrin_queue={}, aggrutil={}%",
            a.read_ios,
            a.write_ios,
            a.read_merges,
            a.write_merges,
            a.read_ticks,
            a.write_ticks,
            a.in_queue,
            cfmt(a.util, 3, 2)
        ));
    }
    line.push('\n');
    line
}

/// Whether fio prints a report for this job: not when it issued no I/O at all (for example a
/// job that failed while setting up its files), even if it has an error.
fn has_io(ts: &ThreadStat) -> bool {
    ts.dirs.iter().any(|d| d.io_bytes > 0 || d.total_ios > 0) || ts.issued.iter().any(|&n| n > 0)
}

/// One job's report, from its header line to its `latency :` line.
fn job_report(r: &RunReport, job: &JobReport) -> String {
    let ts = &job.ts;
    if !has_io(ts) {
        return String::new();
    }
    let mut s = String::new();
    let err = if job.error != 0 && !job.error_text.is_empty() {
        format!("{:2} ({})", job.error, job.error_text)
    } else {
        format!("{:2}", job.error)
    };
    let _ = writeln!(
        s,
        "{}: (groupid={}, jobs={}): err={}: pid={}: {}",
        job.name,
        job.groupid,
        ts.jobs.max(1),
        err,
        job.pid,
        job.ctime
    );
    if let Some(desc) = job.description.as_deref().filter(|d| !d.is_empty()) {
        let _ = writeln!(s, "  Description  : [{desc}]");
    }
    for &(ddir, name) in calc::report_dirs(job.unified) {
        let d = ts.dir(ddir);
        // A direction with I/Os but neither bytes nor runtime (cpuio's and exec's "I/Os", I/Os
        // that all failed) has no block in fio's report.
        if d.io_bytes > 0 || (d.total_ios > 0 && d.runtime_ms > 0) {
            dir_block(&mut s, r, job, ddir, name);
        }
    }
    lat_buckets(&mut s, ts);
    if ts.sync_lat.samples > 0 {
        s.push_str("  fsync/fdatasync/sync_file_range:\n");
        s.push_str(&stat_line("sync", &ts.sync_lat));
        if let Some(h) = calc::sync_hist(job) {
            s.push_str(&percentile_block("sync", h, &job.percentile_list));
        }
    }
    let _ = writeln!(
        s,
        "  cpu          : usr={}%, sys={}%, ctx={}, majf={}, minf={}",
        cfmt(calc::cpu_pct(ts.usr_us, ts.job_runtime_ms), 3, 2),
        cfmt(calc::cpu_pct(ts.sys_us, ts.job_runtime_ms), 3, 2),
        ts.ctx,
        ts.majf,
        ts.minf
    );
    let depth = calc::depth_pcts(ts);
    let _ = writeln!(s, "  IO depths    : {}", dist(&["1", "2", "4", "8", "16", "32", ">=64"], &depth));
    const BATCH: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
    let _ = writeln!(s, "     submit    : {}", dist(&BATCH, &calc::batch_pcts(&ts.submit_map)));
    let _ = writeln!(s, "     complete  : {}", dist(&BATCH, &calc::batch_pcts(&ts.complete_map)));
    let _ = writeln!(
        s,
        "     issued rwts: total={},{},{},{} short={},{},{},{} dropped={},{},{},{}",
        ts.issued[0],
        ts.issued[1],
        ts.issued[2],
        ts.issued[3],
        ts.short[0],
        ts.short[1],
        ts.short[2],
        ts.short[3],
        ts.dropped[0],
        ts.dropped[1],
        ts.dropped[2],
        ts.dropped[3]
    );
    if job.errors_counted {
        let _ = writeln!(
            s,
            "     errors    : total={}, first_error={}/<{}>",
            ts.total_err,
            ts.first_error,
            crate::units::strerror(ts.first_error)
        );
    }
    let lt = &job.latency_target;
    if !job.aggregate {
        let _ = writeln!(
            s,
            "     latency   : target={}, window={}, percentile={}%, depth={}",
            lt.target_ns,
            lt.window_us,
            cfmt(lt.percentile, 0, 2),
            job.iodepth
        );
    }
    if let Some([unwritten, trimmed, written, trim_failed, write_failed]) = job.ts.block_states {
        // fio 3.33's layout; it prints no percentiles when no block failed.
        s.push_str("  block lifetime percentiles :\n");
        let _ = writeln!(
            s,
            "   |        states               : unwritten={unwritten}, trimmed={trimmed}, written={written}, trim failure={trim_failed}, write failure={write_failed}"
        );
    }
    if let Some(ss) = &job.steady {
        s.push_str(&steady_line(ss, &job.units));
    }
    s
}

/// `  steadystate  : attained=yes, bw=17.8GiB/s (18.6GB/s), iops=4660k, iops mean dev=4.709%`:
/// the window's means, and the criterion with three decimals (fio 3.33, observed).
fn steady_line(ss: &crate::model::SteadyReport, u: &crate::model::Units) -> String {
    let (bw1, bw2) = units::bw_pair(ss.bw_mean as u64, u);
    let iops = num2str(ss.iops_mean as u64, u.sig_figs, 1000, Unit::None);
    let what = match (ss.on_bw(), ss.on_slope()) {
        (false, false) => "iops mean dev",
        (false, true) => "iops slope",
        (true, false) => "bw mean dev",
        (true, true) => "bw slope",
    };
    format!(
        "  steadystate  : attained={}, bw={bw1} ({bw2}), iops={iops}, {what}={}{}\n",
        if ss.attained { "yes" } else { "no" },
        cfmt(ss.criterion, 0, 3),
        if ss.pct { "%" } else { "" }
    )
}

/// `1=0.1%, 2=0.1%, ..., >=64=0.0%`.
fn dist(labels: &[&str], pcts: &[f64]) -> String {
    labels.iter().zip(pcts).map(|(l, p)| format!("{l}={}%", cfmt(*p, 3, 1))).collect::<Vec<_>>().join(", ")
}

/// One direction: the IOPS/BW line, latency lines, percentile blocks, bw and iops samples.
///
/// Under `unified_rw_reporting=both` fio 3.33 prints the `mixed:` line as
/// `IOPS=0, BW=0 (0)(0B/...)` although its JSON has the right figures; fiox prints the figures.
fn dir_block(s: &mut String, r: &RunReport, job: &JobReport, ddir: usize, name: &str) {
    let d = job.ts.dir(ddir);
    let u = &job.units;
    let iops = num2str(calc::iops_u(d), u.sig_figs, 1000, Unit::None);
    let (bw1, bw2) = units::bw_pair(calc::bw_bytes(d), u);
    // fio 3.33 appends the zone reset count to every write line, even without zones.
    let extra = if name == "write" { format!("; {} zone resets", job.ts.zone_resets) } else { String::new() };
    let _ = writeln!(
        s,
        "  {name}: IOPS={iops}, BW={bw1} ({bw2})({}/{}msec){extra}",
        units::size(d.io_bytes, u),
        d.runtime_ms
    );
    let slat = calc::slat(job, ddir);
    if slat.samples > 0 {
        s.push_str(&stat_line("slat", &slat));
    }
    if d.clat.samples > 0 {
        s.push_str(&stat_line("clat", &d.clat));
    }
    if d.lat.samples > 0 {
        s.push_str(&stat_line(" lat", &d.lat));
    }
    let prios = calc::shown_prios(job, ddir);
    for p in &prios.list {
        s.push_str(&stat_line(&format!("{} prio {}/{}", prios.kind, p.class(), p.level()), &p.lat));
    }
    for (kind, name) in [(LatKind::Slat, "slat"), (LatKind::Clat, "clat"), (LatKind::Lat, "lat")] {
        if let Some(h) = calc::enabled_hist(job, ddir, kind) {
            s.push_str(&percentile_block(name, h, &job.percentile_list));
        }
    }
    let prio_total: u64 = prios.list.iter().map(|p| p.lat.samples).sum();
    for p in prios.list.iter().filter(|_| prios.percentiles) {
        let share = p.lat.samples as f64 * 100.0 / prio_total.max(1) as f64;
        let name = format!("{} prio {}/{} ({share:.2}% of IOs)", prios.kind, p.class(), p.level());
        s.push_str(&percentile_block(&name, &p.hist, &job.percentile_list));
    }
    // fiox's addition for paced jobs only: the intended latency, from when each I/O was due
    // by the job's rate (no coordinated omission). Unpaced jobs print fio's lines alone.
    if let Some(h) = calc::intended_hist(d) {
        s.push_str(&stat_line("intended lat", &d.intended));
        s.push_str(&percentile_block("intended lat", h, &job.percentile_list));
    }
    // `fiox s3 bench` on several hosts: the time to the answer's first byte.
    if let Some(h) = calc::ttfb_hist(d) {
        s.push_str(&stat_line("ttfb", &d.ttfb));
        s.push_str(&percentile_block("ttfb", h, &job.percentile_list));
    }

    if d.bw.samples > 0 {
        s.push_str(&bw_line(&d.bw, calc::bw_agg_pct(r, job, ddir), u));
    }
    if d.iops.samples > 0 {
        let i = &d.iops;
        let _ = writeln!(
            s,
            "   iops        : min={:5}, max={:5}, avg={}, stdev={}, samples={}",
            i.min,
            i.max,
            cfmt(i.mean, 5, 2),
            cfmt(i.stddev(), 5, 2),
            i.samples
        );
    }
}

/// `    clat (usec): min=2, max=6044, avg=232.93, stdev=214.08`: the unit is chosen for this
/// line alone; minimum and maximum are truncated to the unit and printed with six
/// significant figures (`max=5882.5k`); `name` is `slat`, `clat`, ` lat` or `sync`.
pub(crate) fn stat_line(name: &str, st: &IoStat) -> String {
    stat_values_line(name, st.min(), st.max, st.mean(), st.stddev())
}

fn stat_values_line(name: &str, min: u64, max: u64, mean: f64, dev: f64) -> String {
    let unit = stat_lat_unit(min, max, dev);
    let div = unit.divisor();
    format!(
        "    {name} ({}): min={}, max={}, avg={}, stdev={}\n",
        unit.name(),
        num2str(min / div, 6, 1000, Unit::None),
        num2str(max / div, 6, 1000, Unit::None),
        cfmt(mean / div as f64, 5, 2),
        cfmt(dev / div as f64, 5, 2)
    )
}

/// The number of decimals a percentile is printed with in the normal output: as many as the
/// list needs to show every entry as written (`99.95` → 2, `99.9999` → 4, `50` → 0). Rust's
/// shortest round-trip formatting recovers the digits the user typed.
fn decimals(p: f64) -> usize {
    let s = format!("{p}");
    s.split_once('.').map_or(0, |(_, f)| f.len())
}

/// A percentile block: a `    clat percentiles (usec):` header and `     |` rows. Values are
/// rounded up to the unit, which is chosen from the smallest and largest percentile; the
/// value column is at least five wide, and as many entries fit on a row as fit in 73
/// columns.
pub(crate) fn percentile_block(name: &str, hist: &LatHist, list: &[f64]) -> String {
    let pcts = hist.percentiles(list);
    if pcts.is_empty() {
        return String::new();
    }
    let minv = pcts.iter().map(|p| p.1).min().unwrap_or(0);
    let maxv = pcts.iter().map(|p| p.1).max().unwrap_or(0);
    let unit = percentile_unit(minv, maxv);
    let div = unit.divisor();
    let scaled: Vec<(f64, u64)> = pcts.iter().map(|&(p, v)| (p, v.div_ceil(div))).collect();
    let maxs = scaled.iter().map(|p| p.1).max().unwrap_or(0);
    let width = maxs.to_string().len().max(5);
    let prec = list.iter().map(|&p| decimals(p)).max().unwrap_or(0);
    let per_line = (73 / (prec + 10 + width)).max(1);
    let entries: Vec<String> =
        scaled.iter().map(|&(p, v)| format!(" {p:>pw$.prec$}th=[{v:>width$}]", pw = prec + 3)).collect();
    let mut s = format!("    {name} percentiles ({}):\n", unit.name());
    let rows: Vec<&[String]> = entries.chunks(per_line).collect();
    for (i, row) in rows.iter().enumerate() {
        let sep = if i + 1 < rows.len() { "," } else { "" };
        let _ = writeln!(s, "     |{}{sep}", row.join(","));
    }
    s
}

/// `   bw (  KiB/s): min=83952, max=95214, per=99.86%, avg=88643.67, stdev=5861.33,
/// samples=3`. Samples are in KiB/s; above `kb_base`² they are divided by `kb_base` and
/// labelled `MiB`. fio 3.33 labels the small unit `kB` with `kb_base=1000` although the
/// figures stay KiB, and always labels the large one `MiB`: kept as observed.
fn bw_line(b: &SampleStat, per: f64, u: &Units) -> String {
    let kb = u.kb_base.max(1);
    let (label, div) = if b.mean > (kb * kb) as f64 {
        ("MiB", kb)
    } else if kb == 1000 {
        ("kB", 1)
    } else {
        ("KiB", 1)
    };
    format!(
        "   bw ({label:>5}/s): min={:5}, max={:5}, per={}%, avg={}, stdev={}, samples={}\n",
        b.min / div,
        b.max / div,
        cfmt(per, 3, 2),
        cfmt(b.mean / div as f64, 5, 2),
        cfmt(b.stddev() / div as f64, 5, 2),
        b.samples
    )
}

/// The completion-latency distribution: `  lat (usec)   : 4=0.01%, 50=0.08%, ...`, five
/// non-zero buckets per line, one run of lines per unit.
fn lat_buckets(s: &mut String, ts: &ThreadStat) {
    let ms_labels: Vec<String> =
        LAT_MS_BUCKETS.iter().map(|b| b.to_string()).chain(std::iter::once(">=2000".to_string())).collect();
    // The nanosecond and microsecond buckets share their bounds (2, 4, 10, ... 1000).
    let sub_ms_labels: Vec<String> = LAT_NS_BUCKETS.iter().map(|b| b.to_string()).collect();
    let groups: [(LatUnit, &[u64], &[String]); 3] = [
        (LatUnit::Nsec, &ts.lat_ns, &sub_ms_labels),
        (LatUnit::Usec, &ts.lat_us, &sub_ms_labels),
        (LatUnit::Msec, &ts.lat_ms, &ms_labels),
    ];
    for (unit, counts, labels) in groups {
        let pcts = calc::lat_pcts(counts, ts);
        let entries: Vec<String> = labels
            .iter()
            .zip(&pcts)
            .filter(|(_, &p)| p > 0.0)
            .map(|(l, &p)| format!("{l}={}%", cfmt(p, 3, 2)))
            .collect();
        for row in entries.chunks(5) {
            let _ = writeln!(s, "  lat ({})   : {}", unit.name(), row.join(", "));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacked_disk_line() {
        let d = DiskUtil {
            name: "dm-0".into(),
            figures: crate::model::DiskFigures {
                read_ios: 10,
                write_ios: 2,
                in_queue: 7,
                util: 12.5,
                ..Default::default()
            },
            aggr: Some(crate::model::DiskAggr { read_ios: 5, write_ios: 1, util: 80.0, ..Default::default() }),
        };
        assert_eq!(
            disk_line(&d),
            "    dm-0: ios=10/2, merge=0/0, ticks=0/0, in_queue=7, util=12.50%, aggrios=5/1, aggrmerge=0/0, \
             aggrticks=0/0, aggrin_queue=0, aggrutil=80.00%\n"
        );
    }
    use crate::testutil::{read_reference, reference_report, simple_report, REFERENCE_TXT};

    fn is_stat_line(l: &str) -> bool {
        ["    slat (", "    clat (", "     lat (", "    sync ("].iter().any(|p| l.starts_with(p))
    }

    /// The reference run rebuilt from its json+ must print exactly fio's normal output, line
    /// for line, except the slat/clat/lat lines: their mean and deviation come from samples
    /// the json does not hold (they are checked with fio's figures in `stat_lines`).
    #[test]
    fn reference_example_matches_fio() {
        let want = read_reference(REFERENCE_TXT);
        let want: Vec<&str> = want.lines().collect();
        let r = reference_report();

        let h = |j: usize, rw, engine, depth| JobHeader {
            name: &r.jobs[j].name,
            groupid: r.jobs[j].groupid,
            rw,
            bs: [(4096, 4096); 3],
            ioengine: engine,
            iodepth: depth,
            numjobs: 1,
        };
        assert_eq!(job_header(&h(0, "randrw", "libaio", 8), &Units::default()), format!("{}\n", want[0]));
        assert_eq!(job_header(&h(1, "read", "psync", 1), &Units::default()), format!("{}\n", want[1]));
        assert_eq!(starting_line(2, 0), format!("{}\n", want[3]));

        let got = render(&r);
        let got: Vec<&str> = got.lines().collect();
        // fio's report starts after the "Laying out IO file" line, with a blank line.
        let want = &want[5..];
        assert_eq!(got.len(), want.len(), "line count\n{}", got.join("\n"));
        let mut stat_lines = 0;
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            if is_stat_line(w) {
                stat_lines += 1;
                assert!(is_stat_line(g), "line {i}: want a latency line like {w:?}, got {g:?}");
                assert_eq!(g[..9], w[..9], "line {i}");
            } else {
                assert_eq!(g, w, "line {i}");
            }
        }
        assert_eq!(stat_lines, 8);
    }

    /// The latency lines of the reference run, from the exact figures in its json.
    #[test]
    fn stat_lines() {
        let cases: &[(&str, u64, u64, f64, f64, &str)] = &[
            (
                "slat",
                4027,
                4015553,
                7841.596771,
                34320.005044,
                "    slat (usec): min=4, max=4015, avg= 7.84, stdev=34.32",
            ),
            (
                "clat",
                2265,
                6044389,
                232929.315872,
                214076.709701,
                "    clat (usec): min=2, max=6044, avg=232.93, stdev=214.08",
            ),
            (
                " lat",
                43070,
                6087550,
                240770.912643,
                216634.906306,
                "     lat (usec): min=43, max=6087, avg=240.77, stdev=216.63",
            ),
            (
                "slat",
                4368,
                1257951,
                8323.993272,
                16952.524457,
                "    slat (usec): min=4, max=1257, avg= 8.32, stdev=16.95",
            ),
            (
                "clat",
                41327,
                6316907,
                270190.330932,
                266216.145644,
                "    clat (usec): min=41, max=6316, avg=270.19, stdev=266.22",
            ),
            (
                " lat",
                64570,
                6321826,
                278514.324204,
                266656.884475,
                "     lat (usec): min=64, max=6321, avg=278.51, stdev=266.66",
            ),
            (
                "clat",
                661,
                5882538,
                3210.434539,
                73600.085718,
                "    clat (nsec): min=661, max=5882.5k, avg=3210.43, stdev=73600.09",
            ),
            (
                " lat",
                681,
                5882598,
                3257.884032,
                73610.599493,
                "     lat (nsec): min=681, max=5882.6k, avg=3257.88, stdev=73610.60",
            ),
            // An fsync job (fio 3.33, ext4 file): the sync line follows the same rules.
            (
                "sync",
                264324,
                712420,
                347710.4,
                103829.432907,
                "    sync (usec): min=264, max=712, avg=347.71, stdev=103.83",
            ),
            // Large figures: msec, and six significant figures for the maximum.
            (
                "clat",
                2_500_000,
                146_889_123_456,
                9_000_000_000.0,
                5_000_000_000.0,
                "    clat (msec): min=2, max=146889, avg=9000.00, stdev=5000.00",
            ),
            ("clat", 9, 146_889_123, 39.63, 164.95, "    clat (nsec): min=9, max=146889k, avg=39.63, stdev=164.95"),
        ];
        for &(name, min, max, mean, dev, want) in cases {
            assert_eq!(stat_values_line(name, min, max, mean, dev), format!("{want}\n"));
        }
    }

    #[test]
    fn known_job_report() {
        let r = simple_report();
        let out = render(&r);
        let want = "
known: (groupid=0, jobs=1): err= 0: pid=4242: Sat Nov 21 07:09:51 2026
  read: IOPS=1000, BW=4000KiB/s (4096kB/s)(4000KiB/1000msec)
    slat (nsec): min=3007, max=10000, avg=6503.50, stdev=2021.74
    clat (nsec): min=1000, max=1000.0k, avg=500500.00, stdev=288819.44
     lat (usec): min=4, max=1010, avg=507.00, stdev=290.84
    clat percentiles (usec):
     |  1.00th=[   11],  5.00th=[   50], 10.00th=[  100], 20.00th=[  200],
     | 30.00th=[  302], 40.00th=[  400], 50.00th=[  502], 60.00th=[  603],
     | 70.00th=[  701], 80.00th=[  799], 90.00th=[  898], 95.00th=[  947],
     | 99.00th=[  988], 99.50th=[  996], 99.90th=[ 1004], 99.95th=[ 1004],
     | 99.99th=[ 1004]
   bw (  KiB/s): min= 3900, max= 4100, per=100.00%, avg=4000.00, stdev=100.00, samples=3
   iops        : min=  975, max= 1025, avg=1000.00, stdev=25.00, samples=3
  write: IOPS=10, BW=40.0KiB/s (41.0kB/s)(40.0KiB/1000msec); 0 zone resets
    slat (nsec): min=5000, max=5000, avg=5000.00, stdev= 0.00
    clat (nsec): min=10000, max=10000, avg=10000.00, stdev= 0.00
     lat (nsec): min=15000, max=15000, avg=15000.00, stdev= 0.00
    clat percentiles (nsec):
     |  1.00th=[10048],  5.00th=[10048], 10.00th=[10048], 20.00th=[10048],
     | 30.00th=[10048], 40.00th=[10048], 50.00th=[10048], 60.00th=[10048],
     | 70.00th=[10048], 80.00th=[10048], 90.00th=[10048], 95.00th=[10048],
     | 99.00th=[10048], 99.50th=[10048], 99.90th=[10048], 99.95th=[10048],
     | 99.99th=[10048]
  lat (usec)   : 2=0.10%, 4=0.20%, 10=0.59%, 20=1.98%, 50=2.97%
  lat (usec)   : 100=4.95%, 250=14.85%, 500=24.75%, 750=24.75%, 1000=24.75%
  lat (msec)   : 2=0.10%
  cpu          : usr=10.00%, sys=25.00%, ctx=1234, majf=0, minf=12
  IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%
     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     issued rwts: total=1000,10,0,0 short=0,0,0,0 dropped=0,0,0,0
     latency   : target=0, window=0, percentile=100.00%, depth=1

Run status group 0 (all jobs):
   READ: bw=4000KiB/s (4096kB/s), 4000KiB/s-4000KiB/s (4096kB/s-4096kB/s), io=4000KiB (4096kB), run=1000-1000msec
  WRITE: bw=40.0KiB/s (41.0kB/s), 40.0KiB/s-40.0KiB/s (41.0kB/s-41.0kB/s), io=40.0KiB (41.0kB), run=1000-1000msec

Disk stats (read/write):
  vda: ios=1000/10, merge=1/2, ticks=300/40, in_queue=340, util=50.00%
";
        assert_eq!(out, want);
    }

    /// A job that issued I/O but failed prints its error text and description; a job that
    /// issued nothing is skipped (the `idle` job above), even with an error.
    #[test]
    fn error_and_description() {
        let mut r = simple_report();
        r.jobs[1].ts.issued[0] = 1;
        r.jobs[1].ts.depth_map[0] = 1;
        let out = render(&r);
        let want = "\
idle: (groupid=0, jobs=1): err=21 (file:filesetup.c:150, func=unlink, error=Is a directory): pid=4243: Sat Nov 21 07:09:51 2026
  Description  : [does \"nothing\" \\ at all]
  cpu          : usr=0.00%, sys=0.00%, ctx=0, majf=0, minf=0
  IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%
     submit    : 0=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     complete  : 0=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%
     issued rwts: total=1,0,0,0 short=0,0,0,0 dropped=0,0,0,0
     latency   : target=0, window=0, percentile=100.00%, depth=1
";
        assert!(out.contains(want), "{out}");
        let mut r = simple_report();
        r.jobs.truncate(1);
        r.jobs[0].ts = ThreadStat::default();
        r.disks.clear();
        assert_eq!(render(&r), "\n\nRun status group 0 (all jobs):\n   READ: bw=4000KiB/s (4096kB/s), 4000KiB/s-4000KiB/s (4096kB/s-4096kB/s), io=4000KiB (4096kB), run=1000-1000msec\n  WRITE: bw=40.0KiB/s (41.0kB/s), 40.0KiB/s-40.0KiB/s (41.0kB/s-41.0kB/s), io=40.0KiB (41.0kB), run=1000-1000msec\n");
    }

    #[test]
    fn percentile_precision_and_columns() {
        let r = simple_report();
        let h = r.jobs[0].ts.dirs[0].clat_hist.as_ref().unwrap();
        assert_eq!(
            percentile_block("clat", h, &[50.0, 99.999, 99.9999]),
            "    clat percentiles (usec):\n     | 50.0000th=[  502], 99.9990th=[ 1004], 99.9999th=[ 1004]\n"
        );
        assert_eq!(
            percentile_block("lat", h, &[99.5, 50.0]),
            "    lat percentiles (usec):\n     | 50.0th=[  502], 99.5th=[  996]\n"
        );
        let list: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(
            percentile_block("clat", h, &list),
            "    clat percentiles (usec):
     |   1th=[   11],   2th=[   21],   3th=[   31],   4th=[   41],
     |   5th=[   50],   6th=[   61],   7th=[   71],   8th=[   81],
     |   9th=[   90],  10th=[  100],  11th=[  111],  12th=[  121],
     |  13th=[  130],  14th=[  141],  15th=[  151],  16th=[  161],
     |  17th=[  172],  18th=[  180],  19th=[  190],  20th=[  200]
"
        );
        assert_eq!(decimals(33.3333333), 7);
        assert_eq!(decimals(99.95), 2);
        assert_eq!(decimals(100.0), 0);
    }

    #[test]
    fn bw_lines() {
        let s = |min, max, mean: f64, dev: f64| SampleStat { min, max, samples: 3, mean, m2: dev * dev * 2.0 };
        let def = Units::default();
        // The reference psync job: above 1 GiB/s the figures switch to MiB/s.
        assert_eq!(
            bw_line(&s(1001608, 1135992, 1051989.333333, 73229.505019), 95.867072, &def),
            "   bw (  MiB/s): min=  978, max= 1109, per=95.87%, avg=1027.33, stdev=71.51, samples=3\n"
        );
        // Just under 1 GiB/s stays in KiB/s (fio 3.33, rate=1000m: avg=1024512.00).
        assert_eq!(
            bw_line(&s(1024384, 1024640, 1024512.0, 128.0), 100.0, &def),
            "   bw (  KiB/s): min=1024384, max=1024640, per=100.00%, avg=1024512.00, stdev=128.00, samples=3\n"
        );
        // kb_base=1000: the small unit is labelled kB, the large one MiB, divided by 1000.
        let si = Units { kb_base: 1000, ..Units::default() };
        assert_eq!(
            bw_line(&s(973184, 974661, 973889.67, 740.69), 100.0, &si),
            "   bw (   kB/s): min=973184, max=974661, per=100.00%, avg=973889.67, stdev=740.69, samples=3\n"
        );
        assert_eq!(
            bw_line(&s(1024500, 1025400, 1024810.0, 0.53 * 1000.0), 100.0, &si),
            "   bw (  MiB/s): min= 1024, max= 1025, per=100.00%, avg=1024.81, stdev= 0.53, samples=3\n"
        );
    }

    #[test]
    fn job_headers() {
        let mut h = JobHeader {
            name: "a",
            groupid: 0,
            rw: "randrw",
            bs: [(4096, 4096), (8192, 8192), (16384, 16384)],
            ioengine: "null",
            iodepth: 1,
            numjobs: 1,
        };
        let def = Units::default();
        assert_eq!(
            job_header(&h, &def),
            "a: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 8192B-8192B, (T) 16.0KiB-16.0KiB, ioengine=null, iodepth=1\n"
        );
        h.bs = [(512, 1048576); 3];
        h.numjobs = 3;
        assert_eq!(
            job_header(&h, &def),
            "a: (g=0): rw=randrw, bs=(R) 512B-1024KiB, (W) 512B-1024KiB, (T) 512B-1024KiB, ioengine=null, iodepth=1\n...\n"
        );
        h.bs = [(12288, 12288); 3];
        h.numjobs = 1;
        assert_eq!(
            job_header(&h, &Units { kb_base: 1000, ..def.clone() }),
            "a: (g=0): rw=randrw, bs=(R) 12.3kB-12.3kB, (W) 12.3kB-12.3kB, (T) 12.3kB-12.3kB, ioengine=null, iodepth=1\n"
        );
        h.bs = [(12345, 12345); 3];
        assert_eq!(
            job_header(&h, &Units { sig_figs: 2, ..def }),
            "a: (g=0): rw=randrw, bs=(R) 12KiB-12KiB, (W) 12KiB-12KiB, (T) 12KiB-12KiB, ioengine=null, iodepth=1\n"
        );
    }

    #[test]
    fn starting_lines() {
        assert_eq!(starting_line(1, 0), "Starting 1 process\n");
        assert_eq!(starting_line(4, 0), "Starting 4 processes\n");
        assert_eq!(starting_line(0, 1), "Starting 1 thread\n");
        assert_eq!(starting_line(0, 3), "Starting 3 threads\n");
        assert_eq!(starting_line(1, 1), "Starting 1 thread and 1 process\n");
        assert_eq!(starting_line(3, 2), "Starting 2 threads and 3 processes\n");
    }

    /// Bits and SI units on the summary lines (`unit_base=1`, `kb_base=1000`).
    #[test]
    fn unit_settings_on_summary_lines() {
        let mut r = simple_report();
        r.jobs[0].units = Units { kb_base: 1000, unit_base: 1, sig_figs: 4 };
        let out = render(&r);
        assert!(out.contains("  read: IOPS=1000, BW=32.8Mbit/s (31.2Mibit/s)(4096kB/1000msec)\n"), "{out}");
        assert!(out.contains("   READ: bw=32.8Mbit/s (31.2Mibit/s), 32.8Mbit/s-32.8Mbit/s (31.2Mibit/s-31.2Mibit/s), io=4096kB (4000KiB), run=1000-1000msec\n"), "{out}");
        assert!(out.contains("   bw (   kB/s): min= 3900"), "{out}");
    }
}
