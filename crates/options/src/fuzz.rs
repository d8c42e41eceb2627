//! Fuzz targets for the parsers, and a small mutation fuzzer that drives them for a bounded time
//! as an ordinary test (cargo-fuzz needs a nightly toolchain, which CI does not have).
//!
//! The property is simple: no input makes a parser panic. Every target takes raw bytes so that
//! an external fuzzer (libFuzzer, AFL++) can call it unchanged.

use std::path::Path;

use crate::table;
use crate::value::{self, Ctx};

/// Parses bytes as a job file and resolves its jobs.
pub fn job_file(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let env = |v: &str| (v == "HOME").then(|| "/root".to_string());
    if let Ok(f) = crate::jobfile::parse_text(&text, Path::new("fuzz.fio"), &env) {
        let cl = crate::argv::CommandLine::default();
        let _ = crate::job::assemble(&cl, std::slice::from_ref(&f), &Ctx::default());
        let _ = crate::showcmd::render("fiox", &cl, &[f]);
    }
}

/// Parses bytes as the value of every option in the table (first byte picks kb_base).
pub fn option_value(data: &[u8]) {
    let (kb, rest) = data.split_first().map_or((0, data), |(k, r)| (*k, r));
    let ctx = Ctx { kb_base: if kb & 1 == 0 { 1024 } else { 1000 }, ..Ctx::default() };
    let text = String::from_utf8_lossy(rest);
    for o in table::all() {
        let _ = value::parse(o, &text, &ctx);
        // How several lines combine, and whether a line changes anything at all.
        let _ = value::leaves_unchanged(o, &text, &ctx);
        let _ = value::fold_readings(o.pieces, value::readings(o, &text, &ctx));
    }
}

/// Splits bytes on NUL into a command line and parses it.
pub fn command_line(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let args: Vec<String> = text.split('\0').map(str::to_string).collect();
    if let Ok(cl) = crate::argv::parse(args) {
        let _ = crate::job::assemble(&cl, &[], &Ctx::default());
        // A profile's jobs are built from the same command line's options.
        if let Ok(Some(p)) = crate::profile::requested(&cl) {
            if let Ok(f) = crate::profile::sections(p, &cl, &Ctx::default()) {
                let _ = crate::job::assemble(&cl, &[f], &Ctx::default());
            }
        }
    }
}

/// Parses bytes as an iolog or blktrace file (`read_iolog`), and merges them with themselves
/// (`merge_blktrace_file`).
pub fn iolog(data: &[u8]) {
    let _ = crate::iolog::parse(data);
    if let Ok(merged) = crate::iolog::merge_blktrace(&[data, data], &[50.0, 100.0], &[2.0, 1.0]) {
        let _ = crate::iolog::parse(&merged);
    }
}

/// Tokens that tend to reach interesting parser states.
const DICT: &[&str] = &[
    "[global]",
    "[",
    "]",
    "=",
    "#",
    ";",
    "\n",
    ":",
    ",",
    "-",
    "(",
    ")",
    "((",
    "*",
    "/",
    "%",
    "^",
    "k",
    "KiB",
    "m",
    "0x",
    "${HOME}",
    "${",
    "$pagesize",
    "$ncpus",
    "include ",
    "bs=",
    "rw=randread:",
    "bssplit=4k/",
    "cmdprio_bssplit=4k/30/2/",
    "ioengine=libaio\ncmdprio_percentage=",
    "unified_rw_reporting=",
    "log_window_value=",
    "clocksource=",
    "size=",
    "18446744073709551616",
    "-1",
    "1e308",
    ".",
    "stonewall",
    "numjobs=",
    "kb_base=1000",
    "ioengine=",
    "\u{4e2d}",
];

/// Runs `target` on mutations of `corpus` with this crate's dictionary (the shared fuzzer,
/// `fiox-fuzz`) for `secs` seconds; returns the number of inputs. A panic propagates with the
/// input printed, so a failure can be reproduced.
pub fn run(target: fn(&[u8]), corpus: &[Vec<u8>], secs: f64, seed: u64) -> u64 {
    let dict: Vec<&[u8]> = DICT.iter().map(|t| t.as_bytes()).collect();
    fiox_fuzz::run(target, corpus, &dict, secs, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Vec<Vec<u8>> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data");
        let mut out = Vec::new();
        for sub in ["seeds", "jobs"] {
            for e in std::fs::read_dir(format!("{dir}/{sub}")).expect("test data exists") {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "fio" || x == "inc" || x == "txt") {
                    out.push(std::fs::read(p).unwrap());
                }
            }
        }
        assert!(out.len() >= 8, "fuzz corpus is missing");
        out
    }

    #[test]
    fn fuzz_job_files() {
        let n = run(job_file, &corpus(), fiox_fuzz::secs(), 0x1234);
        assert!(n > 100, "only {n} inputs tried");
    }

    #[test]
    fn fuzz_option_values() {
        let values: Vec<Vec<u8>> = [
            "4k",
            "1MiB",
            "4k-64k",
            "4k/50:64k/50,8k/100",
            "randread:8",
            "(1+2)*3",
            "50%",
            "10s",
            "1:5:99.9",
            "0x10",
            ",8k,",
            "20%:4k",
            "4k:20%x",
            "1s:3s",
            "4k:8k:16k:32k",
            "1k-2k-3k",
            ":8k",
            ",",
            "8k-1k,4k-2k",
            "randread:",
            "read,write",
            "50:99,5",
            "-",
            "%",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let n = run(option_value, &values, fiox_fuzz::secs(), 0x5678);
        assert!(n > 100, "only {n} inputs tried");
    }

    #[test]
    fn fuzz_iologs() {
        use crate::iolog::BlkRecord;
        let mut blk = Vec::new();
        for (i, w) in [(0u64, false), (1, true), (2, false)] {
            blk.extend_from_slice(&BlkRecord::queue(i * 1000, 8 << 20, i * 8, 4096, w).to_bytes());
        }
        let logs: Vec<Vec<u8>> = vec![
            b"fio version 2 iolog\n/f add\n/f open\n/f read 0 4096\n/f write 4096 512\n/f sync 0 0\n/f close\n"
                .to_vec(),
            b"fio version 3 iolog\n5 /f add\n9 /f open\n12 /f trim 0 4096\n900 /f datasync\n999 /f close\n".to_vec(),
            blk,
        ];
        let n = run(iolog, &logs, fiox_fuzz::secs(), 0xdef0);
        assert!(n > 100, "only {n} inputs tried");
    }

    #[test]
    fn fuzz_command_lines() {
        let lines: Vec<Vec<u8>> = corpus()
            .iter()
            .flat_map(|c| {
                String::from_utf8_lossy(c).lines().map(|l| l.replace(' ', "\0").into_bytes()).collect::<Vec<_>>()
            })
            .filter(|l| l.starts_with(b"-"))
            .chain([
                b"--profile=act\0--device-names=a:b\0--load=3\0--threads-per-queue=5\0--prep".to_vec(),
                b"--profile=tiobench\0--size=7\0--block=8k\0--numruns=2\0--threads=3".to_vec(),
            ])
            .collect();
        let n = run(command_line, &lines, fiox_fuzz::secs(), 0x9abc);
        assert!(n > 100, "only {n} inputs tried");
    }
}
