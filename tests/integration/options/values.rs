//! Values as fio 3.33 reads them, beyond the trailing characters of `conformance.rs`: how a
//! percentage and a size combine in `size` and `offset` (within one value and over several
//! lines), what an unreadable first piece leaves (`verify_backlog=:4`), and `startdelay`'s
//! random range. Each reading is compared with fio's run of the same job.

use crate::util::{fio, fiox, json, scratch, tool};

/// `(exit status, read bytes)` of a read job on a 1 MiB file with `args` added, under fio
/// (first) and fiox.
fn read_bytes(dir: &std::path::Path, args: &[&str]) -> [(i32, i64); 2] {
    let f = dir.join("f.dat");
    if !f.exists() {
        std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    }
    let all = [&["--name=a", "--filename=f.dat", "--output-format=json"][..], args].concat();
    [fio(dir, &all), fiox(dir, &all)].map(|o| match o.code {
        0 => {
            assert_eq!(o.stderr, "", "{args:?}: a run's stderr stays empty");
            (0, json(&o)["jobs"][0]["read"]["io_bytes"].as_i64().unwrap())
        }
        code => (code.min(1), -1),
    })
}

#[test]
fn percentages_and_sizes_combine_as_fio_reads_them() {
    let dir = scratch();
    let cases: [&[&str]; 20] = [
        &["--size=4k:20%"],
        // A scaled size below a block moves nothing; the size it scales is what must hold one.
        &["--size=20%:4k"],
        &["--size=20%:2k"],
        &["--size=50%:12k"],
        &["--size=20%:4k", "--rw=randread"],
        &["--size=20%:4k", "--time_based", "--runtime=1"],
        &["--size=20%", "--size=4k"],
        &["--size=20%:64k"],
        &["--size=50%:512k"],
        &["--size=50%:2m"],
        &["--size=20%x"],
        &["--size=20%)"],
        &["--size=20%", "--size=64k"],
        &["--size=64k", "--size=20%"],
        &["--size=50%", "--size=64k", "--size=256k"],
        &["--offset=20%:64k"],
        &["--offset=64k:50%:128k"],
        &["--offset=50%", "--offset=64k"],
        &["--offset=64k", "--offset=50%"],
        &["--io_size=20%", "--io_size=64k"],
    ];
    for args in cases {
        let [by_fio, by_fiox] = read_bytes(dir.path(), args);
        assert_eq!(by_fiox, by_fio, "{args:?}: (exit status, bytes read), fiox then fio");
    }
    // fio needs a size for a file-less engine; a percentage read last leaves it none.
    for line in ["--size=4k:20%", "--size=20%"] {
        let args = ["--name=a", "--ioengine=null", line];
        let (a, x) = (fio(dir.path(), &args), fiox(dir.path(), &args));
        assert_eq!((x.code.min(1), a.code.min(1)), (1, 1), "{line}: {}", x.stderr);
        assert!(x.stderr.contains("needs size="), "{line}: {}", x.stderr);
    }
    let out = fiox(dir.path(), &["--parse-only", "--name=a", "--ioengine=null", "--size=20%:64k"]);
    assert!(out.stdout.contains("size=20%:64k: '20%:64k' read as 13107, 20% of 65536"), "{}", out.stdout);
    // A null job too: fio accepts it and moves 0 bytes; --parse-only says how it is read.
    let args = ["--name=a", "--ioengine=null", "--size=20%:4k", "--output-format=json"];
    for o in [fio(dir.path(), &args), fiox(dir.path(), &args)] {
        assert_eq!((o.code, o.stderr.as_str()), (0, ""));
        assert_eq!(json(&o)["jobs"][0]["read"]["io_bytes"].as_i64(), Some(0));
    }
    let out = fiox(dir.path(), &["--parse-only", "--name=a", "--ioengine=null", "--size=20%:4k"]);
    assert!(out.stdout.contains("read as 819, 20% of 4096 (the block size is checked against 4096"), "{}", out.stdout);
}

