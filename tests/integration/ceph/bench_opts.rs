//! The bench options beyond the basic runs, each against Debian's `rados`/`rbd` 16.2.15 on the
//! same cluster: where writes go (`--write-object|omap|xattr`), the allocation hint
//! (`--no-hints`; seen in the OSD's own record of the operations), `--reuse-bench`,
//! `--show-time`'s line layout; `rbd bench` at a snapshot, its fadvise flags and `--keyring`.

use std::collections::BTreeSet;

use super::*;

/// The OSD's record of recent client operations (`ceph daemon osd.0 dump_historic_ops`): each
/// operation's description, e.g. `osd_op(client.4250.0:1 1.1e 1:7eba6ce6:::OBJECT:head
/// [set-alloc-hint object_size 8192 write_size 4096,write 0~4096] ...)`.
fn osd_history(c: &Cluster) -> Vec<String> {
    let o = c.tool("ceph", &["daemon", "osd.0", "dump_historic_ops"]);
    assert_eq!(o.code, 0, "ceph daemon osd.0 dump_historic_ops: {}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    v["ops"].as_array().unwrap().iter().map(|op| op["description"].as_str().unwrap_or("").to_string()).collect()
}

/// Makes the OSD keep every operation from now on (it otherwise keeps only the 20 slowest)
/// after dropping what it has, until the guard is dropped. The caller holds the cluster alone,
/// so the record holds its own operations only and stays small.
fn keep_osd_history(c: &Cluster) -> impl Drop + '_ {
    let set = |size: &str| {
        let o = c.tool("ceph", &["daemon", "osd.0", "config", "set", "osd_op_history_size", size]);
        assert_eq!(o.code, 0, "{}", o.stderr);
    };
    // The record is trimmed to its size when the next operation ends: make one.
    set("0");
    c.tool("rados", &["-p", "bench", "stat", "fiox-history-reset"]);
    set("100000");
    struct Restore<'a>(&'a Cluster);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            // Back to the OSD's default.
            self.0.tool("ceph", &["daemon", "osd.0", "config", "set", "osd_op_history_size", "20"]);
        }
    }
    Restore(c)
}

