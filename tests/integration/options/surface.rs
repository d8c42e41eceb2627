//! fio 3.33's wider option surface (issue: every option and engine), each family against the
//! real fio on the same job: what files are made, which offsets are done, which logs appear.

use std::path::Path;

use crate::util::{fio, fiox, json, listing, scratch, skip, tool};

/// The (direction, offset) of every I/O in an iolog.
pub(crate) type Ios = Vec<(String, u64)>;

/// The I/Os of a version 3 iolog.
pub(crate) fn offsets(path: &Path) -> Ios {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5).then(|| (f[2].to_string(), f[3].parse().unwrap()))
        })
        .collect()
}

/// Runs both tools on `args` plus a `write_iolog` each; the two logs' I/Os.
pub(crate) fn both_iologs(args: &[&str]) -> (Ios, Ios) {
    let dir = scratch();
    let run = |fiox_run: bool| {
        let log = if fiox_run { "--write_iolog=x.log" } else { "--write_iolog=f.log" };
        let mut a = vec!["--name=t", "--filename=t.dat", "--output-format=json", log];
        a.extend(args);
        let out = tool(fiox_run, dir.path(), &a);
        assert_eq!(out.code, 0, "fiox {fiox_run} {args:?}: {}", out.stderr);
    };
    run(false);
    run(true);
    (offsets(&dir.path().join("f.log")), offsets(&dir.path().join("x.log")))
}

