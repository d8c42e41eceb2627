//! Differential tests: fiox and the real fio 3.33 on the same input must agree.

use crate::util::{data, fio, fiox, skip};

/// `--showcmd` output identical to fio's apart from the program name.
fn same_showcmd(args: &[&str]) {
    let dir = data(".");
    let a = fio(&dir, args);
    let b = fiox(&dir, args);
    assert_eq!(a.code, 0, "fio {args:?} failed: {}", a.stderr);
    assert_eq!(b.code, 0, "fiox {args:?} failed: {}", b.stderr);
    let expected = a.stdout.replace("fio --", "fiox --").replace("fio \n", "fiox \n");
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
    same_showcmd(&["-bs", "1k", "-thread", "--showcmd", "jobs/groups.fio", "--name=x", "--size=1m"]);
}

#[test]
fn a_slip_fio_reads_leniently_runs_and_parse_only_names_it() {
    // fio 3.33 takes `bs=4q` as 4 bytes; fiox reads it the same way, keeps stderr empty, and
    // `--parse-only` says on stdout what it read.
    let dir = crate::util::scratch();
    let a = fio(dir.path(), &["--parse-only", "--name=j", "--size=1m", "--bs=4q"]);
    assert_eq!(a.code, 0, "fio now refuses bs=4q: {}", a.stderr);
    let b = fiox(dir.path(), &["--parse-only", "--name=j", "--size=1m", "--bs=4q"]);
    assert_eq!(b.code, 0, "{}", b.stderr);
    assert_eq!(b.stderr, "");
    assert!(b.stdout.contains("bs=4q: '4q' read as 4, ignoring 'q'"), "{}", b.stdout);
}

use serde_json::Value;
use std::path::Path;

fn json_of(out: &crate::util::Out, who: &str) -> Value {
    assert_eq!(out.code, 0, "{who} failed: {}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{who} printed invalid JSON ({e}): {}", out.stdout))
}

/// `(jobname, groupid, job options)` of every reported job.
fn jobs_of(v: &Value) -> Vec<(String, u64, Value)> {
    v["jobs"]
        .as_array()
        .expect("jobs array")
        .iter()
        .map(|j| (j["jobname"].as_str().unwrap().to_string(), j["groupid"].as_u64().unwrap(), j["job options"].clone()))
        .collect()
}

/// Runs both tools with the same arguments in the same (scratch) directory and compares the job
/// list, groups and option echo of their JSON output.
fn same_jobs(dir: &Path, args: &[&str]) {
    let mut a: Vec<&str> = args.to_vec();
    a.push("--output-format=json");
    let f = json_of(&fio(dir, &a), "fio");
    let x = json_of(&fiox(dir, &a), "fiox");
    assert_eq!(jobs_of(&x), jobs_of(&f), "jobs, groups or job options differ for {args:?}");
    assert_eq!(x.get("global options"), f.get("global options"), "global options differ for {args:?}");
}

