//! Figures derived from the raw statistics the same way by every format: per-direction
//! bandwidth and IOPS, a job's share of its group's bandwidth, CPU percentages, and the
//! clamped percentage tables (latency buckets, I/O depths). Keeping them in one place keeps
//! the normal, JSON and terse outputs consistent with each other, as they are in fio.

use fiox_stats::{DirStat, IoStat, LatHist, ThreadStat, Unified, DDIR_MIXED};

use crate::model::{JobReport, RunReport};

/// The intended-latency histogram of a paced job's direction that saw I/O (fiox's addition;
/// `None` for unpaced jobs, whose reports stay fio's).
pub(crate) fn intended_hist(d: &DirStat) -> Option<&LatHist> {
    d.intended_hist.as_ref().filter(|_| d.intended.samples > 0)
}

/// The time-to-first-byte histogram of a direction that has one (`fiox s3 bench`'s
/// operations, fiox's addition).
pub(crate) fn ttfb_hist(d: &DirStat) -> Option<&LatHist> {
    d.ttfb_hist.as_ref().filter(|_| d.ttfb.samples > 0)
}

/// Bytes per second over the direction's runtime, truncated (JSON `bw_bytes`).
pub(crate) fn bw_bytes(d: &DirStat) -> u64 {
    if d.runtime_ms == 0 {
        0
    } else {
        (d.io_bytes as u128 * 1000 / d.runtime_ms as u128) as u64
    }
}

/// I/Os per second as a float (JSON `iops`).
pub(crate) fn iops_f(d: &DirStat) -> f64 {
    if d.runtime_ms == 0 {
        0.0
    } else {
        1000.0 * d.total_ios as f64 / d.runtime_ms as f64
    }
}

/// I/Os per second truncated to an integer (normal `IOPS=`, terse).
pub(crate) fn iops_u(d: &DirStat) -> u64 {
    if d.runtime_ms == 0 {
        0
    } else {
        (d.total_ios as u128 * 1000 / d.runtime_ms as u128) as u64
    }
}

/// The job's mean sampled bandwidth as a percentage of its group's aggregate bandwidth,
/// capped at 100 (fio caps it in every format). 0 when the group is unknown or idle.
///
/// fio divides by an aggregate computed from microsecond runtimes; `GroupStat` holds it in
/// bytes per second over millisecond runtimes, so the last decimals of the JSON figure can
/// differ slightly from fio's.
pub(crate) fn bw_agg_pct(r: &RunReport, job: &JobReport, ddir: usize) -> f64 {
    let Some(g) = r.groups.iter().find(|g| g.groupid == job.groupid) else {
        return 0.0;
    };
    let agg_kib = g.agg_bw[ddir] as f64 / 1024.0;
    if agg_kib <= 0.0 {
        return 0.0;
    }
    (job.ts.dir(ddir).bw.mean * 100.0 / agg_kib).min(100.0)
}

/// CPU time as a percentage of the job's runtime (fio's `usr_cpu`/`sys_cpu`).
pub(crate) fn cpu_pct(us: u64, runtime_ms: u64) -> f64 {
    if runtime_ms == 0 {
        0.0
    } else {
        us as f64 / 1000.0 * 100.0 / runtime_ms as f64
    }
}

/// The I/Os the depth and latency-bucket percentages are relative to: those issued for
/// reads, writes and trims. Syncs are left out, so a job that counts its fsyncs in the depth
/// map shows more than 100 %, as fio 3.33 does (`IO depths : 1=123.4%`).
pub(crate) fn rwt_ios(ts: &ThreadStat) -> u64 {
    ts.issued[..3].iter().sum()
}

/// Percentages of `total`; a bucket that is non-zero but under `floor` shows `floor`, so that
/// rare events stay visible (0.01 % for latency buckets, 0.1 % for depths).
pub(crate) fn pcts(counts: &[u64], total: u64, floor: f64) -> Vec<f64> {
    counts
        .iter()
        .map(|&c| {
            if total == 0 || c == 0 {
                0.0
            } else {
                let p = c as f64 * 100.0 / total as f64;
                if p < floor {
                    floor
                } else {
                    p
                }
            }
        })
        .collect()
}

/// Latency-bucket percentages (clamped at 0.01 %).
pub(crate) fn lat_pcts(counts: &[u64], ts: &ThreadStat) -> Vec<f64> {
    pcts(counts, rwt_ios(ts), 0.01)
}

