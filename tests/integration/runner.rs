//! Runner behaviour that fio users rely on: interval reports, job ordering, limits.

use crate::util::{fiox, scratch};

/// Splits concatenated JSON documents.
fn json_docs(text: &str) -> Vec<serde_json::Value> {
    serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>().map(|v| v.expect("valid JSON")).collect()
}

#[test]
fn status_interval_prints_a_cumulative_report_each_interval() {
    let dir = scratch();
    let o = fiox(
        dir.path(),
        &[
            "--name=t",
            "--ioengine=null",
            "--size=1m",
            "--rw=randread",
            "--runtime=2500ms",
            "--time_based",
            "--status-interval=1",
            "--output-format=json",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let docs = json_docs(&o.stdout);
    // Two interval reports and the final one, as fio 3.33 prints for this job.
    assert_eq!(docs.len(), 3, "{}", o.stdout);
    let ios: Vec<u64> = docs.iter().map(|d| d["jobs"][0]["read"]["total_ios"].as_u64().unwrap()).collect();
    assert!(ios.windows(2).all(|w| w[0] < w[1]), "reports are cumulative: {ios:?}");
}

#[test]
fn wait_for_starts_a_job_after_another() {
    let dir = scratch();
    // Each job takes about 0.5 s (500 I/Os at 1000 IOPS); waiting makes the run about 1 s.
    let args = [
        "--ioengine=null",
        "--size=2000k",
        "--bs=4k",
        "--rate_iops=1000",
        "--output-format=terse",
        "--name=a",
        "--rw=read",
        "--name=b",
        "--rw=write",
    ];
    let t0 = std::time::Instant::now();
    assert_eq!(fiox(dir.path(), &args).code, 0);
    let together = t0.elapsed();
    let mut waiting = args.to_vec();
    waiting.push("--wait_for=a");
    let t0 = std::time::Instant::now();
    let o = fiox(dir.path(), &waiting);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let ordered = t0.elapsed();
    assert!(together.as_secs_f64() < 0.8, "jobs without wait_for run together: {together:?}");
    assert!(ordered.as_secs_f64() > 0.9, "wait_for runs them one after the other: {ordered:?}");
    let o = fiox(dir.path(), &["--ioengine=null", "--size=1m", "--name=a", "--wait_for=nope"]);
    assert!(o.stderr.contains("wait_for=nope names no earlier job"), "{}", o.stderr);
}

#[test]
fn max_jobs_limits_clones() {
    let dir = scratch();
    let o = fiox(dir.path(), &["--max-jobs=2", "--ioengine=null", "--size=1m", "--numjobs=3", "--name=a"]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("3 jobs (counting numjobs clones) exceed --max-jobs=2"), "{}", o.stderr);
}

#[test]
fn buffer_contents_follow_the_options() {
    // (options, distinct 64 KiB blocks expected among 64, all zero)
    let cases: &[(&[&str], usize, bool)] = &[
        (&[], 64, false),
        (&["--refill_buffers"], 64, false),
        (&["--scramble_buffers=0"], 1, false),
        (&["--zero_buffers"], 1, true),
    ];
    for (opts, distinct, zero) in cases {
        let dir = scratch();
        let mut args =
            vec!["--name=t", "--filename=d.dat", "--size=4m", "--bs=64k", "--rw=write", "--output-format=terse"];
        args.extend_from_slice(opts);
        assert_eq!(fiox(dir.path(), &args).code, 0);
        let data = std::fs::read(dir.path().join("d.dat")).unwrap();
        let blocks: std::collections::HashSet<&[u8]> = data.chunks(65536).collect();
        assert_eq!(blocks.len(), *distinct, "{opts:?}");
        assert_eq!(data.iter().all(|&b| b == 0), *zero, "{opts:?}");
    }
    // A pattern, compressibility and dedupe share.
    let run = |opts: &[&str]| -> Vec<u8> {
        let dir = scratch();
        let mut args =
            vec!["--name=t", "--filename=d.dat", "--size=4m", "--bs=64k", "--rw=write", "--output-format=terse"];
        args.extend_from_slice(opts);
        assert_eq!(fiox(dir.path(), &args).code, 0);
        std::fs::read(dir.path().join("d.dat")).unwrap()
    };
    let d = run(&["--buffer_pattern=0xdeadbeef"]);
    assert!(d.chunks(4).all(|c| c == [0xde, 0xad, 0xbe, 0xef]), "pattern repeated through every block");
    let d = run(&["--buffer_compress_percentage=50", "--buffer_compress_chunk=4k"]);
    let zeros = d.iter().filter(|&&b| b == 0).count() as f64 / d.len() as f64;
    assert!((0.48..0.53).contains(&zeros), "half of each chunk is zeros: {zeros}");
    let d = run(&["--dedupe_percentage=50"]);
    let distinct = d.chunks(65536).collect::<std::collections::HashSet<_>>().len();
    assert!((20..50).contains(&distinct), "about half the blocks repeat an earlier one: {distinct} distinct of 64");
    // A bad pattern is refused before anything is created.
    let dir = scratch();
    let o = fiox(dir.path(), &["--name=t", "--filename=d.dat", "--size=1m", "--rw=write", "--buffer_pattern='open"]);
    assert!(
        o.stderr.contains("bad value ''open' for option 'buffer_pattern'") && o.stderr.contains("unterminated string"),
        "{}",
        o.stderr
    );
    assert!(crate::util::listing(dir.path()).is_empty());
}

#[test]
fn terse_header_names_every_field() {
    let dir = scratch();
    for version in ["2", "3", "4", "5"] {
        let v = format!("--terse-version={version}");
        let o = fiox(
            dir.path(),
            &["--name=t", "--filename=t.dat", "--size=1m", "--rw=read", "--minimal", &v, "--terse-header"],
        );
        assert_eq!(o.code, 0, "{}", o.stderr);
        let lines: Vec<&str> = o.stdout.lines().collect();
        let names = lines[0].split(';').count();
        let fields = lines[1].split(';').count();
        assert_eq!(names, fields, "terse v{version}: {} names for {} fields", names, fields);
        assert!(lines[0].starts_with("terse_version;") || version == "2", "{}", lines[0]);
    }
}

#[test]
fn the_same_seed_gives_the_same_offsets() {
    let dir = scratch();
    let run = |extra: &[&str], log: &str| -> String {
        let l = format!("--write_iolog={log}");
        let mut args =
            vec!["--name=t", "--ioengine=null", "--size=16m", "--rw=randread", "--output-format=terse", l.as_str()];
        args.extend_from_slice(extra);
        assert_eq!(fiox(dir.path(), &args).code, 0);
        // Offsets only: the timestamps differ from run to run.
        std::fs::read_to_string(dir.path().join(log))
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once(' ').map(|x| x.1.to_string()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(run(&[], "a.log"), run(&[], "b.log"), "randrepeat=1 (the default) repeats the sequence");
    assert_eq!(run(&["--randseed=42"], "c.log"), run(&["--randseed=42"], "d.log"));
    assert_ne!(run(&["--randseed=42"], "e.log"), run(&["--randseed=43"], "f.log"), "another seed, another sequence");
    assert_ne!(
        run(&["--randrepeat=0"], "g.log"),
        run(&["--randrepeat=0"], "h.log"),
        "randrepeat=0 seeds from the clock"
    );
}

#[test]
fn rate_min_stops_a_job_that_is_too_slow() {
    let dir = scratch();
    let t0 = std::time::Instant::now();
    let o = fiox(
        dir.path(),
        &[
            "--name=t",
            "--ioengine=null",
            "--size=64m",
            "--rw=read",
            "--rate_iops=1000",
            "--rate_iops_min=2000",
            "--runtime=10",
            "--time_based",
            "--output-format=terse",
        ],
    );
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("min iops rate 2000 not met"), "{}", o.stderr);
    assert!(t0.elapsed().as_secs() < 5, "the job should stop after one rate_cycle, not run for 10 s");
    // A job that keeps its minimum runs to the end.
    let o = fiox(
        dir.path(),
        &[
            "--name=t",
            "--ioengine=null",
            "--size=64m",
            "--rw=read",
            "--rate_iops=1000",
            "--rate_iops_min=500",
            "--runtime=2",
            "--time_based",
            "--output-format=terse",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn interval_deltas_as_json_lines() {
    let dir = scratch();
    let o = fiox(
        dir.path(),
        &[
            "--name=t",
            "--ioengine=null",
            "--size=64m",
            "--rw=read",
            "--rate_iops=2000",
            "--runtime=3500ms",
            "--time_based",
            "--status-interval=1",
            "--status-interval-delta",
            "--json-lines",
            "--output-format=json",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<serde_json::Value> =
        o.stdout.lines().map(|l| serde_json::from_str(l).expect("one JSON document per line")).collect();
    assert_eq!(lines.len(), 4, "three interval reports and the final one: {}", o.stdout);
    let ios: Vec<u64> = lines.iter().map(|d| d["jobs"][0]["read"]["total_ios"].as_u64().unwrap()).collect();
    let ms: Vec<u64> = lines.iter().map(|d| d["jobs"][0]["job_runtime"].as_u64().unwrap()).collect();
    // Each interval report covers only its own interval, at the job's 2000 IOPS (intervals can
    // stretch on a busy machine, so the rate is checked, not the count); the final report is the
    // whole run.
    for k in 0..3 {
        let rate = ios[k] * 1000 / ms[k].max(1);
        assert!((1500..2500).contains(&rate), "interval {k}: {} I/Os in {} ms", ios[k], ms[k]);
    }
    assert!(ios[..3].iter().sum::<u64>() <= ios[3], "intervals are parts of the whole: {ios:?}");
    assert!(ios[3] > 6000, "final report is cumulative: {ios:?}");
}

/// `log_window_value` (fio 3.36's spelling; fio 3.33 has only `log_max_value`): `both` adds the
/// window's maximum as a second value column, never below the average; `max` and
/// `log_max_value=1` log one column.
#[test]
fn log_window_value_logs_average_maximum_or_both() {
    let cols = |dir: &std::path::Path, name: &str| -> Vec<Vec<u64>> {
        std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .lines()
            .map(|l| l.split(',').map(|f| f.trim().parse().unwrap()).collect())
            .collect()
    };
    for (opt, width) in [("--log_window_value=both", 6), ("--log_window_value=max", 5), ("--log_max_value=1", 5)] {
        let dir = scratch();
        let out = fiox(
            dir.path(),
            &[
                "--name=t",
                "--ioengine=null",
                "--size=1g",
                "--time_based",
                "--runtime=1",
                "--rate_iops=2000",
                "--log_avg_msec=100",
                "--write_lat_log=x",
                "--write_bw_log=x",
                "--per_job_logs=0",
                opt,
            ],
        );
        assert_eq!(out.code, 0, "{opt}: {}", out.stderr);
        for log in ["x_clat.log", "x_bw.log"] {
            let lines = cols(dir.path(), log);
            assert!(lines.len() >= 8, "{opt} {log}: {} windows in 1 s at 100 ms", lines.len());
            assert!(lines.iter().all(|l| l.len() == width), "{opt} {log}: {lines:?}");
            if width == 6 {
                assert!(lines.iter().all(|l| l[2] >= l[1]), "{opt} {log}: max below average: {lines:?}");
                if log == "x_clat.log" {
                    assert!(lines.iter().any(|l| l[2] > l[1]), "{opt}: a latency max equal to the mean everywhere");
                }
            }
        }
    }
}

/// Buffered reads of a file already in the page cache: the report says the device was not
/// measured (fiox's JSON `fiox.warnings` and the normal output's fiox section), and a direct
/// run of the same job does not.
#[test]
fn cached_reads_are_flagged_in_the_report() {
    let dir = scratch();
    let file = dir.path().join("cached.dat");
    std::fs::write(&file, vec![7u8; 16 << 20]).unwrap();
    // Read it once so that it sits in the page cache.
    let _ = std::fs::read(&file).unwrap();
    let warnings = |direct: &str| -> Vec<String> {
        let out = fiox(
            dir.path(),
            &[
                "--name=t",
                "--filename=cached.dat",
                "--rw=randread",
                "--bs=4k",
                "--size=16m",
                "--invalidate=0",
                direct,
                "--output-format=json",
            ],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert!(v.get("disk_util").is_some(), "no disk statistics for a file on the scratch disk");
        v["fiox"]["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect()
    };
    let cached = warnings("--direct=0");
    assert!(cached.iter().any(|w| w.contains("page cache")), "{cached:?}");
    let direct = warnings("--direct=1");
    assert!(!direct.iter().any(|w| w.contains("page cache") || w.contains("direct=1")), "{direct:?}");
}

/// `clocksource` picks the clock and the manifest names it; by default fiox uses the CPU's
/// counter where the kernel trusts it (this machine's clocksource decides which is expected).
#[test]
fn clocksource_is_honoured_and_reported() {
    let kernel_tsc = std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .map(|s| s.trim() == "tsc")
        .unwrap_or(false);
    for (opt, expect) in [
        (None, if kernel_tsc { "TSC at" } else { "clock_gettime" }),
        (Some("--clocksource=clock_gettime"), "clock_gettime(CLOCK_MONOTONIC)"),
        (Some("--clocksource=gettimeofday"), "gettimeofday"),
    ] {
        let dir = scratch();
        let mut args = vec!["--name=t", "--ioengine=null", "--size=64m", "--output-format=json"];
        args.extend(opt);
        let out = fiox(dir.path(), &args);
        assert_eq!(out.code, 0, "{opt:?}: {}", out.stderr);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let clock = v["fiox"]["clock"].as_str().unwrap();
        assert!(clock.contains(expect), "{opt:?}: manifest clock is '{clock}'");
        assert_eq!(v["jobs"][0]["read"]["io_bytes"], 64 << 20);
        assert!(v["jobs"][0]["read"]["clat_ns"]["mean"].as_f64().unwrap() > 0.0 || opt.is_some());
    }
    let out = fiox(scratch().path(), &["--name=t", "--ioengine=null", "--size=1m", "--clocksource=cpu"]);
    assert_eq!(out.code, if kernel_tsc { 0 } else { 1 }, "{}", out.stderr);
}

/// fio prints "Laying out IO file" with its normal output (after the header, on stdout or in
/// the --output file) and nowhere under other formats; a successful run leaves stderr empty,
/// which harnesses built for fio check.
#[test]
fn layout_lines_go_with_the_normal_output_and_stderr_stays_empty() {
    for format in ["normal", "json"] {
        let mut lines = Vec::new();
        for fio in [true, false] {
            let dir = scratch();
            let args =
                ["--name=j", "--filename=lo.dat", "--size=4m", "--rw=read", &format!("--output-format={format}")];
            let out = if fio { crate::util::fio(dir.path(), &args) } else { fiox(dir.path(), &args) };
            assert_eq!(out.code, 0, "{format}: {}", out.stderr);
            assert!(out.stderr.is_empty(), "{format}, fio={fio}: stderr: {}", out.stderr);
            let at = out.stdout.lines().position(|l| l == "j: Laying out IO file (1 file / 4MiB)");
            lines.push(at);
            if format == "json" {
                assert_eq!(at, None, "fio={fio}: JSON output stays pure");
                serde_json::from_str::<serde_json::Value>(&out.stdout).expect("one JSON document");
            }
        }
        assert_eq!(lines[0], lines[1], "{format}: the layout line's place (fio, fiox)");
    }
}

/// A job that only reads opens its files with O_NOATIME (fiox is root here, so the kernel
/// allows it): the file's access time stays as it was, where a plain read of the same file
/// moves it (relatime updates an access time older than a day).
#[test]
fn a_reading_job_leaves_the_access_time_alone() {
    use std::time::{Duration, SystemTime};
    let dir = scratch();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![7u8; 64 << 10]).unwrap();
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let times = std::fs::FileTimes::new().set_accessed(old).set_modified(old);
    std::fs::File::options().write(true).open(&path).unwrap().set_times(times).unwrap();
    let atime = || std::fs::metadata(&path).unwrap().accessed().unwrap();
    for engine in ["psync", "io_uring"] {
        let o = fiox(
            dir.path(),
            &["--name=r", "--filename=f", "--rw=randread", "--bs=4k", "--size=64k", &format!("--ioengine={engine}")],
        );
        assert_eq!((o.code, o.stderr.as_str()), (0, ""), "{engine}: {}", o.stdout);
        assert!(o.stdout.contains("io=64.0KiB"), "{engine}: {}", o.stdout);
        assert_eq!(atime(), old, "{engine}: the job's reads moved the access time");
    }
    // The control: the file system does keep access times, so the check above could fail.
    std::fs::read(&path).unwrap();
    assert_ne!(atime(), old, "a plain read left the access time alone: the check proves nothing here");
}

/// At depth, the null engine's commits that fill the queue are dated by the reap's clock
/// reading (one read per I/O instead of two): every I/O still has its three latencies, and
/// each I/O's lat is its slat plus its clat, so the means add up. A unit dated by a stale stamp
/// (its previous I/O's) would saturate its slat at 0 and lengthen its clat past its lat.
#[test]
fn null_engine_latencies_add_up_at_depth() {
    for depth in ["--iodepth=1", "--iodepth=2", "--iodepth=32"] {
        let args = ["--name=t", "--ioengine=null", "--rw=randread", "--size=64m", depth, "--output-format=json"];
        let out = fiox(scratch().path(), &args);
        assert_eq!(out.code, 0, "{depth}: {}", out.stderr);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let r = &v["jobs"][0]["read"];
        assert_eq!(r["total_ios"], 16384, "{depth}");
        let mean = |k: &str| r[k]["mean"].as_f64().unwrap();
        let n = |k: &str| r[k]["N"].as_u64().unwrap_or(0);
        assert_eq!(n("clat_ns"), 16384, "{depth}");
        assert_eq!(n("lat_ns"), 16384, "{depth}");
        if depth != "--iodepth=1" {
            // At depth 1 the null engine completes in line: no submission phase, as in fio.
            assert_eq!(n("slat_ns"), 16384, "{depth}");
        }
        let sum = mean("slat_ns") + mean("clat_ns");
        assert!(
            (sum - mean("lat_ns")).abs() <= 0.01 * mean("lat_ns") + 1.0,
            "{depth}: slat + clat {sum} != lat {}",
            mean("lat_ns")
        );
        assert!(r["clat_ns"]["max"].as_u64() <= r["lat_ns"]["max"].as_u64(), "{depth}");
    }
}

/// The peak resident memory (`VmHWM`, KiB) of the running process `pid`, or None once gone.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Reads nobody looks at share one buffer: 128 direct reads of 1 MiB in flight cost about one
/// buffer of resident memory, not 128 (each in-flight read pins and so faults in its buffer);
/// the same job reading into a buffer per unit, as verify needs, holds them all.
#[test]
fn deep_reads_nobody_checks_share_one_buffer() {
    let d = scratch();
    std::fs::write(d.path().join("deep.dat"), vec![5u8; 64 << 20]).unwrap();
    let peak = |extra: &[&str]| {
        let mut args = vec![
            "--name=deep",
            "--filename=deep.dat",
            "--rw=randread",
            "--bs=1m",
            "--iodepth=128",
            "--direct=1",
            "--time_based",
            "--runtime=3",
            "--output-format=json",
        ];
        args.extend_from_slice(extra);
        let mut child = std::process::Command::new(crate::util::fiox_bin())
            .args(&args)
            .current_dir(d.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // VmHWM only grows: the figure a second in is at least what the buffers in flight hold.
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let hwm = vm_hwm_kib(child.id()).expect("fiox is still running");
        assert!(child.wait().unwrap().success(), "{extra:?}");
        hwm
    };
    for engine in ["--ioengine=libaio", "--ioengine=io_uring"] {
        let shared = peak(&[engine]);
        assert!(shared < 48 << 10, "{engine}: reads nobody checks hold {shared} KiB");
    }
    // A read-only verify job keeps a buffer per unit (its checks fail on this file, which has
    // no verify headers; continue_on_error=verify counts the failures instead of stopping).
    let separate = peak(&["--ioengine=libaio", "--verify=crc32c", "--verify_fatal=0", "--continue_on_error=verify"]);
    assert!(separate > 96 << 10, "a verify job's units share buffers: {separate} KiB");
}