/// A seed job file made short: the null engine, small sizes, no long runtimes.
fn shrink_job_file(text: &str) -> String {
    text.lines()
        .map(|l| {
            let key = l.split(['=', ' ', '#']).next().unwrap_or("");
            match key {
                "ioengine" => "ioengine=null".to_string(),
                "size" => "size=256k".to_string(),
                "lockmem" => "lockmem=1m".to_string(),
                "runtime" => "runtime=1".to_string(),
                "directory" => "directory=.".to_string(),
                _ => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn jobs_groups_and_options_match_fio_for_seed_job_files() {
    let dir = crate::util::scratch();
    for e in std::fs::read_dir(data("seeds")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "fio") {
            let text = shrink_job_file(&std::fs::read_to_string(&p).unwrap());
            let name = p.file_name().unwrap().to_str().unwrap();
            std::fs::write(dir.path().join(name), text).unwrap();
            same_jobs(dir.path(), &[name]);
        }
    }
}

#[test]
fn jobs_groups_and_options_match_fio_for_crafted_files() {
    let dir = crate::util::scratch();
    for name in ["groups.fio", "include.fio", "fragment.inc"] {
        std::fs::copy(data("jobs").join(name), dir.path().join(name)).unwrap();
    }
    same_jobs(dir.path(), &["groups.fio"]);
    same_jobs(dir.path(), &["include.fio"]);
    same_jobs(dir.path(), &["groups.fio", "--section=c"]);
    let clones =
        "[global]\nioengine=null\nsize=64k\nnumjobs=3\n[a]\nrw=read\n[b]\nrw=write\ngroup_reporting\nstonewall\n";
    std::fs::write(dir.path().join("clones.fio"), clones).unwrap();
    same_jobs(dir.path(), &["clones.fio"]);
}

#[test]
fn jobs_groups_and_options_match_fio_for_seed_command_lines() {
    let dir = crate::util::scratch();
    let text = std::fs::read_to_string(data("seeds/cmdlines.txt")).unwrap();
    for line in text.lines().filter(|l| l.starts_with('-')) {
        // Shrink: the null engine, a small size, no long runtime, and no device paths.
        let mut args: Vec<String> = Vec::new();
        let mut words = line.split_whitespace().peekable();
        while let Some(w) = words.next() {
            let key = w.trim_start_matches('-').split('=').next().unwrap().to_string();
            let takes_next = !w.contains('=') && matches!(key.as_str(), "iodepth");
            let value = if takes_next { words.next().map(str::to_string) } else { None };
            match key.as_str() {
                "filename" => args.push(format!("{}=t.dat", w.split('=').next().unwrap())),
                "size" | "filesize" => args.push(format!("{}=8m", w.split('=').next().unwrap())),
                "runtime" | "ramp_time" | "time_based" => {}
                "ioengine" => {}
                _ => {
                    args.push(w.to_string());
                    if let Some(v) = value {
                        args.push(v);
                    }
                }
            }
        }
        args.insert(0, "--ioengine=null".into());
        args.retain(|a| !a.contains("numjobs") && !a.contains("bs=8M"));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        same_jobs(dir.path(), &refs);
    }
}

/// `(io_bytes, total_ios)` per direction of the first reported job.
fn io_of(v: &Value) -> [(u64, u64); 3] {
    let j = &v["jobs"][0];
    ["read", "write", "trim"].map(|d| (j[d]["io_bytes"].as_u64().unwrap(), j[d]["total_ios"].as_u64().unwrap()))
}

#[test]
fn same_bytes_ios_and_layout_as_fio_for_each_rw_mode_and_engine() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("psync", "read", &[]),
        ("psync", "write", &[]),
        ("psync", "randread", &[]),
        ("psync", "randwrite", &["--bs=8k"]),
        ("sync", "rw", &["--bs=16k"]),
        ("vsync", "randrw", &[]),
        ("pvsync", "read", &["--bs=64k"]),
        ("pvsync2", "randwrite", &[]),
        ("libaio", "randread", &["--iodepth=8", "--direct=1"]),
        ("libaio", "write", &["--iodepth=4", "--direct=1"]),
        ("io_uring", "randwrite", &["--iodepth=16", "--direct=1"]),
        ("io_uring", "read", &["--iodepth=8"]),
        ("posixaio", "randread", &["--iodepth=4"]),
        ("mmap", "randwrite", &[]),
        ("null", "randrw", &["--iodepth=32"]),
        ("psync", "read", &["--offset=64k", "--io_size=128k"]),
        ("psync", "write", &["--rw=write:4k"]),
        ("psync", "randread", &["--bsrange=4k-16k"]),
        ("psync", "write", &["--fsync=4"]),
        ("psync", "read", &["--bs=64k", "--size=100k"]),
        ("psync", "randread", &["--bssplit=4k/50:16k/50"]),
        ("psync", "read", &["--number_ios=10"]),
        ("libaio", "randrw", &["--iodepth=8", "--rwmixread=70"]),
    ];
    for (engine, rw, extra) in cases {
        let dir = crate::util::scratch();
        let mut args = vec!["--name=t", "--filename=t.dat", "--size=1m", "--output-format=json"];
        let rw_opt = format!("--rw={rw}");
        let eng = format!("--ioengine={engine}");
        args.push(&rw_opt);
        args.push(&eng);
        args.extend_from_slice(extra);
        let f = json_of(&fio(dir.path(), &args), "fio");
        let fsize = std::fs::metadata(dir.path().join("t.dat")).map(|m| m.len()).ok();
        std::fs::remove_file(dir.path().join("t.dat")).ok();
        let x = json_of(&fiox(dir.path(), &args), "fiox");
        let xsize = std::fs::metadata(dir.path().join("t.dat")).map(|m| m.len()).ok();
        assert_eq!(xsize, fsize, "laid-out file size differs for {engine} {rw} {extra:?}");
        let (fi, xi) = (io_of(&f), io_of(&x));
        if rw.contains("rw") {
            // Mixed jobs split by a random draw; only the totals must match.
            let total = |v: [(u64, u64); 3]| (v.iter().map(|d| d.0).sum::<u64>(), v.iter().map(|d| d.1).sum::<u64>());
            assert_eq!(total(xi), total(fi), "totals differ for {engine} {rw} {extra:?}");
        } else if !extra.iter().any(|e| e.starts_with("--bsrange") || e.starts_with("--bssplit")) {
            assert_eq!(xi, fi, "bytes or I/O counts differ for {engine} {rw} {extra:?}");
        } else {
            assert_eq!(xi.map(|d| d.0), fi.map(|d| d.0), "bytes differ for {engine} {rw} {extra:?}");
        }
        if extra.iter().any(|e| e.starts_with("--fsync")) {
            assert_eq!(x["jobs"][0]["sync"]["total_ios"], f["jobs"][0]["sync"]["total_ios"], "fsync count differs");
        }
    }
}

#[test]
fn same_bytes_and_ios_as_fio_on_a_raw_block_device() {
    let dev = match crate::util::LoopDev::new(4 << 20) {
        Ok(d) => d,
        Err(why) => {
            skip!("no loop device: {why}");
        }
    };
    let dev_s = format!("--filename={}", dev.path.display());
    let cases: &[(&str, &str, &[&str])] = &[
        ("psync", "read", &[]),
        ("psync", "randwrite", &["--direct=1"]),
        ("libaio", "randread", &["--direct=1", "--iodepth=8"]),
        ("io_uring", "write", &["--direct=1", "--iodepth=8", "--bs=64k"]),
        ("psync", "trim", &[]),
        ("psync", "randtrim", &[]),
        ("psync", "trimwrite", &[]),
        ("libaio", "randtrim", &["--iodepth=4"]),
    ];
    let dir = crate::util::scratch();
    for (engine, rw, extra) in cases {
        let rw_opt = format!("--rw={rw}");
        let eng = format!("--ioengine={engine}");
        // No size: the device's own size is the region.
        let mut args = vec!["--name=t", dev_s.as_str(), "--output-format=json", rw_opt.as_str(), eng.as_str()];
        args.extend_from_slice(extra);
        let f = json_of(&fio(dir.path(), &args), "fio");
        let x = json_of(&fiox(dir.path(), &args), "fiox");
        assert_eq!(
            io_of(&x),
            io_of(&f),
            "bytes or I/O counts differ on {} for {engine} {rw} {extra:?}",
            dev.path.display()
        );
    }
}

/// The I/O records of a fio version 3 iolog: `(file, action, offset, length)`, in order.
fn iolog_ios(path: &Path) -> Vec<(String, String, u64, u64)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(text.starts_with("fio version 3 iolog\n"), "{}", path.display());
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5).then(|| (f[1].to_string(), f[2].to_string(), f[3].parse().unwrap(), f[4].parse().unwrap()))
        })
        .collect()
}

