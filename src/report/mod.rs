//! From a run's results to `fiox-report`'s model, shared by a local run (`fio`) and multi-host
//! servers and coordinators (`multihost`): [`summary`] turns the workers' results into a
//! `RunReport`, [`manifest`] adds fiox's run manifest, [`repeat`] judges `--repeat-until`'s
//! runs, and this module says what fio prints
//! before a run and maps the command line's format and options to `fiox-report`'s terms.

pub mod manifest;
pub mod repeat;
pub mod summary;

use fiox_options::argv::{Format, Globals};
use fiox_report::normal::{self, JobHeader};
use fiox_report::{ReportOpts, Units};

use crate::plan::Plan;

/// The lines fio prints before a run: one per job (a `...` line for clones), the version and
/// "Starting N processes".
pub fn header(plan: &Plan) -> String {
    let mut s = String::new();
    for job in &plan.jobs {
        let spec = &job.spec;
        if fiox_engine::find(spec.ioengine).is_some_and(|e| e.no_io) {
            // fio prints no header line for cpuio and exec jobs, only the clones' `...`.
            if spec.numjobs > 1 {
                s.push_str("...\n");
            }
            continue;
        }
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

/// What the command line asks of the report's printing.
pub fn opts(g: &Globals) -> ReportOpts {
    ReportOpts { terse_version: g.terse_version, terse_header: g.terse_header, json_lines: g.json_lines }
}

/// A format as `fiox-report` names it (the report crate does not depend on the option parser).
pub fn format(f: Format) -> fiox_report::Format {
    match f {
        Format::Normal => fiox_report::Format::Normal,
        Format::Terse => fiox_report::Format::Terse,
        Format::Json => fiox_report::Format::Json,
        Format::JsonPlus => fiox_report::Format::JsonPlus,
    }
}

/// The requested formats in the order fio 3.33 prints them, whatever order the list names:
/// terse, then the JSON document (one, json+ when both json and json+ are asked for), then the
/// normal report. Harnesses split a combined output by position.
pub fn print_order(formats: &[Format]) -> Vec<Format> {
    let json = if formats.contains(&Format::JsonPlus) {
        Some(Format::JsonPlus)
    } else {
        formats.contains(&Format::Json).then_some(Format::Json)
    };
    let terse = formats.contains(&Format::Terse).then_some(Format::Terse);
    let normal = formats.contains(&Format::Normal).then_some(Format::Normal);
    [terse, json, normal].into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_print_in_fios_order() {
        use Format::*;
        assert_eq!(print_order(&[Json, Normal, Terse]), [Terse, Json, Normal]);
        assert_eq!(print_order(&[Normal, JsonPlus, Json]), [JsonPlus, Normal]);
        assert_eq!(print_order(&[Normal]), [Normal]);
    }
}
