//! fio 3.33's terse output (`--minimal`, `--terse-version=2|3|4|5`, 3 by default): one
//! `;`-separated line per job, plus a header line of field names, which fio does not have
//! (users asked for one: fio issues #49 and #1226).
//!
//! Field layout, as observed with fio 3.33 (counts for a job without disks or description):
//!
//! | version | header fields | directions | per direction | disks | description | fields |
//! |---|---|---|---|---|---|---|
//! | 2 | version, job, group, error | read, write, trim | 41 | no | next line, `;desc` | 161 |
//! | 3 | + fio version | read, write | 41 | yes | `;desc` | 121 |
//! | 4 | + fio version | read, write, trim | 41 | yes | `;desc` | 162 |
//! | 5 | + fio version | read, write, trim | 47 (bw samples, iops) | yes | `;desc` | 180 |
//!
//! `unified_rw_reporting=mixed` leaves one direction block (the merged one); `both` appends the
//! merged block after the usual ones.
//!
//! Latencies are in microseconds (minimum and maximum truncated, mean and deviation as
//! `%f`); percentiles are `%f%%=usec` with 20 fields, unused ones `0%=0`; each disk adds 9
//! fields.

use fiox_stats::{IoStat, ThreadStat, Unified, DDIR_MIXED, DDIR_NAMES};

use crate::calc::{self, LatKind};
use crate::model::{JobReport, RunReport};
use crate::units::{cf, cfmt};

/// Number of percentile fields per direction, whatever the list's length.
const PCT_FIELDS: usize = 20;

fn version_or_default(version: u8) -> u8 {
    if (2..=5).contains(&version) {
        version
    } else {
        3
    }
}

/// One line per job (for version 2, a second line `;description` when the job has a
/// description). Versions other than 2, 4 and 5 render version 3, fio's default.
pub fn render(r: &RunReport, version: u8) -> String {
    let version = version_or_default(version);
    let mut out = String::new();
    for j in &r.jobs {
        out.push_str(&job_line(r, j, version));
    }
    out
}

/// A multi-host run: every host's lines in host-list order, then the `All clients` line (with
/// its merged percentiles, which fio 3.33 leaves at zero).
pub fn render_clients(c: &crate::model::ClientsReport, version: u8) -> String {
    let mut out = String::new();
    for r in c.hosts.iter().filter_map(|h| h.report.as_ref()) {
        out.push_str(&render(r, version));
    }
    if let Some(all) = &c.all {
        out.push_str(&render(all, version));
    }
    out
}

fn job_line(r: &RunReport, j: &JobReport, version: u8) -> String {
    let ts = &j.ts;
    let mut f: Vec<String> = vec![version.to_string()];
    if version >= 3 {
        f.push(r.version.clone());
    }
    f.push(j.name.clone());
    f.push(j.groupid.to_string());
    f.push(j.error.to_string());
    for ddir in terse_dirs(j.unified, version) {
        dir_fields(&mut f, r, j, ddir, version);
    }
    f.push(format!("{}%", cf(calc::cpu_pct(ts.usr_us, ts.job_runtime_ms))));
    f.push(format!("{}%", cf(calc::cpu_pct(ts.sys_us, ts.job_runtime_ms))));
    f.push(ts.ctx.to_string());
    f.push(ts.majf.to_string());
    f.push(ts.minf.to_string());
    f.extend(calc::depth_pcts(ts).iter().map(|p| format!("{}%", cfmt(*p, 3, 1))));
    f.extend(lat_fields(ts));
    if version >= 3 {
        for d in &r.disks {
            f.push(d.name.clone());
            for v in [d.read_ios, d.write_ios, d.read_merges, d.write_merges, d.read_ticks, d.write_ticks, d.in_queue] {
                f.push(v.to_string());
            }
            f.push(format!("{}%", cfmt(d.util, 3, 2)));
            if let Some(a) = &d.aggr {
                f.push("slaves".into());
                for v in
                    [a.read_ios, a.write_ios, a.read_merges, a.write_merges, a.read_ticks, a.write_ticks, a.in_queue]
                {
                    f.push(v.to_string());
                }
                f.push(format!("{}%", cfmt(a.util, 3, 2)));
            }
        }
    }
    if j.errors_counted {
        f.push(ts.total_err.to_string());
        f.push(ts.first_error.to_string());
    }
    let desc = j.description.as_deref().filter(|d| !d.is_empty());
    let mut line = f.join(";");
    match desc {
        Some(d) if version == 2 => {
            line.push_str("\n;");
            line.push_str(d);
        }
        Some(d) => {
            line.push(';');
            line.push_str(d);
        }
        None => {}
    }
    line.push('\n');
    line
}

