//! fio conformance, the last mile (issue 28): what a new user trying fiox next to fio 3.33 runs
//! into. Each test runs both binaries where fio does the same thing and compares.

use std::process::Command;

use crate::util::{fio, fio_bin, fiox, fiox_bin, json, scratch};

/// Runs `cmd` under bash in `dir` and returns its standard output and error.
fn bash(dir: &std::path::Path, cmd: &str) -> (String, String) {
    let o = Command::new("bash").arg("-c").arg(cmd).current_dir(dir).output().unwrap();
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn a_closed_pipe_ends_the_run_by_sigpipe_as_fio_does() {
    let dir = scratch();
    // A run long enough for `head` to have exited before the report is written.
    let job = "--name=a --ioengine=null --size=1M --time_based --runtime=300ms";
    let fio_status =
        bash(dir.path(), &format!("'{}' {job} | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}", fio_bin().display()));
    assert_eq!(fio_status.0.trim(), "141", "fio dies of SIGPIPE: {fio_status:?}");
    let fiox = fiox_bin();
    for cmd in [
        format!("'{}' man | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}", fiox.display()),
        format!("'{}' {job} | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}", fiox.display()),
        // The reader is gone before fiox writes anything.
        format!("'{}' {job} | true; echo ${{PIPESTATUS[0]}}", fiox.display()),
        format!("'{}' {job} --output-format=json | true; echo ${{PIPESTATUS[0]}}", fiox.display()),
    ] {
        let (out, err) = bash(dir.path(), &cmd);
        assert_eq!(out.trim(), fio_status.0.trim(), "{cmd}: {err}");
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{cmd}: {err}");
    }
}

#[test]
fn size_zero_on_an_existing_file_reads_the_whole_file_as_fio_does() {
    let dir = scratch();
    let f = dir.path().join("whole.dat");
    std::fs::write(&f, vec![7u8; 8 << 20]).unwrap();
    let args = ["--name=a", &format!("--filename={}", f.display()), "--size=0", "--rw=read", "--output-format=json"];
    for (who, out) in [("fio", fio(dir.path(), &args)), ("fiox", fiox(dir.path(), &args))] {
        assert_eq!(out.code, 0, "{who}: {}", out.stderr);
        assert_eq!(json(&out)["jobs"][0]["read"]["io_bytes"], 8 << 20, "{who}");
    }
    // Without a file to take the size from, size=0 is still refused (fio: "you need to specify size=").
    let missing = format!("--filename={}", dir.path().join("nothere").display());
    let out = fiox(dir.path(), &["--name=a", &missing, "--size=0", "--rw=read"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("no size="), "{}", out.stderr);
}

#[test]
fn latin1_bytes_in_comments_and_descriptions_run_as_in_fio() {
    let dir = scratch();
    let jf = dir.path().join("latin1.fio");
    std::fs::write(&jf, b"[a]\n# caf\xe9 cr\xe8me\ndescription=caf\xe9\nsize=1m ; \xb5s\nioengine=null\n").unwrap();
    let path = jf.to_str().unwrap();
    for (who, out) in [
        ("fio", fio(dir.path(), &[path, "--output-format=json"])),
        ("fiox", fiox(dir.path(), &[path, "--output-format=json"])),
    ] {
        assert_eq!(out.code, 0, "{who}: {}", out.stderr);
        assert_eq!(out.stderr, "", "{who}");
        assert_eq!(json(&out)["jobs"][0]["read"]["io_bytes"], 1 << 20, "{who}");
    }
    // Elsewhere (a file name) fiox cannot tell what was meant: one message, with file and line.
    let bad = dir.path().join("bad.fio");
    std::fs::write(&bad, b"[a]\nioengine=null\nsize=1m\nfilename=caf\xe9\n").unwrap();
    let out = fiox(dir.path(), &[bad.to_str().unwrap()]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("bad.fio, line 4") && out.stderr.contains("0xe9"), "{}", out.stderr);
    assert_eq!(out.stderr.matches("not UTF-8").count(), 1, "{}", out.stderr);
}

#[test]
fn a_server_without_a_host_listens_on_loopback() {
    // `--server` and `--server=,PORT` name no host; without credentials that means loopback
    // (a fixed port would collide with other tests, so the second spelling is used).
    let dir = scratch();
    let port = crate::util::free_port();
    let mut child = Command::new(fiox_bin())
        .arg(format!("--server=,{port}"))
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut up = false;
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            up = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().ok();
    let out = child.wait_with_output().unwrap();
    assert!(up, "no server on 127.0.0.1:{port}: {}", String::from_utf8_lossy(&out.stderr));
    let help = fiox(dir.path(), &["--help"]).stdout;
    assert!(help.contains("without credentials on loopback"), "--help says where a plain --server listens");
}

#[test]
fn looping_strided_reads_drop_the_cache_once_as_fio_does() {
    let dir = scratch();
    let f = dir.path().join("strided.dat");
    // Written back before either tool runs: dirty pages survive a cache drop, so the tool that
    // ran first would read less from the device.
    let mut file = std::fs::File::create(&f).unwrap();
    std::io::Write::write_all(&mut file, &vec![1u8; 64 << 20]).unwrap();
    file.sync_all().unwrap();
    let name = format!("--filename={}", f.display());
    let args = [
        "--name=c",
        &name,
        "--rw=read",
        "--bs=4k",
        "--size=64M",
        "--zonemode=strided",
        "--zonesize=1M",
        "--zonerange=8M",
        "--runtime=1",
        "--time_based",
        "--output-format=json",
    ];
    // Each tool's own device reads: the kernel adds a reaped child's I/O accounting to its
    // parent's, so the shell that waited for the tool reports what the tool read. The disk's
    // counters would also count the reads of tests running beside this one.
    let read_bytes = |bin: std::path::PathBuf| -> u64 {
        let o = Command::new("sh")
            .arg("-c")
            .arg(r#""$0" "$@" >/dev/null || exit 1; sed -n 's/^read_bytes: //p' /proc/$$/io"#)
            .arg(bin)
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).trim().parse().expect("read_bytes in /proc/PID/io")
    };
    let (by_fio, by_fiox) = (read_bytes(fio_bin()), read_bytes(fiox_bin()));
    // fio drops the cache when it opens the file and reads the rest from memory: the 8 MiB the
    // zones cover, with read-ahead (about 40 MiB here). Dropping it on every zone pass made fiox
    // read the zones again on each pass, many times that in a second.
    println!("device reads: fio {by_fio} bytes, fiox {by_fiox} bytes");
    assert!(by_fiox <= by_fio * 3 / 2 + (8 << 20), "device reads: fio {by_fio} bytes, fiox {by_fiox} bytes");
}

/// issue 28's job (`rw=readwrite` with `verify_backlog=1`, 32 MiB) and its variations move the
/// same bytes in each direction as fio, job by job: fio writes 16,568 KiB of it, and each
/// verify read counts as a read.
#[test]
fn the_verify_backlog_mix_moves_fios_bytes() {
    let base = ["--name=v", "--size=32m", "--bs=4k", "--verify=crc32c", "--do_verify=1", "--output-format=json"];
    let cases: [&[&str]; 4] = [
        &["--rw=readwrite", "--direct=1", "--verify_backlog=1"],
        &["--rw=randrw", "--verify_backlog=1", "--numjobs=2"],
        &["--rw=randrw", "--rwmixread=30", "--verify_backlog=4", "--verify_backlog_batch=2"],
        &["--rw=readwrite", "--rwmixread=70", "--verify_backlog=16", "--verify_backlog_batch=8", "--numjobs=3"],
    ];
    for case in cases {
        let mut seen = Vec::new();
        for tool in ["fio", "fiox"] {
            let dir = scratch();
            let dirarg = format!("--directory={}", dir.path().display());
            let args = [&base[..], case, &[dirarg.as_str()]].concat();
            let out = if tool == "fio" { fio(dir.path(), &args) } else { fiox(dir.path(), &args) };
            assert_eq!(out.code, 0, "{tool} {case:?}: {}", out.stderr);
            let doc = json(&out);
            let kib = |j: &serde_json::Value| (j["read"]["io_kbytes"].as_u64(), j["write"]["io_kbytes"].as_u64());
            seen.push(doc["jobs"].as_array().unwrap().iter().map(kib).collect::<Vec<_>>());
        }
        assert_eq!(seen[0], seen[1], "(read, write) KiB per job, fio then fiox, for {case:?}");
        if case[2] == "--verify_backlog=1" && case.len() == 3 {
            assert_eq!(seen[1], vec![(Some(32768), Some(16568))], "the issue's figures");
        }
    }
}

#[test]
fn messages_name_the_variable_the_file_and_the_cpu() {
    let dir = scratch();
    let d = dir.path();
    // An empty ${VAR} in a numeric option names the variable (fio: "failed parsing size=${X}").
    std::fs::write(d.join("v.fio"), "[a]\nioengine=null\nsize=${FIOX_TEST_EMPTY}\n").unwrap();
    let o = Command::new(fiox_bin()).arg("v.fio").env("FIOX_TEST_EMPTY", "").current_dir(d).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("'FIOX_TEST_EMPTY' is empty") && err.contains("v.fio, line 3"), "{err}");
    let o = Command::new(fiox_bin()).arg("v.fio").env_remove("FIOX_TEST_EMPTY").current_dir(d).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("'FIOX_TEST_EMPTY' is not set") && err.contains("v.fio, line 3"), "{err}");

    // A missing job file: its name and the OS error, once.
    let out = fiox(d, &["nothere.fio"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("'nothere.fio'"), "{}", out.stderr);
    assert_eq!(out.stderr.matches("No such file").count(), 1, "{}", out.stderr);
    // A missing include: also the including file and line.
    std::fs::write(d.join("main.fio"), "[global]\nioengine=null\ninclude gone.fio\n[a]\nsize=1m\n").unwrap();
    let out = fiox(d, &["main.fio"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("gone.fio") && out.stderr.contains("included from main.fio, line 3"), "{}", out.stderr);
    assert_eq!(out.stderr.matches("No such file").count(), 1, "{}", out.stderr);

    // A CPU the machine lacks is refused while parsing, as fio refuses it, naming the highest.
    let cpus = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap();
    let highest: usize = cpus.trim().rsplit(['-', ',']).next().unwrap().parse().unwrap();
    let too_high = format!("--cpus_allowed={}", highest + 4);
    let args = ["--name=a", "--ioengine=null", "--size=1m", too_high.as_str()];
    let by_fio = fio(d, &args);
    assert_ne!(by_fio.code, 0);
    assert!(by_fio.stderr.contains(&format!("(max={highest})")), "{}", by_fio.stderr);
    let out = fiox(d, &args);
    assert_eq!(out.code, 1);
    assert!(!out.stdout.contains("Starting"), "refused before the run starts: {}", out.stdout);
    assert!(out.stderr.contains(&format!("highest CPU is {highest}")), "{}", out.stderr);
}

#[test]
fn a_synchronous_engine_notes_the_capped_depth_where_fio_does() {
    let dir = scratch();
    let f = dir.path().join("f");
    std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    let name = format!("--filename={}", f.display());
    for (engine, depth, format, notes) in [
        ("psync", "4", "normal", 1),
        ("psync", "4", "json", 1),
        ("sync", "2", "terse", 1),
        ("psync", "1", "normal", 0),
        ("libaio", "4", "normal", 0),
    ] {
        let args = [
            "--name=a",
            &name,
            "--size=1m",
            &format!("--ioengine={engine}"),
            &format!("--iodepth={depth}"),
            "--numjobs=2",
            &format!("--output-format={format}"),
        ];
        let note = "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1";
        for (who, out) in [("fio", fio(dir.path(), &args)), ("fiox", fiox(dir.path(), &args))] {
            assert_eq!(out.code, 0, "{who} {engine}: {}", out.stderr);
            assert_eq!(out.stderr, "", "{who} {engine}");
            assert_eq!(out.stdout.lines().filter(|l| *l == note).count(), 2 * notes, "{who} {engine} {depth} {format}");
            if notes > 0 && format == "normal" {
                // After "Starting 2 processes", before the report.
                let start = out.stdout.find("Starting").unwrap();
                assert!(out.stdout.find(note).unwrap() > start, "{who}");
            }
            if format == "json" {
                json(&out);
            }
        }
    }
}

/// Which format each part of a combined output is, in order of appearance.
fn layout(stdout: &str) -> Vec<&'static str> {
    let mut parts = Vec::new();
    for line in stdout.lines() {
        let part = if line.starts_with("3;") {
            "terse"
        } else if line == "{" {
            "json"
        } else if line.contains("\"bins\" :") {
            "json+"
        } else if line.starts_with("c: (groupid=") {
            "normal"
        } else {
            continue;
        };
        if parts.last() != Some(&part) && !(part == "json+" && parts.contains(&"json+")) {
            parts.push(part);
        }
    }
    parts
}

#[test]
fn every_list_of_output_formats_prints_in_fios_order() {
    let dir = scratch();
    let names = ["normal", "terse", "json", "json+"];
    for mask in 1..16u32 {
        let mut list: Vec<&str> = (0..4).filter(|b| mask & (1 << b) != 0).map(|b| names[b]).collect();
        // The list's own order must not matter: name it backwards too.
        for pass in 0..2 {
            if pass == 1 {
                list.reverse();
            }
            let formats = format!("--output-format={}", list.join(","));
            let args = ["--name=c", "--ioengine=null", "--size=1M", formats.as_str()];
            let by_fio = fio(dir.path(), &args);
            let out = fiox(dir.path(), &args);
            assert_eq!(out.code, 0, "{formats}: {}", out.stderr);
            assert_eq!(layout(&out.stdout), layout(&by_fio.stdout), "{formats}");
            // The same order in the --output file.
            let file = dir.path().join("out.txt");
            let out_arg = format!("--output={}", file.display());
            let to_file = fiox(dir.path(), &[args[0], args[1], args[2], args[3], &out_arg]);
            assert_eq!(to_file.code, 0, "{formats}: {}", to_file.stderr);
            let text = std::fs::read_to_string(&file).unwrap();
            assert_eq!(layout(&text), layout(&by_fio.stdout), "{formats} --output");
        }
    }
}

/// The lines of `--crctest` as (name, rate) pairs, checking each has fio's shape.
fn crc_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(|l| {
            let (name, rest) = l.split_once(':').unwrap_or_else(|| panic!("{l:?}"));
            let tabs = if name.len() < 7 { "\t\t" } else { "\t" };
            let rate =
                rest.strip_prefix(tabs).and_then(|r| r.strip_suffix(" MiB/sec")).unwrap_or_else(|| panic!("{l:?}"));
            assert_eq!(rate.len().max(8), rate.len(), "a field of 8: {l:?}");
            assert!(rate.trim().parse::<f64>().unwrap() > 0.0, "{l:?}");
            name.to_string()
        })
        .collect()
}

