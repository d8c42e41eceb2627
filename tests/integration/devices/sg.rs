//! `ioengine=sg` (SCSI commands through SG_IO) against fio 3.33, in one guest with an emulated
//! virtio-scsi disk (/dev/sda, /dev/sg0) and, for failures, a scsi_debug disk with a range of
//! blocks that fail reads with a medium error.

use super::guest::{available, Batch, Tool};

/// Runs on a write-protected disk: a trim (UNMAP) and a write fail.
const PROTECTED: [(&str, &str); 2] = [("unmap-protected", "--rw=trim"), ("write-protected", "--rw=write")];

#[test]
fn scsi_generic_matches_fio() {
    if !available() {
        return;
    }
    let mut b = Batch::new("scsi");
    let base = ["--name=s", "--ioengine=sg", "--output-format=json"];
    // (name, options, whether the I/O order must match)
    let cases: &[(&str, &[&str], bool)] = &[
        ("read", &["--filename=/dev/sg0", "--rw=read", "--bs=4k", "--size=4m"], true),
        ("randread", &["--filename=/dev/sg0", "--rw=randread", "--bs=4k", "--size=4m"], false),
        ("write", &["--filename=/dev/sg0", "--rw=write", "--bs=64k", "--size=8m", "--writefua=1"], true),
        ("randwrite", &["--filename=/dev/sg0", "--rw=randwrite", "--bs=8k", "--size=4m"], false),
        ("randread-fua", &["--filename=/dev/sg0", "--rw=randread", "--bs=4k", "--size=2m", "--readfua=1"], false),
        ("write-verify", &["--filename=/dev/sg0", "--rw=write", "--bs=4k", "--size=4m", "--verify=crc32c"], true),
        (
            "write-and-verify",
            &["--filename=/dev/sg0", "--rw=write", "--bs=16k", "--size=2m", "--sg_write_mode=write_and_verify"],
            true,
        ),
        (
            "write-same",
            &["--filename=/dev/sg0", "--rw=write", "--bs=16k", "--size=2m", "--sg_write_mode=write_same"],
            true,
        ),
        ("trim", &["--filename=/dev/sg0", "--rw=randtrim", "--bs=8k", "--size=2m"], false),
        ("block-device", &["--filename=/dev/sda", "--rw=randwrite", "--bs=4k", "--size=2m", "--verify=md5"], false),
    ];
    for (name, opts, _) in cases {
        b.both(name, "", &[&base[..], opts].concat());
    }
    // A failing command: scsi_debug fails reads of blocks 4096..4103 with MEDIUM ERROR.
    b.shell("modprobe scsi_debug dev_size_mb=8 delay=0 opts=2 medium_error_start=4096 medium_error_count=8 && guest-coldplug");
    b.shell("for d in /sys/class/scsi_generic/*; do grep -q scsi_debug $d/device/model && ln -s /dev/$(basename $d) /dev/sgdebug; done; ls -l /dev/sgdebug");
    let bad =
        ["--name=bad", "--ioengine=sg", "--filename=/dev/sgdebug", "--rw=read", "--bs=4k", "--offset=2m", "--size=64k"];
    b.both("medium-error", "", &bad);
    // A failing unmap: the same disk write-protected (with thin provisioning, so that it
    // takes UNMAP at all) fails trims and writes with DATA PROTECT.
    b.shell("rmmod scsi_debug && rm /dev/sgdebug && modprobe scsi_debug dev_size_mb=8 delay=0 lbpu=1 wp=1 && guest-coldplug");
    b.shell("for d in /sys/class/scsi_generic/*; do grep -q scsi_debug $d/device/model && ln -s /dev/$(basename $d) /dev/sgdebug; done; ls -l /dev/sgdebug");
    let protected = ["--name=p", "--ioengine=sg", "--filename=/dev/sgdebug", "--bs=4k", "--size=64k"];
    for (name, rw) in PROTECTED {
        b.both(name, "", &[&protected[..], &[rw, "--output-format=normal,json"]].concat());
    }
    let r = b.boot();
    for (name, _, ordered) in cases {
        r.same(name, *ordered);
    }
    let (f, x) = (r.out("medium-error", Tool::Fio), r.out("medium-error", Tool::Fiox));
    eprintln!("fio: {} {}\nfiox: {} {}", f.stdout, f.stderr, x.stdout, x.stderr);
    assert!(f.code != 0 && x.code != 0, "both fail: fio {}, fiox {}", f.code, x.code);
    // The same SCSI status, sense data and command as fio reports.
    let sense = |s: &str| s.lines().find_map(|l| l.find("SG Driver Status").map(|i| l[i..].trim_end().to_string()));
    let fs = sense(&f.stderr).unwrap_or_else(|| panic!("fio printed no sense data: {}", f.stderr));
    assert!(fs.contains("Sense Data (18 bytes): f0 00 03"), "a medium error: {fs}");
    assert_eq!(sense(&x.stderr).as_deref(), Some(fs.as_str()), "fiox: {}", x.stderr);
    assert!(x.stderr.contains("io_u error on file /dev/sgdebug: Input/output error: read offset=2097152, buflen=4096"));
    for out in [&f, &x] {
        assert!(out.stdout.contains("err= 5 ("), "{}", out.stdout);
    }
    assert_eq!(r.error_lines("medium-error", Tool::Fiox), r.error_lines("medium-error", Tool::Fio));
    for (name, _) in PROTECTED {
        eprintln!("{name}: fio: {:?}\nfiox: {:?}", r.error_lines(name, Tool::Fio), r.error_lines(name, Tool::Fiox));
    }
    for (name, _) in PROTECTED {
        assert_ne!(r.same_outcome(name, true), 0, "{name}: failed");
        assert_eq!(r.error_lines(name, Tool::Fiox), r.error_lines(name, Tool::Fio), "{name}: error lines (fiox, fio)");
    }
}