/// I/O depth percentages (clamped at 0.1 %) relative to the I/Os issued.
pub(crate) fn depth_pcts(ts: &ThreadStat) -> Vec<f64> {
    pcts(&ts.depth_map, rwt_ios(ts), 0.1)
}

/// Submit or complete batch percentages (clamped at 0.1 %) relative to all calls counted.
pub(crate) fn batch_pcts(map: &[u64; 7]) -> Vec<f64> {
    pcts(map, map.iter().sum(), 0.1)
}

/// The submission latency of a direction: empty for engines without one, whatever the runner
/// recorded, since fio neither prints nor reports it for synchronous engines.
pub(crate) fn slat(job: &JobReport, ddir: usize) -> IoStat {
    if job.has_slat {
        job.ts.dir(ddir).slat
    } else {
        IoStat::default()
    }
}

/// Which latency a percentile list is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LatKind {
    Slat,
    Clat,
    Lat,
}

/// The histogram of a latency kind, if its percentiles are enabled and it has samples: the
/// condition under which fio prints a percentile block (normal) or a `percentile` object and
/// `bins` (JSON).
pub(crate) fn enabled_hist(job: &JobReport, ddir: usize, kind: LatKind) -> Option<&LatHist> {
    let d = job.ts.dir(ddir);
    let (on, hist) = match kind {
        LatKind::Slat => (job.slat_percentiles && job.has_slat, d.slat_hist.as_ref()),
        LatKind::Clat => (job.clat_percentiles, d.clat_hist.as_ref()),
        LatKind::Lat => (job.lat_percentiles, d.lat_hist.as_ref()),
    };
    hist.filter(|h| on && h.total() > 0 && !job.percentile_list.is_empty())
}

/// The fsync latency histogram, when fio would print its percentiles (with the clat ones).
pub(crate) fn sync_hist(job: &JobReport) -> Option<&LatHist> {
    job.ts.sync_hist.as_ref().filter(|h| job.clat_percentiles && h.total() > 0 && !job.percentile_list.is_empty())
}

/// The per-priority latencies a direction shows (`cmdprio_percentage`): only when at least two
/// priorities had I/O, as fio prints them.
pub(crate) struct ShownPrios<'a> {
    pub list: Vec<&'a fiox_stats::PrioStat>,
    /// Which latency they are: `clat`, or `lat` with `lat_percentiles` (as fio 3.33).
    pub kind: &'static str,
    /// Whether their percentiles are printed (that latency's percentiles are on).
    pub percentiles: bool,
}

pub(crate) fn shown_prios(job: &JobReport, ddir: usize) -> ShownPrios<'_> {
    let (kind, on) = if job.lat_percentiles { ("lat", true) } else { ("clat", job.clat_percentiles) };
    let list: Vec<_> = job.ts.dir(ddir).prios.iter().filter(|p| p.lat.samples > 0).collect();
    ShownPrios {
        list: if list.len() >= 2 { list } else { Vec::new() },
        kind,
        percentiles: on && !job.percentile_list.is_empty(),
    }
}

/// The directions a job's report shows, in order, with their names: read, write and trim;
/// under `unified_rw_reporting=mixed` only the merged one (kept in slot 0, named `mixed`);
/// under `both` the three and then the merged one.
pub(crate) fn report_dirs(unified: Unified) -> &'static [(usize, &'static str)] {
    match unified {
        Unified::None => &[(0, "read"), (1, "write"), (2, "trim")],
        Unified::Mixed => &[(0, "mixed")],
        Unified::Both => &[(0, "read"), (1, "write"), (2, "trim"), (DDIR_MIXED, "mixed")],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamped_percentages() {
        let p = pcts(&[0, 1, 63274, 6], 63281, 0.1);
        assert_eq!(p[0], 0.0);
        assert_eq!(p[1], 0.1);
        assert!((p[2] - 99.988938).abs() < 1e-6);
        assert_eq!(p[3], 0.1);
        assert_eq!(pcts(&[5], 0, 0.1), vec![0.0]);
    }

    #[test]
    fn rates() {
        let d = DirStat { io_bytes: 181878784, total_ios: 44404, runtime_ms: 2001, ..DirStat::default() };
        assert_eq!(bw_bytes(&d), 90893945);
        assert_eq!(iops_u(&d), 22190);
        assert!((iops_f(&d) - 22190.904548).abs() < 1e-6);
        assert_eq!(bw_bytes(&DirStat::default()), 0);
        assert_eq!(cpu_pct(122_000, 2000), 6.1);
    }
}