#[test]
fn crctest_prints_fios_table() {
    let dir = scratch();
    for args in [&["--crctest"][..], &["--crctest=md5,crc32c"]] {
        let (a, b) = (fio(dir.path(), args), fiox(dir.path(), args));
        assert_eq!((a.code, b.code), (0, 0), "{}", b.stderr);
        assert_eq!(crc_lines(&b.stdout), crc_lines(&a.stdout), "{args:?}");
        assert_eq!(b.stderr, "");
    }
    assert_ne!(fiox(dir.path(), &["--crctest=nope"]).code, 0);
}

#[test]
fn idle_prof_reports_as_fio_does() {
    let dir = scratch();
    let shape = |s: &str| -> Vec<String> { s.lines().map(|l| l.split(':').next().unwrap().to_string()).collect() };
    let (a, b) = (fio(dir.path(), &["--idle-prof=calibrate"]), fiox(dir.path(), &["--idle-prof=calibrate"]));
    assert_eq!(b.code, 0, "{}", b.stderr);
    assert_eq!(shape(&b.stdout), shape(&a.stdout));
    assert!(b.stdout.contains("unit work: mean=") && b.stdout.contains("us, stddev="), "{}", b.stdout);
    let job = ["--name=a", "--ioengine=null", "--size=64M", "--idle-prof=percpu"];
    for format in ["json", "normal"] {
        let f = format!("--output-format={format}");
        let args = [job[0], job[1], job[2], job[3], f.as_str()];
        let (a, b) = (fio(dir.path(), &args), fiox(dir.path(), &args));
        assert_eq!((a.code, b.code), (0, 0), "{}", b.stderr);
        assert_eq!(b.stderr, "");
        if format == "json" {
            let keys = |o: &crate::util::Out| -> Vec<String> {
                let j = json(o);
                let idle = j["cpu_idleness"].as_object().expect("cpu_idleness").clone();
                for v in idle.values() {
                    assert!(v.as_f64().is_some_and(|x| (0.0..=100.0).contains(&x) || x > 0.0));
                }
                idle.keys().cloned().collect()
            };
            let mut ka = keys(&a);
            let mut kb = keys(&b);
            ka.sort();
            kb.sort();
            assert_eq!(kb, ka);
        } else {
            let tail = |s: &str| -> Vec<String> {
                let at = s.find("CPU idleness:").expect("CPU idleness");
                shape(&s[at..]).into_iter().map(|l| l.trim().to_string()).collect()
            };
            assert_eq!(tail(&b.stdout), tail(&a.stdout));
            let percpu = |s: &str| s.lines().find(|l| l.contains("percpu:")).unwrap().matches('%').count();
            assert_eq!(percpu(&b.stdout), percpu(&a.stdout));
        }
    }
}

#[test]
fn debug_classes_are_accepted_and_traced_like_fios() {
    let dir = scratch();
    let help = |o: crate::util::Out| o.stdout;
    assert_eq!(help(fiox(dir.path(), &["--debug=help"])), help(fio(dir.path(), &["--debug=help"])));
    let f = dir.path().join("f");
    std::fs::write(&f, vec![0u8; 16 << 10]).unwrap();
    let name = format!("--filename={}", f.display());
    let args = ["--name=a", name.as_str(), "--size=16k", "--rw=read", "--debug=io,file,mem,parse,blktrace"];
    let (a, b) = (fio(dir.path(), &args), fiox(dir.path(), &args));
    assert_eq!((a.code, b.code), (0, 0), "{}", b.stderr);
    assert_eq!(b.stderr, "");
    let count = |s: &str, pat: &str| s.lines().filter(|l| l.contains(pat)).count();
    for pat in ["fio: set debug option", "io_u", " queue: io_u ", " complete: io_u "] {
        assert_eq!(count(&b.stdout, pat) > 0, count(&a.stdout, pat) > 0, "{pat}");
    }
    // Four 4 KiB reads: fio queues and completes each once.
    assert_eq!(count(&b.stdout, " queue: io_u "), count(&a.stdout, " queue: io_u "));
    assert_eq!(count(&b.stdout, " complete: io_u "), count(&a.stdout, " complete: io_u "));
    for class in ["parse ", "file ", "mem "] {
        assert!(b.stdout.lines().any(|l| l.starts_with(class)), "{class}: {}", b.stdout);
    }
    // Every fio class is accepted.
    for class in [
        "process",
        "verify",
        "random",
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
        "all",
    ] {
        let d = format!("--debug={class}");
        let out = fiox(dir.path(), &["--name=a", "--ioengine=null", "--size=8k", &d]);
        assert_eq!(out.code, 0, "{class}: {}", out.stderr);
    }
}

