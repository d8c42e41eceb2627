//! `--debug=CLASS[,CLASS...]`: fio's trace lines, on standard output where fio prints them,
//! each `CLASS PID text` (the class padded to 8 columns). Every fio 3.33 class is accepted;
//! fiox traces `parse` (each option as it is read), `file` (opens, cache drops, closes), `io`
//! (each I/O queued and completed), `mem` (the I/O buffers) and `process` (job start and end).
//! The other classes have nothing of fiox's to trace and are accepted silently.

use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering};

/// fio 3.33's classes, in `--debug=help`'s order.
pub const CLASSES: &[&str] = &[
    "process",
    "file",
    "io",
    "mem",
    "blktrace",
    "verify",
    "random",
    "parse",
    "diskutil",
    "job",
    "mutex",
    "profile",
    "time",
    "net",
    "rate",
    "compress",
    "steadystate",
    "helperthread",
    "zbd",
];

static MASK: AtomicU32 = AtomicU32::new(0);

/// The text `--debug=help` prints (fio's line).
pub fn help() -> String {
    format!("fio: dumping debug options:{},all\n", CLASSES.join(","))
}

/// Reads the list and switches the classes on; returns fio's "set debug option" lines.
pub fn enable(list: &str) -> anyhow::Result<String> {
    let mut mask = 0u32;
    let mut lines = String::new();
    for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if word == "all" {
            mask = u32::MAX;
            lines.push_str("fio: set all debug options\n");
            continue;
        }
        let Some(i) = CLASSES.iter().position(|c| *c == word) else {
            anyhow::bail!(
                "--debug={list}: unknown class '{word}' (known: {}, all; --debug=help lists them)",
                CLASSES.join(", ")
            );
        };
        mask |= 1 << i;
        lines.push_str(&format!("fio: set debug option {word}\n"));
    }
    MASK.store(mask, Ordering::Relaxed);
    Ok(lines)
}

/// Whether `class` is traced. One relaxed load: cheap enough for the per-I/O path.
#[inline]
pub fn on(class: &str) -> bool {
    let mask = MASK.load(Ordering::Relaxed);
    mask != 0 && CLASSES.iter().position(|c| *c == class).is_some_and(|i| mask & (1 << i) != 0)
}

/// The `io` class's bit in the mask (its place in [`CLASSES`]).
const IO_BIT: u32 = 1 << 2;

/// Whether `io` is traced: one relaxed load and one bit test, for the two checks per I/O.
#[inline(always)]
pub fn io_on() -> bool {
    MASK.load(Ordering::Relaxed) & IO_BIT != 0
}

/// Prints one trace line if `class` is on; `text` is only built then.
#[inline]
pub fn trace(class: &str, text: impl FnOnce() -> String) {
    if on(class) {
        let line = format!("{class:<8} {} {}\n", std::process::id(), text());
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_lines() {
        assert!(enable("io,nope").is_err());
        assert_eq!(enable("io,parse").unwrap(), "fio: set debug option io\nfio: set debug option parse\n");
        assert!(on("io") && on("parse") && !on("file"));
        assert!(io_on(), "IO_BIT is the io class's place in CLASSES");
        assert_eq!(CLASSES[IO_BIT.trailing_zeros() as usize], "io");
        assert_eq!(enable("all").unwrap(), "fio: set all debug options\n");
        assert!(on("zbd"));
        enable("").unwrap();
        assert!(!on("io") && !io_on());
    }
}