#[test]
fn same_offsets_as_fio() {
    // (rw, extra options, whether the order must match exactly)
    let cases: &[(&str, &[&str], bool)] = &[
        ("read", &[], true),
        ("write", &["--bs=16k"], true),
        ("read", &["--nrfiles=2", "--filename_format=ignored"], true),
        // Holes: a pass ends on a partial block, but wraps when it ends exactly on the region's end.
        ("write", &["--rw=write:8k"], true),
        ("write", &["--rw=write:1k"], true),
        ("write", &["--rw=write:4k"], true),
        ("write", &["--rw=write:12k", "--loops=2"], true),
        ("read", &["--bs=64k", "--size=100k"], true),
        // Syncs are logged with the offset of the file's latest I/O, the closing one too.
        ("write", &["--fsync=4", "--end_fsync=1"], true),
        ("write", &["--fdatasync=3", "--fsync_on_close=1"], true),
        ("write", &["--sync_file_range=write:4"], true),
        ("read", &["--offset=128k", "--io_size=256k", "--bs=8k"], true),
        ("read", &["--ioengine=libaio", "--iodepth=8"], true),
        ("write", &["--ioengine=io_uring", "--iodepth=16", "--bs=64k"], true),
        ("read", &["--loops=2"], true),
        // sqthread_poll: the kernel's thread submits, the job polls for completions.
        ("read", &["--ioengine=io_uring", "--sqthread_poll=1"], true),
        ("randread", &[], false),
        ("randwrite", &["--bs=8k"], false),
        ("randread", &["--ioengine=io_uring", "--iodepth=8", "--loops=2"], false),
        ("randread", &["--ioengine=io_uring", "--iodepth=8", "--sqthread_poll=1"], false),
        ("randrw", &["--bs=8k"], false),
    ];
    for (rw, extra, ordered) in cases {
        let dir = crate::util::scratch();
        let rw_opt = format!("--rw={rw}");
        let mut base = vec!["--name=t", "--size=1m", "--output-format=json", rw_opt.as_str()];
        if !extra.iter().any(|e| e.starts_with("--nrfiles")) {
            base.push("--filename=t.dat");
        }
        base.extend(extra.iter().filter(|e| !e.starts_with("--filename_format")));
        let mut a = base.clone();
        a.push("--write_iolog=fio.log");
        json_of(&fio(dir.path(), &a), "fio");
        let mut b = base.clone();
        b.push("--write_iolog=fiox.log");
        json_of(&fiox(dir.path(), &b), "fiox");
        let f = iolog_ios(&dir.path().join("fio.log"));
        let x = iolog_ios(&dir.path().join("fiox.log"));
        assert!(!f.is_empty(), "fio logged no I/O for {rw} {extra:?}");
        if *ordered {
            let first = x.iter().zip(&f).position(|(a, b)| a != b);
            assert!(
                first.is_none() && x.len() == f.len(),
                "offset sequence differs for {rw} {extra:?}: {} vs {} I/Os, first difference at {first:?}: {:?} vs {:?}",
                x.len(),
                f.len(),
                first.map(|i| &x[i]),
                first.map(|i| &f[i])
            );
        } else {
            let sorted = |mut v: Vec<(String, String, u64, u64)>| {
                if rw.contains("rw") {
                    // Mixed: the direction of each block is a random draw; compare blocks only.
                    for e in v.iter_mut() {
                        e.1.clear();
                    }
                }
                v.sort();
                v
            };
            let (xs, fs) = (sorted(x), sorted(f));
            assert_eq!(xs, fs, "random offsets are not the same set of blocks for {rw} {extra:?}");
            // With the random map, each block once per pass: no block more often than `loops`.
            let loops = if extra.contains(&"--loops=2") { 2 } else { 1 };
            let mut counts = std::collections::HashMap::new();
            for e in &xs {
                *counts.entry((e.0.clone(), e.2)).or_insert(0) += 1;
            }
            assert!(
                counts.values().all(|&c| c == loops),
                "a block was not touched exactly {loops} times for {rw} {extra:?}"
            );
        }
    }
}

/// The key structure of a JSON value: objects as sorted key lists (recursively), arrays by their
/// first element; values themselves are ignored. json+ `bins` keys are numbers that differ run
/// to run, so they are collapsed.
fn shape(v: &Value, key: &str) -> Value {
    match v {
        Value::Object(m) if key == "bins" || key == "percentile" => {
            Value::String(format!("<{} keys>", if key == "bins" { "bin" } else { "pct" }))
        }
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), shape(v, k))).collect()),
        Value::Array(a) => Value::Array(a.first().map(|x| shape(x, key)).into_iter().collect()),
        Value::Number(_) => Value::String("number".into()),
        Value::String(_) => Value::String("string".into()),
        other => other.clone(),
    }
}

/// The labels of the normal output, line by line: what stays when numbers, names and dates are
/// taken out (`  read: IOPS=#, BW=#`). fio and fiox must print the same lines in the same order.
fn labels(text: &str) -> Vec<String> {
    text.lines()
        // Left out: the version line, the status line, layout messages (fiox prints them on
        // stderr), percentile rows and latency-bucket lines (how many depends on the spread).
        .filter(|l| {
            !l.starts_with("fio-") && !l.starts_with("fiox-") && !l.starts_with("Jobs:") && !l.contains("Laying out")
        })
        .filter(|l| !l.trim_start().starts_with('|') && !l.trim_start().starts_with("lat (") || l.contains("min="))
        .map(|l| {
            let mut out = String::new();
            let mut in_num = false;
            for c in l.chars() {
                if c.is_ascii_digit() || (in_num && (c == '.' || c.is_ascii_alphabetic())) {
                    if !in_num {
                        out.push('#');
                    }
                    in_num = true;
                } else {
                    in_num = false;
                    out.push(c);
                }
            }
            // Dates in job headers and unit choices (usec/nsec, KiB/MiB) vary with timing.
            let out = out.split(": (groupid=").next().unwrap_or("").to_string()
                + if l.contains("(groupid=") { ": (groupid=" } else { "" };
            out.replace("nsec", "U").replace("usec", "U").replace("msec", "U").replace(" ", "")
        })
        .collect()
}