/// Runs a one-job file with `line` added under both binaries; `(exit code, read bytes, read
/// I/Os, fiox's stderr)`.
fn lenient_run(dir: &std::path::Path, line: &str) -> [(i32, i64, i64, String); 2] {
    let jf = dir.join("lenient.fio");
    std::fs::write(&jf, format!("[a]\nioengine=null\nrw=read\nbs=4k\nsize=64k\n{line}\n")).unwrap();
    let args = [jf.to_str().unwrap(), "--output-format=json"];
    [fio(dir, &args), fiox(dir, &args)].map(|o| {
        if o.code != 0 {
            return (o.code.min(1), 0, 0, o.stderr);
        }
        let j = json(&o);
        let r = &j["jobs"][0]["read"];
        (0, r["io_bytes"].as_i64().unwrap(), r["total_ios"].as_i64().unwrap(), o.stderr)
    })
}

#[test]
fn lenient_values_are_read_as_fio_reads_them() {
    let dir = scratch();
    // Trailing characters, separators, case, units and empty values, by value kind: sizes,
    // size-or-percent, integers, booleans; each compared with fio 3.33's run of the same file.
    for line in [
        "size=65536)",
        "size=64k)",
        "size=128K",
        "size=64KiB",
        "size=64kibx",
        "size=0x10000)",
        "size=+64k",
        "bs=2kq",
        "bs=2KiBx",
        "bs=1k/25",
        "number_ios=8)",
        "number_ios=8 ios",
        "direct=0x",
        "io_size=32k;",
        // A fraction ends fio's number: its unit is lost with it (1.5k is 1).
        "bs=1.5k",
        "bs=2.5k,4k",
        // fio's "string or value" options read `a:b`, `a-b` and `a,b` piece by piece: size,
        // io_size and offset keep the last readable piece, number_ios the first (an unreadable
        // first piece leaves its default).
        "size=16k:32k",
        "size=32k:16k",
        "size=16k-32k",
        "size=16k,32k",
        "size=16k:32k:8k",
        "size=junk:16k",
        "size=:16k",
        "size=16k:",
        "size=16k::32k",
        "size=16k:junk",
        "size=4K:8KiB",
        "size=4k:8kib",
        "size=0x1000:0x2000",
        "size=4k:8k%",
        "io_size=8k:16k",
        "io_size=16k:8k",
        "io_size=:8k",
        "offset=16k:32k",
        "offset=32k:16k",
        "offset=:8k",
        "number_ios=3:5",
        "number_ios=:5",
        "number_ios=junk:5",
        // An io_size that is not whole blocks: fio issues whole blocks while any of it is
        // left, but not into a new pass over the file; io_size=0 is no io_size.
        "io_size=1k",
        "io_size=5k",
        "io_size=65k",
        "io_size=69k",
        "io_size=0",
        "io_size=1k\nrw=randread\nnorandommap=1",
        "io_size=5k\nsize=8k\nloops=2",
        // A filesize range from 0 is ignored (fio: "min value out of range"); 0 is refused.
        "filesize=0-8k",
        "filesize=0-8k\nnrfiles=2",
        "filesize=0-0",
        // Refused by both.
        "size=junk:junk",
        "size=1.5m",
        "size=12.5%",
        "size=",
        "bs=",
        "size=k4",
        "size=(4k)x",
        "number_ios=",
    ] {
        let [by_fio, by_fiox] = lenient_run(dir.path(), line);
        assert_eq!(by_fiox.0, by_fio.0, "{line}: exit status (fiox: {})", by_fiox.3);
        assert_eq!(by_fiox.1..by_fiox.2, by_fio.1..by_fio.2, "{line}: bytes and I/Os");
        if by_fiox.0 == 0 {
            assert_eq!(by_fiox.3, "", "{line}: a run's stderr stays empty");
        }
    }
    // Ranges take ':' as well as '-', and junk after each bound: compare the block sizes the
    // two write logs hold.
    // The block sizes a run draws differ from fio's near a region's end whatever the range's
    // spelling; the parse is what the header line shows.
    // A zero bound is the job's bs (`0-4k` is 4096B-4096B).
    for range in
        ["1k:4k", "1k-4k)", "2K:8KB", "4k:", "512/25:1k:25:2k:25:4k/25", "0-4k", "0-0", "0k-8k", "0:4k", "0-4k,1k-2k"]
    {
        let b = format!("--bsrange={range}");
        let args = ["--name=b", "--ioengine=null", "--rw=randwrite", "--size=1M", b.as_str()];
        let (a, x) = (fio(dir.path(), &args), fiox(dir.path(), &args));
        assert_eq!(x.code, a.code, "bsrange={range}: {}", x.stderr);
        assert_eq!(x.stdout.lines().next(), a.stdout.lines().next(), "bsrange={range}");
    }
    for range in ["512/25:1k:25:2k:25:4k/25", "0-4k", "0-8k"] {
        let mut sizes = Vec::new();
        for (who, binary_is_fiox) in [("fio", false), ("fiox", true)] {
            let log = dir.path().join(format!("{who}.iolog"));
            // fio appends to an existing log.
            let _ = std::fs::remove_file(&log);
            let b = format!("--bsrange={range}");
            let l = format!("--write_iolog={}", log.display());
            let out = crate::util::tool(
                binary_is_fiox,
                dir.path(),
                &["--name=b", "--ioengine=null", "--rw=randwrite", "--size=1M", "--randrepeat=1", &b, &l],
            );
            assert_eq!(out.code, 0, "{who} {range}: {}", out.stderr);
            let mut s: Vec<u64> = std::fs::read_to_string(&log)
                .unwrap()
                .lines()
                .filter_map(|l| {
                    let p: Vec<&str> = l.split_whitespace().collect();
                    (p.len() == 5 && p[2] == "write").then(|| p[4].parse().unwrap())
                })
                .collect();
            s.sort_unstable();
            s.dedup();
            sizes.push(s);
        }
        assert_eq!(sizes[1], sizes[0], "bsrange={range}");
    }
    // --parse-only names each leniency: option, value, reading, file and line, on stdout.
    let jf = dir.path().join("notes.fio");
    std::fs::write(&jf, "[a]\nioengine=null\nsize=65536)\nbs=4q\nbs=4k\n").unwrap();
    let out = fiox(dir.path(), &["--parse-only", jf.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "");
    assert!(
        out.stdout.contains("notes.fio, line 3: size=65536): '65536)' read as 65536, ignoring ')'"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("notes.fio, line 4: bs=4q: '4q' read as 4, ignoring 'q'"), "{}", out.stdout);
    assert_eq!(out.stdout.lines().count(), 2, "{}", out.stdout);
}

/// Times with characters after them, read as fio 3.33 reads them: the length of a time-based
/// null job (ms) under both tools, and the acceptance of the other time and "string or value"
/// options under `--parse-only`.
/// A random job without a random map (`norandommap`, a non-uniform distribution) has no map
/// that fills up to end it: fio 3.33 issues whole blocks while less than its size was issued,
/// so `size=6k bs=4k` moves 8 KiB in two I/Os; with the map, or the LFSR, one pass of whole
/// blocks (4 KiB). Bytes and I/Os per direction compared on a 16 KiB file and on one each tool
/// lays out.
#[test]
fn random_jobs_without_a_map_issue_whole_blocks_past_size_as_fio_does() {
    let dir = scratch();
    let moved = |run: Run, args: &[&str], existing: bool| -> [i64; 4] {
        let f = dir.path().join("nomap.dat");
        let _ = std::fs::remove_file(&f);
        if existing {
            std::fs::write(&f, vec![1u8; 16 << 10]).unwrap();
        }
        let common = ["--name=j", "--filename=nomap.dat", "--bs=4k", "--output-format=json"];
        let o = run(dir.path(), &[&common[..], args].concat());
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        let j = json(&o);
        let d = |dir: &str, k: &str| j["jobs"][0][dir][k].as_i64().unwrap();
        [d("read", "io_bytes"), d("read", "total_ios"), d("write", "io_bytes"), d("write", "total_ios")]
    };
    for args in [
        &["--rw=randread", "--norandommap", "--size=6k"][..],
        &["--rw=randread", "--size=6k"],
        &["--rw=randread", "--norandommap", "--size=5k"],
        &["--rw=randread", "--norandommap", "--size=10k"],
        &["--rw=randread", "--norandommap", "--size=14k", "--bs=8k"],
        &["--rw=randread", "--norandommap", "--size=6k", "--bs=2k"],
        &["--rw=randread", "--norandommap", "--size=6k", "--randrepeat=0"],
        &["--rw=randread", "--norandommap", "--size=6k", "--loops=2"],
        &["--rw=randread", "--norandommap", "--size=6k", "--io_size=12k"],
        &["--rw=randread", "--norandommap", "--size=6k", "--ioengine=libaio", "--iodepth=4"],
        // fio's zipf and pareto end such jobs early or not depending on the file's name.
        &["--rw=randread", "--random_distribution=zoned:50/50:50/50", "--size=66k"],
        &["--rw=randread", "--random_generator=lfsr", "--norandommap", "--size=6k"],
        &["--rw=randwrite", "--norandommap", "--size=6k"],
        &["--rw=randwrite", "--size=6k"],
        &["--rw=randrw", "--norandommap", "--size=6k"],
    ] {
        for existing in [true, false] {
            let (x, f) = (moved(fiox, args, existing), moved(fio, args, existing));
            assert_eq!(x, f, "{args:?} (file there before: {existing}): read bytes, I/Os, write bytes, I/Os");
        }
    }
}

/// `filesize` with a low end of 0 is ignored, as fio 3.33 ignores it after refusing the low
/// end: the file keeps its size, or `size` sizes the files; the same bytes moved, and the
/// reading named under `--parse-only` (with `bsrange`'s, whose zero bound is the job's bs).
#[test]
fn a_range_from_zero_is_read_as_fio_reads_it() {
    let dir = scratch();
    for args in [
        &["--filename=ex.dat", "--filesize=0-4k", "--rw=write"][..],
        &["--filename=ex.dat", "--filesize=0-4k", "--rw=read"],
        &["--filesize=0-8k", "--size=64k", "--nrfiles=2", "--rw=write"],
        &["--filesize=0-4k", "--rw=write"],
    ] {
        let mut seen = Vec::new();
        for run in [fio as Run, fiox] {
            let _ = std::fs::remove_dir_all(dir.path().join("z"));
            std::fs::create_dir(dir.path().join("z")).unwrap();
            std::fs::write(dir.path().join("z/ex.dat"), vec![3u8; 32 << 10]).unwrap();
            let common = ["--name=j", "--directory=z", "--bs=4k", "--output-format=json"];
            let o = run(dir.path(), &[&common[..], args].concat());
            let moved = (o.code == 0).then(|| {
                let j = json(&o);
                ["read", "write"].map(|d| j["jobs"][0][d]["io_bytes"].as_i64().unwrap())
            });
            let mut sizes: Vec<(String, u64)> = std::fs::read_dir(dir.path().join("z"))
                .unwrap()
                .map(|e| e.unwrap())
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().len()))
                .collect();
            sizes.sort();
            seen.push((o.code.min(1), moved, sizes));
        }
        assert_eq!(seen[1], seen[0], "{args:?}: fiox, then fio");
    }
    let jf = dir.path().join("zero.fio");
    std::fs::write(&jf, "[a]\nioengine=null\nsize=64k\nbsrange=0-4k\nfilesize=0-8k\n").unwrap();
    let out = fiox(dir.path(), &["--parse-only", jf.to_str().unwrap()]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    for note in ["zero.fio, line 4: bsrange=0-4k: '0-4k' has a low end of 0", "zero.fio, line 5: filesize=0-8k: '0-8k'"]
    {
        assert!(out.stdout.contains(note), "no '{note}' in {}", out.stdout);
    }
}

#[test]
fn lenient_times_are_read_as_fio_reads_them() {
    let dir = scratch();
    let ms = |binary_is_fiox: bool, v: &str| -> (i32, i64, String) {
        let r = format!("--runtime={v}");
        let args = ["--name=t", "--ioengine=null", "--size=1m", "--time_based", &r, "--output-format=json"];
        let o = crate::util::tool(binary_is_fiox, dir.path(), &args);
        let runtime = if o.code == 0 { json(&o)["jobs"][0]["job_runtime"].as_i64().unwrap() } else { -1 };
        (o.code.min(1), runtime, o.stderr)
    };
    // `2x`, `1s5`, `2sx`, `2sec` and a hex number are microseconds; `ms` is a prefix; a
    // character that is no letter leaves the option's unit; `1:2` keeps its first value.
    for v in ["2x", "1s5", "2sx", "2sec", "0x10", "300msq", "300ms:1", "1)", "1:2", "x2", ""] {
        let ((c1, t1, _), (c2, t2, err)) = (ms(false, v), ms(true, v));
        assert_eq!(c2, c1, "runtime={v}: exit status (fiox: {err})");
        assert!((t2 - t1).abs() <= 60, "runtime={v}: fio ran {t1} ms, fiox {t2} ms");
        if c2 == 0 {
            assert_eq!(err, "", "runtime={v}: a run's stderr stays empty");
        }
    }
    for v in [
        "ramp_time=1s5",
        "startdelay=3q",
        "latency_target=2msq",
        "latency_window=1:2",
        "steadystate_duration=2x",
        "steadystate_ramp_time=0x10",
        "thinktime=2sec",
        "randseed=:7",
        "lockmem=1k:2k",
        "zonesize=junk:4k",
        "zonerange=4k:",
        "zoneskip=:4k",
        "zonecapacity=:4k",
        "trim_backlog=4:8",
        "offset_increment=4k-8k",
        "zonesize=junk:junk",
        "ramp_time=s",
    ] {
        let o = format!("--{v}");
        let args = ["--parse-only", "--name=p", "--ioengine=null", "--size=1m", o.as_str()];
        let (a, x) = (fio(dir.path(), &args), fiox(dir.path(), &args));
        assert_eq!(x.code, a.code, "{v}: {}", x.stderr);
    }
    // Each reading is named on stdout.
    let jf = dir.path().join("times.fio");
    std::fs::write(&jf, "[a]\nioengine=null\nsize=4k:8k\nruntime=2x\nnumber_ios=junk:5\nramp_time=0x10\n").unwrap();
    let out = fiox(dir.path(), &["--parse-only", jf.to_str().unwrap()]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    for note in [
        "times.fio, line 3: size=4k:8k: '4k:8k' read as 8192, the last of its values",
        "times.fio, line 4: runtime=2x: '2x' read as 2 us, ignoring 'x'",
        "times.fio, line 5: number_ios=junk:5: 'junk:5' leaves number_ios as it was: its first value is unreadable",
        "times.fio, line 6: ramp_time=0x10: '0x10' read as 16 us: a hex time has no unit",
    ] {
        assert!(out.stdout.contains(note), "no '{note}' in {}", out.stdout);
    }
}

type Run = fn(&std::path::Path, &[&str]) -> crate::util::Out;

/// The lines of the `write_iolog` of job `j` in a fresh directory `d` with `args`, without
/// their times (and without the version line).
fn iolog_lines(dir: &std::path::Path, run: Run, args: &[&str]) -> Vec<String> {
    let _ = std::fs::remove_dir_all(dir.join("d"));
    std::fs::create_dir(dir.join("d")).unwrap();
    let path = dir.join("io.log");
    // fio appends to an existing log.
    let _ = std::fs::remove_file(&path);
    let common = ["--name=j", "--directory=d", "--write_iolog=io.log"];
    let out = run(dir, &[&common[..], args].concat());
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines().skip(1).map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string()).collect()
}

/// With several files an `fsync=N` (`fdatasync=N`, `sync_file_range`) sync goes, as in fio
/// 3.33, to the file the file service picks next (using up that pick), carries the offset of
/// the I/O before it, and is made again after each read of a mixed job whose writes stand at
/// a multiple of N; a file found done is closed when the service next picks it. Compared with
/// fio's `write_iolog` line by line where the offsets are deterministic, by file and action
/// where they are random, and by the syncs counted in the JSON.
#[test]
fn write_iolog_sends_each_fsync_to_the_next_file_as_fio_does() {
    let dir = scratch();
    let common = ["--bs=4k", "--size=64k", "--nrfiles=4"];
    for args in [
        &["--rw=write", "--fsync=3"][..],
        &["--rw=write", "--fsync=4"],
        &["--rw=write", "--fsync=1", "--nrfiles=2", "--size=16k"],
        &["--rw=write", "--fdatasync=3"],
        &["--rw=write", "--sync_file_range=write:3"],
        &["--rw=write", "--fsync=3", "--file_service_type=sequential"],
        &["--rw=write", "--fsync=4", "--file_service_type=sequential"],
        &["--rw=write", "--fsync=3", "--file_service_type=roundrobin:2"],
        &["--rw=write", "--fsync=3", "--openfiles=2"],
        &["--rw=write", "--fsync=3", "--ioengine=libaio"],
        &["--rw=write", "--fsync=4", "--loops=2"],
        &["--rw=write", "--fsync=4", "--loops=2", "--openfiles=3"],
        &["--rw=write", "--fsync=3", "--loops=3", "--end_fsync=1", "--file_service_type=sequential"],
        &["--rw=write", "--fsync=3", "--loops=2", "--fsync_on_close=1", "--file_service_type=roundrobin:2"],
        &["--rw=write", "--fsync=3", "--end_fsync=1"],
        &["--rw=write", "--file_service_type=sequential", "--end_fsync=1"],
        &["--rw=readwrite", "--fsync=3"],
        &["--rw=readwrite", "--fsync=3", "--nrfiles=1"],
    ] {
        let a = [&common[..], args].concat();
        assert_eq!(iolog_lines(dir.path(), fiox, &a), iolog_lines(dir.path(), fio, &a), "write_iolog for {args:?}");
    }
    // Random offsets are fiox's own: the files and actions line by line, and each sync's
    // offset that of the I/O before it.
    let shape = |lines: Vec<String>| -> Vec<String> {
        let mut prev = None;
        for l in &lines {
            let f: Vec<&str> = l.split(' ').collect();
            match (f.get(1), f.get(2)) {
                (Some(&"sync"), Some(o)) => assert_eq!(Some(*o), prev, "{lines:?}"),
                (Some(_), Some(o)) => prev = Some(*o),
                _ => {}
            }
        }
        lines.iter().map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" ")).collect()
    };
    for args in [
        &["--rw=randwrite", "--fsync=3"][..],
        &["--rw=randwrite", "--fsync=3", "--file_service_type=sequential"],
        &["--rw=randwrite", "--fsync=4", "--loops=2"],
        &["--rw=randwrite", "--fsync=3", "--norandommap"],
        &["--rw=randrw", "--fsync=3", "--randseed=3", "--nrfiles=1"],
    ] {
        let a = [&common[..], args].concat();
        assert_eq!(shape(iolog_lines(dir.path(), fiox, &a)), shape(iolog_lines(dir.path(), fio, &a)), "{args:?}");
    }
    // A random file service: fiox's draw, the same syncs and closes.
    std::fs::create_dir(dir.path().join("dj")).unwrap();
    for args in [
        &["--rw=write", "--fsync=3", "--file_service_type=random"][..],
        &["--rw=randwrite", "--fsync=2", "--file_service_type=random"],
    ] {
        let a = [&common[..], args].concat();
        let (x, f) = (iolog_lines(dir.path(), fiox, &a), iolog_lines(dir.path(), fio, &a));
        let count = |lines: &[String], what: &str| lines.iter().filter(|l| l.split(' ').nth(1) == Some(what)).count();
        for what in ["open", "close", "write", "sync"] {
            assert_eq!(count(&x, what), count(&f, what), "{args:?}: {what} lines");
        }
        let syncs = |o: crate::util::Out| json(&o)["jobs"][0]["sync"]["total_ios"].as_i64();
        let j = [&a[..], &["--name=j", "--directory=dj", "--output-format=json"]].concat();
        assert_eq!(syncs(fiox(dir.path(), &j)), syncs(fio(dir.path(), &j)), "{args:?}: syncs");
    }
}

