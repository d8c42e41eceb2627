//! `fiox quick [DIR]`: the four checks a drive vendor asks for (write bandwidth with 1 MiB random
//! writes, read IOPS with 4 KiB random reads, read bandwidth with 1 MiB random reads, write IOPS
//! with 4 KiB random writes), a few seconds each, on a test file in DIR, summed up in a small
//! table. Each check is an ordinary fio command line run through the same pipeline as any job,
//! so what `quick` measures is exactly what those commands measure.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use fiox_options::argv;

use crate::cli::{self, Arg, Complete, Flag, Syntax, HELP};

use crate::report::summary;
use crate::{plan, runner};

const FILE_NAME: &str = "fiox-quick.tmp";

struct Check {
    title: &'static str,
    rw: &'static str,
    bs: &'static str,
    /// Whether the result is read as IOPS (else bandwidth).
    iops: bool,
}

const CHECKS: [Check; 4] = [
    Check { title: "write bandwidth", rw: "randwrite", bs: "1m", iops: false },
    Check { title: "read IOPS", rw: "randread", bs: "4k", iops: true },
    Check { title: "read bandwidth", rw: "randread", bs: "1m", iops: false },
    Check { title: "write IOPS", rw: "randwrite", bs: "4k", iops: true },
];

/// Removes the test file when `quick` ends, however it ends, but only if `quick` made it.
struct TestFile(PathBuf);

impl Drop for TestFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `quick`'s flags, fio's options under the same names (so always written `--name=VALUE`).
pub const FLAGS: &[Flag] = &[
    HELP,
    Flag::value("--runtime", "SECS", "seconds per check (default 3)"),
    Flag::value("--size", "SIZE", "the test file's size (default 256m)"),
    Flag::value("--ioengine", "ENGINE", "the I/O engine (default io_uring)").completes(Complete::Engines),
];

/// `fiox quick --help`, also the man page's text for the command.
pub fn help() -> String {
    cli::usage(
        FLAGS,
        Syntax::Equals,
        22,
        "usage: fiox quick [DIR] [--runtime=SECS] [--size=SIZE] [--ioengine=ENGINE]\n\n\
         Runs four checks on a temporary file in DIR (default: the current folder),\n\
         with direct=1 and iodepth=32: 1 MiB random writes and reads (bandwidth) and\n\
         4 KiB random reads and writes (IOPS), and prints one table. The file is\n\
         removed afterwards; a file of that name quick did not create is never touched.\n\n",
        "",
    )
}

/// `fiox quick [DIR] [--runtime=SECS] [--size=SIZE] [--ioengine=ENGINE]`: runs the four checks
/// and prints their table.
pub fn run(args: &[String]) -> Result<ExitCode> {
    let mut dir = PathBuf::from(".");
    let mut runtime = "3".to_string();
    let mut size = "256m".to_string();
    let mut engine = "io_uring".to_string();
    let takes = || cli::labels(FLAGS, Syntax::Equals).iter().map(|l| format!("[{l}]")).collect::<Vec<_>>().join(" ");
    for a in cli::args(FLAGS, Syntax::Equals, args) {
        match a.map_err(|e| anyhow::anyhow!("{} (quick takes [DIR] {})", e.message("quick"), takes()))? {
            Arg::Flag(f, v) => match f.name {
                "--runtime" => runtime = v,
                "--size" => size = v,
                "--ioengine" => engine = v,
                "--help" => {
                    print!("{}", help());
                    return Ok(ExitCode::SUCCESS);
                }
                name => unreachable!("{name} is a quick flag without a meaning"),
            },
            Arg::Other(a) if a.starts_with('-') => {
                bail!("quick: unknown option '{a}'; quick takes [DIR] {}", takes())
            }
            Arg::Other(a) => dir = PathBuf::from(a),
        }
    }
    if !dir.is_dir() {
        bail!("quick: '{}' is not a directory", dir.display());
    }
    let path = dir.join(FILE_NAME);
    if path.exists() {
        bail!("quick: '{}' already exists; fiox will not overwrite a file it did not create", path.display());
    }
    let _guard = TestFile(path.clone());
    println!("fiox quick: {} ({size}, ioengine={engine}, direct=1, iodepth=32, {runtime}s per check)", path.display());
    println!("{:<18}{:>16}{:>14}{:>14}", "check", "result", "clat avg", "clat p99");
    for c in &CHECKS {
        let line = vec![
            format!("--filename={}", path.display()),
            format!("--size={size}"),
            format!("--ioengine={engine}"),
            "--direct=1".into(),
            "--iodepth=32".into(),
            format!("--rw={}", c.rw),
            format!("--bs={}", c.bs),
            format!("--runtime={runtime}"),
            "--time_based".into(),
            format!("--name={}", c.title.replace(' ', "-")),
        ];
        let cl = argv::parse(line)?;
        let set = fiox_options::assemble(&cl, &[], &crate::plan::machine_ctx())?;
        let plan = plan::build(set, false, None)?;
        let results =
            runner::run(&plan, std::sync::Arc::new(|_: &str| {}), std::sync::Arc::new(|_: &str| {}), None, None)
                .with_context(|| format!("quick: the {} check failed", c.title))?
                .workers;
        let report = summary::build(&plan, &results, Vec::new(), 0);
        let ts = &report.jobs[0].ts;
        let d = if c.rw.contains("read") { 0 } else { 1 };
        let ds = &ts.dirs[d];
        if let Some(e) = results.iter().find_map(|r| r.error.as_ref()) {
            bail!("quick: the {} check stopped on an error: {e}", c.title);
        }
        let runtime_ms = ds.runtime_ms.max(1);
        let result = if c.iops {
            format!("{} IOPS", human(ds.total_ios as f64 * 1000.0 / runtime_ms as f64, 1000.0, &["", "k", "M", "G"]))
        } else {
            format!(
                "{}B/s",
                human(ds.io_bytes as f64 * 1000.0 / runtime_ms as f64, 1024.0, &["", "Ki", "Mi", "Gi", "Ti"])
            )
        };
        let p99 = ds.clat_hist.as_ref().and_then(|h| h.percentiles(&[99.0]).first().map(|p| p.1)).unwrap_or(0);
        println!("{:<18}{:>16}{:>14}{:>14}", c.title, result, duration(ds.clat.mean()), duration(p99 as f64));
    }
    Ok(ExitCode::SUCCESS)
}

/// Three significant figures with a unit prefix: `45.2k`, `1.23Gi`.
fn human(mut v: f64, base: f64, prefixes: &[&str]) -> String {
    let mut i = 0;
    while v >= base && i + 1 < prefixes.len() {
        v /= base;
        i += 1;
    }
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{}", prefixes[i])
}

/// A latency in the unit that reads best.
fn duration(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}
