//! Gathers the workers' results into a [`RunReport`]: one entry per job clone, or per group when
//! the group asked for `group_reporting`, plus the group totals.

use fiox_options::error::Origin;
use fiox_options::jobfile::RawOpt;
use fiox_report::{JobReport, LatencyTargetReport, RunReport, Units};
use fiox_stats::{GroupStat, ThreadStat, Unified};

use crate::plan::Plan;
use crate::runner::worker::WorkerResult;

/// fio 3.33 leaves value-less flags out of its JSON option echo, and echoes a job file's options
/// in the order it applies them (seen with `--debug=parse`): `lockfile`, `kb_base`, `unit_base`
/// and `cpus_allowed_policy` first, `filename` and `filename_format` after the other general
/// options, and the engine's own options after all of those (fio parses them once it knows the
/// engine); otherwise as written. Command-line options are applied before the job files, and
/// echoed first, as typed.
fn echo(opts: &[RawOpt]) -> Vec<(String, String)> {
    let rank = |o: &RawOpt| match o.origin {
        Origin::CommandLine => 0,
        Origin::File { .. } if !o.def.engines.is_empty() => 4,
        Origin::File { .. } => match o.def.name {
            "lockfile" | "kb_base" | "unit_base" | "cpus_allowed_policy" => 1,
            "filename" | "filename_format" => 3,
            _ => 2,
        },
    };
    let mut kept: Vec<&RawOpt> = opts.iter().filter(|o| o.value.is_some()).collect();
    kept.sort_by_key(|o| rank(o));
    kept.into_iter().filter_map(|o| o.value.as_ref().map(|v| (o.def.name.to_string(), v.trim().to_string()))).collect()
}

/// The report of a run (or of a run so far, for interval reports): the workers' results in plan
/// order, merged per group under `group_reporting`, with group totals, the disks' figures and
/// the time stamps of `now_epoch_ms`. The fiox manifest is added by the caller.
pub fn build(plan: &Plan, results: &[WorkerResult], disks: Vec<fiox_report::DiskUtil>, now_epoch_ms: u64) -> RunReport {
    let ctime = fiox_engine::sys::ctime((now_epoch_ms / 1000) as i64);
    let mut jobs: Vec<JobReport> = Vec::new();
    let groups_n = plan.workers.iter().map(|w| w.groupid).max().map_or(0, |g| g + 1);
    let mut groups = Vec::new();
    for g in 0..groups_n {
        // stats=0: the job ran, but no report shows it (nor its group's totals).
        let members: Vec<usize> =
            (0..results.len()).filter(|&i| plan.workers[i].groupid == g && plan.workers[i].spec.stats).collect();
        if members.is_empty() {
            continue;
        }
        // The group reports as its first job asks (fio keeps one setting per group).
        let unified = unified(plan.workers[members[0]].spec.unified_rw_reporting);
        let stats: Vec<ThreadStat> = members
            .iter()
            .map(|&i| {
                let mut ts = results[i].ts.clone();
                ts.unify(unified);
                ts
            })
            .collect();
        let merged = members.iter().any(|&i| plan.workers[i].spec.group_reporting);
        if merged {
            let mut ts = ThreadStat::default();
            for one in &stats {
                ts.merge(one);
            }
            // Under group_reporting fio's group line is that of the merged job: its bandwidth
            // as slowest and fastest, its runtime (the longest) as shortest and longest.
            let mut group = GroupStat::from_jobs(g, std::iter::once(&ts));
            group.unified = unified;
            groups.push(group);
            // fio names a merged report after the group's first job, with the last job's options.
            let first = members[0];
            let last = *members.last().expect("not empty");
            let mut report = job_report(plan, first, last, &results[first], ts, unified, &ctime);
            // Steady state is judged over the whole group and kept with one of its jobs.
            report.steady = members.iter().find_map(|&i| results[i].steady.clone());
            report.iodepth = members.iter().find_map(|&i| results[i].latency_depth).unwrap_or(report.iodepth);
            jobs.push(report);
        } else {
            let mut group = GroupStat::from_jobs(g, stats.iter());
            group.unified = unified;
            groups.push(group);
            for (&i, ts) in members.iter().zip(stats) {
                jobs.push(job_report(plan, i, i, &results[i], ts, unified, &ctime));
            }
        }
    }
    RunReport {
        version: crate::VERSION_STRING.to_string(),
        timestamp: now_epoch_ms / 1000,
        timestamp_ms: now_epoch_ms,
        time: ctime.clone(),
        global_options: plan.had_global_section.then(|| echo(&plan.global_options)),
        jobs,
        groups,
        disks,
        fiox: None,
    }
}

fn job_report(
    plan: &Plan,
    first: usize,
    options_from: usize,
    r: &WorkerResult,
    ts: ThreadStat,
    unified: Unified,
    ctime: &str,
) -> JobReport {
    let w = &plan.workers[first];
    let spec = &w.spec;
    let job = &plan.jobs[plan.workers[options_from].job_index];
    // fio prints slat only for I/O that had a submission phase.
    let has_slat = !w.engine.sync && ts.dirs.iter().any(|d| d.slat.samples > 0);
    JobReport {
        name: spec.name.clone(),
        groupid: w.groupid,
        pid: r.pid,
        error: ts.error,
        errors_counted: spec.errors.counted,
        error_text: if ts.error != 0 {
            let func = r.error_func.unwrap_or("io_u error");
            format!("func={func}, error={}", fiox_report::units::strerror(ts.error))
        } else {
            String::new()
        },
        description: spec.description.clone(),
        job_options: echo(&job.own),
        ts,
        unified,
        has_slat,
        clat_percentiles: spec.clat_percentiles,
        lat_percentiles: spec.lat_percentiles,
        slat_percentiles: spec.slat_percentiles,
        percentile_list: spec.percentile_list.clone(),
        units: Units { kb_base: spec.kb_base, unit_base: spec.unit_base, sig_figs: spec.significant_figures },
        iodepth: r.latency_depth.unwrap_or(spec.iodepth),
        latency_target: spec.latency_target.map_or_else(Default::default, |lt| LatencyTargetReport {
            // fio reports the target in nanoseconds and the window in microseconds.
            target_ns: lt.target_us * 1000,
            window_us: lt.window_us,
            percentile: lt.percentile,
        }),
        steady: r.steady.clone(),
        job_start_ms: r.start_epoch_ms,
        job_start: spec.job_start_clock.map(|id| job_start_on(id, r.start_epoch_ms)),
        elapsed_s: r.elapsed_ms.div_ceil(1000),
        ctime: ctime.to_string(),
        aggregate: false,
    }
}

fn unified(choice: fiox_options::UnifiedRw) -> Unified {
    match choice {
        fiox_options::UnifiedRw::Mixed => Unified::Mixed,
        fiox_options::UnifiedRw::Both => Unified::Both,
        fiox_options::UnifiedRw::None => Unified::None,
    }
}

/// `job_start_clock_id`: the job's start (`start_epoch_ms` on CLOCK_REALTIME) as clock `id`
/// read it, by the two clocks' difference now; 0 for a clock this kernel does not have.
fn job_start_on(id: i32, start_epoch_ms: u64) -> u64 {
    let (Some(now_id), Some(now_real)) = (fiox_engine::sys::clock_ms(id), fiox_engine::sys::clock_ms(0)) else {
        return 0;
    };
    now_id.saturating_sub(now_real.saturating_sub(start_epoch_ms))
}