/// `min;max;mean;dev` in microseconds.
fn stat_fields(f: &mut Vec<String>, st: &IoStat) {
    f.push((st.min() / 1000).to_string());
    f.push((st.max / 1000).to_string());
    f.push(cf(st.mean() / 1000.0));
    f.push(cf(st.stddev() / 1000.0));
}

/// The direction blocks of a terse line: read and write (version 2 and 3) or read, write and
/// trim (4 and 5); under `unified_rw_reporting=mixed` only the merged one, under `both` the
/// usual ones and then the merged one (observed with fio 3.33: 80, 162 and 203 fields).
fn terse_dirs(unified: Unified, version: u8) -> Vec<usize> {
    let usual = if version == 3 { 2 } else { 3 };
    match unified {
        Unified::None => (0..usual).collect(),
        Unified::Mixed => vec![0],
        Unified::Both => (0..usual).chain([DDIR_MIXED]).collect(),
    }
}

fn dir_fields(f: &mut Vec<String>, r: &RunReport, j: &JobReport, ddir: usize, version: u8) {
    let d = j.ts.dir(ddir);
    f.push((d.io_bytes >> 10).to_string());
    f.push((calc::bw_bytes(d) / 1024).to_string());
    f.push(calc::iops_u(d).to_string());
    f.push(d.runtime_ms.to_string());
    stat_fields(f, &calc::slat(j, ddir));
    stat_fields(f, &d.clat);
    f.extend(percentile_fields(j, ddir));
    stat_fields(f, &d.lat);
    f.push(d.bw.min.to_string());
    f.push(d.bw.max.to_string());
    f.push(format!("{}%", cf(calc::bw_agg_pct(r, j, ddir))));
    f.push(cf(d.bw.mean));
    f.push(cf(d.bw.stddev()));
    if version >= 5 {
        f.push(d.bw.samples.to_string());
        f.push(d.iops.min.to_string());
        f.push(d.iops.max.to_string());
        f.push(cf(d.iops.mean));
        f.push(cf(d.iops.stddev()));
        f.push(d.iops.samples.to_string());
    }
}

/// The 20 percentile fields. Total-latency percentiles replace completion-latency ones when
/// `lat_percentiles` is set (observed with fio 3.33); with neither enabled all 20 are `0%=0`.
/// An idle direction still lists the percentiles, with 0 values.
fn percentile_fields(j: &JobReport, ddir: usize) -> Vec<String> {
    let kind = if j.lat_percentiles {
        Some(LatKind::Lat)
    } else if j.clat_percentiles {
        Some(LatKind::Clat)
    } else {
        None
    };
    let mut pairs: Vec<(f64, u64)> = match kind {
        None => Vec::new(),
        Some(k) => match calc::enabled_hist(j, ddir, k) {
            Some(h) => h.percentiles(&j.percentile_list),
            None => {
                let mut l: Vec<(f64, u64)> = j.percentile_list.iter().map(|&p| (p, 0)).collect();
                l.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
                l
            }
        },
    };
    pairs.truncate(PCT_FIELDS);
    let mut f: Vec<String> = pairs.iter().map(|&(p, v)| format!("{}%={}", cf(p), v / 1000)).collect();
    f.resize(PCT_FIELDS, "0%=0".to_string());
    f
}