#[test]
fn output_formats_have_fios_structure() {
    let common = ["--filename=t.dat", "--size=2m", "--bs=4k", "--runtime=1"];
    let cases: Vec<Vec<&str>> = vec![
        vec!["--ioengine=psync", "--rw=randread"],
        vec!["--ioengine=libaio", "--rw=randrw", "--iodepth=8", "--direct=1"],
        vec!["--ioengine=io_uring", "--rw=write", "--iodepth=4", "--fsync=8"],
        vec!["--ioengine=psync", "--rw=read", "--numjobs=2", "--group_reporting"],
        vec!["--ioengine=psync", "--rw=read", "--numjobs=2"],
        vec!["--ioengine=null", "--rw=randrw", "--iodepth=16"],
        vec!["--ioengine=psync", "--rw=randrw", "--unified_rw_reporting=mixed"],
        vec!["--ioengine=libaio", "--rw=randrw", "--iodepth=4", "--unified_rw_reporting=both"],
        vec!["--ioengine=psync", "--rw=rw", "--numjobs=2", "--group_reporting", "--unified_rw_reporting=1"],
        vec!["--ioengine=io_uring", "--rw=randread", "--iodepth=8", "--direct=1", "--cmdprio_percentage=30"],
        vec![
            "--ioengine=libaio",
            "--rw=randrw",
            "--iodepth=4",
            "--direct=1",
            "--cmdprio_percentage=30,20",
            "--cmdprio_class=2",
            "--cmdprio=3",
            "--lat_percentiles=1",
        ],
    ];
    let groups = std::fs::read_to_string(data("jobs/groups.fio")).unwrap();
    for extra in cases.iter().map(|c| [&common[..], &c[..], &["--name=t"]].concat()).chain([vec!["groups.fio"]]) {
        let dir = crate::util::scratch();
        std::fs::write(dir.path().join("groups.fio"), &groups).unwrap();
        let base = extra.clone();
        for (fmt, check) in [("json", 0), ("json+", 0), ("normal", 1), ("terse", 2)] {
            let mut a = base.clone();
            let f_opt = format!("--output-format={fmt}");
            a.push(&f_opt);
            let f = fio(dir.path(), &a);
            let x = fiox(dir.path(), &a);
            assert_eq!((f.code, x.code), (0, 0), "{extra:?} {fmt}: fio: {} fiox: {}", f.stderr, x.stderr);
            match check {
                0 => {
                    let (fv, xv): (Value, Value) =
                        (serde_json::from_str(&f.stdout).unwrap(), serde_json::from_str(&x.stdout).unwrap());
                    let (mut fs, mut xs) = (shape(&fv, ""), shape(&xv, ""));
                    // fiox's one documented addition: the `fiox` object at the end (run manifest,
                    // self-overhead, warnings). Everything else must be fio's.
                    assert!(xs.as_object_mut().unwrap().remove("fiox").is_some(), "fiox's manifest is missing");
                    // Block devices under the file: fiox reports disk_util only where fio does.
                    if xs.get("disk_util").is_none() {
                        fs.as_object_mut().unwrap().remove("disk_util");
                    }
                    assert_eq!(xs, fs, "JSON key structure differs for {extra:?} ({fmt})");
                }
                1 => {
                    // fio 3.33 prints `mixed: IOPS=0, BW=0 (0)(0B/...)` under
                    // unified_rw_reporting=both; fiox prints the real figures (documented).
                    let fixed = f.stdout.replace("BW=0 (0)(0B/", "BW=1B/s (1B/s)(1B/");
                    let (fl, xl) = (labels(&fixed), labels(&x.stdout));
                    // Up to the disk stats (timing-dependent) and fiox's own section after them.
                    let strip = |v: Vec<String>| {
                        let mut v: Vec<String> = v
                            .into_iter()
                            .take_while(|l| !l.starts_with("Diskstats") && !l.starts_with("fiox"))
                            .collect();
                        while v.last().is_some_and(|l| l.is_empty()) {
                            v.pop();
                        }
                        v
                    };
                    assert_eq!(
                        strip(xl),
                        strip(fl),
                        "normal output lines differ for {extra:?}\nfio:\n{}\nfiox:\n{}",
                        f.stdout,
                        x.stdout
                    );
                }
                _ => {
                    let count = |s: &str| s.lines().map(|l| l.split(';').count()).collect::<Vec<_>>();
                    let (fc, xc) = (count(&f.stdout), count(&x.stdout));
                    // One disk adds 9 fields (v3); compare with the disk fields taken out.
                    let disks = |v: Vec<usize>| {
                        v.into_iter().map(|n| if n > 121 { 121 + (n - 121) % 9 } else { n }).collect::<Vec<_>>()
                    };
                    assert_eq!(disks(xc), disks(fc), "terse field counts differ for {extra:?}");
                }
            }
        }
    }
}

/// Parsed log lines: the comma-separated fields of each line.
fn log_lines(path: &Path) -> Vec<Vec<u64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines().map(|l| l.split(',').map(|f| f.trim().parse().expect("numeric log field")).collect()).collect()
}

