//! fio's "All clients": every job of every host folded into one, as fio 3.33's client does with
//! group reporting's arithmetic. Histograms add bucket by bucket (so percentiles are exact, at
//! fio's resolution), latency statistics pool, bandwidth and IOPS samples are fio's "pure sum",
//! bytes add, runtimes take the longest; group totals as fio's `sum_group_stats` (bytes and
//! aggregate bandwidth add, the extremes of runtimes and bandwidths are kept).

use fiox_report::{JobReport, RunReport, DEFAULT_PERCENTILES};
use fiox_stats::{GroupStat, ThreadStat};

/// fiox's per-group merges: for each group id, that group's jobs and totals on every host
/// merged the same way, named `All clients, group N` (fio's one "All clients" mixes the phases
/// of a stonewalled job; these keep them apart).
pub fn per_group<'a>(reports: impl Iterator<Item = &'a RunReport> + Clone, ctime: &str, now_ms: u64) -> Vec<RunReport> {
    let mut ids: Vec<u32> = reports.clone().flat_map(|r| r.jobs.iter().map(|j| j.groupid)).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .map(|g| {
            let only: Vec<RunReport> = reports
                .clone()
                .map(|r| RunReport {
                    jobs: r.jobs.iter().filter(|j| j.groupid == g).cloned().collect(),
                    groups: r.groups.iter().filter(|x| x.groupid == g).cloned().collect(),
                    ..RunReport::default()
                })
                .collect();
            let mut m = all_clients(only.iter(), ctime, now_ms);
            for j in &mut m.jobs {
                j.name = format!("All clients, group {g}");
                j.groupid = g;
            }
            for x in &mut m.groups {
                x.groupid = g;
            }
            m
        })
        .collect()
}

/// The merge of `reports` (hosts with figures, in host order) as a one-job, one-group report.
pub fn all_clients<'a>(reports: impl Iterator<Item = &'a RunReport>, ctime: &str, now_ms: u64) -> RunReport {
    let mut ts = ThreadStat::default();
    let mut first: Option<&JobReport> = None;
    let mut group: Option<GroupStat> = None;
    let (mut has_slat, mut clat_p, mut lat_p, mut slat_p, mut error, mut elapsed) = (false, false, false, false, 0, 0);
    for r in reports {
        for j in &r.jobs {
            ts.merge(&j.ts);
            first.get_or_insert(j);
            has_slat |= j.has_slat;
            clat_p |= j.clat_percentiles;
            lat_p |= j.lat_percentiles;
            slat_p |= j.slat_percentiles;
            if error == 0 {
                error = j.error;
            }
            elapsed = elapsed.max(j.elapsed_s);
        }
        for g in &r.groups {
            match &mut group {
                None => group = Some(GroupStat { groupid: 0, ..g.clone() }),
                Some(a) => {
                    for d in 0..4 {
                        a.io_bytes[d] += g.io_bytes[d];
                        a.agg_bw[d] += g.agg_bw[d];
                        a.max_run[d] = a.max_run[d].max(g.max_run[d]);
                        a.max_bw[d] = a.max_bw[d].max(g.max_bw[d]);
                        // A direction a group did not do has 0 there, which is no minimum.
                        if g.max_run[d] > 0 {
                            a.min_run[d] = if a.max_run[d] > 0 && a.min_run[d] > 0 {
                                a.min_run[d].min(g.min_run[d])
                            } else {
                                g.min_run[d]
                            };
                            a.min_bw[d] = if a.min_bw[d] > 0 { a.min_bw[d].min(g.min_bw[d]) } else { g.min_bw[d] };
                        }
                    }
                }
            }
        }
    }
    let base = first.cloned().unwrap_or_default();
    let job = JobReport {
        name: "All clients".into(),
        groupid: 0,
        pid: 0,
        error,
        error_text: String::new(),
        errors_counted: base.errors_counted,
        description: None,
        job_options: Vec::new(),
        ts,
        unified: base.unified,
        has_slat,
        // fiox prints the merged percentiles (fio 3.33's "All clients" has none).
        clat_percentiles: clat_p || !lat_p,
        lat_percentiles: lat_p,
        slat_percentiles: slat_p,
        percentile_list: if base.percentile_list.is_empty() {
            DEFAULT_PERCENTILES.to_vec()
        } else {
            base.percentile_list.clone()
        },
        units: base.units.clone(),
        iodepth: base.iodepth,
        latency_target: Default::default(),
        steady: None,
        job_start_ms: 0,
        job_start: None,
        elapsed_s: elapsed,
        ctime: ctime.to_string(),
        aggregate: true,
    };
    RunReport {
        version: crate::VERSION_STRING.to_string(),
        timestamp: now_ms / 1000,
        timestamp_ms: now_ms,
        time: ctime.to_string(),
        global_options: None,
        jobs: vec![job],
        groups: group.into_iter().collect(),
        disks: Vec::new(),
        fiox: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_stats::DirStat;

    fn host(values: &[u64], runtime: u64) -> RunReport {
        let mut ts = ThreadStat { jobs: 1, ..ThreadStat::default() };
        ts.dirs[0] = DirStat::active();
        for &v in values {
            ts.dirs[0].clat.add(v);
            ts.dirs[0].clat_hist.as_mut().unwrap().add(v);
        }
        ts.dirs[0].total_ios = values.len() as u64;
        ts.dirs[0].io_bytes = values.len() as u64 * 4096;
        ts.dirs[0].runtime_ms = runtime;
        let group = GroupStat::from_jobs(0, std::iter::once(&ts));
        RunReport {
            jobs: vec![JobReport { name: "j".into(), ts, ..Default::default() }],
            groups: vec![group],
            ..Default::default()
        }
    }

    /// Merging hosts' histograms equals the histogram of all their samples, in any order, so
    /// the merged percentiles are those of the whole population.
    #[test]
    fn merge_is_exact_and_order_free() {
        let mut x = 12345u64;
        let mut hosts = Vec::new();
        let mut all = fiox_stats::LatHist::default();
        for h in 0..4u64 {
            let vals: Vec<u64> = (0..500)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % (1000 * (h + 1) * 1000)
                })
                .collect();
            for &v in &vals {
                all.add(v);
            }
            hosts.push(host(&vals, 1000 + h * 10));
        }
        let a = all_clients(hosts.iter(), "t", 0);
        let b = all_clients(hosts.iter().rev(), "t", 0);
        let ha = a.jobs[0].ts.dirs[0].clat_hist.as_ref().unwrap();
        assert_eq!(ha, &all);
        assert_eq!(ha, b.jobs[0].ts.dirs[0].clat_hist.as_ref().unwrap());
        let list = [50.0, 99.0, 99.9];
        assert_eq!(ha.percentiles(&list), all.percentiles(&list));
        let d = &a.jobs[0].ts.dirs[0];
        assert_eq!((d.io_bytes, d.runtime_ms, d.total_ios), (2000 * 4096, 1030, 2000));
        assert_eq!(a.groups[0].io_bytes[0], 2000 * 4096);
        assert_eq!(a.groups[0].max_run[0], 1030);
        assert_eq!(a.groups[0].min_run[0], 1000);
        assert_eq!(a.jobs[0].ts.jobs, 4);
        // One group here: its merge is the whole merge.
        let g = per_group(hosts.iter(), "t", 0);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].jobs[0].name, "All clients, group 0");
        assert_eq!(g[0].jobs[0].ts.dirs[0].clat_hist.as_ref(), Some(&all));
    }
}
