//! Snapshot tests: every output format, byte for byte, on deterministic runs. The null engine
//! under the fixed test clock (`FIOX_TEST_CLOCK`, see `src/runner/clock.rs`) gives the same
//! latencies, runtimes, times and thread ids on every run, so the exact text can be pinned in
//! `tests/data/snapshots/`. The parts that describe the machine (fiox's own section and JSON
//! object) and the version number are cut out before comparing.
//!
//! After a deliberate change to a format, `FIOX_BLESS=1 cargo test snapshot` rewrites the
//! expected files; review the diff before committing it.

use crate::util::{data, fiox_bin, scratch};

/// Runs fiox deterministically and returns what it printed on stdout. The job file's runs take
/// a slower test clock (1 ms a reading) so that they last seconds: bandwidth samples, eta 0
/// and millisecond units.
fn run(args: &[&str]) -> String {
    let step = if args.contains(&"groups.fio") { "1000000" } else { "1000" };
    let dir = scratch();
    std::fs::copy(data("snapshots/groups.fio"), dir.path().join("groups.fio")).unwrap();
    let out = std::process::Command::new(fiox_bin())
        .args(args)
        .current_dir(dir.path())
        .env("FIOX_TEST_CLOCK", step)
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// What stays the same on every machine and version.
fn portable(text: &str) -> String {
    let mut t = text.replace(fiox::VERSION_STRING, "fiox-VERSION");
    // The normal output's fiox section comes last.
    if let Some(i) = t.find("\nfiox (") {
        t.truncate(i + 1);
    }
    // So does the JSON's `fiox` object: keep the document valid without it.
    while let Some(i) = t.find(",\n  \"fiox\" : {") {
        let end = t[i..].find("\n}\n").map(|e| i + e).unwrap_or(t.len());
        t.replace_range(i..end, "");
    }
    t
}

fn check(name: &str, args: &[&str]) {
    let first = portable(&run(args));
    assert_eq!(portable(&run(args)), first, "{name}: two runs under the test clock differ");
    let path = data(&format!("snapshots/{name}.out"));
    if std::env::var_os("FIOX_BLESS").is_some() {
        std::fs::write(&path, &first).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if first != expected {
        let diff: Vec<String> = expected
            .lines()
            .zip(first.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(5)
            .map(|(i, (a, b))| format!("line {}:\n  expected: {a}\n  got:      {b}", i + 1))
            .collect();
        panic!(
            "{name}: output differs from {} ({} vs {} lines)\n{}",
            path.display(),
            expected.lines().count(),
            first.lines().count(),
            diff.join("\n")
        );
    }
}

const ONE: [&str; 6] = ["--name=one", "--ioengine=null", "--rw=randrw", "--size=4m", "--bs=4k", "--iodepth=4"];

#[test]
fn snapshot_normal() {
    check("one-normal", &[&ONE[..], &["--output-format=normal"]].concat());
    check("groups-normal", &["groups.fio"]);
}

#[test]
fn snapshot_json() {
    check("one-json", &[&ONE[..], &["--output-format=json"]].concat());
    check("groups-json", &["groups.fio", "--output-format=json"]);
}

#[test]
fn snapshot_json_plus() {
    check("one-json-plus", &[&ONE[..], &["--output-format=json+"]].concat());
}

#[test]
fn snapshot_terse() {
    for v in ["2", "3", "4", "5"] {
        let tv = format!("--terse-version={v}");
        check(&format!("groups-terse-v{v}"), &["groups.fio", "--minimal", &tv]);
    }
}

#[test]
fn snapshot_unified_and_several_formats() {
    check("both-normal-json", &[&ONE[..], &["--unified_rw_reporting=both", "--output-format=normal,json"]].concat());
    check("mixed-terse", &[&ONE[..], &["--unified_rw_reporting=mixed", "--minimal"]].concat());
}
