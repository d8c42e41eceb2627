//! fiox: a fio-compatible storage I/O benchmark.
//!
//! The pipeline is linear: parse the command line and job files (`fiox-options`), resolve and
//! check every job, plan the files (`plan`), run the workers (`runner`, on `fiox-engine`), gather
//! the statistics (`summary`, on `fiox-stats`) and render the requested formats
//! (`fiox-report`). Nothing touches a file or device until every job has been parsed and
//! checked.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use anyhow::Result;

pub mod depth_search;
mod device;
mod diskstats;
mod fio;
mod lab;
mod manifest;
mod opendir;
mod plan;
mod quick;
mod rados_bench;
mod rbd_bench;
mod render;
mod runner;
mod summary;

/// What fiox prints where fio prints `fio-3.33`.
pub const VERSION_STRING: &str = concat!("fiox-", env!("CARGO_PKG_VERSION"));

/// Runs fiox with the arguments after the program name.
pub fn run(args: Vec<String>) -> Result<ExitCode> {
    let sub = args.first().map(String::as_str);
    if let Some(word @ ("quick" | "sweep" | "plot" | "compare" | "rbd" | "rados")) = sub {
        // fio would read a job file of that name; the subcommand wins, and the user is told
        // how to reach the file.
        if std::path::Path::new(word).is_file() {
            eprintln!("fiox: note: running the '{word}' subcommand; to run the job file '{word}', write ./{word}");
        }
    }
    match sub {
        Some("quick") => quick::run(&args[1..]),
        Some("sweep") => lab::sweep::run(&args[1..]),
        Some("plot") => lab::plot::run(&args[1..]),
        Some("compare") => lab::compare::run(&args[1..]),
        Some("rbd") => rbd_bench::run(&args[1..]),
        Some("rados") => rados_bench::run(&args[1..]),
        _ => fio::run(args),
    }
}
