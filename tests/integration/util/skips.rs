//! Skipped tests, counted. A test that cannot run here (no cluster, no nbdkit, no namespaces)
//! ends through [`skip!`], which says why on stdout as before, and also appends a line
//! `TEST<TAB>REASON` to the file named by `FIOX_SKIP_LOG` when that is set, so that
//! `scripts/test.sh` can count the skips apart from the passes whatever the output capture.
//!
//! With `FIOX_REQUIRE_ALL=1` (set by `.ci/run`) a skip fails its test instead, unless its reason
//! starts with one of [`ALLOWED`]: the CI machine is one of this project's Debian VMs, run as
//! root, and `scripts/test.sh` installs every program the tests need (fio, Ceph, nbdkit and
//! nbdfuse, strace, Prometheus, OpenSSH, faketime, e2fsprogs, ...), so a skip there means the
//! suite lost coverage, not that the machine lacks something.

use std::io::Write;

/// Reasons (their first words) that a CI machine of this project's type may truly be unable to
/// avoid, each with why. Every other skip fails under `FIOX_REQUIRE_ALL=1`.
pub const ALLOWED: &[(&str, &str)] = &[
    (
        "just booted:",
        "moving CLOCK_MONOTONIC back in a time namespace needs the machine up for two minutes; \
         a fresh CI VM may run the test before that",
    ),
    (
        "no fio examples",
        "fio's example job files come from fio's source tree (../shared/fio-3.33/examples or \
         FIOX_FIO_EXAMPLES); Debian's fio package does not ship them, so scripts/test.sh cannot \
         install them",
    ),
];

/// Whether a skip with this reason is allowed where every test must run.
pub fn allowed(why: &str) -> bool {
    ALLOWED.iter().any(|(start, _)| why.starts_with(start))
}

/// Records that the running test skips, and why (see the module's text); fails the test instead
/// where every test must run and the reason is not one of [`ALLOWED`].
pub fn skipped(why: &str) {
    // libtest runs each test on a thread named after it; a helper thread falls back to "?".
    let test = std::thread::current().name().unwrap_or("?").to_string();
    let why = why.replace(['\n', '\t'], " ");
    if std::env::var_os("FIOX_REQUIRE_ALL").is_some_and(|v| v == "1") && !allowed(&why) {
        panic!("{test} skipped where every test must run (FIOX_REQUIRE_ALL=1): {why}");
    }
    println!("skipped: {why}");
    if let Some(path) = std::env::var_os("FIOX_SKIP_LOG") {
        // One write of one short line to a file opened for appending: lines from tests running
        // in parallel do not interleave.
        let line = format!("{test}\t{why}\n");
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("FIOX_SKIP_LOG={}: {e}", path.to_string_lossy()));
        f.write_all(line.as_bytes()).unwrap_or_else(|e| panic!("FIOX_SKIP_LOG={}: {e}", path.to_string_lossy()));
    }
}

/// Ends the calling test as skipped, with a reason made like `format!`'s arguments (see
/// [`skipped`]).
macro_rules! skip {
    ($($why:tt)+) => {
        return $crate::util::skips::skipped(&format!($($why)+))
    };
}
pub(crate) use skip;

#[test]
fn allowed_reasons_match_by_their_first_words() {
    assert!(allowed("just booted: up for 80 s only"));
    assert!(allowed("no fio examples at /x"));
    assert!(!allowed("nbdkit is not installed"));
    assert!(!allowed("the test cluster did not start: just booted:"));
}
