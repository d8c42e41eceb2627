//! `ioengine=io_uring_cmd` (NVMe passthrough on /dev/ngXnY) against fio 3.33, in one guest with
//! an emulated NVMe controller: namespace 1 zoned (ZNS), namespace 2 conventional.

use super::guest::{available, Batch, Tool};

const CONV: &str = "--filename=/dev/ng0n2";
const PT: &str = "--ioengine=io_uring_cmd";

#[test]
fn nvme_passthrough_matches_fio() {
    if !available() {
        return;
    }
    let mut b = Batch::new("nvme-zns");
    let json = "--output-format=json";
    // (name, options, whether the I/O order must match: sequential jobs issue in order).
    // Depths stay low: fio 3.33 itself fails passthrough I/O with EINTR at higher depths on
    // this emulated drive under the 6.1 kernel (seen at 4 and 8).
    let cases: &[(&str, &[&str], bool)] = &[
        ("read", &["--rw=read", "--bs=4k", "--size=4m", "--iodepth=2"], true),
        ("write", &["--rw=write", "--bs=64k", "--size=8m"], true),
        ("randread", &["--rw=randread", "--bs=4k", "--size=4m"], false),
        ("randwrite-fixed", &["--rw=randwrite", "--bs=8k", "--size=4m", "--fixedbufs=1", "--registerfiles=1"], false),
        (
            "randread-sqpoll-vec",
            &["--rw=randread", "--bs=16k", "--size=4m", "--sqthread_poll=1", "--nonvectored=0"],
            false,
        ),
        ("read-hipri", &["--rw=read", "--bs=4k", "--size=2m", "--hipri=1"], true),
        ("write-verify", &["--rw=write", "--bs=4k", "--size=4m", "--verify=crc32c"], true),
        ("randwrite-verify", &["--rw=randwrite", "--bs=4k", "--size=2m", "--verify=md5"], false),
    ];
    for (name, opts, _) in cases {
        let mut args = vec!["--name=c", CONV, PT, "--cmd_type=nvme", json];
        args.extend_from_slice(opts);
        b.both(name, "", &args);
    }
    // Options that go into the submission entry, which Linux 6.1 refuses for passthrough
    // commands (EINVAL): `nowait` (unless on a registered buffer) and a command priority.
    // `force_async` only changes how the kernel runs the command.
    let flagged: &[(&str, &[&str])] =
        &[("nowait", &["--nowait=1"]), ("cmdprio", &["--cmdprio_percentage=100", "--cmdprio_class=2"])];
    for (name, opts) in flagged {
        let base = ["--name=c", CONV, PT, "--cmd_type=nvme", "--output-format=normal,json", "--rw=read", "--bs=4k"];
        b.both(name, "", &[&base[..], &["--size=1m"], opts].concat());
    }
    let fine: &[(&str, &[&str])] = &[
        ("force-async", &["--rw=read", "--bs=4k", "--size=1m", "--force_async=2"]),
        ("nowait-fixedbufs", &["--rw=write", "--bs=4k", "--size=1m", "--nowait=1", "--fixedbufs=1"]),
    ];
    for (name, opts) in fine {
        b.both(name, "", &[&["--name=c", CONV, PT, "--cmd_type=nvme", json][..], opts].concat());
    }
    // The zoned namespace, written sequentially from a reset zone (no zonemode: plain I/O).
    let reset = "blkzone reset /dev/nvme0n1";
    b.both(
        "zns-write",
        reset,
        &["--name=z", "--filename=/dev/ng0n1", PT, json, "--rw=write", "--bs=64k", "--size=16m"],
    );
    b.both("zns-read", "", &["--name=z", "--filename=/dev/ng0n1", PT, json, "--rw=randread", "--bs=4k", "--size=4m"]);
    // zonemode=zbd through the passthrough node: zones reported and reset through the
    // namespace's block device; the second run finds both zones full and resets them.
    let zbd = ["--name=z", "--filename=/dev/ng0n1", PT, "--output-format=normal,json", "--zonemode=zbd"];
    let zbd_cases = ["zbd-write", "zbd-overwrite"];
    for (name, before) in zbd_cases.iter().zip([reset, ""]) {
        b.both(name, before, &[&zbd[..], &["--rw=write", "--bs=64k", "--size=32M"]].concat());
    }
    // Trims are Dataset Management deallocations. fio 3.33's io_uring_cmd issues no trims at
    // all, so fiox's are compared with fio's libaio trims of the same namespace's block device;
    // then what was trimmed must read back as zeros (the emulated drive deallocates to zeros).
    let trim = ["--name=t", json, "--rw=randtrim", "--bs=8k", "--size=2m"];
    b.shell("fio --name=fill --filename=/dev/nvme0n2 --rw=write --bs=1m --size=2m --direct=1 --buffer_pattern=0xab >/dev/null");
    b.run(
        "trim",
        Tool::Fio,
        "",
        &[&trim[..], &["--filename=/dev/nvme0n2", "--ioengine=libaio", "--direct=1"]].concat(),
    );
    b.shell("fio --name=fill --filename=/dev/nvme0n2 --rw=write --bs=1m --size=2m --direct=1 --buffer_pattern=0xab >/dev/null");
    b.run("trim", Tool::Fiox, "", &[&trim[..], &[CONV, PT]].concat());
    b.shell("dd if=/dev/nvme0n2 iflag=direct bs=1M count=2 status=none | cmp - /dev/zero -n 2097152 && echo trimmed-to-zeros");
    // Bad input: a block size below the LBA size, and direct=1 on a character device.
    let fiox = crate::util::fiox_bin().display().to_string();
    b.shell(&format!("{fiox} --name=e {CONV} {PT} --rw=read --bs=256 --size=1m; echo rc=$?"));
    b.shell(&format!("{fiox} --name=e {CONV} {PT} --rw=read --direct=1 --size=1m; echo rc=$?"));
    let r = b.boot();
    for (name, _, ordered) in cases {
        r.same(name, *ordered);
    }
    for (name, _) in fine {
        r.same(name, true);
    }
    for (name, _) in flagged {
        assert_eq!(r.same_outcome(name, true), libc::EINVAL as i64, "{name}");
        // The same lines about the error as fio's (the failed read, then the job's error),
        // and no report of the read direction, which moved nothing.
        let lines = r.error_lines(name, Tool::Fiox);
        assert_eq!(lines, r.error_lines(name, Tool::Fio), "{name}: error lines (fiox, fio)");
        assert_eq!(
            lines,
            [
                "io_u error on file /dev/ng0n2: Invalid argument: read offset=0, buflen=4096",
                "pid=N, err=22, func=io_u error, error=Invalid argument"
            ],
            "{name}"
        );
        for t in [Tool::Fio, Tool::Fiox] {
            let out = r.out(name, t).stdout;
            assert!(!out.contains("  read: ") && !out.contains("READ: bw="), "{name}: {t:?}: {out}");
        }
    }
    r.same("zns-write", true);
    r.same("zns-read", false);
    r.same("trim", false);
    for name in zbd_cases {
        assert_eq!(r.same_outcome(name, true), 0, "{name}");
    }
    for t in [Tool::Fio, Tool::Fiox] {
        assert!(
            r.out("zbd-overwrite", t).stdout.contains("; 2 zone resets"),
            "{t:?}: {}",
            r.out("zbd-overwrite", t).stdout
        );
    }
    let g = &r.guest;
    assert!(
        g.stdout.contains("trimmed-to-zeros"),
        "trimmed blocks did not read back as zeros: {}\n{}",
        g.stdout,
        g.stderr
    );
    assert!(
        g.stderr.contains("256 is not a multiple of the logical block size of '/dev/ng0n2' (512 bytes)"),
        "{}",
        g.stderr
    );
    assert!(g.stderr.contains("cannot be opened with O_DIRECT"), "{}", g.stderr);
    assert_eq!(g.stdout.matches("rc=1").count(), 2, "{}", g.stdout);
}
