//! Every command line and job file from the write-ups in `shared/seeds` (transcribed under
//! `tests/data/seeds`) is accepted as written.

use crate::util::{data, fiox, scratch};

/// Splits a command line the way the shell would for these (no quotes are used in them).
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

#[test]
fn seed_command_lines_parse() {
    let text = std::fs::read_to_string(data("seeds/cmdlines.txt")).unwrap();
    let dir = scratch();
    std::fs::copy(data("seeds/seed001-runtime.fio"), dir.path().join("fio.conf")).unwrap();
    let mut n = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let mut args = vec!["--parse-only"];
        args.extend(words(line));
        let o = fiox(dir.path(), &args);
        assert_eq!(o.code, 0, "seed command line refused: fio {line}\n{}", o.stderr);
        n += 1;
    }
    assert!(n >= 30, "only {n} command lines found");
}

#[test]
fn seed_job_files_parse() {
    let mut n = 0;
    for e in std::fs::read_dir(data("seeds")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "fio") {
            let o = fiox(&data("seeds"), &["--parse-only", p.to_str().unwrap()]);
            assert_eq!(o.code, 0, "seed job file refused: {}\n{}", p.display(), o.stderr);
            n += 1;
        }
    }
    assert!(n >= 7, "only {n} job files found");
}