#[test]
fn logs_have_fios_files_and_columns() {
    for (name, extra, per_io) in [
        ("perio", vec!["--log_offset=1"], true),
        ("plain", vec![], true),
        ("avg", vec!["--log_avg_msec=100", "--runtime=1", "--time_based"], false),
    ] {
        let dir = crate::util::scratch();
        let mut files = std::collections::BTreeMap::new();
        for (tool, who) in [("fio", "f"), ("fiox", "x")] {
            let mut args =
                vec!["--name=t", "--filename=t.dat", "--size=512k", "--rw=read", "--numjobs=2", "--output-format=json"];
            let (bw, lat, iops) =
                (format!("--write_bw_log={who}"), format!("--write_lat_log={who}"), format!("--write_iops_log={who}"));
            args.extend([bw.as_str(), lat.as_str(), iops.as_str()]);
            args.extend(extra.iter().copied());
            let out = if tool == "fio" { fio(dir.path(), &args) } else { fiox(dir.path(), &args) };
            json_of(&out, tool);
            let mut names: Vec<String> =
                crate::util::listing(dir.path()).into_iter().filter(|n| n.starts_with(&format!("{who}_"))).collect();
            names.sort();
            files.insert(tool, names);
        }
        let strip = |v: &Vec<String>| v.iter().map(|n| n[1..].to_string()).collect::<Vec<_>>();
        assert_eq!(strip(&files["fiox"]), strip(&files["fio"]), "log file names differ ({name})");
        for n in &files["fio"] {
            let f = log_lines(&dir.path().join(n));
            let x = log_lines(&dir.path().join(format!("x{}", &n[1..])));
            let cols = |v: &Vec<Vec<u64>>| v.iter().map(|l| l.len()).collect::<std::collections::BTreeSet<_>>();
            if !f.is_empty() {
                assert_eq!(cols(&x), cols(&f), "columns differ in {n} ({name})");
            }
            if per_io {
                assert_eq!(x.len(), f.len(), "line count differs in {n} ({name})");
                // ddir, bs (and offset) columns are the same I/O by I/O for a sequential job.
                let tail = |v: &Vec<Vec<u64>>| v.iter().map(|l| l[2..].to_vec()).collect::<Vec<_>>();
                assert_eq!(tail(&x), tail(&f), "ddir/bs/offset columns differ in {n} ({name})");
            } else {
                // The last latency window ends with the job, at the job's end time (as in fio),
                // which is a window end only when the job ends exactly on one.
                let full = &x[..x.len().saturating_sub(1)];
                assert!(full.iter().all(|l| l[0] % 100 == 0), "averaged entries sit on window ends ({n})");
                assert!(x.iter().all(|l| l[3] == 0), "averaged entries have no block size ({n})");
            }
        }
    }
}

/// Distinct blocks among the I/Os of an iolog: how concentrated an access pattern is.
fn distinct_blocks(path: &Path) -> usize {
    iolog_ios(path).into_iter().map(|e| e.2).collect::<std::collections::HashSet<_>>().len()
}

#[test]
fn random_distributions_are_as_skewed_as_fios() {
    // (distribution, tolerance): measured on fio 3.33 and fiox, 100,000 I/Os over 1 GiB:
    // zipf 12,257 vs 12,370; zoned 44,225 vs 44,244; pareto 40,352 vs 40,375. More in dists.rs.
    for (dist, tolerance) in [("zipf:1.2", 0.03), ("zoned:80/10:20/90", 0.03), ("pareto:0.2", 0.03)] {
        let dir = crate::util::scratch();
        let d = format!("--random_distribution={dist}");
        let base = [
            "--name=t",
            "--ioengine=null",
            "--size=1g",
            "--rw=randread",
            "--number_ios=100000",
            "--output-format=json",
            d.as_str(),
        ];
        let mut a = base.to_vec();
        a.push("--write_iolog=fio.log");
        json_of(&fio(dir.path(), &a), "fio");
        let mut b = base.to_vec();
        b.push("--write_iolog=fiox.log");
        json_of(&fiox(dir.path(), &b), "fiox");
        let (f, x) = (distinct_blocks(&dir.path().join("fio.log")), distinct_blocks(&dir.path().join("fiox.log")));
        let rel = (x as f64 - f as f64).abs() / f as f64;
        assert!(rel <= tolerance, "{dist}: fio touched {f} distinct blocks, fiox {x} ({:.0}% apart)", rel * 100.0);
    }
}

#[test]
fn metadata_engines_match_fio() {
    // (engine, rw, files left afterwards)
    for (engine, rw, left) in [("filecreate", "write", 100), ("filestat", "read", 100), ("filedelete", "read", 0)] {
        let mut seen = Vec::new();
        for tool in ["fio", "fiox"] {
            let dir = crate::util::scratch();
            let (e, r) = (format!("--ioengine={engine}"), format!("--rw={rw}"));
            let args = [
                "--name=m",
                "--nrfiles=100",
                "--filesize=4k",
                "--bs=4k",
                "--output-format=json",
                e.as_str(),
                r.as_str(),
            ];
            let out = if tool == "fio" { fio(dir.path(), &args) } else { fiox(dir.path(), &args) };
            let v = json_of(&out, tool);
            let j = &v["jobs"][0];
            let figures: Vec<(u64, u64, u64, u64)> = ["read", "write"]
                .iter()
                .map(|d| {
                    let x = &j[*d];
                    (
                        x["io_bytes"].as_u64().unwrap(),
                        x["total_ios"].as_u64().unwrap(),
                        x["clat_ns"]["N"].as_u64().unwrap(),
                        x["lat_ns"]["N"].as_u64().unwrap(),
                    )
                })
                .collect();
            let files = crate::util::listing(dir.path()).len();
            assert_eq!(files, left, "{tool} {engine}: files left");
            seen.push(figures);
        }
        assert_eq!(seen[1], seen[0], "{engine}: (bytes, I/Os, clat N, lat N) per direction differ");
    }
}

