//! The runner's one contact point with the report formatters.

use fiox_options::argv::Format;
use fiox_report::RunReport;

pub fn job_header(
    name: &str,
    groupid: u32,
    rw: &str,
    bs: [u64; 3],
    ioengine: &str,
    iodepth: u32,
) -> String {
    format!("{name}: (g={groupid}): rw={rw}, bs=(R) {0}B-{0}B, (W) {1}B-{1}B, (T) {2}B-{2}B, ioengine={ioengine}, iodepth={iodepth}\n", bs[0], bs[1], bs[2])
}

pub fn starting_line(n: usize, threads: bool) -> String {
    let what = if threads { "thread" } else { "process" };
    let plural = if n == 1 {
        what.to_string()
    } else if threads {
        "threads".into()
    } else {
        "processes".into()
    };
    format!("Starting {n} {plural}\n")
}

pub fn render(format: Format, report: &RunReport, terse_version: u8) -> String {
    let _ = terse_version;
    format!(
        "{format:?}: {:#?}\n",
        report
            .jobs
            .iter()
            .map(|j| (
                &j.name,
                j.groupid,
                j.ts.dirs
                    .iter()
                    .map(|d| (d.io_bytes, d.total_ios))
                    .collect::<Vec<_>>()
            ))
            .collect::<Vec<_>>()
    )
}
