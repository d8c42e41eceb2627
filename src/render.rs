//! The runner's one contact point with the report formatters: what fio prints before a run, and
//! the finished report in each requested format.

use fiox_options::argv::Format;
use fiox_report::normal::{self, JobHeader};
use fiox_report::{RunReport, Units};

use crate::plan::Plan;

/// The lines fio prints before a run: one per job (a `...` line for clones), the version and
/// "Starting N processes".
pub fn header(plan: &Plan) -> String {
    let mut s = String::new();
    for job in &plan.jobs {
        let spec = &job.spec;
        let bs = [0, 1, 2].map(|d| {
            if !spec.bssplit[d].is_empty() {
                let sizes = spec.bssplit[d].iter().map(|e| e.0);
                (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0))
            } else {
                spec.bsrange[d].unwrap_or((spec.bs[d], spec.bs[d]))
            }
        });
        let h = JobHeader {
            name: &spec.name,
            groupid: job.groupid,
            rw: spec.rw.name(),
            bs,
            ioengine: spec.ioengine,
            iodepth: spec.iodepth,
            numjobs: spec.numjobs,
        };
        let units = Units { kb_base: spec.kb_base, unit_base: spec.unit_base, sig_figs: spec.significant_figures };
        s.push_str(&normal::job_header(&h, &units));
    }
    s.push_str(crate::VERSION_STRING);
    s.push('\n');
    let (mut threads, mut procs) = (0, 0);
    for w in &plan.workers {
        if w.spec.thread {
            threads += 1;
        } else {
            procs += 1;
        }
    }
    s.push_str(&normal::starting_line(procs, threads));
    s
}

pub fn render(format: Format, report: &RunReport, terse_version: u8, terse_header: bool) -> String {
    match format {
        Format::Json => fiox_report::json::render(report, false),
        Format::JsonPlus => fiox_report::json::render(report, true),
        Format::Terse if terse_header => {
            let unified = report.jobs.first().map(|j| j.unified).unwrap_or_default();
            fiox_report::terse::header_with_disks(terse_version, report.disks.len(), unified)
                + &fiox_report::terse::render(report, terse_version)
        }
        Format::Terse => fiox_report::terse::render(report, terse_version),
        Format::Normal => normal::render(report),
    }
}