/// The order of writes and verifying reads a `verify_backlog` value gives, from a write log.
fn backlog_pattern(binary_is_fiox: bool, dir: &std::path::Path, values: &[&str]) -> String {
    let log = dir.join(format!("vb-{binary_is_fiox}.log"));
    // fio appends to a log that exists.
    let _ = std::fs::remove_file(&log);
    let mut args = vec!["--name=v", "--filename=vb.dat", "--rw=write", "--bs=4k", "--size=64k", "--verify=crc32c"];
    let backlog: Vec<String> = values.iter().map(|v| format!("--verify_backlog={v}")).collect();
    let l = format!("--write_iolog={}", log.display());
    args.extend(backlog.iter().map(String::as_str));
    args.push(&l);
    let out = tool(binary_is_fiox, dir, &args);
    assert_eq!(out.code, 0, "{values:?}: {}", out.stderr);
    let text = std::fs::read_to_string(&log).unwrap();
    text.lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|w| *w == "read" || *w == "write")
        .map(|w| &w[..1])
        .collect()
}

#[test]
fn an_unreadable_first_piece_leaves_the_option_as_it_was() {
    let dir = scratch();
    for values in [&[":3"][..], &["junk:3"], &["3:5"], &["5:"], &["3-5"], &["8", ":3"], &["8", "junk:3"]] {
        let (a, x) = (backlog_pattern(false, dir.path(), values), backlog_pattern(true, dir.path(), values));
        assert_eq!(x, a, "verify_backlog={values:?}: writes and reads, fiox then fio");
    }
    // number_ios keeps an earlier line's value too.
    let args =
        ["--name=a", "--ioengine=null", "--size=64k", "--number_ios=3", "--number_ios=junk:5", "--output-format=json"];
    let ios = |o: crate::util::Out| json(&o)["jobs"][0]["read"]["total_ios"].as_i64();
    assert_eq!(ios(fiox(dir.path(), &args)), ios(fio(dir.path(), &args)));
    // Both accept the values under --parse-only; fiox names what it read.
    for v in ["--verify_backlog=:4", "--trim_backlog=:4", "--trim_backlog=junk:4"] {
        let args = ["--parse-only", "--name=p", "--ioengine=null", "--size=1m", v];
        let (a, x) = (fio(dir.path(), &args), fiox(dir.path(), &args));
        assert_eq!((x.code, a.code), (0, 0), "{v}: {}", x.stderr);
        assert!(x.stdout.contains("as it was: its first value is unreadable"), "{v}: {}", x.stdout);
    }
}

/// Milliseconds from before the launch to the first I/O of each clone, from latency logs
/// with Unix times.
fn start_delays_ms(binary_is_fiox: bool, dir: &std::path::Path, extra: &[&str]) -> Vec<i64> {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with("sd_") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let base = ["--name=a", "--ioengine=null", "--size=4k", "--write_lat_log=sd", "--log_unix_epoch=1"];
    let before = now();
    let out = tool(binary_is_fiox, dir, &[&base[..], extra].concat());
    assert_eq!(out.code, 0, "{extra:?}: {}", out.stderr);
    let mut logs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sd_lat."))
        .collect();
    logs.sort();
    let first = |n: &String| std::fs::read_to_string(dir.join(n)).unwrap().split(',').next().unwrap().parse::<i64>();
    logs.iter().map(|n| first(n).unwrap() - before).collect()
}