/// A mixed job over several files draws each I/O's direction before its file, and draws it
/// again when the file picked is done (as fio 3.33 does): `fsync=N` syncs take file picks too,
/// so the files fill unevenly and some picks find a done file. The reads and writes, their
/// order and files (offsets are fiox's own) and the bytes each way match fio's.
#[test]
fn a_mixed_job_draws_its_direction_again_when_the_file_picked_is_done() {
    let dir = scratch();
    std::fs::create_dir(dir.path().join("dj")).unwrap();
    let actions = |lines: Vec<String>| -> Vec<String> {
        lines.iter().map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" ")).collect()
    };
    let bytes = |o: crate::util::Out| {
        let j = json(&o);
        let job = &j["jobs"][0];
        (job["read"]["io_bytes"].as_i64(), job["write"]["io_bytes"].as_i64())
    };
    for (sync, seed, nrfiles) in
        [("--fsync=1", 3, 4), ("--fsync=3", 3, 4), ("--fsync=4", 3, 4), ("--fsync=1", 5, 2), ("--fdatasync=3", 7, 3)]
    {
        let (seed, nrfiles) = (format!("--randseed={seed}"), format!("--nrfiles={nrfiles}"));
        let a = ["--rw=randrw", "--bs=4k", "--size=64k", sync, seed.as_str(), nrfiles.as_str()];
        let (x, f) = (actions(iolog_lines(dir.path(), fiox, &a)), actions(iolog_lines(dir.path(), fio, &a)));
        assert!(f.iter().any(|l| l.ends_with(" read")) && f.iter().any(|l| l.ends_with(" write")), "{a:?}: {f:?}");
        assert_eq!(x, f, "write_iolog actions for {a:?}");
        let j = [&a[..], &["--name=j", "--directory=dj", "--output-format=json"]].concat();
        assert_eq!(bytes(fiox(dir.path(), &j)), bytes(fio(dir.path(), &j)), "{a:?}: bytes read and written");
    }
}