/// The parts (`[...]`) of the recorded operations on `object`, once at least `n` are there (an
/// operation is recorded when the OSD lets go of it, a moment after its reply; 5 s at most).
fn ops_on(c: &Cluster, object: &str, n: usize) -> Vec<String> {
    let needle = format!(":::{object}:head [");
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let ops: Vec<String> = osd_history(c)
            .iter()
            .filter_map(|d| {
                d.split_once(&needle).map(|(_, rest)| rest.split("] snapc").next().unwrap_or("").to_string())
            })
            .collect();
        if ops.len() >= n || Instant::now() > until {
            return ops;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One line of bench output by kind, with whether it starts with a local time
/// (`2026-11-25T22:05:34.202201+0000 `).
fn line_kinds(out: &str) -> Vec<(String, bool)> {
    let mut kinds: Vec<(String, bool)> = Vec::new();
    for l in out.lines() {
        let timed = l.len() > 32 && l.as_bytes()[4] == b'-' && l.as_bytes()[10] == b'T' && &l[26..27] == "+";
        let rest = if timed { &l[32..] } else { l };
        let kind = if rest.trim_start().starts_with(|ch: char| ch.is_ascii_digit()) {
            "row".to_string()
        } else {
            rest.split([':', '=']).next().unwrap_or("").trim().to_string()
        };
        // Rows repeat as many times as the run had seconds.
        if kinds.last().is_some_and(|k| k.0 == "row" && kind == "row") {
            continue;
        }
        kinds.push((kind, timed));
    }
    kinds
}

fn rados_real(c: &Cluster, args: &[&str]) -> Out {
    c.tool("rados", args)
}

fn list(c: &Cluster, what: &str, object: &str) -> BTreeSet<String> {
    let o = c.tool("rados", &["-p", "bench", what, object]);
    assert_eq!(o.code, 0, "rados {what} {object}: {}", o.stderr);
    o.stdout.lines().map(str::to_string).collect()
}

/// `--write-omap`, `--write-xattr`, `--write-object` and `--no-hints` send the operations the
/// real tool sends (the OSD's record), and leave the same keys, attributes and sizes.
#[test]
fn rados_bench_write_destinations_and_hints() {
    cluster_or_skip!(c, alone);
    let _history = keep_osd_history(c);
    let cases: &[&[&str]] =
        &[&[], &["--write-xattr", "--no-hints"], &["--write-omap", "--write-xattr", "--write-object"]];
    for (i, extra) in cases.iter().enumerate() {
        let mut seen = Vec::new();
        for fiox_run in [false, true] {
            let run_name = format!("dest{i}-{}", u8::from(fiox_run));
            // SECONDS 0: the first -t ops only, two 4 KiB ops into one 8 KiB object.
            let mut args = vec!["-p", "bench", "bench", "0", "write", "-t", "2", "-b", "4K", "-O", "8K"];
            args.extend_from_slice(&["--no-cleanup", "--run-name", &run_name]);
            args.extend_from_slice(extra);
            let out = if fiox_run { fiox_tool(c, "rados", &args) } else { rados_real(c, &args) };
            assert_eq!(out.code, 0, "{extra:?}: {} {}", out.stdout, out.stderr);
            let hints = if extra.contains(&"--no-hints") { "hints = 0" } else { "hints = 1" };
            assert_eq!(out.stdout.lines().next(), Some(hints), "{extra:?}");
            let object = format!("benchmark_data_{}_object0", summary_prefix(&out.stdout));
            // Before anything reads the object (a read is recorded too).
            let mut ops = ops_on(c, &object, 2);
            ops.sort();
            let size = c.objects(&object).get(&object).copied();
            seen.push((list(c, "listomapkeys", &object), list(c, "listxattr", &object), size, ops));
            let r = c.tool("rados", &["-p", "bench", "cleanup", "--run-name", &run_name]);
            assert_eq!(r.code, 0, "{}", r.stderr);
        }
        assert_eq!(seen[0], seen[1], "{extra:?}: omap keys, xattrs, size and OSD operations, rados then fiox");
        assert_eq!(seen[1].3.len(), 2, "{extra:?}: {:?}", seen[1].3);
    }
    // Both ops' data (4 KiB, 'z' after the op's text) as the omap value, the same as rados's.
    let args = ["-p", "bench", "bench", "0", "write", "-t", "1", "-b", "4K", "--write-omap", "--no-cleanup"];
    let out = fiox_tool(c, "rados", &[&args[..], &["--run-name", "omapval"]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let object = format!("benchmark_data_{}_object0", summary_prefix(&out.stdout));
    let v = c.tool("rados", &["-p", "bench", "getomapval", &object, "bench-omap-key-0", "/dev/stdout"]);
    assert!(v.stdout.starts_with("I'm the                0th op!\0zzz"), "{:?}", &v.stdout[..40.min(v.stdout.len())]);
    assert_eq!(c.tool("rados", &["-p", "bench", "cleanup", "--run-name", "omapval"]).code, 0);
    // Only for write, with the real tool's message and status, before anything is printed.
    for tool in ["rados", "fiox"] {
        let args = ["-p", "bench", "bench", "1", "seq", "--write-omap", "--run-name", "nosuch"];
        let o = if tool == "fiox" { fiox_tool(c, "rados", &args) } else { rados_real(c, &args) };
        assert_eq!(o.code, 1, "{tool}");
        assert_eq!(
            o.stderr,
            "--write-object, --write-omap and --write-xattr options can only be used with the 'write' bench test\n",
            "{tool}"
        );
        assert_eq!(o.stdout, "", "{tool}");
    }
}

/// `--reuse-bench` writes into the objects of the run the metadata names (its pid, op and
/// object size, whatever -b says), either tool's into the other's; without metadata both say
/// so the same way.
#[test]
fn rados_bench_reuse() {
    cluster_or_skip!(c);
    let first = fiox_tool(
        c,
        "rados",
        &[
            "-p",
            "bench",
            "bench",
            "0",
            "write",
            "-t",
            "2",
            "-b",
            "4K",
            "-O",
            "8K",
            "--no-cleanup",
            "--run-name",
            "reuse1",
        ],
    );
    assert_eq!(first.code, 0, "{}", first.stderr);
    let prefix = summary_prefix(&first.stdout);
    for fiox_run in [false, true] {
        let args = [
            "-p",
            "bench",
            "bench",
            "0",
            "write",
            "-t",
            "4",
            "-b",
            "64K",
            "--reuse-bench",
            "--no-cleanup",
            "--run-name",
            "reuse1",
        ];
        let o = if fiox_run { fiox_tool(c, "rados", &args) } else { rados_real(c, &args) };
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert_eq!(summary_prefix(&o.stdout), prefix, "fiox {fiox_run}");
        assert!(
            o.stdout.contains("Maintaining 4 concurrent writes of 4096 bytes to objects of size 8192"),
            "{}",
            o.stdout
        );
        // The metadata keeps the first run's pid and counts this run's ops.
        let m =
            Command::new("rados").arg("-c").arg(&c.conf).args(["-p", "bench", "get", "reuse1", "-"]).output().unwrap();
        assert!(m.status.success());
        let pid: u32 = prefix.rsplit('_').next().unwrap().parse().unwrap();
        let b = &m.stdout;
        assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), pid);
        assert_eq!(u32::from_le_bytes(b[8..12].try_into().unwrap()), 4);
    }
    // 4 ops of 4 KiB in 8 KiB objects: two objects, written whole.
    let objects = c.objects(&format!("benchmark_data_{prefix}_"));
    assert_eq!(objects.values().collect::<Vec<_>>(), [&8192, &8192], "{objects:?}");
    let r = fiox_tool(c, "rados", &["-p", "bench", "cleanup", "--run-name", "reuse1"]);
    assert_eq!(r.stdout, "Removed 2 objects\n", "{}", r.stderr);
    for fiox_run in [false, true] {
        let args = ["-p", "bench", "bench", "1", "write", "--reuse-bench", "--run-name", "reuse-none"];
        let o = if fiox_run { fiox_tool(c, "rados", &args) } else { rados_real(c, &args) };
        assert_eq!(o.code, 1);
        assert_eq!(o.stdout, "hints = 1\n");
        assert_eq!(
            o.stderr,
            "Must write data before using reuse_bench for a write benchmark!\nerror during benchmark: (2) No such file or directory\nerror 2: (2) No such file or directory\n"
        );
    }
}

/// `--show-time`: the same lines carry the local time in both tools (preamble, header, rows,
/// the summary's first line, cleanup; not `hints = 1` nor the rest of the summary).
#[test]
fn rados_bench_show_time() {
    cluster_or_skip!(c);
    for test in ["write", "seq"] {
        let mut seen = Vec::new();
        for fiox_run in [false, true] {
            let run_name = format!("showtime{}", u8::from(fiox_run));
            let mut args = vec!["-p", "bench", "bench", "1", test, "-t", "2", "--show-time", "--run-name", &run_name];
            if test == "write" {
                args.extend_from_slice(&["-b", "4K", "-O", "4K", "--max-objects", "50", "--no-cleanup"]);
            }
            let o = if fiox_run { fiox_tool(c, "rados", &args) } else { rados_real(c, &args) };
            assert_eq!(o.code, 0, "{}", o.stderr);
            seen.push(line_kinds(&o.stdout));
        }
        assert_eq!(seen[0], seen[1], "{test}: line kinds and time prefixes, rados then fiox");
        assert!(seen[1].iter().any(|k| k.1), "{:?}", seen[1]);
    }
    for n in 0..2 {
        let r = c.tool("rados", &["-p", "bench", "cleanup", "--run-name", &format!("showtime{n}"), "--show-time"]);
        assert_eq!(r.stdout, "Removed 50 objects\n", "{}", r.stderr);
    }
}

/// The image's RADOS object prefix (`rbd_data.ID`).
fn data_prefix(c: &Cluster, image: &str) -> String {
    let o = c.tool("rbd", &["info", "--format", "json", &format!("bench/{image}")]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    v["block_name_prefix"].as_str().unwrap().to_string()
}

/// How many recorded reads and writes of an image's data objects carry each fadvise flag
/// (`[fadvise_random]`, ...).
fn data_op_flags(c: &Cluster, prefix: &str) -> BTreeMap<String, usize> {
    let mut n = BTreeMap::new();
    for d in osd_history(c).iter().filter(|d| d.contains(&format!(":::{prefix}."))) {
        for f in d.split(['[', ']']).filter(|p| p.starts_with("fadvise")) {
            *n.entry(f.to_string()).or_insert(0) += 1;
        }
    }
    n
}

/// `rbd bench` reads at a snapshot (`image@snap`, also through `--image`), refuses to write
/// one, names a missing one; every operation carries the fadvise flag the real tool gives it;
/// `--keyring` is the keyring librados uses; bad options have the real tool's messages and
/// statuses.
#[test]
fn rbd_bench_snapshot_fadvise_keyring() {
    cluster_or_skip!(c, alone);
    let _history = keep_osd_history(c);
    // 4 MiB written, a snapshot, then the whole 16 MiB: the snapshot holds a quarter.
    let image = c.image("snap", 16);
    let spec = format!("bench/{image}");
    let w = fiox_tool(c, "rbd", &["bench", "--io-type", "write", "--io-total", "4M", "--io-size", "1M", &spec]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert_eq!(c.tool("rbd", &["snap", "create", &format!("{spec}@s1")]).code, 0);
    let w = fiox_tool(c, "rbd", &["bench", "--io-type", "write", "--io-total", "16M", "--io-size", "1M", &spec]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let at_snap = format!("{spec}@s1");
    let r = fiox_tool(c, "rbd", &["bench", "--io-type", "read", "--io-total", "1M", "--io-size", "64K", &at_snap]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("75% of image"), "{}", r.stderr);
    assert!(r.stdout.contains("elapsed: "), "{}", r.stdout);
    let r = fiox_tool(
        c,
        "rbd",
        &["bench", "--io-type", "read", "--io-total", "1M", "-p", "bench", "--image", &format!("{image}@s1")],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("75% of image"), "{}", r.stderr);
    let r = fiox_tool(c, "rbd", &["bench", "--io-type", "read", "--io-total", "1M", &spec]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "the head is written whole");
    // Refusals, each as the real tool's (message, status); a missing snapshot is named.
    let cases: &[(&[&str], &str, i32)] = &[
        (&["--io-type", "write", &at_snap], "rbd: snapshot name specified for a command that doesn't use it\n", 22),
        (&["--io-type", "rw", &at_snap], "rbd: snapshot name specified for a command that doesn't use it\n", 22),
        (&["--io-type", "read", &format!("{spec}@")], &format!("rbd: invalid spec '{spec}@'\n"), 22),
        (&["--io-type", "read", "--snap", "s1", &spec], "rbd: unrecognised option '--snap'\n", 1),
        (&["--io-type", "sideways", &spec], "rbd: the argument for option '--io-type' is invalid\n", 1),
        (
            &["--io-type", "read", "--io-pattern", "zigzag", &spec],
            "rbd: the argument for option '--io-pattern' is invalid\n",
            1,
        ),
    ];
    for (args, msg, code) in cases {
        let args = [&["bench"][..], args].concat();
        let real = c.tool("rbd", &args);
        assert_eq!((real.code, real.stderr.as_str()), (*code, *msg), "rbd {args:?}");
        let ours = fiox_tool(c, "rbd", &args);
        assert_eq!((ours.code, ours.stderr.as_str(), ours.stdout.as_str()), (*code, *msg, ""), "fiox {args:?}");
    }
    let o = fiox_tool(c, "rbd", &["bench", "--io-type", "read", &format!("{spec}@nosuch")]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("snapshot 'nosuch' of image"), "{}", o.stderr);
    assert_eq!(c.tool("rbd", &["snap", "rm", &at_snap]).code, 0);
    // fadvise: the same flags on the data objects' operations, per pattern and direction.
    for (pattern, io_type) in [("rand", "write"), ("full-seq", "read")] {
        let mut seen = Vec::new();
        for fiox_run in [false, true] {
            let image = c.image("fadv", 4);
            let spec = format!("bench/{image}");
            if io_type == "read" {
                let w = c.tool("rbd", &["bench", "--io-type", "write", "--io-total", "4M", "--io-size", "1M", &spec]);
                assert_eq!(w.code, 0, "{}", w.stderr);
            }
            let prefix = data_prefix(c, &image);
            // Operations are recorded a moment after their replies: let the writes' settle.
            std::thread::sleep(Duration::from_millis(300));
            let before = data_op_flags(c, &prefix);
            let args = [
                "bench",
                "--io-type",
                io_type,
                "--io-pattern",
                pattern,
                "--io-total",
                "256K",
                "--io-size",
                "64K",
                &spec,
            ];
            let o = if fiox_run { fiox_tool(c, "rbd", &args) } else { c.tool("rbd", &args) };
            assert_eq!(o.code, 0, "{}", o.stderr);
            std::thread::sleep(Duration::from_millis(300));
            let mut after = data_op_flags(c, &prefix);
            for (flag, n) in before {
                *after.get_mut(&flag).unwrap() -= n;
            }
            after.retain(|_, n| *n > 0);
            seen.push(after);
            assert_eq!(c.tool("rbd", &["rm", &spec]).code, 0);
        }
        assert_eq!(seen[0], seen[1], "{pattern} {io_type}: fadvise flags, rbd then fiox");
        let want = if pattern == "rand" { "fadvise_random" } else { "fadvise_sequential" };
        assert_eq!(seen[1].get(want), Some(&4), "{pattern} {io_type}: {:?}", seen[1]);
    }
    // --keyring: the file librados reads (named in the refusal of a cephx configuration), as
    // the real tool takes it; with auth none it is not needed at all.
    let dir = util::scratch();
    let text = std::fs::read_to_string(&c.conf)
        .unwrap()
        .replace("auth client required = none", "auth client required = cephx\nkeyring = /nonexistent/keyring");
    let cephx = dir.path().join("cephx.conf");
    std::fs::write(&cephx, text).unwrap();
    let o = Command::new(util::fiox_bin())
        .args([
            "rbd",
            "-c",
            cephx.to_str().unwrap(),
            "--keyring",
            "/nonexistent/other",
            "bench",
            "--io-type",
            "read",
            &spec,
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("/nonexistent/other") && !stderr.contains("/nonexistent/keyring"), "{stderr}");
    let o = fiox_tool(
        c,
        "rbd",
        &["bench", "-k", "/nonexistent/other", "--id", "admin", "--io-type", "read", "--io-total", "64K", &spec],
    );
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    let o = fiox_tool(
        c,
        "rados",
        &["--keyring", "/nonexistent/other", "-p", "bench", "cleanup", "--run-name", "nosuch-kr"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    // $CEPH_ARGS: the tools' default options, before the command line's.
    let ceph_args = format!("-c {} --id admin", c.conf.display());
    for (tool, args) in [
        ("rados", vec!["-p", "bench", "cleanup", "--run-name", "nosuch-env"]),
        ("rbd", vec!["bench", "--io-type", "read", "--io-total", "64K", &spec]),
    ] {
        let real = Command::new(tool).args(&args).env("CEPH_ARGS", &ceph_args).output().unwrap();
        assert!(real.status.success(), "{tool}: {}", String::from_utf8_lossy(&real.stderr));
        let ours = Command::new(util::fiox_bin()).arg(tool).args(&args).env("CEPH_ARGS", &ceph_args).output().unwrap();
        assert!(
            ours.status.success() && ours.stderr.is_empty(),
            "fiox {tool}: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
    }
}
