//! Bad input is refused with a clear message, a non-zero exit and no I/O; the help switches work.

use crate::util::{fiox, listing, scratch, skip};

/// Runs fiox in an empty directory and checks it failed, created nothing and said `needle`.
fn refused(args: &[&str], files: &[(&str, &str)], needle: &str) {
    let dir = scratch();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let before = listing(dir.path());
    let o = fiox(dir.path(), args);
    assert_ne!(o.code, 0, "fiox {args:?} should fail; stdout: {}", o.stdout);
    assert!(o.stderr.contains(needle), "fiox {args:?}: expected {needle:?} in stderr, got: {}", o.stderr);
    assert!(o.stderr.starts_with("fiox: "), "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    assert_eq!(listing(dir.path()), before, "fiox {args:?} created or removed files");
}

#[test]
fn unknown_option_suggests_names() {
    refused(
        &["--blocksize2=4k", "--name=j", "--size=1m"],
        &[],
        "fiox: unknown option 'blocksize2' (command line); did you mean 'blocksize'?",
    );
    refused(
        &["j.fio"],
        &[("j.fio", "[j]\nsize=1m\niodepht=4\n")],
        "unknown option 'iodepht' (j.fio, line 3); did you mean 'iodepth'?",
    );
}

#[test]
fn bad_values_name_option_value_file_and_line() {
    refused(
        &["j.fio"],
        &[("j.fio", "[global]\nsize=1m\n[j]\nbs=q4\n")],
        "bad value 'q4' for option 'bs' (j.fio, line 4): 'q4' is not a size",
    );
    refused(&["--name=j", "--size=1m", "--rw=foo"], &[], "bad value 'foo' for option 'rw' (command line)");
    refused(&["--name=j", "--size=1m", "--direct=2"], &[], "bad value '2' for option 'direct'");
    refused(&["--name=j", "--size=1m", "--iodepth=0"], &[], "bad value '0' for option 'iodepth'");
    refused(&["--name=j", "--size=1m", "--runtime=abc"], &[], "bad value 'abc' for option 'runtime'");
}

#[test]
fn missing_file_empty_job_and_no_target() {
    refused(&["nope.fio"], &[], "cannot read job file 'nope.fio'");
    refused(&["g.fio"], &[("g.fio", "[global]\nbs=4k\n")], "defines no jobs");
    refused(&["--name=j", "--rw=read"], &[], "job 'j': no target size");
    refused(
        &["--name=j", "--size=1m", "--filename=/nonexistent/dir/f"],
        &[],
        "directory '/nonexistent/dir' does not exist",
    );
}

#[test]
fn unsupported_options_are_refused_not_ignored() {
    // Every option is implemented; a combination fiox does not run yet is refused by name.
    refused(
        &["--name=j", "--size=1m", "--rw=randrw", "--sprandom=1"],
        &[],
        "sprandom with rw=randrw is not supported yet",
    );
    // An engine's missing required option is named before anything connects.
    refused(&["--name=j", "--size=1m", "--ioengine=rbd"], &[], "ioengine=rbd needs pool=");
}

#[test]
fn parse_only_checks_without_io() {
    let dir = scratch();
    let o = fiox(dir.path(), &["--parse-only", "--name=j", "--size=1m", "--rw=randwrite"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.is_empty());
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn help_switches() {
    let dir = scratch();
    let o = fiox(dir.path(), &["--version"]);
    assert!(o.stdout.starts_with("fiox-"), "{}", o.stdout);
    let o = fiox(dir.path(), &["--cmdhelp=bs"]);
    assert!(o.stdout.contains("alias: blocksize"), "{}", o.stdout);
    let o = fiox(dir.path(), &["--enghelp"]);
    for e in ["psync", "libaio", "io_uring", "null"] {
        assert!(o.stdout.contains(&format!("\t{e}\n")), "{}", o.stdout);
    }
    let o = fiox(dir.path(), &["--enghelp=io_uring,fixedbufs"]);
    assert_eq!(o.code, 0);
    assert!(o.stdout.contains("fixedbufs"));
}

#[test]
fn writes_to_a_formatted_block_device_need_consent() {
    let dev = match crate::util::LoopDev::new(16 << 20) {
        Ok(d) => d,
        Err(why) => {
            skip!("no loop device: {why}");
        }
    };
    let mkfs = std::process::Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&dev.path).status();
    if !mkfs.is_ok_and(|s| s.success()) {
        skip!("mkfs.ext4 is not available");
    }
    let dir = scratch();
    let target = format!("--filename={}", dev.path.display());
    let write = ["--name=w", target.as_str(), "--rw=randwrite", "--size=1m", "--output-format=terse"];
    let o = fiox(dir.path(), &write);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("refusing to write") && o.stderr.contains("ext2/3/4 file system"), "{}", o.stderr);
    // Reading is always allowed, and consent allows writing.
    let o = fiox(dir.path(), &["--name=r", target.as_str(), "--rw=randread", "--size=1m", "--output-format=terse"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut consent = write.to_vec();
    consent.push("--allow_mounted_write=1");
    let o = fiox(dir.path(), &consent);
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn quick_runs_four_checks_and_removes_its_file() {
    let dir = scratch();
    let o = fiox(dir.path(), &["quick", ".", "--runtime=1", "--size=16m"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    for check in ["write bandwidth", "read IOPS", "read bandwidth", "write IOPS"] {
        assert!(o.stdout.contains(check), "{}", o.stdout);
    }
    assert!(o.stdout.contains("IOPS") && o.stdout.contains("B/s"), "{}", o.stdout);
    assert!(listing(dir.path()).is_empty(), "quick left files: {:?}", listing(dir.path()));
    // It never touches a file it did not create.
    std::fs::write(dir.path().join("fiox-quick.tmp"), b"precious").unwrap();
    let o = fiox(dir.path(), &["quick", ".", "--runtime=1", "--size=16m"]);
    assert_ne!(o.code, 0);
    assert_eq!(std::fs::read(dir.path().join("fiox-quick.tmp")).unwrap(), b"precious");
}

#[test]
fn sigint_stops_and_still_reports() {
    let dir = scratch();
    let child = std::process::Command::new(crate::util::fiox_bin())
        .args([
            "--name=t",
            "--filename=t.dat",
            "--size=1m",
            "--rw=read",
            "--runtime=60",
            "--time_based",
            "--output-format=json",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let pid = child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let t0 = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < std::time::Duration::from_secs(5), "fiox took too long to stop");
    assert_eq!(out.status.code(), Some(128), "fio exits 128 when stopped by a signal");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("terminating on signal 2"), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout holds only the JSON");
    assert!(json["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0);
    assert!(json["jobs"][0]["job_runtime"].as_u64().unwrap() < 5000);
}

#[test]
fn direct_io_sizes_must_fit_the_logical_block_size() {
    let dev = match crate::util::LoopDev::with_sector_size(16 << 20, 4096) {
        Ok(d) => d,
        Err(why) => {
            skip!("no loop device: {why}");
        }
    };
    let dir = scratch();
    let target = format!("--filename={}", dev.path.display());
    let o = fiox(dir.path(), &["--name=t", target.as_str(), "--rw=randread", "--bs=512", "--direct=1", "--size=1m"]);
    assert_ne!(o.code, 0);
    assert!(
        o.stderr.contains("512 is not a multiple of the logical block size") && o.stderr.contains("(4096 bytes)"),
        "{}",
        o.stderr
    );
    let o = fiox(
        dir.path(),
        &["--name=t", target.as_str(), "--rw=randread", "--bs=4k", "--direct=1", "--size=1m", "--output-format=terse"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
}
