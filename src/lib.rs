//! fiox: a fio-compatible storage I/O benchmark.
//!
//! The pipeline is linear: parse the command line and job files (`fiox-options`), resolve and
//! check every job, plan the files (`plan`), run the workers (`runner`, on `fiox-engine`), gather
//! the statistics (`report`, on `fiox-stats`) and render the requested formats
//! (`fiox-report`). Nothing touches a file or device until every job has been parsed and
//! checked. `fio` is that pipeline's front end; `multihost`, `lab`, `ceph` and `serve` are the
//! wings beside it (ARCHITECTURE.md draws the arrows between them).
#![forbid(unsafe_code)]

use std::process::ExitCode;

use anyhow::Result;

mod ceph;
mod cli;
mod fio;
mod lab;
mod multihost;
mod plan;
mod report;
mod runner;
mod s3;
mod serve;

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
    /// Its flags: the table that parses them, lists them in `--help` and completes them.
    pub flags: &'static [cli::Flag],
    pub syntax: cli::Syntax,
    /// What it takes besides its flags, for the completions.
    pub operands: cli::Operands,
    pub run: fn(&[String]) -> Result<ExitCode>,
}

/// Every subcommand, in the order `--help`, the man page and the completions list them.
pub const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "quick",
        args: "[DIR]",
        summary: "four-point first look at the drive under DIR",
        help: lab::quick::help,
        flags: lab::quick::FLAGS,
        syntax: cli::Syntax::Equals,
        operands: cli::Operands::Dirs,
        run: lab::quick::run,
    },
    Subcommand {
        name: "sweep",
        args: "--vary OPTION=VALUES ... [job]",
        summary: "run a job over axes of values (see fiox sweep --help)",
        help: lab::sweep::help,
        flags: lab::cli::SWEEP,
        syntax: cli::Syntax::Gnu,
        operands: cli::Operands::Fio,
        run: lab::sweep::run,
    },
    Subcommand {
        name: "plot",
        args: "RESULTS...",
        summary: "charts from fio/fiox JSON reports and logs",
        help: lab::plot::help,
        flags: lab::cli::PLOT,
        syntax: cli::Syntax::Gnu,
        operands: cli::Operands::Files,
        run: lab::plot::run,
    },
    Subcommand {
        name: "compare",
        args: "A B [...]",
        summary: "results side by side, with ratios and significance",
        help: lab::compare::help,
        flags: lab::cli::COMPARE,
        syntax: cli::Syntax::Gnu,
        operands: cli::Operands::Files,
        run: lab::compare::run,
    },
    Subcommand {
        name: "rbd",
        args: "bench --io-type read|write|rw [options] IMAGE",
        summary: "Ceph's rbd bench on an RBD image, same command line and output",
        help: ceph::rbd_bench::help,
        flags: ceph::rbd_bench::FLAGS,
        syntax: cli::Syntax::Ceph,
        operands: cli::Operands::Words(&["bench", "bench-write"]),
        run: ceph::rbd_bench::run,
    },
    Subcommand {
        name: "rados",
        args: "-p POOL bench SECONDS write|seq|rand [options] | cleanup",
        summary: "Ceph's rados bench (write, seq, rand) and cleanup, same objects and output",
        help: ceph::rados_bench::help,
        flags: ceph::rados_bench::FLAGS,
        syntax: cli::Syntax::Ceph,
        operands: cli::Operands::Words(&["bench", "cleanup"]),
        run: ceph::rados_bench::run,
    },
    Subcommand {
        name: "ceph",
        args: "-p POOL [--threads N] [--runtime SECS] [--sizes 4k,4m] [options]",
        summary: "rados bench, rbd bench and fio's rbd engine on one cluster, one table",
        help: ceph::run::help,
        flags: ceph::run::FLAGS,
        syntax: cli::Syntax::Gnu,
        operands: cli::Operands::Nothing,
        run: ceph::run::run,
    },
    Subcommand {
        name: "s3",
        args: "bench put|get|delete|stat|list|mixed|multipart|multipart-put [options]",
        summary: "S3 benchmark with warp's flags; exact merged percentiles, fio-shaped JSON",
        help: s3::help,
        flags: s3::FLAGS,
        syntax: cli::Syntax::Gnu,
        operands: cli::Operands::Words(&["bench"]),
        run: s3_bench,
    },
    Subcommand {
        name: "man",
        args: "",
        summary: "print the manual page (fiox.1)",
        help: cli::docs::man_help,
        flags: &[cli::HELP],
        syntax: cli::Syntax::Gnu,
        operands: cli::Operands::Nothing,
        run: cli::docs::man,
    },
    Subcommand {
        name: "completions",
        args: "bash|zsh|fish",
        summary: "print the shell's completion script",
        help: cli::docs::completions_help,
        flags: &[cli::HELP],
        syntax: cli::Syntax::Gnu,
        operands: cli::Operands::Words(cli::docs::SHELLS),
        run: cli::docs::completions,
    },
];

/// Runs fiox with the arguments after the program name.
/// `fiox s3 ...`: with hosts (`--client`, `--hosts`, `--hosts-file`, `--join`), the bench on
/// fiox servers through the multi-host wing.
fn s3_bench(args: &[String]) -> Result<ExitCode> {
    if multihost::coordinator::s3_multihost(args) {
        return multihost::coordinator::run_s3(args);
    }
    s3::run(args)
}

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