#[test]
fn file_layout_options_match_fio() {
    // (options, what to compare): for a write-only job fio reserves space without writing data,
    // unless overwrite=1; fallocate=none leaves the file as large as the writes made it;
    // create_on_open skips the layout.
    let cases: &[&[&str]] =
        &[&[], &["--overwrite=1"], &["--fallocate=none"], &["--fallocate=truncate"], &["--create_on_open=1"]];
    for extra in cases {
        let mut seen = Vec::new();
        for tool in ["fio", "fiox"] {
            let dir = crate::util::scratch();
            let mut args = vec![
                "--name=t",
                "--filename=f.dat",
                "--size=8m",
                "--rw=write",
                "--number_ios=1",
                "--output-format=json",
            ];
            args.extend_from_slice(extra);
            let out = if tool == "fio" { fio(dir.path(), &args) } else { fiox(dir.path(), &args) };
            json_of(&out, tool);
            let data = std::fs::read(dir.path().join("f.dat")).unwrap();
            // The single 4 KiB write lands at offset 0; what matters is what lies after it.
            let data_after_first_block = data.iter().skip(4096).any(|&b| b != 0);
            seen.push((data.len(), data_after_first_block));
        }
        assert_eq!(seen[1], seen[0], "(file size, data beyond the write) differ for {extra:?}");
    }
}

/// A mixed job reads and writes in the same order as fio: fio's direction stream (its
/// generator, seeded from `randseed` and the job's number) and its catch-up rule after a switch
/// of direction, compared I/O by I/O in `write_iolog` for several jobs, shares and seeds.
#[test]
fn rwmix_directions_match_fio_io_by_io() {
    let job = "[global]\nioengine=null\nsize=64m\nbs=4k\nrw=randrw\nnumber_ios=5000\n\
               [a]\nrwmixread=70\nwrite_iolog=a.log\n[b]\nrwmixread=30\nwrite_iolog=b.log\n\
               [c]\nrandseed=1234\nwrite_iolog=c.log\n[d]\nrw=readwrite\nrwmixwrite=90\nwrite_iolog=d.log\n";
    let directions = |dir: &std::path::Path, log: &str| -> String {
        let text = std::fs::read_to_string(dir.join(log)).unwrap_or_else(|e| panic!("{log}: {e}"));
        text.lines()
            .filter_map(|l| match l.split_whitespace().nth(2) {
                Some("read") => Some('r'),
                Some("write") => Some('w'),
                _ => None,
            })
            .collect()
    };
    let mut seen = Vec::new();
    for tool in ["fio", "fiox"] {
        let dir = crate::util::scratch();
        std::fs::write(dir.path().join("mix.fio"), job).unwrap();
        let out = if tool == "fio" { fio(dir.path(), &["mix.fio"]) } else { fiox(dir.path(), &["mix.fio"]) };
        assert_eq!(out.code, 0, "{tool}: {}", out.stderr);
        seen.push(["a.log", "b.log", "c.log", "d.log"].map(|l| directions(dir.path(), l)));
    }
    for (i, (by_fio, by_fiox)) in seen[0].iter().zip(&seen[1]).enumerate() {
        assert_eq!(by_fio.len(), 5000, "job {i}");
        let first = by_fio.chars().zip(by_fiox.chars()).position(|(a, b)| a != b);
        assert_eq!(first, None, "job {i}: the directions part at I/O {first:?}");
        assert_eq!(by_fio, by_fiox, "job {i}");
    }
}