/// The null engine's files are named as fio 3.33 names them though nothing is opened:
/// `directory=` and `filename=` apply, and a generated name is fio's `job.clone.file`
/// (`d/j.0.0`), as its `write_iolog` shows; `size` is shared among the names given.
#[test]
fn the_null_engines_files_are_named_as_fio_names_them() {
    let dir = scratch();
    for args in [
        &["--nrfiles=2"][..],
        &["--filename=foo"],
        &["--filename=a:b"],
        &["--rw=randwrite", "--nrfiles=3", "--size=12k"],
    ] {
        let a = [&["--ioengine=null", "--rw=write", "--bs=4k", "--size=16k"][..], args].concat();
        let f = iolog_lines(dir.path(), fio, &a);
        assert!(f.iter().all(|l| l.starts_with("d/")), "{a:?}: {f:?}");
        assert_eq!(iolog_lines(dir.path(), fiox, &a), f, "write_iolog for {a:?}");
    }
}

/// A character device a plain engine opens runs as in fio 3.33, given `size=`: writes to
/// /dev/full fail with ENOSPC (exit 1, JSON error 28, fio's `io_u error` line), reads of it
/// return its zeros. A character device that may hold data is written only with consent.
#[test]
fn a_character_device_runs_as_in_fio() {
    let dir = scratch();
    let common = ["--name=j", "--filename=/dev/full", "--bs=4k", "--size=16k", "--output-format=json"];
    let figures = |o: &crate::util::Out| {
        let j = json(o);
        let job = &j["jobs"][0];
        (o.code, job["error"].as_i64(), job["read"]["io_bytes"].as_i64(), job["write"]["total_ios"].as_i64())
    };
    for rw in ["--rw=write", "--rw=read", "--rw=randread"] {
        let a = [&common[..], &[rw]].concat();
        let (x, f) = (fiox(dir.path(), &a), fio(dir.path(), &a));
        assert_eq!(figures(&x), figures(&f), "{rw}: {}", x.stderr);
        let first =
            |o: &crate::util::Out| o.stderr.lines().next().map(|l| l.split_once(": ").map(|(_, r)| r.to_string()));
        assert_eq!(first(&x), first(&f), "{rw}: the error line");
    }
    assert_eq!(figures(&fio(dir.path(), &[&common[..], &["--rw=write"]].concat())).1, Some(28));
    // Without size= neither runs.
    let a = ["--name=j", "--filename=/dev/zero", "--rw=read", "--bs=4k"];
    assert_ne!(fio(dir.path(), &a).code, 0);
    let x = fiox(dir.path(), &a);
    assert!(x.code != 0 && x.stderr.contains("size="), "{}", x.stderr);
    // A device that is not a known sink is written only with allow_mounted_write.
    let x = fiox(dir.path(), &["--name=j", "--filename=/dev/random", "--rw=write", "--bs=4k", "--size=4k"]);
    assert!(x.code != 0 && x.stderr.contains("allow_mounted_write"), "{}", x.stderr);
}

/// `write_iolog` over several loops logs the files' closing and opening between loops and the
/// loops' syncs as fio 3.33 does: a synchronous engine closes the files, then opens each again
/// to sync it; an asynchronous one syncs, then closes. Compared line by line without the times.
#[test]
fn write_iolog_logs_each_loops_close_and_sync_as_fio_does() {
    let dir = scratch();
    let log = |run: Run, args: &[&str]| iolog_lines(dir.path(), run, &[&["--size=64k", "--bs=16k"][..], args].concat());
    for args in [
        &["--rw=write", "--fsync_on_close=1", "--loops=3"][..],
        &["--rw=write", "--loops=3"],
        &["--rw=write", "--end_fsync=1", "--loops=2", "--nrfiles=2"],
        &["--rw=read", "--fsync_on_close=1", "--loops=2", "--nrfiles=2"],
        &["--rw=write", "--fsync=3", "--fsync_on_close=1", "--loops=2"],
        &["--rw=write", "--fsync_on_close=1", "--loops=2", "--ioengine=libaio", "--iodepth=4"],
        &["--rw=write", "--end_fsync=1", "--loops=2", "--ioengine=io_uring", "--nrfiles=2"],
        // A loop that ends on an fsync=N sync: sync, close, open, sync (no sync between loops
        // for end_fsync or fsync_on_close), with a synchronous engine; an asynchronous one
        // closes first.
        &["--rw=write", "--fsync=4", "--loops=2"],
        &["--rw=write", "--fsync=2", "--loops=3"],
        &["--rw=write", "--fsync=4", "--loops=2", "--fsync_on_close=1"],
        &["--rw=write", "--fsync=4", "--loops=3", "--end_fsync=1"],
        &["--rw=write", "--fsync=4", "--loops=2", "--ioengine=libaio"],
        &["--rw=write", "--fsync=4", "--loops=2", "--fsync_on_close=1", "--ioengine=libaio"],
        // The same for fdatasync and sync_file_range.
        &["--rw=write", "--fdatasync=4", "--loops=2"],
        &["--rw=write", "--fdatasync=2", "--loops=3", "--fsync_on_close=1"],
        &["--rw=write", "--sync_file_range=write:4", "--loops=2"],
    ] {
        let (by_fio, by_fiox) = (log(fio, args), log(fiox, args));
        assert!(by_fio.iter().filter(|l| l.ends_with(" close")).count() >= 2, "{args:?}: {by_fio:?}");
        assert_eq!(by_fiox, by_fio, "write_iolog for {args:?}");
    }
    // The sync a loop ends on is an I/O of the job's, counted in its sync statistics.
    for extra in ["--fsync_on_close=0", "--fsync_on_close=1"] {
        let args = ["--name=j", "--filename=s.dat", "--size=64k", "--bs=16k", "--rw=write", "--fsync=4", "--loops=3"];
        let args = [&args[..], &[extra, "--output-format=json"]].concat();
        let syncs = |o: crate::util::Out| json(&o)["jobs"][0]["sync"]["total_ios"].as_i64();
        assert_eq!(syncs(fiox(dir.path(), &args)), syncs(fio(dir.path(), &args)), "{extra}: syncs");
    }
}