/// 10 microsecond buckets and 12 millisecond buckets, as `%3.2f%%`. The nanosecond buckets
/// are folded into the first (`<=2`) as fio 3.33 does it: their total as one unclamped
/// percentage, added to the `2` us bucket's clamped percentage. So a job with only a few
/// sub-microsecond I/Os shows `0.00%`, and one with nearly all of them can show `100.01%`
/// (observed).
fn lat_fields(ts: &ThreadStat) -> Vec<String> {
    let total = calc::rwt_ios(ts);
    let ns: u64 = ts.lat_ns.iter().sum();
    let mut us = calc::lat_pcts(&ts.lat_us, ts);
    if total > 0 {
        us[0] += ns as f64 * 100.0 / total as f64;
    }
    us.into_iter().chain(calc::lat_pcts(&ts.lat_ms, ts)).map(|p| format!("{}%", cfmt(p, 3, 2))).collect()
}

/// A header line of field names for `version` (fio has none), with one disk's fields for
/// versions 3 to 5 as the HOWTO lists them. Ends with a newline.
pub fn header(version: u8) -> String {
    header_with_disks(version, 1, Unified::None)
}

/// [`header`] for a run with `disks` disks: the first disk's fields are `disk_name`,
/// `disk_read_iops`, ...; further disks are numbered (`disk2_name`, ...). Version 2 has no
/// disk fields. The optional description and error fields are not named.
pub fn header_with_disks(version: u8, disks: usize, unified: Unified) -> String {
    let version = version_or_default(version);
    let mut f: Vec<String> = vec!["terse_version".into()];
    if version >= 3 {
        f.push("fio_version".into());
    }
    f.extend(["jobname", "groupid", "error"].map(String::from));
    for d in terse_dirs(unified, version).into_iter().map(|d| DDIR_NAMES[d]) {
        f.push(format!("{d}_kb"));
        f.push(format!("{d}_bandwidth_kb"));
        f.push(format!("{d}_iops"));
        f.push(format!("{d}_runtime_ms"));
        for lat in ["slat", "clat"] {
            for stat in ["min", "max", "mean", "dev"] {
                f.push(format!("{d}_{lat}_{stat}_us"));
            }
        }
        for i in 1..=PCT_FIELDS {
            f.push(format!("{d}_clat_pct{i:02}"));
        }
        for stat in ["min", "max", "mean", "dev"] {
            f.push(format!("{d}_lat_{stat}_us"));
        }
        f.extend(["bw_min_kb", "bw_max_kb", "bw_agg_pct", "bw_mean_kb", "bw_dev_kb"].map(|n| format!("{d}_{n}")));
        if version >= 5 {
            f.extend(
                ["bw_samples", "iops_min", "iops_max", "iops_mean", "iops_dev", "iops_samples"]
                    .map(|n| format!("{d}_{n}")),
            );
        }
    }
    f.extend(["cpu_user", "cpu_sys", "cpu_csw", "cpu_mjf", "cpu_minf"].map(String::from));
    f.extend(["1", "2", "4", "8", "16", "32", "64"].map(|n| format!("iodepth_{n}")));
    f.extend(["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"].map(|n| format!("lat_{n}us")));
    f.extend(["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000"].map(|n| format!("lat_{n}ms")));
    f.push("lat_over_2000ms".into());
    if version >= 3 {
        for i in 1..=disks {
            let p = if i == 1 { "disk".to_string() } else { format!("disk{i}") };
            f.extend(
                [
                    "name",
                    "read_iops",
                    "write_iops",
                    "read_merges",
                    "write_merges",
                    "read_ticks",
                    "write_ticks",
                    "queue_time",
                    "util",
                ]
                .map(|n| format!("{p}_{n}")),
            );
        }
    }
    let mut s = f.join(";");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{reference_report, simple_report};

    fn fields(line: &str) -> Vec<&str> {
        line.trim_end_matches('\n').split(';').collect()
    }

    #[test]
    fn known_job_v3() {
        let out = render(&simple_report(), 3);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2);
        let pct = |vals: [u64; 17]| {
            let list = crate::model::DEFAULT_PERCENTILES;
            let mut v: Vec<String> = list.iter().zip(vals).map(|(p, v)| format!("{}%={v}", cf(*p))).collect();
            v.extend(["0%=0"; 3].map(String::from));
            v.join(";")
        };
        let want = [
            "3;fio-3.33;known;0;0".to_string(),
            "4000;4000;1000;1000;3;10;6.503500;2.021736;1;1000;500.500000;288.819436".into(),
            pct([10, 49, 99, 199, 301, 399, 501, 602, 700, 798, 897, 946, 987, 995, 1003, 1003, 1003]),
            "4;1010;507.003500;290.841172;3900;4100;100.000000%;4000.000000;100.000000".into(),
            "40;40;10;1000;5;5;5.000000;0.000000;10;10;10.000000;0.000000".into(),
            pct([10; 17]),
            "15;15;15.000000;0.000000;0;0;0.000000%;0.000000;0.000000".into(),
            "10.000000%;25.000000%;1234;0;12".into(),
            "100.0%;0.0%;0.0%;0.0%;0.0%;0.0%;0.0%".into(),
            "0.10%;0.20%;0.59%;1.98%;2.97%;4.95%;14.85%;24.75%;24.75%;24.75%".into(),
            "0.10%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%".into(),
            "vda;1000;10;1;2;300;40;340;50.00%".into(),
        ]
        .join(";");
        assert_eq!(lines[0], want);
        assert_eq!(fields(lines[0]).len(), 130);
        // The idle job: an error, idle directions still list the percentiles with 0, and the
        // description ends the line.
        let idle = fields(lines[1]);
        assert_eq!(idle.len(), 131);
        assert_eq!(&idle[..6], ["3", "fio-3.33", "idle", "0", "21", "0"]);
        assert_eq!(idle[17], "1.000000%=0");
        assert_eq!(idle[34], "0%=0");
        assert_eq!(idle[130], "does \"nothing\" \\ at all");
    }

    /// Field counts as fio 3.33 prints them (one disk, no description): v2 161, v3 130,
    /// v4 171, v5 189; and the header has a name for each.
    #[test]
    fn versions() {
        let mut r = simple_report();
        r.jobs.truncate(1);
        for (v, n) in [(2u8, 161), (3, 130), (4, 171), (5, 189)] {
            let out = render(&r, v);
            let f = fields(&out);
            assert_eq!(f.len(), n, "v{v}");
            assert_eq!(f[0], v.to_string());
            assert_eq!(fields(&header(v)).len(), n, "header v{v}");
        }
        assert_eq!(render(&r, 9), render(&r, 3));
        // v2 has no fio version field and puts the description on a line of its own.
        r.jobs[0].description = Some("d1".into());
        let out = render(&r, 2);
        assert!(out.starts_with("2;known;0;0;4000;"), "{out}");
        assert!(out.ends_with("0.00%\n;d1\n"), "{out}");
        assert!(render(&r, 4).ends_with(";vda;1000;10;1;2;300;40;340;50.00%;d1\n"));
        // v5 adds the bandwidth sample count and the IOPS samples to each direction.
        let v5 = render(&r, 5);
        let f = fields(&v5);
        assert_eq!(&f[43..50], ["100.000000%", "4000.000000", "100.000000", "3", "975", "1025", "1000.000000"]);
    }

    #[test]
    fn percentile_kinds() {
        let mut r = simple_report();
        r.jobs.truncate(1);
        r.jobs[0].clat_percentiles = false;
        let f = render(&r, 3);
        assert!(fields(&f)[17..37].iter().all(|x| *x == "0%=0"));
        // Total-latency percentiles replace completion-latency ones when enabled.
        r.jobs[0].lat_percentiles = true;
        r.jobs[0].percentile_list = vec![99.0, 50.0];
        let f = render(&r, 3);
        assert_eq!(&fields(&f)[17..20], ["50.000000%=505", "99.000000%=1003", "0%=0"]);
    }

    /// The reference run: integer fields straight from fio's json, percentiles from its bins.
    #[test]
    fn reference_v3() {
        let out = render(&reference_report(), 3);
        let lines: Vec<&str> = out.lines().collect();
        let f = fields(lines[0]);
        assert_eq!(f.len(), 130);
        assert_eq!(
            &f[..11],
            ["3", "fio-3.33", "randrw-libaio", "0", "0", "177616", "88763", "22190", "2001", "4", "4015"]
        );
        assert_eq!(&f[13..15], ["2", "6044"]);
        assert_eq!(&f[17..20], ["1.000000%=110", "5.000000%=138", "10.000000%=152"]);
        assert_eq!(
            &f[30..36],
            ["99.500000%=1433", "99.900000%=3653", "99.950000%=4227", "99.990000%=6062", "0%=0", "0%=0"]
        );
        assert_eq!(&f[37..39], ["43", "6087"]);
        assert_eq!(&f[41..43], ["83952", "95214"]);
        assert_eq!(&f[44..46], ["88643.666667", "5861.331106"]);
        assert_eq!(&f[46..50], ["75508", "37735", "9433", "2001"]);
        assert_eq!(&f[87..92], ["6.100000%", "26.450000%", "9639", "0", "14"]);
        assert_eq!(&f[92..99], ["0.1%", "0.1%", "0.1%", "100.0%", "0.0%", "0.0%", "0.0%"]);
        assert_eq!(
            &f[99..109],
            ["0.00%", "0.01%", "0.00%", "0.00%", "0.08%", "0.50%", "72.12%", "25.45%", "0.72%", "0.30%"]
        );
        assert_eq!(&f[109..112], ["0.42%", "0.34%", "0.07%"]);
        assert_eq!(&f[121..], ["vda", "61898", "19719", "6", "9", "11767", "3078", "14882", "74.17%"]);
        // psync: no submission latency, and the nanosecond buckets (0.68 % + 72.43 %) fold
        // into the "2 us" bucket (25.03 %).
        let f = fields(lines[1]);
        assert_eq!(&f[9..13], ["0", "0", "0.000000", "0.000000"]);
        assert_eq!(f[99], "98.14%");
    }

    #[test]
    fn header_names() {
        let h = header(3);
        assert!(h.starts_with("terse_version;fio_version;jobname;groupid;error;read_kb;read_bandwidth_kb;read_iops;read_runtime_ms;read_slat_min_us;"));
        assert!(h.contains(";read_clat_pct01;") && h.contains(";read_clat_pct20;read_lat_min_us;"));
        assert!(h.ends_with(";lat_over_2000ms;disk_name;disk_read_iops;disk_write_iops;disk_read_merges;disk_write_merges;disk_read_ticks;disk_write_ticks;disk_queue_time;disk_util\n"));
        assert!(!h.contains("trim_"));
        assert!(header(2).starts_with("terse_version;jobname;"));
        assert!(header(4).contains(";trim_bw_dev_kb;cpu_user;"));
        assert!(header(5).contains(";read_bw_dev_kb;read_bw_samples;read_iops_min;read_iops_max;read_iops_mean;read_iops_dev;read_iops_samples;write_kb;"));
        assert_eq!(fields(&header_with_disks(3, 2, Unified::None)).len(), 139);
        assert!(header_with_disks(3, 2, Unified::None).contains(";disk2_name;"));
        assert_eq!(fields(&header_with_disks(3, 0, Unified::None)).len(), 121);
        assert_eq!(fields(&header_with_disks(3, 0, Unified::Mixed)).len(), 80);
        assert_eq!(fields(&header_with_disks(5, 0, Unified::Both)).len(), 227);
    }
}