/// Boolean engine options that fio takes bare (`--fixedbufs --registerfiles`) never swallow the
/// next option.
#[test]
fn engine_flags_work_bare_like_fio() {
    let dir = scratch();
    let args = [
        "--name=bare",
        "--ioengine=io_uring",
        "--fixedbufs",
        "--registerfiles",
        "--filename=bare.dat",
        "--size=1m",
        "--rw=write",
        "--output-format=json",
    ];
    for (who, out) in [("fio", fio(dir.path(), &args)), ("fiox", fiox(dir.path(), &args))] {
        assert_eq!(out.code, 0, "{who}: {}", out.stderr);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(v["jobs"][0]["write"]["io_bytes"].as_u64(), Some(1 << 20), "{who}");
    }
    let job = dir.path().join("bare.fio");
    std::fs::write(&job, "[j]\nioengine=libaio\nuserspace_reap\nfilename=bare.dat\nsize=1m\n").unwrap();
    let out = fiox(dir.path(), &["--output-format=json", job.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// `rw=read:-8k` reads backwards, wrapping from the start to the end of the region, and fio's
/// old spellings (`fileoffset`, `ratemin`, `ratecycle`) mean what they mean in fio.
#[test]
fn backwards_steps_and_old_spellings_give_fios_offsets() {
    let cases: &[&[&str]] = &[
        &["--size=64k", "--bs=4k", "--rw=read:-8k"],
        &["--size=64k", "--bs=8k", "--rw=write:-12k"],
        &["--size=64k", "--bs=8k", "--rw=read:-16k", "--loops=2"],
        &["--size=128k", "--fileoffset=64k", "--bs=16k", "--rw=read"],
        &["--size=64k", "--rw=read", "--ratemin=1k", "--ratecycle=500"],
    ];
    for args in cases {
        let (f, x) = both_iologs(args);
        assert!(!f.is_empty(), "{args:?}");
        assert_eq!(x, f, "{args:?}: fiox's I/Os, then fio's");
    }
}

/// A log option written bare in a job file is named after the job, as in fio.
#[test]
fn bare_log_options_are_named_after_the_job() {
    for bin in [true, false] {
        let dir = scratch();
        let job = dir.path().join("j.fio");
        std::fs::write(&job, "[global]\nwrite_bw_log\n[foo]\nioengine=null\nsize=1m\nwrite_iops_log\n").unwrap();
        let path = job.to_str().unwrap();
        let out = if bin { fiox(dir.path(), &["--output-format=json", path]) } else { fio(dir.path(), &[path]) };
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(listing(dir.path()), ["foo_bw.1.log", "foo_iops.1.log", "j.fio"], "fiox {bin}");
    }
}

/// `filename_format` names a job's files, with `$jobname`, `$jobnum`, `$filenum` and
/// `$clientuid` (empty in a local run) replaced.
#[test]
fn filename_format_names_files_like_fio() {
    let mut seen = Vec::new();
    for bin in [false, true] {
        let dir = scratch();
        let args = [
            "--name=a",
            "--size=8k",
            "--numjobs=2",
            "--nrfiles=2",
            "--filesize=4k",
            "--filename_format=f-$jobname-$jobnum-$filenum-$clientuid-x",
            "--output-format=json",
        ];
        let out = tool(bin, dir.path(), &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        seen.push(listing(dir.path()));
    }
    assert_eq!(seen[0], ["f-a-0-0--x", "f-a-0-1--x", "f-a-1-0--x", "f-a-1-1--x"]);
    assert_eq!(seen[1], seen[0]);
}

/// `random_distribution=zoned` with a zone whose range is left out (fio 3.33's
/// examples/rand-zones.fio): that zone is the rest of the region. Ranges that cover less than
/// the region keep the I/O inside them.
#[test]
fn zoned_ranges_spread_like_fios() {
    for dist in ["zoned:50/5:30/15:20/", "zoned:50/5:30/15:20/10"] {
        let d = format!("--random_distribution={dist}");
        let args = ["--size=100m", "--bs=4k", "--rw=randread", "--norandommap", "--ioengine=null", &d];
        let (f, x) = both_iologs(&args);
        // Shares of the I/O in each tenth of the region.
        let tenths = |v: &[(String, u64)]| -> Vec<f64> {
            let mut h = [0u64; 10];
            for (_, off) in v {
                h[(*off * 10 / (100 << 20)) as usize] += 1;
            }
            h.iter().map(|&c| c as f64 / v.len() as f64).collect()
        };
        let (tf, tx) = (tenths(&f), tenths(&x));
        for (a, b) in tf.iter().zip(&tx) {
            assert!((a - b).abs() < 0.02, "{dist}: fio {tf:?}, fiox {tx:?}");
        }
    }
}

/// `disable_lat`, `disable_clat`, `disable_slat`, `disable_bw_measurement` and `gtod_reduce`:
/// the same statistics left out of JSON (N=0, no percentiles) and of the normal output (no line,
/// no latency buckets), and the same log files made, as fio.
#[test]
fn disabled_measurements_are_left_out_like_fio() {
    let cases: &[&[&str]] = &[
        &["--gtod_reduce=1"],
        &["--disable_clat=1"],
        &["--disable_slat=1", "--disable_lat=1"],
        &["--disable_bw_measurement=1"],
    ];
    // What a run shows: per latency (N > 0, has percentiles), the normal output's line labels,
    // the log files and which of them are empty.
    type Shown = (Vec<(bool, bool)>, Vec<String>, Vec<(String, bool)>);
    let shown = |fiox_run: bool, extra: &[&str]| -> Shown {
        let dir = scratch();
        let mut args = vec![
            "--name=a",
            "--ioengine=libaio",
            "--iodepth=4",
            "--filename=g.dat",
            "--size=1m",
            "--rw=randread",
            "--write_lat_log=l",
            "--write_bw_log=b",
            "--output-format=json,normal",
        ];
        args.extend(extra);
        let out = tool(fiox_run, dir.path(), &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        // The layout line may come first.
        let start = out.stdout.find("{\n").expect("the JSON document");
        let end = out.stdout.find("\n}\n").expect("the JSON document") + 3;
        let v: serde_json::Value = serde_json::from_str(&out.stdout[start..end]).unwrap();
        let read = &v["jobs"][0]["read"];
        let lats = ["slat_ns", "clat_ns", "lat_ns"]
            .iter()
            .map(|k| (read[k]["N"].as_u64().unwrap() > 0, read[k].get("percentile").is_some()))
            .collect();
        // Labels in order, a run of lines with one label (the latency buckets) counted once.
        let mut labels: Vec<String> = out.stdout[end..]
            .lines()
            .skip_while(|l| !l.contains("groupid="))
            .take_while(|l| !l.starts_with("Run status"))
            .filter_map(|l| l.split_once(':').map(|(k, _)| k.split('(').next().unwrap().trim().to_string()))
            .filter(|k| !k.is_empty() && !k.starts_with('|'))
            .collect();
        labels.dedup();
        let logs = listing(dir.path())
            .into_iter()
            .filter(|f| f.ends_with(".log"))
            .map(|f| {
                let empty = std::fs::metadata(dir.path().join(&f)).unwrap().len() == 0;
                (f, empty)
            })
            .collect();
        (lats, labels, logs)
    };
    for extra in cases {
        let (f, x) = (shown(false, extra), shown(true, extra));
        assert_eq!(x, f, "{extra:?}: fiox, then fio");
    }
}

/// With a per-I/O bandwidth and IOPS log, fio's bandwidth and IOPS statistics are that log's
/// values: one sample per I/O (each I/O's bytes over its latency; IOPS 1).
#[test]
fn per_io_logs_are_the_bandwidth_and_iops_samples_like_fio() {
    for fiox_run in [false, true] {
        let dir = scratch();
        let args = [
            "--name=a",
            "--filename=g.dat",
            "--size=1m",
            "--bs=64k",
            "--rw=read",
            "--write_bw_log=b",
            "--write_iops_log=b",
            "--output-format=json",
        ];
        let out = tool(fiox_run, dir.path(), &args);
        let v = json(&out);
        let r = &v["jobs"][0]["read"];
        let log = std::fs::read_to_string(dir.path().join("b_bw.1.log")).unwrap();
        let values: Vec<f64> = log.lines().map(|l| l.split(", ").nth(1).unwrap().parse().unwrap()).collect();
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let who = if fiox_run { "fiox" } else { "fio" };
        assert_eq!(r["bw_samples"].as_u64(), Some(16), "{who}");
        assert_eq!((r["iops_samples"].as_u64(), r["iops_mean"].as_f64()), (Some(16), Some(1.0)), "{who}");
        assert!((r["bw_mean"].as_f64().unwrap() - mean).abs() <= mean * 1e-6 + 1.0, "{who}: bw_mean is the log's");
    }
}

/// The logs' last column: 1 for an I/O whose priority cmdprio raised, 0 otherwise; under
/// `log_prio` each I/O's priority value as fio prints it (`0x2000`, `0x4003`). An averaging
/// window still open when the job ends is written at the job's end.
#[test]
fn log_priorities_and_the_last_window_like_fio() {
    let cases: &[&[&str]] = &[
        &["--log_prio=1", "--prioclass=3", "--cmdprio_percentage=50", "--cmdprio_class=1"],
        &["--prioclass=3", "--cmdprio_percentage=50", "--cmdprio_class=1"],
        &["--log_prio=1"],
        &["--log_prio=1", "--prio=3"],
        &["--log_prio=1", "--log_avg_msec=10", "--size=1m"],
    ];
    for extra in cases {
        let mut seen = Vec::new();
        for fiox_run in [false, true] {
            let dir = scratch();
            let mut args = vec![
                "--name=a",
                "--ioengine=libaio",
                "--iodepth=4",
                "--filename=g.dat",
                "--size=256k",
                "--rw=randread",
                "--write_lat_log=p",
                "--output-format=json",
            ];
            args.extend(*extra);
            let out = tool(fiox_run, dir.path(), &args);
            assert_eq!(out.code, 0, "{}", out.stderr);
            let v = json(&out);
            let runtime = v["jobs"][0]["job_runtime"].as_u64().unwrap();
            let log = std::fs::read_to_string(dir.path().join("p_clat.1.log")).unwrap();
            let mut prios: Vec<String> = log.lines().map(|l| l.rsplit(", ").next().unwrap().to_string()).collect();
            let last_ms: u64 = log.lines().last().unwrap().split(',').next().unwrap().parse().unwrap();
            if extra.iter().any(|e| e.starts_with("--log_avg_msec")) {
                assert!(
                    last_ms.abs_diff(runtime) <= 1,
                    "fiox {fiox_run}: the last window ends with the job ({last_ms} ms, runtime {runtime} ms)"
                );
            }
            prios.sort();
            prios.dedup();
            seen.push(prios);
        }
        assert_eq!(seen[1], seen[0], "{extra:?}: fiox's priority values, then fio's");
    }
}

/// Averaged logs' windows (`log_avg_msec`): a full window that ends as the job ends has
/// latency lines but no bandwidth or IOPS lines, and a window still open at the end has
/// latency lines only, as fio 3.33 writes them (a 3 s job: bw and iops at 1000 and 2000, lat
/// at 1000, 2000 and 3000). Each log's times, to the nearest 100 ms (fio samples bandwidth on
/// its helper thread, a millisecond or so late), compared; fio's sampling races its job's
/// end, so a mismatch is tried again.
#[test]
fn averaged_logs_end_their_last_window_as_fio_does() {
    let windows = |fiox_run: bool, runtime: &str| -> Vec<(String, Vec<u64>)> {
        let dir = scratch();
        let rt = format!("--runtime={runtime}");
        let mut args = vec!["--name=w", "--ioengine=null", "--size=1g", "--time_based", &rt, "--rate_iops=1000"];
        args.extend(["--log_avg_msec=1000", "--write_bw_log=w", "--write_iops_log=w", "--write_lat_log=w"]);
        let out = tool(fiox_run, dir.path(), &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        ["bw", "iops", "lat", "clat"]
            .map(|k| {
                let log = std::fs::read_to_string(dir.path().join(format!("w_{k}.1.log"))).unwrap();
                let t = log.lines().map(|l| (l.split(',').next().unwrap().parse::<u64>().unwrap() + 50) / 100 * 100);
                (k.to_string(), t.collect())
            })
            .to_vec()
    };
    for runtime in ["3", "2500ms"] {
        let mut tries = 0;
        loop {
            let (by_fio, by_fiox) = (windows(false, runtime), windows(true, runtime));
            tries += 1;
            if by_fio == by_fiox || tries == 3 {
                assert_eq!(by_fiox, by_fio, "runtime={runtime}: each log's times, fiox then fio");
                break;
            }
        }
    }
}

/// `log_unix_epoch` and `log_alternate_epoch` (with `log_alternate_epoch_clock_id`): log times
/// count from the clock's epoch; `disk_util=0` leaves the disk statistics out. Both as in fio.
#[test]
fn log_epochs_and_disk_util_like_fio() {
    // The two clocks, read without unsafe code: the wall clock, and CLOCK_BOOTTIME (clock id 7)
    // through /proc/uptime, which has 10 ms steps.
    let now_ms = |boottime: bool| -> u64 {
        if boottime {
            let up = std::fs::read_to_string("/proc/uptime").unwrap();
            (up.split_whitespace().next().unwrap().parse::<f64>().unwrap() * 1000.0) as u64
        } else {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
        }
    };
    let cases: &[(&[&str], bool)] =
        &[(&["--log_unix_epoch=1"], false), (&["--log_alternate_epoch=1", "--log_alternate_epoch_clock_id=7"], true)];
    for fiox_run in [false, true] {
        for (extra, clock) in cases {
            let dir = scratch();
            let mut args = vec!["--name=a", "--filename=g.dat", "--size=256k", "--write_lat_log=u", "--disk_util=0"];
            args.extend(*extra);
            args.push("--output-format=json,normal");
            let before = now_ms(*clock).saturating_sub(20);
            let out = tool(fiox_run, dir.path(), &args);
            let after = now_ms(*clock) + 20;
            assert_eq!(out.code, 0, "{}", out.stderr);
            assert!(!out.stdout.contains("\"disk_util\" : [") && !out.stdout.contains("Disk stats"), "fiox {fiox_run}");
            let log = std::fs::read_to_string(dir.path().join("u_clat.1.log")).unwrap();
            let t: u64 = log.lines().next().unwrap().split(',').next().unwrap().parse().unwrap();
            assert!((before..=after).contains(&t), "fiox {fiox_run} {extra:?}: {t} not in {before}..={after}");
        }
    }
}

/// File setup: `file_append` writes after a file's end, `offset_align` rounds a percentage
/// offset (of the file's real size) up, `create_only` lays out and does no I/O, and
/// `allow_file_create=0` refuses a missing file before any I/O. All as in fio.
#[test]
fn file_setup_options_like_fio() {
    let cases: &[(&[&str], u64)] = &[
        (&["--size=256k", "--bs=64k", "--rw=write", "--file_append=1"], 1 << 20),
        (&["--offset=10%", "--bs=1k", "--size=8k", "--rw=read", "--offset_align=4k"], 1_000_000),
        (&["--offset=10%", "--bs=1k", "--size=8k", "--rw=read"], 1_000_000),
    ];
    for (args, existing) in cases {
        let mut seen = Vec::new();
        for fiox_run in [false, true] {
            let dir = scratch();
            std::fs::write(dir.path().join("t.dat"), vec![0u8; *existing as usize]).unwrap();
            let mut a = vec!["--name=t", "--filename=t.dat", "--output-format=json", "--write_iolog=l.log"];
            a.extend(*args);
            let out = tool(fiox_run, dir.path(), &a);
            assert_eq!(out.code, 0, "{}", out.stderr);
            let size = std::fs::metadata(dir.path().join("t.dat")).unwrap().len();
            seen.push((offsets(&dir.path().join("l.log")), size));
        }
        assert_eq!(seen[1], seen[0], "{args:?}: fiox, then fio");
    }
    for fiox_run in [false, true] {
        let dir = scratch();
        let a = ["--name=t", "--filename=c.dat", "--size=64k", "--create_only=1", "--output-format=json"];
        let out = tool(fiox_run, dir.path(), &a);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(std::fs::metadata(dir.path().join("c.dat")).unwrap().len(), 64 << 10);
        let v = json(&out);
        assert_eq!(v["jobs"][0]["read"]["total_ios"].as_u64(), Some(0), "fiox {fiox_run}: no I/O");
        let a = ["--name=t", "--filename=nope.dat", "--size=64k", "--allow_file_create=0", "--write_iolog=l.log"];
        let out = tool(fiox_run, dir.path(), &a);
        assert_eq!(out.code, 1, "fiox {fiox_run}");
        assert!(out.stderr.contains("allow_file_create=0"), "{}", out.stderr);
        assert!(!dir.path().join("nope.dat").exists() && !dir.path().join("l.log").exists());
    }
}

/// `exec_prerun`/`exec_postrun` run around the job with their output saved in
/// `JOBNAME.prerun.txt`/`.postrun.txt` and fio's "Saving output" line in the normal output;
/// `pre_read` reads the files first without counting it. A failing prerun is an error that
/// names the command (fio skips the job silently and exits 0).
#[test]
fn exec_and_pre_read_like_fio() {
    for fiox_run in [false, true] {
        let dir = scratch();
        let args = [
            "--name=j",
            "--filename=x.dat",
            "--size=64k",
            "--pre_read=1",
            "--exec_prerun=echo before",
            "--exec_postrun=echo after",
        ];
        let out = tool(fiox_run, dir.path(), &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        for (file, text) in [("j.prerun.txt", "before\n"), ("j.postrun.txt", "after\n")] {
            assert_eq!(std::fs::read_to_string(dir.path().join(file)).unwrap(), text, "fiox {fiox_run}");
        }
        assert!(out.stdout.contains("j : Saving output of prerun in j.prerun.txt\n"), "{}", out.stdout);
        assert!(out.stdout.contains("io=64.0KiB"), "fiox {fiox_run}: the pre-read is not counted\n{}", out.stdout);
    }
    let dir = scratch();
    let out = fiox(dir.path(), &["--name=j", "--filename=x.dat", "--size=64k", "--exec_prerun=exit 3"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("exec_prerun 'exit 3' failed with exit status 3"), "{}", out.stderr);
    assert!(
        !dir.path().join("x.dat").exists() || std::fs::metadata(dir.path().join("x.dat")).unwrap().len() == 64 << 10
    );
}

/// The `falloc` and `ftruncate` engines against fio: per direction, the error, the bytes and
/// I/Os counted, and what is left of the file (size and allocated blocks).
#[test]
fn falloc_and_ftruncate_engines_like_fio() {
    use std::os::unix::fs::MetadataExt;
    let cases = [
        ("falloc", "read"),
        ("falloc", "write"),
        ("falloc", "trim"),
        ("falloc", "randread"),
        ("falloc", "randtrim"),
        ("ftruncate", "write"),
        ("ftruncate", "read"),
        ("ftruncate", "trim"),
    ];
    for (engine, rw) in cases {
        let mut seen = Vec::new();
        for fiox_run in [false, true] {
            let dir = scratch();
            let (e, r) = (format!("--ioengine={engine}"), format!("--rw={rw}"));
            let args = ["--output-format=json", "--name=j", "--filename=x", "--size=64k", "--bs=16k", &e, &r];
            let out = tool(fiox_run, dir.path(), &args);
            let v = json(&out);
            let j = &v["jobs"][0];
            let counts: Vec<(u64, u64)> = ["read", "write", "trim"]
                .iter()
                .map(|d| (j[d]["io_bytes"].as_u64().unwrap(), j[d]["total_ios"].as_u64().unwrap()))
                .collect();
            let meta = std::fs::metadata(dir.path().join("x")).unwrap();
            seen.push((out.code, j["error"].as_u64(), counts, meta.len(), meta.blocks()));
        }
        assert_eq!(seen[1], seen[0], "{engine} {rw}: fiox, then fio");
    }
}

/// `flow`: jobs sharing a `flow_id` keep their I/O counts in the ratio of their weights, as in
/// fio; a member that has finished holds nobody back.
#[test]
fn flow_keeps_jobs_in_proportion_like_fio() {
    // A thread spinning beside the jobs, as on a loaded CI machine: the jobs' threads start
    // and wake late by milliseconds, which must not skew their proportion.
    let busy = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let spinner = {
        let busy = busy.clone();
        std::thread::spawn(move || {
            while busy.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        })
    };
    // The spinner stops however the comparison ends (a failed assertion included).
    struct Stop(std::sync::Arc<std::sync::atomic::AtomicBool>);
    impl Drop for Stop {
        fn drop(&mut self) {
            self.0.store(false, std::sync::atomic::Ordering::Relaxed);
        }
    }
    let stop = Stop(busy);
    flow_pairs_keep_their_ratio();
    drop(stop);
    spinner.join().unwrap();
    let dir = scratch();
    let args = [
        "--output-format=json",
        "--name=short",
        "--filename=a.dat",
        "--size=256k",
        "--flow=1",
        "--name=long",
        "--filename=b.dat",
        "--size=4m",
        "--time_based",
        "--runtime=1",
        "--flow=1",
    ];
    let v = json(&fiox(dir.path(), &args));
    let long = &v["jobs"][1];
    assert!(long["job_runtime"].as_u64().unwrap() >= 990, "{long}");
    assert!(long["read"]["total_ios"].as_u64().unwrap() > 1000, "the long job goes on once the short one is done");
}

/// Jobs of flow 1 and 8, then 3 and 1, under fio and fiox: their I/O counts within 5% of the
/// weights' ratio.
fn flow_pairs_keep_their_ratio() {
    for (fa, fb) in [("1", "8"), ("3", "1")] {
        let want = fa.parse::<f64>().unwrap() / fb.parse::<f64>().unwrap();
        for fiox_run in [false, true] {
            let dir = scratch();
            let (a, b) = (format!("--flow={fa}"), format!("--flow={fb}"));
            let job = ["--size=4m", "--time_based", "--runtime=1"];
            let args = [
                &["--output-format=json", "--name=a", "--filename=a.dat", a.as_str()][..],
                &job,
                &["--name=b", "--filename=b.dat", b.as_str()],
                &job,
            ]
            .concat();
            let v = json(&tool(fiox_run, dir.path(), &args));
            let ios: Vec<f64> = (0..2).map(|j| v["jobs"][j]["read"]["total_ios"].as_f64().unwrap()).collect();
            let ratio = ios[0] / ios[1];
            // Both keep the ratio within 5%, on a loaded machine too: the members start
            // together and their runtimes end together (fiox drifted to 1:7.1 under CI load
            // when each member's clock started on its own).
            assert!((ratio / want - 1.0).abs() < 0.05, "fiox {fiox_run} flow {fa}:{fb}: {ios:?}");
        }
    }
}

/// The options of fio's built-in profiles (tiobench's `threads`, `block`, ...; act's `load`,
/// ...) are accepted in any job and change nothing there, as in fio: the same jobs, I/Os and
/// echoed job options.
#[test]
fn profile_options_do_nothing_outside_a_profile_like_fio() {
    let mut seen = Vec::new();
    for fiox_run in [false, true] {
        let dir = scratch();
        let job = dir.path().join("p.fio");
        std::fs::write(&job, "[a]\nioengine=null\nsize=1m\nnumruns=3\nblock=8k\ndir=/tmp\nthreads=4\nload=2\n")
            .unwrap();
        let v = json(&tool(fiox_run, dir.path(), &["--output-format=json", job.to_str().unwrap()]));
        let jobs = v["jobs"].as_array().unwrap();
        seen.push((jobs.len(), jobs[0]["read"]["total_ios"].as_u64(), jobs[0]["job options"].clone()));
    }
    assert_eq!(seen[1], seen[0], "fiox, then fio");
}

/// `file_service_type` and `openfiles`: the same order of files and blocks as fio 3.33 for the
/// deterministic types, and the same per-file totals for random choice (fio skips done files).
#[test]
fn file_service_types_visit_files_like_fio() {
    // (file index, block) of each read in a version 3 iolog; file names end in ".<index>".
    let reads = |path: &Path| -> Vec<(u32, u64)> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 5 && f[2] == "read")
                    .then(|| (f[1].rsplit('.').next().unwrap().parse().unwrap(), f[3].parse::<u64>().unwrap() / 4096))
            })
            .collect()
    };
    for (service, openfiles) in [
        ("roundrobin", "0"),
        ("roundrobin", "2"),
        ("roundrobin:2", "2"),
        ("sequential", "0"),
        ("random", "0"),
        ("random:2", "3"),
    ] {
        let dir = scratch();
        let mut got = Vec::new();
        for fiox_run in [false, true] {
            let log = if fiox_run { "--write_iolog=x.log" } else { "--write_iolog=f.log" };
            let args = ["--name=j", "--nrfiles=4", "--filesize=16k", "--bs=4k", "--rw=read", log, "--output=/dev/null"];
            let mut a = args.to_vec();
            let s = format!("--file_service_type={service}");
            let o = format!("--openfiles={openfiles}");
            a.extend([s.as_str(), o.as_str()]);
            let out = tool(fiox_run, dir.path(), &a);
            assert_eq!(out.code, 0, "{service}: {}", out.stderr);
            got.push(reads(&dir.path().join(if fiox_run { "x.log" } else { "f.log" })));
        }
        let (fio, fiox) = (&got[0], &got[1]);
        assert_eq!(fiox.len(), 16, "{service}: {fiox:?}");
        if service.starts_with("random") {
            let mut a = fio.clone();
            let mut b = fiox.clone();
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "{service} openfiles={openfiles}: each file gets each block once");
        } else {
            assert_eq!(fiox, fio, "{service} openfiles={openfiles}");
        }
    }
}

/// `fill_device`: a sequential write without a size fills the file system and ends without an
/// error, as in fio; a read job first fills it, then reads it all.
#[test]
fn fill_device_writes_until_the_file_system_is_full_like_fio() {
    let dir = scratch();
    let Some(fs) = crate::faults::local::SmallFs::mount(dir.path(), "8m") else { skip!("cannot mount a tmpfs") };
    for rw in ["write", "read"] {
        let mut got = Vec::new();
        for fiox_run in [false, true] {
            let file = fs.0.join("f");
            let _ = std::fs::remove_file(&file);
            let name = format!("--filename={}", file.display());
            let rw_arg = format!("--rw={rw}");
            let out = tool(
                fiox_run,
                dir.path(),
                &["--name=f", &name, "--fill_device=1", &rw_arg, "--bs=64k", "--output-format=json"],
            );
            assert_eq!(out.code, 0, "fiox {fiox_run} {rw}: {}", out.stderr);
            if fiox_run {
                assert!(out.stderr.is_empty(), "a full file system is the expected end: {}", out.stderr);
            }
            let j = &json(&out)["jobs"][0];
            assert_eq!(j["error"], 0);
            got.push((j[rw]["io_bytes"].as_u64().unwrap(), std::fs::metadata(&file).unwrap().len()));
        }
        assert_eq!(got[1], got[0], "{rw}: bytes moved and file size, fiox vs fio");
        assert_eq!(got[1].0, 8 << 20, "{rw}");
    }
}

/// `log_hist_coarseness`: each histogram-log column sums 2^N buckets, as many columns as fio's.
#[test]
fn hist_log_coarseness_like_fio() {
    let dir = scratch();
    for c in ["0", "2", "6"] {
        let mut widths = Vec::new();
        for (fiox_run, prefix) in [(false, "f"), (true, "x")] {
            let log = format!("--write_hist_log={prefix}{c}");
            let coarse = format!("--log_hist_coarseness={c}");
            let out = tool(
                fiox_run,
                dir.path(),
                &[
                    "--name=h",
                    "--ioengine=null",
                    "--size=1g",
                    "--time_based",
                    "--runtime=1",
                    &log,
                    "--log_hist_msec=100",
                    &coarse,
                    "--output=/dev/null",
                ],
            );
            assert_eq!(out.code, 0, "{}", out.stderr);
            let text = std::fs::read_to_string(dir.path().join(format!("{prefix}{c}_clat_hist.1.log"))).unwrap();
            let first = text.lines().next().unwrap_or_else(|| panic!("fiox {fiox_run}: an empty histogram log"));
            widths.push(first.split(", ").count());
        }
        assert_eq!(widths[1], widths[0], "coarseness {c}");
    }
}

/// `bs_is_seq_rand`: the read sizes serve sequential I/O and the write sizes random I/O.
#[test]
fn bs_is_seq_rand_picks_sizes_by_randomness_like_fio() {
    let dir = scratch();
    for (rw, want) in [("read", 4096), ("write", 4096), ("randread", 65536), ("randwrite", 65536)] {
        let rw_arg = format!("--rw={rw}");
        let out = tool(
            true,
            dir.path(),
            &[
                "--name=b",
                "--ioengine=null",
                "--size=1m",
                &rw_arg,
                "--bs=4k,64k",
                "--bs_is_seq_rand=1",
                "--output-format=json",
            ],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        let j = &json(&out)["jobs"][0];
        let d = if rw.contains("read") { "read" } else { "write" };
        assert_eq!(j[d]["io_bytes"], 1 << 20, "{rw}");
        assert_eq!(j[d]["total_ios"], (1 << 20) / want, "{rw}: blocks of {want}");
        // fio 3.33 uses the same sizes (its random map ends random jobs early: see README).
        let f = tool(
            false,
            dir.path(),
            &[
                "--name=b",
                "--ioengine=null",
                "--size=1m",
                &rw_arg,
                "--bs=4k,64k",
                "--bs_is_seq_rand=1",
                "--output-format=json",
            ],
        );
        let fj = &json(&f)["jobs"][0];
        let avg = fj[d]["io_bytes"].as_u64().unwrap() / fj[d]["total_ios"].as_u64().unwrap();
        assert!(avg > want / 2 && avg <= want, "fio {rw}: average block {avg}, list says {want}");
    }
}

/// `rate_ignore_thinktime`: by default the rate makes up for the time spent thinking (fio: 200
/// I/Os in 2 s at rate_iops=100 with 100 ms thinks every 10 I/Os); with 1 it does not (~105).
#[test]
fn rate_catches_up_after_thinktime_like_fio() {
    let dir = scratch();
    for fiox_run in [false, true] {
        let mut counts = Vec::new();
        for ignore in ["0", "1"] {
            let flag = format!("--rate_ignore_thinktime={ignore}");
            let args = [
                "--name=r",
                "--ioengine=null",
                "--size=100m",
                "--rate_iops=100",
                "--thinktime=100ms",
                "--thinktime_blocks=10",
                "--thinktime_blocks_type=issue",
                "--time_based",
                "--runtime=2",
                &flag,
                "--output-format=json",
            ];
            let out = tool(fiox_run, dir.path(), &args);
            assert_eq!(out.code, 0, "{}", out.stderr);
            counts.push(json(&out)["jobs"][0]["read"]["total_ios"].as_u64().unwrap());
        }
        assert!((180..=215).contains(&counts[0]), "fiox {fiox_run}: catch-up {counts:?}");
        assert!((90..=125).contains(&counts[1]), "fiox {fiox_run}: no catch-up {counts:?}");
    }
}

/// `block_error_percentiles`: fio's "block lifetime" section in the normal output, with the
/// same layout; fiox counts the blocks' last states (fio 3.33 prints zeros for writes and
/// crashes on trims).
#[test]
fn block_lifetime_section_like_fio() {
    let dir = scratch();
    let args = ["--name=b", "--ioengine=null", "--size=1m", "--rw=randwrite", "--block_error_percentiles=1"];
    let section = |text: &str| -> Vec<String> {
        let lines: Vec<&str> = text.lines().collect();
        let at = lines.iter().position(|l| l.contains("block lifetime percentiles")).expect("the section");
        lines[at..at + 2].iter().map(|l| l.split(':').next().unwrap().to_string()).collect()
    };
    let fio_out = tool(false, dir.path(), &args);
    let fiox_out = tool(true, dir.path(), &args);
    assert_eq!(fiox_out.code, 0, "{}", fiox_out.stderr);
    assert_eq!(section(&fiox_out.stdout), section(&fio_out.stdout));
    assert!(
        fiox_out
            .stdout
            .contains("states               : unwritten=0, trimmed=0, written=256, trim failure=0, write failure=0"),
        "{}",
        fiox_out.stdout
    );
}

/// `hugepage-size`: huge-page buffers are whole huge pages (a 4 KiB job's pool rounds up).
#[test]
fn hugepage_size_is_accepted_and_checked() {
    let dir = scratch();
    let out = tool(
        true,
        dir.path(),
        &["--name=h", "--ioengine=null", "--size=1m", "--hugepage-size=4m", "--output-format=json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = tool(true, dir.path(), &["--name=h", "--ioengine=null", "--size=1m", "--hugepage-size=q4"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("hugepage-size"), "{}", out.stderr);
}

/// Without `log_prio`, a log's last column is 1 for an I/O in the real-time class, whether the
/// job's own class (`prioclass=1`) or cmdprio's, and 0 otherwise, as fio 3.33 writes it.
#[test]
fn log_priority_column_marks_real_time_io_like_fio() {
    let dir = scratch();
    for (extra, want) in [
        (&["--ioengine=null", "--prioclass=1"][..], "1"),
        (&["--ioengine=null", "--prioclass=2"][..], "0"),
        (&["--ioengine=io_uring", "--cmdprio_percentage=100", "--cmdprio_class=2"][..], "0"),
        (&["--ioengine=io_uring", "--cmdprio_percentage=100", "--cmdprio_class=1"][..], "1"),
    ] {
        for (fiox_run, prefix) in [(false, "f"), (true, "x")] {
            let log = format!("--write_lat_log={prefix}");
            let mut args = vec!["--name=p", "--filename=p.dat", "--size=64k", &log, "--output=/dev/null"];
            args.extend(extra);
            let out = tool(fiox_run, dir.path(), &args);
            assert_eq!(out.code, 0, "{extra:?}: {}", out.stderr);
            let text = std::fs::read_to_string(dir.path().join(format!("{prefix}_lat.1.log"))).unwrap();
            assert!(!text.is_empty());
            assert!(text.lines().all(|l| l.rsplit(", ").next() == Some(want)), "fiox {fiox_run} {extra:?}: {text}");
        }
    }
}

/// `mem=mmaphuge:FILE` (fio maps the buffers from a hugetlbfs file) is refused by name, not
/// read as plain `mmaphuge` with the file ignored.
#[test]
fn mem_with_a_file_is_refused_not_ignored() {
    let dir = scratch();
    let out = tool(true, dir.path(), &["--name=m", "--ioengine=null", "--size=1m", "--mem=mmaphuge:/dev/hugepages/f"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("mem=mmaphuge:/dev/hugepages/f") && out.stderr.contains("not supported yet"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty());
}