/// `end_fsync` syncs a writing job's files at the end of every loop, and a job that only reads
/// not at all, as fio 3.33 does: fsync calls counted under strace for both tools.
#[test]
fn end_fsync_syncs_each_loop_of_a_writing_job_as_fio_does() {
    if Command::new("strace").arg("-V").output().is_err() {
        crate::util::skip!("strace is not installed (scripts/test.sh installs it)");
    }
    let dir = scratch();
    let fsyncs = |bin: std::path::PathBuf, args: &[&str]| -> usize {
        let trace = dir.path().join("strace.out");
        let o = Command::new("strace")
            .args(["-f", "-e", "trace=fsync", "-o"])
            .arg(&trace)
            .arg(bin)
            .args(["--name=s", "--filename=s.dat", "--size=16k", "--bs=4k"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(&trace).unwrap().lines().filter(|l| l.contains("fsync(")).count()
    };
    for args in [
        &["--rw=write", "--end_fsync=1"][..],
        &["--rw=write", "--end_fsync=1", "--loops=3"],
        &["--rw=randrw", "--end_fsync=1"],
        &["--rw=read", "--end_fsync=1", "--loops=2"],
        &["--rw=read", "--fsync_on_close=1"],
        &["--rw=write", "--fsync_on_close=1"],
        // 2N-1 syncs of a file over N loops: one at each loop's end, one as the file is closed
        // for the next loop, one at the job's end.
        &["--rw=write", "--fsync_on_close=1", "--loops=3"],
        &["--rw=randwrite", "--fsync_on_close=1", "--loops=2", "--end_fsync=1"],
        &["--rw=read", "--fsync_on_close=1", "--loops=3"],
        // A loop that ends on an fsync=N sync makes it before its files close, and again as
        // the next loop starts.
        &["--rw=write", "--fsync=4", "--loops=2"],
        &["--rw=write", "--fsync=4", "--loops=2", "--fsync_on_close=1"],
        &["--rw=write", "--fsync=2", "--loops=3", "--end_fsync=1"],
        // A time-based job ends as a loop, then as a job: 2 syncs under end_fsync, 3 under
        // fsync_on_close.
        &["--rw=write", "--end_fsync=1", "--time_based", "--runtime=1", "--rate_iops=8"],
        &["--rw=write", "--fsync_on_close=1", "--time_based", "--runtime=1", "--rate_iops=8"],
    ] {
        let (by_fio, by_fiox) = (fsyncs(fio_bin(), args), fsyncs(fiox_bin(), args));
        assert_eq!(by_fiox, by_fio, "fsync calls for {args:?}");
    }
}

/// Files made before a run: name and size.
type Files<'a> = &'a [(&'a str, usize)];

/// One run of a job on files made beforehand (`files`: name and size; none made when empty)
/// in a fresh directory: per direction `(io_bytes, total_ios)`, and the `write_iolog` lines
/// without their times.
fn seq_room_run(run: Run, dir: &std::path::Path, files: Files, args: &[&str]) -> (Vec<i64>, Vec<String>) {
    let d = dir.join("room");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir(&d).unwrap();
    for &(name, size) in files {
        std::fs::write(d.join(name), vec![7u8; size]).unwrap();
    }
    let common = ["--name=j", "--write_iolog=io.log", "--output-format=json", "--bs=4k"];
    let out = run(&d, &[&common[..], args].concat());
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    let j = &json(&out)["jobs"][0];
    let totals = ["read", "write", "trim"]
        .iter()
        .flat_map(|k| [j[k]["io_bytes"].as_i64().unwrap(), j[k]["total_ios"].as_i64().unwrap()])
        .collect();
    let text = std::fs::read_to_string(d.join("io.log")).unwrap();
    let lines = text.lines().skip(1).map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string()).collect();
    (totals, lines)
}

/// A sequential job's region against its file's real end (issue 28), as fio 3.33 runs it: a
/// block that starts in the region goes whole when the file has room for it (size=6k on a
/// 16 KiB file reads 8 KiB); each pass over the region is a loop, the files closed and opened
/// between two; an io_size beyond the region's bytes adds passes while it leaves a block to
/// do (on a 6 KiB file, size=6k with io_size=12k reads offset 0 three times). Bytes, I/O
/// counts and the `write_iolog` compared line by line (docs/fio-observed/seq-room.md).
#[test]
fn sequential_regions_use_the_files_real_size_as_fio_does() {
    let dir = scratch();
    let f16: Files = &[("f", 16384)];
    let f6: Files = &[("f", 6144)];
    let two16: Files = &[("j.0.0", 16384), ("j.0.1", 16384)];
    let cases: &[(Files, &[&str])] = &[
        (f16, &["--size=6k"]),
        (f16, &["--size=10k"]),
        (f16, &["--size=16k"]),
        (f16, &["--size=20k"]),
        (f16, &["--size=6k", "--io_size=12k"]),
        (f16, &["--size=6k", "--io_size=7k"]),
        (f16, &["--size=6k", "--io_size=9k"]),
        (f16, &["--size=6k", "--loops=2"]),
        (f16, &["--size=6k", "--loops=3"]),
        (f16, &["--size=10k", "--loops=2"]),
        (f16, &["--size=6k", "--io_size=12k", "--loops=2"]),
        (f16, &["--size=6k", "--io_size=20k", "--loops=2"]),
        (f16, &["--size=6k", "--io_size=4k", "--loops=3"]),
        (f16, &["--size=6k", "--offset=4k"]),
        (f16, &["--size=6k", "--offset=8k"]),
        (f16, &["--size=6k", "--offset=10k"]),
        (f16, &["--size=6k", "--direct=1"]),
        (f16, &["--size=6k", "--rw=write"]),
        (f16, &["--size=6k", "--rw=write", "--loops=2"]),
        (f16, &["--size=10k", "--rw=readwrite"]),
        (f16, &["--size=6k", "--ioengine=libaio", "--iodepth=4"]),
        (f6, &["--size=6k"]),
        (f6, &["--size=6k", "--io_size=12k"]),
        (f6, &["--size=6k", "--io_size=7k"]),
        (f6, &["--size=6k", "--io_size=8k"]),
        (f6, &["--size=6k", "--loops=2"]),
        (f6, &["--size=6k", "--io_size=12k", "--loops=2"]),
        (&[("f", 4096)], &["--size=6k", "--rw=write"]),
        (&[("f", 65536)], &["--size=16k", "--io_size=4k", "--loops=3"]),
        (two16, &["--size=12k", "--nrfiles=2"]),
        (two16, &["--filesize=6k", "--nrfiles=2"]),
        // Files the job lays out itself: no room past the region.
        (&[], &["--size=16k", "--io_size=21k"]),
        (&[], &["--size=10k", "--io_size=14k"]),
        (&[], &["--size=12k", "--nrfiles=2", "--loops=2"]),
        (&[], &["--size=12k", "--nrfiles=2", "--io_size=12k"]),
        (&[], &["--size=12k", "--nrfiles=2", "--io_size=13k"]),
    ];
    for &(files, args) in cases {
        let named = files.first().is_some_and(|f| f.0 == "f");
        let args = [args, if named { &["--filename=f"][..] } else { &[] }].concat();
        let args =
            if args.iter().any(|a| a.starts_with("--rw=")) { args } else { [&args[..], &["--rw=read"]].concat() };
        let by_fio = seq_room_run(fio, dir.path(), files, &args);
        assert_eq!(seq_room_run(fiox, dir.path(), files, &args), by_fio, "{files:?} {args:?}: totals and iolog");
    }
}

/// A time-based sequential job at its file's end, as fio 3.33 runs it (issue 28): on one
/// file, a block that starts past the region wraps to its start in place; one the file has no
/// room for ends the pass as a loop, the file closed and opened again (and synced between
/// under `end_fsync`/`fsync_on_close`, at the offset of the block not issued); several files
/// end their pass together. The job's end closes the files and syncs them as a loop's end
/// before its own sync. The I/O count is bounded by `rate_iops` over a one-second runtime; a
/// run that lands one I/O more or less than fio's is tried again (docs/fio-observed/seq-room.md).
#[test]
fn time_based_sequential_passes_wrap_close_and_sync_as_fio_does() {
    let dir = scratch();
    let f16: Files = &[("f", 16384)];
    let f10: Files = &[("f", 10240)];
    let two16: Files = &[("j.0.0", 16384), ("j.0.1", 16384)];
    let cases: &[(Files, &[&str])] = &[
        (f16, &["--size=6k"]),
        (f16, &["--size=6k", "--offset=4k"]),
        (f16, &["--size=6k", "--offset=10k"]),
        (&[("f", 6144)], &["--size=6k"]),
        (f10, &["--size=10k"]),
        (&[], &["--size=10k"]),
        (f10, &["--size=10k", "--rw=write", "--fsync_on_close=1"]),
        (f10, &["--size=10k", "--rw=write", "--end_fsync=1"]),
        (f10, &["--size=10k", "--rw=write", "--fsync=3"]),
        (f16, &["--size=10k", "--rw=write", "--end_fsync=1"]),
        (f16, &["--size=10k", "--rw=write", "--fsync_on_close=1"]),
        (two16, &["--size=20k", "--nrfiles=2"]),
        (two16, &["--size=12k", "--nrfiles=2", "--file_service_type=sequential"]),
        (two16, &["--size=20k", "--nrfiles=2", "--rw=write", "--fsync_on_close=1"]),
        (&[], &["--size=20k", "--nrfiles=2", "--file_service_type=roundrobin:2"]),
        (&[], &["--size=12k", "--nrfiles=2", "--rw=write", "--end_fsync=1"]),
    ];
    for &(files, args) in cases {
        let named = files.first().is_some_and(|f| f.0 == "f");
        let args = [args, if named { &["--filename=f"][..] } else { &[] }].concat();
        let args =
            if args.iter().any(|a| a.starts_with("--rw=")) { args } else { [&args[..], &["--rw=read"]].concat() };
        let args = [&args[..], &["--time_based", "--runtime=1", "--rate_iops=12"]].concat();
        let mut tries = 0;
        loop {
            let by_fio = seq_room_run(fio, dir.path(), files, &args);
            let by_fiox = seq_room_run(fiox, dir.path(), files, &args);
            tries += 1;
            if by_fio.0 != by_fiox.0 && tries < 3 {
                continue;
            }
            assert_eq!(by_fiox, by_fio, "{files:?} {args:?}: totals and iolog");
            break;
        }
    }
}

/// The sync that ends a sequential loop (or the job) carries, in fio's iolog, the offset of
/// the block the pass ended on without issuing it, and a job whose last pass ended that way
/// closes its files before its closing sync (fio 3.33: size=10k on a 10 KiB file, loops=2:
/// `write 0`, `write 4096`, `close`, `open`, `sync 8192`, `close`, ...).
#[test]
fn loop_end_syncs_log_the_offset_fio_tried() {
    let dir = scratch();
    let two16: Files = &[("j.0.0", 16384), ("j.0.1", 16384)];
    let cases: &[(Files, &[&str])] = &[
        (&[("f", 10240)], &["--filename=f", "--size=10k", "--loops=2", "--fsync_on_close=1"]),
        (&[("f", 16384)], &["--filename=f", "--size=10k", "--loops=2", "--fsync_on_close=1"]),
        (&[("f", 10240)], &["--filename=f", "--size=10k", "--loops=2", "--end_fsync=1"]),
        (two16, &["--size=20k", "--nrfiles=2", "--fsync_on_close=1"]),
        (two16, &["--size=20k", "--nrfiles=2", "--end_fsync=1"]),
    ];
    for &(files, args) in cases {
        let args = [args, &["--rw=write"]].concat();
        let by_fio = seq_room_run(fio, dir.path(), files, &args);
        assert_eq!(seq_room_run(fiox, dir.path(), files, &args), by_fio, "{files:?} {args:?}: totals and iolog");
    }
}

/// A random job whose region is smaller than its (larger, existing) file draws its offsets
/// from the region only, each block once, as fio 3.33 does (issue 28): the same I/O count and
/// bytes, and the same blocks in another order (the generators differ).
#[test]
fn random_jobs_keep_to_their_region_in_a_larger_file_as_fio_does() {
    let dir = scratch();
    let f64k: Files = &[("f", 65536)];
    for args in [
        &["--rw=randread", "--size=16k"][..],
        &["--rw=randread", "--size=16k", "--offset=8k"],
        &["--rw=randread", "--size=6k"],
        &["--rw=randread", "--filesize=16k"],
        &["--rw=randwrite", "--size=16k", "--offset=20k"],
    ] {
        let args = [args, &["--filename=f"]].concat();
        let sorted = |(totals, mut lines): (Vec<i64>, Vec<String>)| {
            lines.sort();
            (totals, lines)
        };
        let by_fio = sorted(seq_room_run(fio, dir.path(), f64k, &args));
        assert_eq!(sorted(seq_room_run(fiox, dir.path(), f64k, &args)), by_fio, "{args:?}: totals and blocks");
    }
}

/// The same rule on a block device: its capacity is the room (fio 3.33 on a 16 KiB loop device).
#[test]
fn sequential_regions_use_a_devices_capacity_as_fio_does() {
    let dev = match crate::util::LoopDev::new(16384) {
        Ok(d) => d,
        Err(why) => crate::util::skip!("no loop device: {why}"),
    };
    let dir = scratch();
    let name = format!("--filename={}", dev.path.display());
    for args in [&["--size=6k"][..], &["--size=10k"], &["--size=6k", "--io_size=12k"], &["--size=6k", "--loops=2"]] {
        let args = [args, &["--rw=read", &name]].concat();
        let by_fio = seq_room_run(fio, dir.path(), &[], &args);
        assert_eq!(seq_room_run(fiox, dir.path(), &[], &args), by_fio, "{args:?}: totals and iolog");
    }
}

/// A mixed job over several loops (issue 28), as fio 3.33 runs it: a pass goes on until the
/// direction drawn has no room (sequential) or no free block (random) in the file picked; that
/// file closes there, the draw is used up (a direction that was catching up stops instead),
/// and when no file is left the next loop starts both directions from the regions' starts.
/// Sequential jobs: bytes, I/O counts and the `write_iolog` line by line; random jobs (whose
/// offsets are fiox's own): the files and directions in order, and the totals, with and
/// without a random map (without one, fio's loops close nothing).
#[test]
fn mixed_jobs_loop_as_fio_does() {
    let dir = scratch();
    let f64k: Files = &[("f", 65536)];
    for (files, args) in [
        (f64k, &["--filename=f", "--rw=readwrite", "--loops=2"][..]),
        (f64k, &["--filename=f", "--rw=rw", "--loops=3", "--rwmixread=30", "--randseed=7"]),
        (&[], &["--nrfiles=2", "--rw=rw", "--loops=2"]),
        (&[], &["--nrfiles=2", "--rw=rw", "--loops=3", "--rwmixread=80", "--randseed=2"]),
        (&[], &["--nrfiles=3", "--size=96k", "--openfiles=1", "--rw=rw", "--loops=2", "--randseed=3"]),
    ] {
        let args = [&["--size=64k"][..], args].concat();
        let by_fio = seq_room_run(fio, dir.path(), files, &args);
        assert_eq!(seq_room_run(fiox, dir.path(), files, &args), by_fio, "{args:?}: totals and iolog");
    }
    // The files and actions of each line (random offsets are fiox's own).
    let shape = |(totals, lines): (Vec<i64>, Vec<String>)| {
        (totals, lines.iter().map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>())
    };
    for args in [
        &["--filename=f", "--loops=2"][..],
        &["--filename=f", "--loops=3", "--rwmixread=30", "--randseed=1"],
        &["--nrfiles=2", "--loops=3", "--rwmixread=30", "--randseed=1"],
        &["--nrfiles=2", "--loops=2", "--randseed=7"],
        &["--filename=f", "--loops=2", "--norandommap"],
        &["--filename=f", "--loops=2", "--random_distribution=zipf:1.2"],
    ] {
        let args = [&["--size=64k", "--rw=randrw"][..], args].concat();
        let by_fio = shape(seq_room_run(fio, dir.path(), &[], &args));
        assert_eq!(shape(seq_room_run(fiox, dir.path(), &[], &args)), by_fio, "{args:?}: totals and iolog");
    }
}

/// A `write_iolog` file as per-clone logs: fio opens the log for appending, and each clone
/// (numjobs) or job naming it adds its own log, version line first, in the order they end.
/// The logs without their times, sorted (that order is the scheduler's).
fn clone_logs(dir: &std::path::Path, run: Run, args: &[&str]) -> Vec<String> {
    let _ = std::fs::remove_dir_all(dir.join("d"));
    std::fs::create_dir(dir.join("d")).unwrap();
    let _ = std::fs::remove_file(dir.join("io.log"));
    let common = ["--name=j", "--directory=d", "--write_iolog=io.log", "--size=16k", "--bs=4k"];
    let out = run(dir, &[&common[..], args].concat());
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    let text = std::fs::read_to_string(dir.join("io.log")).unwrap();
    assert!(text.starts_with("fio version 3 iolog\n"), "{args:?}: {text}");
    let untimed = |log: &str| -> String {
        log.lines().map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest)).collect::<Vec<_>>().join("\n")
    };
    let mut logs: Vec<String> = text.split("fio version 3 iolog\n").skip(1).map(untimed).collect();
    logs.sort();
    logs
}

/// `write_iolog` with `numjobs=N` keeps every clone's log in the file, as fio 3.33 does (each
/// clone appends its own whole log, version line and all), with or without `group_reporting`
/// and `thread`, on each clone's own files or on one file they share; a second run appends to
/// the log, and `read_iolog` replays such a log whole, as fio does.
#[test]
fn write_iolog_keeps_every_clones_log_as_fio_does() {
    let dir = scratch();
    for args in [
        &["--rw=write", "--numjobs=2"][..],
        &["--rw=write", "--numjobs=3", "--group_reporting"],
        &["--rw=write", "--numjobs=2", "--thread"],
        &["--rw=write", "--numjobs=3", "--thread", "--group_reporting"],
        &["--rw=write", "--numjobs=2", "--filename=shared"],
        &["--rw=read", "--numjobs=2", "--filename=shared", "--thread"],
        &["--rw=write", "--numjobs=2", "--filename=shared", "--offset_increment=16k"],
        &["--rw=write", "--numjobs=2", "--nrfiles=2", "--end_fsync=1"],
        &["--rw=write", "--numjobs=2", "--filename=shared", "--fsync_on_close=1", "--loops=2"],
    ] {
        let by_fio = clone_logs(dir.path(), fio, args);
        let clones = args.iter().find_map(|a| a.strip_prefix("--numjobs=")).unwrap().parse::<usize>().unwrap();
        assert_eq!(by_fio.len(), clones, "{args:?}: {by_fio:?}");
        assert_eq!(clone_logs(dir.path(), fiox, args), by_fio, "write_iolog for {args:?}");
    }
    // Random offsets are fiox's own: each clone's log, line by line without the offsets.
    let shapes = |logs: Vec<String>| -> Vec<String> {
        logs.iter()
            .map(|l| l.lines().map(|x| x.split(' ').take(2).collect::<Vec<_>>().join(" ") + "\n").collect())
            .collect()
    };
    let a = ["--rw=randwrite", "--numjobs=2", "--filename=shared"];
    assert_eq!(shapes(clone_logs(dir.path(), fiox, &a)), shapes(clone_logs(dir.path(), fio, &a)), "{a:?}");
    // A log that is there already grows: two runs, two logs.
    let twice = |run: Run| {
        let _ = std::fs::remove_file(dir.path().join("again.log"));
        for _ in 0..2 {
            let out = run(dir.path(), &["--name=j", "--filename=again.dat", "--size=8k", "--write_iolog=again.log"]);
            assert_eq!(out.code, 0, "{}", out.stderr);
        }
        std::fs::read_to_string(dir.path().join("again.log")).unwrap().matches("fio version 3 iolog").count()
    };
    assert_eq!((twice(fiox), twice(fio)), (2, 2));
    // fio's log of two clones replayed: every clone's I/O, on each clone's file.
    let _ = clone_logs(dir.path(), fio, &["--rw=write", "--numjobs=2"]);
    let replay = ["--name=r", "--read_iolog=io.log", "--output-format=json"];
    let figures = |o: crate::util::Out| {
        let j = json(&o);
        (o.code, j["jobs"][0]["write"]["io_bytes"].as_i64(), j["jobs"][0]["write"]["total_ios"].as_i64())
    };
    let by_fio = figures(fio(dir.path(), &replay));
    assert_eq!(by_fio, (0, Some(32768), Some(8)));
    assert_eq!(figures(fiox(dir.path(), &replay)), by_fio);
}

/// The `posix_fadvise(DONTNEED)` calls a run makes under strace, as `(file, offset, length)`,
/// the file by its name in `d/`, in the order made.
fn dontneeds(run_fiox: bool, dir: &std::path::Path, args: &[&str]) -> Vec<(String, u64, u64)> {
    let _ = std::fs::remove_dir_all(dir.join("d"));
    std::fs::create_dir(dir.join("d")).unwrap();
    // Files laid out beforehand, larger than the regions, so that fio lays nothing out.
    for f in ["j.0.0", "j.0.1", "j.0.2"] {
        std::fs::write(dir.join("d").join(f), vec![0u8; 64 << 10]).unwrap();
    }
    let trace = dir.join("fadvise.log");
    let bin = if run_fiox { fiox_bin() } else { fio_bin() };
    let o = Command::new("strace")
        .args(["-f", "-qq", "-y", "-e", "trace=fadvise64", "-o"])
        .arg(&trace)
        .arg(bin)
        .args(["--name=j", "--directory=d", "--bs=4k", "--output=/dev/null"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("strace runs (scripts/test.sh installs it)");
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    // `fadvise64(7</tmp/.../d/j.0.0>, 8192, 16384, POSIX_FADV_DONTNEED) = 0`; a call strace
    // splits keeps its arguments on the `<unfinished ...>` line.
    let text = std::fs::read_to_string(&trace).unwrap();
    text.lines()
        .filter_map(|l| {
            let args = l.split_once("fadvise64(")?.1;
            if !args.contains("POSIX_FADV_DONTNEED") {
                return None;
            }
            let (fd, rest) = args.split_once(">, ")?;
            let name = fd.rsplit('/').next()?.to_string();
            let mut nums = rest.split(", ").map(|n| n.parse::<u64>());
            Some((name, nums.next()?.ok()?, nums.next()?.ok()?))
        })
        .collect()
}

/// `invalidate=1` drops the cache of the job's region of each file (its offset and size, not
/// the whole file) when the file is opened and at every pass, as fio 3.33 does: the
/// `posix_fadvise(DONTNEED)` calls under strace, ranges and count.
#[test]
fn invalidate_drops_the_cache_of_the_jobs_region_as_fio_does() {
    if Command::new("strace").arg("-V").output().is_err() {
        crate::util::skip!("strace is not installed (scripts/test.sh installs it)");
    }
    let dir = scratch();
    for args in [
        &["--rw=read", "--offset=8k", "--size=16k"][..],
        &["--rw=read", "--offset=8k", "--size=16k", "--loops=2"],
        &["--rw=write", "--offset=8k", "--size=16k", "--loops=2"],
        &["--rw=read", "--offset=4k", "--size=24k", "--nrfiles=3"],
        &["--rw=read", "--filesize=16k", "--nrfiles=3", "--loops=2"],
        &["--rw=randread", "--offset=8k", "--size=16k", "--io_size=40k"],
        &["--rw=read", "--offset=8k", "--size=16k", "--ioengine=libaio", "--loops=2"],
        &["--rw=randwrite", "--offset=8k", "--size=16k", "--nrfiles=2", "--verify=crc32c"],
        &["--rw=read", "--offset=8k", "--size=16k", "--invalidate=0", "--loops=2"],
    ] {
        let by_fio = dontneeds(false, dir.path(), args);
        assert!(!by_fio.is_empty() || args.contains(&"--invalidate=0"), "{args:?}");
        assert_eq!(dontneeds(true, dir.path(), args), by_fio, "DONTNEED calls for {args:?}");
    }
    // A time-based job drops its region at every pass; how many passes fit is the clock's.
    let args = ["--rw=read", "--offset=8k", "--size=16k", "--time_based", "--runtime=100ms"];
    let ranges = |mut calls: Vec<(String, u64, u64)>| {
        calls.dedup();
        calls
    };
    assert_eq!(ranges(dontneeds(true, dir.path(), &args)), ranges(dontneeds(false, dir.path(), &args)));
}

/// `filesize=` is each file's size with `offset=` inside it, as in fio 3.33: the region runs
/// from the offset to the file's end (filesize=12k offset=4k lays out 12 KiB and writes 8),
/// and `size=` only caps the bytes moved. The job's closing sync (`end_fsync`,
/// `fsync_on_close`) goes to every file of the job, used or not, with the offset of the last
/// I/O: `write_iolog` compared line by line, and the files' sizes.
#[test]
fn filesize_regions_and_closing_syncs_log_as_fio_does() {
    let dir = scratch();
    let common = ["--bs=4k", "--rw=write"];
    for args in [
        &["--nrfiles=3", "--filesize=12k", "--offset=4k", "--file_service_type=sequential", "--end_fsync=1"][..],
        &["--nrfiles=3", "--filesize=12k", "--offset=4k", "--file_service_type=sequential", "--fsync_on_close=1"],
        &["--nrfiles=2", "--filesize=16k", "--offset=4k", "--end_fsync=1"],
        &["--nrfiles=3", "--filesize=12k", "--offset=4k", "--loops=2", "--end_fsync=1"],
        &["--nrfiles=2", "--filesize=16k", "--offset=4k", "--size=8k"],
        &["--nrfiles=3", "--filesize=12k", "--size=8k"],
        &["--nrfiles=3", "--filesize=12k", "--size=24k", "--file_service_type=sequential"],
        &["--nrfiles=4", "--filesize=8k", "--size=12k", "--file_service_type=sequential", "--end_fsync=1"],
        &["--nrfiles=4", "--filesize=8k", "--size=8k", "--end_fsync=1"],
        &["--nrfiles=3", "--filesize=12k", "--number_ios=5", "--file_service_type=sequential", "--end_fsync=1"],
        &["--nrfiles=2", "--filesize=16k", "--io_size=40k", "--file_service_type=sequential", "--fsync_on_close=1"],
        &["--nrfiles=3", "--filesize=12k", "--file_service_type=sequential", "--end_fsync=1"],
    ] {
        let a = [&common[..], args].concat();
        let by_fio = iolog_lines(dir.path(), fio, &a);
        let sizes = |d: &std::path::Path| -> Vec<(String, u64)> {
            let mut v: Vec<(String, u64)> = std::fs::read_dir(d.join("d"))
                .unwrap()
                .map(|e| e.unwrap())
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().len()))
                .collect();
            v.sort();
            v
        };
        let fio_sizes = sizes(dir.path());
        assert_eq!(iolog_lines(dir.path(), fiox, &a), by_fio, "write_iolog for {args:?}");
        assert_eq!(sizes(dir.path()), fio_sizes, "file sizes for {args:?}");
    }
    // An offset at or past the file's end leaves no region: both refuse the job.
    for offset in ["--offset=12k", "--offset=16k"] {
        let a = ["--name=j", "--filename=o.dat", "--filesize=12k", "--bs=4k", "--rw=write", offset];
        let (x, f) = (fiox(dir.path(), &a), fio(dir.path(), &a));
        assert!(f.code != 0 && x.code != 0, "{offset}: {}", x.stderr);
        assert!(x.stderr.contains("leaves no room"), "{offset}: {}", x.stderr);
    }
}