#[test]
fn startdelay_ranges_wait_a_seeded_random_time_in_the_range() {
    let dir = scratch();
    // fio's own draws (docs/fio-observed/values.md) come from its generator; fiox draws
    // its own, in the same range, repeated under the same seed.
    let once = start_delays_ms(true, dir.path(), &["--startdelay=0:2", "--randseed=7", "--numjobs=3"]);
    let again = start_delays_ms(true, dir.path(), &["--startdelay=0:2", "--randseed=7", "--numjobs=3"]);
    assert_eq!(once.len(), 3);
    for (a, b) in once.iter().zip(&again) {
        assert!((0..2_600).contains(a), "{once:?}");
        assert!((a - b).abs() < 300, "the same seed waits the same time: {once:?} then {again:?}");
    }
    assert!(once.iter().any(|d| (d - once[0]).abs() > 20), "clones draw apart: {once:?}");
    let shifted = start_delays_ms(true, dir.path(), &["--startdelay=1:2", "--randseed=7"]);
    assert!((1_000..2_600).contains(&shifted[0]), "{shifted:?}");
    // The spellings both accept, and the reversed range fio waits for ever on, refused.
    for v in ["1:3", "1-3", "1,3", ":3", "1:", "1s:3s", "500ms:2", "1:3:5", "2x:3"] {
        let o = format!("--startdelay={v}");
        let args = ["--parse-only", "--name=p", "--ioengine=null", "--size=1m", o.as_str()];
        let (a, x) = (fio(dir.path(), &args), fiox(dir.path(), &args));
        assert_eq!((x.code, a.code), (0, 0), "{v}: {}", x.stderr);
    }
    let out = fiox(dir.path(), &["--parse-only", "--name=p", "--ioengine=null", "--size=1m", "--startdelay=3:1"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("startdelay") && out.stderr.contains("above its high end"), "{}", out.stderr);
    let out = fiox(dir.path(), &["--parse-only", "--name=p", "--ioengine=null", "--size=1m", "--startdelay=1s:3s"]);
    assert!(out.stdout.contains("'1s:3s' read as a random time from 1 us to 3000000 us"), "{}", out.stdout);
}

#[test]
fn per_direction_values_split_as_fio_splits_them() {
    let dir = scratch();
    // The job's header line shows the block sizes per direction.
    for v in [
        "bs=,8k",
        "bs=4k,",
        "bs=4k,8k,16k",
        "bs=4K,8kib,0x1000",
        "bs=4KiB",
        "bs=1k,2k,3k,4k",
        "bs=1k,2k,3k,junk",
        "bs=8k,,",
        "bs=,,8k",
        "bs=,",
        "bs=4k:8k",
        "bs=4k-8k",
        "bs=4k:8k:16k:32k",
        "bs=1k-2k-3k",
        "bs=4k,8k:16k",
        "bs=4k-8k,16k",
        "bs=4k-8k:16k",
        "bs=:8k",
        "bs=junk,8k",
        "bs=4k,junk,8k",
        "bs=4k::8k",
        "bs=4kq,8k)",
        "bs=4k:,8k",
        "bs=8k:,16k",
        "bs=8k,,16k",
        "bs=4k,:8k",
        "bs=4k:8k-16k",
        "bs=8k-,16k",
        "bs=8k,16k,",
        "bs=8k-",
        "bsrange=1k",
        "bsrange=4k,1k-2k",
        "bsrange=1k,,2k-4k",
        "bsrange=1k-2k,4k",
        "bsrange=1k,2k",
        "bsrange=,1k",
        "bsrange=1k)",
        "bsrange=1k-4k,2k:8k",
        "bsrange=1k-4k,,2k-8k",
        "bsrange=,1k-2k",
        "bsrange=4k-1k",
        "bsrange=8k-1k,4k-2k",
        "bsrange=1K-4KiB",
        "bsrange=1k:",
        "bsrange=:4k",
    ] {
        let o = format!("--{v}");
        let args = ["--name=a", "--ioengine=null", "--size=1m", "--rw=randrw", o.as_str()];
        let (a, x) = (fio(dir.path(), &args), fiox(dir.path(), &args));
        assert_eq!(x.code.min(1), a.code.min(1), "{v}: {}", x.stderr);
        assert_eq!(x.stdout.lines().next(), a.stdout.lines().next(), "{v}");
        if x.code == 0 {
            assert_eq!(x.stderr, "", "{v}");
        }
    }
    // A range with one bound is refused, naming the option, the value, the file and the line.
    let jf = dir.path().join("range.fio");
    std::fs::write(&jf, "[a]\nioengine=null\nsize=1m\nbsrange=1k\n").unwrap();
    let x = fiox(dir.path(), &[jf.to_str().unwrap()]);
    assert_eq!((x.code, x.stdout.as_str()), (1, ""), "{}", x.stderr);
    for part in ["'1k'", "'bsrange'", "range.fio", "line 4", "both bounds"] {
        assert!(x.stderr.contains(part), "no {part} in {}", x.stderr);
    }
    // Where each direction's rate lands: both tools' --parse-only accept the spellings, and
    // fiox names the separator it read.
    for v in ["rate=1m:2m", "rate_iops=100-200", "rate_iops=100,200,300,400", "ba=1k:2k", "rate_min=1k,,"] {
        let o = format!("--{v}");
        let args = ["--parse-only", "--name=p", "--ioengine=null", "--size=1m", o.as_str()];
        let (a, x) = (fio(dir.path(), &args), fiox(dir.path(), &args));
        assert_eq!((x.code, a.code), (0, 0), "{v}: {}", x.stderr);
    }
    let out = fiox(dir.path(), &["--parse-only", "--name=p", "--ioengine=null", "--size=1m", "--rate=1m:2m"]);
    assert!(out.stdout.contains("':' separates read, write and trim values as ',' does"), "{}", out.stdout);
}

#[test]
fn flags_choices_and_lists_read_as_fio_reads_them() {
    let dir = scratch();
    // (line, what both must do): the job file runs or is refused under both tools.
    for line in [
        "thread=2",
        "exitall=2",
        "time_based=0x0",
        "time_based=",
        "thread=",
        "direct=",
        "direct=2",
        "rw=randread:",
        "rw=read,write",
        "percentile_list=50:99,5",
        "percentile_list=50:99.5x",
        "rwmixread=150",
    ] {
        let jf = dir.path().join("v.fio");
        std::fs::write(&jf, format!("[a]\nioengine=null\nsize=64k\n{line}\n")).unwrap();
        let args = [jf.to_str().unwrap(), "--output-format=json"];
        let (a, x) = (fio(dir.path(), &args), fiox(dir.path(), &args));
        assert_eq!(x.code.min(1), a.code.min(1), "{line}: {}", x.stderr);
        if x.code == 0 {
            assert_eq!(x.stderr, "", "{line}");
            let (ja, jx) = (json(&a), json(&x));
            let ios = |j: &serde_json::Value| j["jobs"][0]["read"]["total_ios"].as_i64();
            assert_eq!(ios(&jx), ios(&ja), "{line}");
        }
    }
    // thread=2 runs threads, as in fio.
    let out = fiox(dir.path(), &["--name=a", "--ioengine=null", "--size=64k", "--thread=2"]);
    assert!(out.stdout.contains("Starting 1 thread"), "{}", out.stdout);
}

/// `(exit status, bytes written, sizes of the files laid out)` of a write job in a directory of
/// its own with `args` added, under fio (first) and fiox.
fn write_job(dir: &std::path::Path, args: &[&str]) -> [(i32, i64, Vec<u64>); 2] {
    [("fio", true), ("fiox", false)].map(|(name, by_fio)| {
        let sub = dir.join(name);
        let _ = std::fs::remove_dir_all(&sub);
        std::fs::create_dir_all(&sub).unwrap();
        let all = [&["--name=a", "--rw=write", "--output-format=json"][..], args].concat();
        let o = if by_fio { fio(&sub, &all) } else { fiox(&sub, &all) };
        let mut sizes: Vec<u64> =
            std::fs::read_dir(&sub).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).collect();
        sizes.sort();
        match o.code {
            0 => (0, json(&o)["jobs"][0]["write"]["io_bytes"].as_i64().unwrap(), sizes),
            code => (code.min(1), -1, sizes),
        }
    })
}

