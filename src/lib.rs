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

mod act;
mod bench_report;
mod ceph_run;
mod crctest;
mod debug;
pub mod depth_search;
mod device;
mod diskstats;
mod docs;
mod fio;
mod http;
mod idle_prof;
mod lab;
mod live;
mod manifest;
mod metrics;
mod multihost;
mod opendir;
mod plan;
mod quick;
mod rados_bench;
mod rbd_bench;
mod render;
mod repeat;
mod runner;
mod summary;

/// What fiox prints where fio prints `fio-3.33`.
pub const VERSION_STRING: &str = concat!("fiox-", env!("CARGO_PKG_VERSION"));

/// One of fiox's subcommands: the first argument, when it is one of these words.
pub struct Subcommand {
    pub name: &'static str,
    /// The usage line's arguments after `fiox NAME`.
    pub args: &'static str,
    /// What it does, in a line.
    pub summary: &'static str,
    /// Its `--help`.
    pub help: fn() -> String,
    pub run: fn(&[String]) -> Result<ExitCode>,
}

/// Every subcommand, in the order `--help`, the man page and the completions list them.
pub const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "quick",
        args: "[DIR]",
        summary: "four-point first look at the drive under DIR",
        help: quick::help,
        run: quick::run,
    },
    Subcommand {
        name: "sweep",
        args: "--vary OPTION=VALUES ... [job]",
        summary: "run a job over axes of values (see fiox sweep --help)",
        help: lab::sweep::help,
        run: lab::sweep::run,
    },
    Subcommand {
        name: "plot",
        args: "RESULTS...",
        summary: "charts from fio/fiox JSON reports and logs",
        help: lab::plot::help,
        run: lab::plot::run,
    },
    Subcommand {
        name: "compare",
        args: "A B [...]",
        summary: "results side by side, with ratios and significance",
        help: lab::compare::help,
        run: lab::compare::run,
    },
    Subcommand {
        name: "rbd",
        args: "bench --io-type read|write|rw [options] IMAGE",
        summary: "Ceph's rbd bench on an RBD image, same command line and output",
        help: rbd_bench::help,
        run: rbd_bench::run,
    },
    Subcommand {
        name: "rados",
        args: "-p POOL bench SECONDS write|seq|rand [options] | cleanup",
        summary: "Ceph's rados bench (write, seq, rand) and cleanup, same objects and output",
        help: rados_bench::help,
        run: rados_bench::run,
    },
    Subcommand {
        name: "ceph",
        args: "-p POOL [--threads N] [--runtime SECS] [--sizes 4k,4m] [options]",
        summary: "rados bench, rbd bench and fio's rbd engine on one cluster, one table",
        help: ceph_run::help,
        run: ceph_run::run,
    },
    Subcommand {
        name: "man",
        args: "",
        summary: "print the manual page (fiox.1)",
        help: docs::man_help,
        run: docs::man,
    },
    Subcommand {
        name: "completions",
        args: "bash|zsh|fish",
        summary: "print the shell's completion script",
        help: docs::completions_help,
        run: docs::completions,
    },
];

/// Runs fiox with the arguments after the program name.
pub fn run(args: Vec<String>) -> Result<ExitCode> {
    let Some(sub) = args.first().and_then(|a| SUBCOMMANDS.iter().find(|s| s.name == a)) else {
        return fio::run(args);
    };
    // fio would read a job file of that name; the subcommand wins, and the user is told how to
    // reach the file.
    let word = sub.name;
    if std::path::Path::new(word).is_file() {
        eprintln!("fiox: note: running the '{word}' subcommand; to run the job file '{word}', write ./{word}");
    }
    (sub.run)(&args[1..])
}
