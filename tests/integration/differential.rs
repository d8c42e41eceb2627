//! Differential tests: fiox and the real fio 3.33 on the same input must agree.

use crate::util::{data, fio, fiox};

/// `--showcmd` output identical to fio's apart from the program name.
fn same_showcmd(args: &[&str]) {
    let dir = data(".");
    let a = fio(&dir, args);
    let b = fiox(&dir, args);
    assert_eq!(a.code, 0, "fio {args:?} failed: {}", a.stderr);
    assert_eq!(b.code, 0, "fiox {args:?} failed: {}", b.stderr);
    let expected = a
        .stdout
        .replace("fio --", "fiox --")
        .replace("fio \n", "fiox \n");
    assert_eq!(b.stdout, expected, "--showcmd differs for {args:?}");
}

#[test]
fn showcmd_matches_fio_on_seed_job_files() {
    for e in std::fs::read_dir(data("seeds")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "fio") {
            let rel = format!("seeds/{}", p.file_name().unwrap().to_string_lossy());
            same_showcmd(&["--showcmd", &rel]);
        }
    }
}

#[test]
fn showcmd_matches_fio_on_tricky_files() {
    same_showcmd(&["--showcmd", "jobs/globals.fio"]);
    same_showcmd(&["--showcmd", "jobs/groups.fio", "jobs/globals.fio"]);
    same_showcmd(&["--showcmd", "--bs=1k", "jobs/globals.fio", "--iodepth=2"]);
    same_showcmd(&["--showcmd", "jobs/include.fio"]);
    same_showcmd(&[
        "-bs",
        "1k",
        "-thread",
        "--showcmd",
        "jobs/groups.fio",
        "--name=x",
        "--size=1m",
    ]);
}

#[test]
fn fio_accepts_nonsense_that_fiox_refuses() {
    // fio 3.33 takes `bs=4q` as 4 bytes; fiox says which suffix is wrong.
    let dir = crate::util::scratch();
    let a = fio(
        dir.path(),
        &["--parse-only", "--name=j", "--size=1m", "--bs=4q"],
    );
    assert_eq!(
        a.code, 0,
        "fio now refuses bs=4q; this test documents that it did not: {}",
        a.stderr
    );
    let b = fiox(
        dir.path(),
        &["--parse-only", "--name=j", "--size=1m", "--bs=4q"],
    );
    assert_ne!(b.code, 0);
    assert!(b.stderr.contains("unknown suffix 'q'"), "{}", b.stderr);
}