#[test]
fn a_file_size_range_missing_its_high_end_is_one_size() {
    let dir = scratch();
    let cases: [&[&str]; 5] = [
        &["--filesize=1k-", "--bs=512"],
        &["--filesize=6k-", "--bs=1k", "--nrfiles=2"],
        &["--filesize=1k-0", "--bs=512"],
        &["--filesize=2k-", "--size=64k", "--bs=1k"],
        // A file below the block size: fio says so and fails the job, moving nothing.
        &["--filesize=1k-", "--bs=4k"],
    ];
    for args in cases {
        let [by_fio, by_fiox] = write_job(dir.path(), args);
        assert_eq!(by_fiox, by_fio, "{args:?}: (exit status, bytes written, file sizes), fiox then fio");
    }
}

#[test]
fn a_region_needs_to_hold_only_the_smallest_block() {
    let dir = scratch();
    let cases: [&[&str]; 8] = [
        &["--size=6k", "--bsrange=4k-8k"],
        &["--size=6k", "--bsrange=4k-8k", "--rw=randread"],
        &["--size=6k", "--bssplit=4k/50:8k/50"],
        &["--size=6k", "--bsrange=2k-8k"],
        &["--size=12k", "--bsrange=4k-16k"],
        // Below the smallest block, fio refuses the job.
        &["--size=3k", "--bsrange=4k-8k"],
        &["--size=6k", "--bs=8k"],
        &["--size=6k", "--bssplit=8k/50:16k/50"],
    ];
    for args in cases {
        let [by_fio, by_fiox] = read_bytes(dir.path(), args);
        assert_eq!(by_fiox, by_fio, "{args:?}: (exit status, bytes read), fiox then fio");
    }
    let [by_fio, by_fiox] = write_job(dir.path(), &["--filesize=6k", "--bsrange=4k-8k"]);
    assert_eq!(by_fiox, by_fio, "filesize=6k: (exit status, bytes written, file sizes), fiox then fio");
}