#[test]
fn seed_job_files_do_the_same_io_as_fio() {
    // The write-ups' job files, run for real (libaio, direct=1) with sizes shrunk and the
    // directory moved to a scratch folder: every job moves the same bytes in the same I/Os.
    for e in std::fs::read_dir(data("seeds")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "fio") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let shrunk: String = text
            .lines()
            .map(|l| match l.split(['=', ' ', '#']).next().unwrap_or("") {
                "size" => "size=2m".to_string(),
                "lockmem" => "lockmem=1m".to_string(),
                "runtime" => "runtime=30".to_string(),
                "directory" => "directory=.".to_string(),
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let mut seen = Vec::new();
        for tool in ["fio", "fiox"] {
            let dir = crate::util::scratch();
            std::fs::write(dir.path().join("job.fio"), &shrunk).unwrap();
            let args = ["job.fio", "--output-format=json"];
            let v = json_of(&if tool == "fio" { fio(dir.path(), &args) } else { fiox(dir.path(), &args) }, tool);
            let per_job: Vec<(String, [(u64, u64); 3])> = v["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| (j["jobname"].as_str().unwrap().to_string(), io_of(&serde_json::json!({ "jobs": [j] }))))
                .collect();
            seen.push(per_job);
        }
        assert_eq!(seen[1], seen[0], "{}: bytes or I/O counts per job differ", p.display());
    }
}

#[test]
fn histogram_logs_have_fios_layout() {
    let mut shapes = Vec::new();
    for (tool, who) in [("fio", "f"), ("fiox", "x")] {
        let dir = crate::util::scratch();
        let h = format!("--write_hist_log={who}");
        let args = [
            "--name=t",
            "--ioengine=null",
            "--size=1g",
            "--rw=randrw",
            "--runtime=1",
            "--time_based",
            "--log_hist_msec=200",
            "--output-format=json",
            h.as_str(),
        ];
        json_of(&if tool == "fio" { fio(dir.path(), &args) } else { fiox(dir.path(), &args) }, tool);
        let rows = log_lines(&dir.path().join(format!("{who}_clat_hist.1.log")));
        // time, ddir, bs, then fio's 1856 buckets; one line per direction per window.
        assert!(rows.iter().all(|r| r.len() == 3 + 1856 && r[2] == 4096 && r[1] < 2), "{tool}: bad rows");
        let per_dir = [0, 1].map(|d| rows.iter().filter(|r| r[1] == d).count());
        shapes.push(per_dir);
    }
    for d in 0..2 {
        assert!(
            (shapes[1][d] as i64 - shapes[0][d] as i64).abs() <= 1,
            "windows per direction: fio {:?}, fiox {:?}",
            shapes[0],
            shapes[1]
        );
    }
}

/// Group and mixed bandwidth samples add up the way fio adds them: under `group_reporting` the
/// group's bw min, max and mean are sums over the jobs, and `unified_rw_reporting=mixed` sums
/// the directions. A rate limit makes both tools move the same bytes per sample.
#[test]
fn summed_bandwidth_samples_match_fio() {
    let cases: [(&[&str], &str); 2] = [
        (&["--rw=read", "--numjobs=2", "--group_reporting", "--rate_iops=2000"], "read"),
        (&["--rw=randrw", "--unified_rw_reporting=mixed", "--rate_iops=1000,1000"], "mixed"),
    ];
    for (extra, key) in cases {
        let mut figures = Vec::new();
        for tool in ["fio", "fiox"] {
            let dir = crate::util::scratch();
            let base =
                ["--name=t", "--ioengine=null", "--size=1g", "--time_based", "--runtime=2", "--output-format=json"];
            let args = [&base[..], extra].concat();
            let v = json_of(&if tool == "fio" { fio(dir.path(), &args) } else { fiox(dir.path(), &args) }, tool);
            let d = &v["jobs"][0][key];
            assert!(v["jobs"][0].get("write").is_none() || key == "read", "{tool}: {extra:?} has a write object");
            let f = |k: &str| d[k].as_f64().unwrap_or_else(|| panic!("{tool}: {key}.{k} missing"));
            figures.push([f("bw_min"), f("bw_max"), f("bw_mean"), f("iops_mean"), f("bw_samples")]);
        }
        let (a, b) = (figures[0], figures[1]);
        // Means within 5%; the extremes of single 500 ms samples within 15%, since one late
        // wake-up on a busy machine (the tests run two at a time on two cores) moves them. A
        // minimum near one job's or one direction's rate would still fail: that is half.
        for (i, (name, tol)) in
            [("bw_min", 0.15), ("bw_max", 0.15), ("bw_mean", 0.05), ("iops_mean", 0.05)].iter().enumerate()
        {
            assert!((a[i] - b[i]).abs() <= a[i] * tol, "{extra:?} {name}: fio {} fiox {}", a[i], b[i]);
        }
        assert!((a[4] - b[4]).abs() <= 2.0, "{extra:?} bw_samples: fio {} fiox {}", a[4], b[4]);
    }
}

/// `cmdprio_percentage`: the share of I/Os sent with the priority, and the per-priority
/// latency objects, as fio reports them.
#[test]
fn command_priorities_split_like_fios() {
    for engine in ["io_uring", "libaio"] {
        let mut shares = Vec::new();
        for tool in ["fio", "fiox"] {
            let dir = crate::util::scratch();
            let e = format!("--ioengine={engine}");
            let args = [
                "--name=t",
                e.as_str(),
                "--filename=t.dat",
                "--size=8m",
                "--rw=randread",
                "--iodepth=4",
                "--direct=1",
                "--cmdprio_percentage=25",
                "--cmdprio_class=2",
                "--cmdprio=5",
                "--output-format=json",
            ];
            let v = json_of(&if tool == "fio" { fio(dir.path(), &args) } else { fiox(dir.path(), &args) }, tool);
            let prios = v["jobs"][0]["read"]["prios"].as_array().unwrap_or_else(|| panic!("{tool} {engine}: no prios"));
            let ids: Vec<(u64, u64)> =
                prios.iter().map(|p| (p["prioclass"].as_u64().unwrap(), p["prio"].as_u64().unwrap())).collect();
            assert_eq!(ids, [(0, 0), (2, 5)], "{tool} {engine}");
            let n: Vec<f64> = prios.iter().map(|p| p["clat_ns"]["N"].as_f64().unwrap()).collect();
            shares.push(n[1] / (n[0] + n[1]));
        }
        // 2048 draws at 25 %: a standard deviation of about 1 percentage point.
        for s in &shares {
            assert!((s - 0.25).abs() < 0.05, "{engine}: shares {shares:?}");
        }
    }
}

/// `cmdprio_bssplit` with an explicit class and level for one block size and the default for the
/// other: the same priorities, listed in the same order, as fio.
#[test]
fn command_priorities_by_block_size_like_fios() {
    let mut orders = Vec::new();
    for tool in ["fio", "fiox"] {
        let dir = crate::util::scratch();
        let args = [
            "--name=t",
            "--ioengine=libaio",
            "--filename=t.dat",
            "--size=8m",
            "--rw=randread",
            "--bssplit=4k/50:64k/50",
            "--iodepth=4",
            "--direct=1",
            "--cmdprio_bssplit=4k/30/2/3:64k/50",
            "--output-format=json",
        ];
        let v = json_of(&if tool == "fio" { fio(dir.path(), &args) } else { fiox(dir.path(), &args) }, tool);
        let prios = v["jobs"][0]["read"]["prios"].as_array().unwrap_or_else(|| panic!("{tool}: no prios"));
        orders.push(
            prios.iter().map(|p| (p["prioclass"].as_u64().unwrap(), p["prio"].as_u64().unwrap())).collect::<Vec<_>>(),
        );
    }
    assert_eq!(orders[1], orders[0]);
    assert_eq!(orders[0], [(0, 0), (2, 3), (1, 0)]);
}

/// Random I/O with several block sizes: like fio's random map, every block is done once per
/// pass and I/Os are cut short where they would reach a block already done, so both tools do
/// about as many I/Os of each size for the same bytes.
#[test]
fn mixed_block_sizes_cover_each_block_once_like_fio() {
    let mut counts = Vec::new();
    for tool in ["fio", "fiox"] {
        let dir = crate::util::scratch();
        let args = [
            "--name=t",
            "--ioengine=psync",
            "--filename=t.dat",
            "--size=16m",
            "--rw=randread",
            "--bssplit=4k/50:64k/50",
            "--write_iolog=io.log",
            "--output-format=json",
        ];
        let v = json_of(&if tool == "fio" { fio(dir.path(), &args) } else { fiox(dir.path(), &args) }, tool);
        let ios = iolog_ios(&dir.path().join("io.log"));
        let mut seen = vec![0u32; 4096];
        for (_, action, off, len) in ios.iter().filter(|e| e.1 == "read") {
            assert_eq!(action, "read");
            for b in off / 4096..(off + len) / 4096 {
                seen[b as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&c| c == 1), "{tool}: a block read twice or never in one pass");
        let full = ios.iter().filter(|e| e.3 == 65536).count() as f64;
        counts.push((v["jobs"][0]["read"]["total_ios"].as_f64().unwrap(), full));
    }
    let ((fio_ios, fio_full), (x_ios, x_full)) = (counts[0], counts[1]);
    assert!((x_ios - fio_ios).abs() <= fio_ios * 0.1, "I/Os: fio {fio_ios}, fiox {x_ios}");
    assert!((x_full - fio_full).abs() <= fio_full * 0.2, "full 64 KiB I/Os: fio {fio_full}, fiox {x_full}");
}

/// fio echoes a job file's options in the order it applies them: `lockfile`, `kb_base`,
/// `unit_base` and `cpus_allowed_policy` first, `filename`/`filename_format` after the other
/// general options, the engine's own options last; `blockalign` under its fio name `ba`.
/// Command-line options stay as typed. Compared as text, so the order counts.
#[test]
fn option_echo_is_in_fios_order() {
    let dir = crate::util::scratch();
    let text = "[global]\nfilename=g.dat\nioengine=net\nport=7\nsize=64k\nkb_base=1024\n\
                [j]\nfilename=j.dat\nblockalign=4k\nhostname=localhost\niodepth=2\nlockfile=none\nrw=read\n\
                filename_format=f\nunit_base=0\nbs=4k\n";
    std::fs::write(dir.path().join("order.fio"), text).unwrap();
    let echo = |v: &Value| (v["global options"].to_string(), v["jobs"][0]["job options"].to_string());
    let args = ["--parse-only", "order.fio"];
    assert_eq!(fio(dir.path(), &args).code, 0);
    // The net engine would need a peer; the null engine takes neither port nor hostname, so the
    // run uses a copy with the engine switched to one that has an option of its own.
    let text =
        text.replace("ioengine=net\nport=7", "ioengine=cpuio\ncpuload=5").replace("hostname=localhost", "cpumode=noop");
    std::fs::write(dir.path().join("order.fio"), &text).unwrap();
    let run = ["--output-format=json", "--runtime=1", "order.fio"];
    // fio prints cpuio's start-up line before its JSON.
    let (f, x) = (fio(dir.path(), &run), fiox(dir.path(), &run));
    assert_eq!((f.code, x.code), (0, 0), "{}{}", f.stderr, x.stderr);
    let (f, x) = (crate::util::json(&f), crate::util::json(&x));
    assert_eq!(echo(&x), echo(&f));
    assert_eq!(
        echo(&x).1,
        r#"{"lockfile":"none","unit_base":"0","ba":"4k","iodepth":"2","rw":"read","bs":"4k","filename":"j.dat","filename_format":"f","cpumode":"noop"}"#
    );
    let cmd =
        ["--output-format=json", "--name=c", "--filename=c.dat", "--ioengine=null", "--size=64k", "--lockfile=none"];
    let (f, x) = (json_of(&fio(dir.path(), &cmd), "fio"), json_of(&fiox(dir.path(), &cmd), "fiox"));
    assert_eq!(echo(&x), echo(&f));
}

/// The `Run status group` lines of a run: per direction, (aggregate, slowest-fastest, io,
/// shortest-longest run), as printed.
fn group_lines(out: &str) -> Vec<(String, String, String, String)> {
    out.lines()
        .filter(|l| l.contains(": bw=") && l.contains(", run="))
        .map(|l| {
            let f: Vec<&str> = l.split(", ").collect();
            let agg = f[0].split("bw=").nth(1).unwrap().split(' ').next().unwrap().to_string();
            let range = f[1].split(' ').next().unwrap().to_string();
            let io = f[2].split(' ').next().unwrap().to_string();
            (agg, range, io, f[3].trim_start_matches("run=").trim_end_matches("msec").to_string())
        })
        .collect()
}

#[test]
fn group_reporting_run_status_is_the_merged_jobs_as_in_fio() {
    // Three jobs of different sizes in one group: under group_reporting fio 3.33 reports the
    // group as one job (the merged one), whose bandwidth is the slowest and the fastest and
    // whose (longest) runtime is the shortest and the longest.
    let dir = crate::util::scratch();
    let args = [
        "--ioengine=null",
        "--bs=4k",
        "--rw=read",
        "--group_reporting",
        "--name=a",
        "--size=64m",
        "--numjobs=2",
        "--name=b",
        "--size=256m",
    ];
    let mut ios = Vec::new();
    for out in [fio(dir.path(), &args), fiox(dir.path(), &args)] {
        assert_eq!(out.code, 0, "{}", out.stderr);
        let lines = group_lines(&out.stdout);
        assert_eq!(lines.len(), 1, "{}", out.stdout);
        let (agg, range, io, run) = &lines[0];
        let (lo, hi) = range.split_once('-').unwrap();
        let (rlo, rhi) = run.split_once('-').unwrap();
        assert_eq!((lo, hi, rlo), (agg.as_str(), agg.as_str(), rhi), "{}", out.stdout);
        ios.push(io.clone());
    }
    assert_eq!(ios[0], ios[1], "io= (fio, fiox)");
}
