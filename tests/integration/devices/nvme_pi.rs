//! io_uring_cmd on NVMe namespaces with metadata and end-to-end protection information (fio
//! 3.42's `md_per_io_size`, `pi_act`, `pi_chk`, `apptag`, `apptag_mask`, `write_mode`, `deac`,
//! `readfua`/`writefua`), against fio 3.42, in one guest (`-d nvme-pi`): /dev/ng0n1 has 8 bytes
//! of type 1 PI per 512-byte LBA, ng0n2 16 bytes of metadata without PI, ng0n3 16 bytes with
//! the PI first, ng0n4 no metadata.
//!
//! fio 3.33 lacks these options, and the fio 3.42 built for this host dies in the guest's
//! emulated CPU ("Illegal instruction"), so the reference is fio 3.42 built for a generic
//! x86-64 CPU by scripts/fio-generic.sh (`$FIOX_FIO_GENERIC`, else its default path). Where it is
//! missing, fiox is checked against what that fio did, recorded below (2026-11-28, kernel
//! 6.1.0 in the guest, QEMU 7.2's emulated NVMe); where it is present, fio runs too and must
//! still do what was recorded, so a stale recording fails rather than passes.

use std::path::PathBuf;

use super::guest::{available, Batch, Results, Tool};

const PT: &[&str] = &["--ioengine=io_uring_cmd", "--cmd_type=nvme", "--output-format=normal,json", "--bs=4k"];
/// A fixed pattern, so that both tools write the same data and so the same guards.
const PATTERN: &str = "--buffer_pattern=0xdeadbeef";
const FULL: &str = "--pi_chk=GUARD,REFTAG,APPTAG";

/// fio 3.42 for a generic CPU, when it is built here.
fn fio_generic() -> Option<PathBuf> {
    let p = std::env::var_os("FIOX_FIO_GENERIC")
        .map_or_else(|| PathBuf::from("/var/tmp/fio-3.42-generic/fio-3.42/fio"), PathBuf::from);
    p.exists().then_some(p)
}

/// A run's outcome as [`Results::outcome`] gives it, without the `func=` text.
type Outcome = (i32, i64, [u64; 3], [u64; 3]);

/// The runs (name, file, options) whose outcome fio 3.42 and fiox must share, and fio 3.42's.
const RUNS: &[(&str, &str, &[&str], Outcome)] = &[
    // Writes with protection information fiox makes (pi_act=0), then reads the drive checks.
    (
        "pi-write",
        "n1",
        &["--rw=write", "--size=256k", "--pi_act=0", "--md_per_io_size=64", FULL, PATTERN],
        (0, 0, [0, 262144, 0], [0, 64, 0]),
    ),
    (
        "pi-read",
        "n1",
        &["--rw=read", "--size=256k", "--pi_act=0", "--md_per_io_size=64", FULL],
        (0, 0, [262144, 0, 0], [64, 0, 0]),
    ),
    ("pi-read-pract", "n1", &["--rw=read", "--size=256k", "--pi_act=1", FULL], (0, 0, [262144, 0, 0], [64, 0, 0])),
    (
        "pi-verify",
        "n1",
        &["--rw=randwrite", "--size=128k", "--pi_act=0", "--md_per_io_size=64", FULL, "--verify=crc32c"],
        (0, 0, [131072, 131072, 0], [32, 32, 0]),
    ),
    // The application tag under a mask: 0x12ff matches 0x1234 in the high byte only.
    (
        "apptag-masked",
        "n1",
        &[
            "--rw=read",
            "--size=64k",
            "--pi_act=0",
            "--md_per_io_size=64",
            "--pi_chk=APPTAG",
            "--apptag=0x12ff",
            "--apptag_mask=0xff00",
        ],
        (0, 0, [65536, 0, 0], [16, 0, 0]),
    ),
    // A wrong application tag, checked: the drive fails the read (sct 2, sc 0x83).
    (
        "apptag-wrong",
        "n1",
        &["--rw=read", "--size=64k", "--pi_act=0", "--md_per_io_size=64", "--pi_chk=APPTAG", "--apptag=0x1111"],
        (1, 643, [0, 0, 0], [1, 0, 0]),
    ),
    // The drive makes the PI (pi_act=1, no buffer: the PI is all the metadata); without REFTAG
    // in pi_chk the command's reference tag is 0, so a later read checking it fails at the
    // second I/O (sc 0x84).
    (
        "pract-write",
        "n1",
        &["--rw=write", "--size=64k", "--pi_act=1", "--pi_chk=GUARD,APPTAG", "--apptag=0x55aa", PATTERN],
        (0, 0, [0, 65536, 0], [0, 16, 0]),
    ),
    (
        "reftag-wrong",
        "n1",
        &["--rw=read", "--size=64k", "--pi_act=1", "--pi_chk=REFTAG"],
        (1, 644, [4096, 0, 0], [2, 0, 0]),
    ),
    // Metadata without PI, and PI first in 16 bytes of metadata.
    (
        "md-write",
        "n2",
        &["--rw=write", "--size=64k", "--md_per_io_size=128", PATTERN],
        (0, 0, [0, 65536, 0], [0, 16, 0]),
    ),
    (
        "pi-first-write",
        "n3",
        &["--rw=write", "--size=64k", "--pi_act=0", "--md_per_io_size=128", FULL, "--apptag=0x4321", PATTERN],
        (0, 0, [0, 65536, 0], [0, 16, 0]),
    ),
    (
        "pi-first-read",
        "n3",
        &["--rw=read", "--size=64k", "--pi_act=0", "--md_per_io_size=128", FULL, "--apptag=0x4321"],
        (0, 0, [65536, 0, 0], [16, 0, 0]),
    ),
    // Trims are Dataset Management deallocations, also on a namespace with metadata.
    ("trim", "n2", &["--rw=trim", "--size=64k", "--md_per_io_size=128"], (0, 0, [0, 0, 65536], [0, 0, 16])),
    // Write Zeroes with the deallocate bit, Verify, FUA; Write Uncorrectable, which QEMU's
    // drive does not have (sct 0, sc 1, do-not-retry: 0x4001).
    (
        "zeroes-deac",
        "n4",
        &["--rw=write", "--size=64k", "--write_mode=zeroes", "--deac=1"],
        (0, 0, [0, 65536, 0], [0, 16, 0]),
    ),
    ("verify-cmd", "n4", &["--rw=write", "--size=64k", "--write_mode=verify"], (0, 0, [0, 65536, 0], [0, 16, 0])),
    ("writefua", "n4", &["--rw=write", "--size=64k", "--writefua=1"], (0, 0, [0, 65536, 0], [0, 16, 0])),
    ("readfua", "n4", &["--rw=read", "--size=64k", "--readfua=1"], (0, 0, [65536, 0, 0], [16, 0, 0])),
    ("uncor", "n4", &["--rw=write", "--size=8k", "--write_mode=uncor"], (1, 16385, [0, 0, 0], [0, 1, 0])),
];

/// The error lines of the failed runs (fio 3.42's, recorded; [`Results::error_lines`]' form).
const ERROR_LINES: &[(&str, &[&str])] = &[
    (
        "apptag-wrong",
        &[
            "io_u error on file /dev/ng0n1: Device-specific error: read offset=0, buflen=4096",
            "io_uring_cmd: /dev/ng0n1: cq entry status (sct=0x02; sc=0x83)",
            "pid=N, err=643, func=io_u error, error=Unknown error 643",
        ],
    ),
    (
        "reftag-wrong",
        &[
            "io_u error on file /dev/ng0n1: Device-specific error: read offset=4096, buflen=4096",
            "io_uring_cmd: /dev/ng0n1: cq entry status (sct=0x02; sc=0x84)",
            "pid=N, err=644, func=io_u error, error=Unknown error 644",
        ],
    ),
    (
        "uncor",
        &[
            "io_u error on file /dev/ng0n4: Device-specific error: write offset=0, buflen=4096",
            "io_uring_cmd: /dev/ng0n4: cq entry status (sct=0x00; sc=0x01)",
            "pid=N, err=16385, func=io_u error, error=Unknown error 16385",
        ],
    ),
];

/// The metadata of LBAs 0, 1 and 8 after a write (hex), as fio 3.42 left it.
/// The guard is the same throughout (every block holds the same pattern); the reference tag is
/// the LBA, but 0 at LBA 8 after `pract-write` (no REFTAG: the second command's tag is 0).
const METADATA: &[(&str, &str)] = &[
    ("pi-write", "25f2123400000000 25f2123400000001 25f2123400000008"),
    ("pract-write", "25f255aa00000000 25f255aa00000001 25f255aa00000000"),
    (
        "pi-first-write",
        "25f24321000000000000000000000000 25f24321000000010000000000000000 25f24321000000080000000000000000",
    ),
];

/// A shell command printing the metadata of LBAs 0, 1 and 8 of namespace `n` (`ms` bytes
/// each) in hex, one line per LBA (in braces, so that a redirection takes all three).
fn dump_metadata(n: &str, ms: u32) -> String {
    let dev = format!("/dev/ng0{n}");
    let dumps: Vec<String> = [0, 1, 8]
        .iter()
        .map(|lba| {
            format!(
                "rm -f /tmp/pi.dat /tmp/pi.md; nvme read {dev} -s {lba} -c 0 -z 512 -y {ms} -d /tmp/pi.dat -M /tmp/pi.md >/dev/null 2>&1; xxd -p -c 64 /tmp/pi.md"
            )
        })
        .collect();
    format!("{{ {}; }}", dumps.join("; "))
}

fn file(n: &str) -> String {
    format!("--filename=/dev/ng0{n}")
}

/// Queues every run under `tools`, each with what it needs before (a fill) and after (the
/// metadata, the data read back).
fn queue(b: &mut Batch, tools: &[Tool]) {
    for &t in tools {
        for (name, n, opts, _) in RUNS {
            let mut before = String::new();
            if matches!(*name, "trim" | "zeroes-deac") {
                // Fill the blocks first, so the trim or the zeroes has something to clear.
                let md = if *n == "n2" { " --md_per_io_size=128" } else { "" };
                let fio = fio_generic().unwrap_or_else(crate::util::fiox_bin).display().to_string();
                before = format!(
                    "{fio} --name=fill {} --ioengine=io_uring_cmd --rw=write --bs=64k --size=64k --buffer_pattern=0xab{md} >/dev/null",
                    file(n)
                );
            }
            let name_file = file(n);
            let args: Vec<&str> = ["--name=p", name_file.as_str()]
                .iter()
                .copied()
                .chain(PT.iter().copied())
                .chain(opts.iter().copied())
                .collect();
            b.run(name, t, &before, &args);
            if METADATA.iter().any(|(m, _)| m == name) {
                let ms = if *n == "n1" { 8 } else { 16 };
                b.save(name, t, "md", &dump_metadata(n, ms));
            }
            if matches!(*name, "trim" | "zeroes-deac") {
                let dev = format!("/dev/nvme0{n}");
                b.save(
                    name,
                    t,
                    "zeros",
                    &format!(
                        "dd if={dev} iflag=direct bs=64k count=1 status=none | cmp - /dev/zero -n 65536 && echo zeros"
                    ),
                );
            }
        }
    }
}

#[test]
fn nvme_metadata_and_protection_information_match_fio_3_42() {
    if !available() {
        return;
    }
    let fio = fio_generic();
    let mut b = Batch::new("nvme-pi");
    let tools: &[Tool] = if let Some(f) = &fio {
        b.fio(f.clone());
        &[Tool::Fio, Tool::Fiox]
    } else {
        &[Tool::Fiox]
    };
    queue(&mut b, tools);
    // Refusals before any I/O: metadata without a buffer large enough, and a write mode in a
    // job that does not write.
    let fiox = crate::util::fiox_bin().display().to_string();
    let pt = PT.join(" ");
    b.shell(&format!("{fiox} --name=e --filename=/dev/ng0n2 {pt} --rw=write --size=64k; echo rc=$?"));
    b.shell(&format!(
        "{fiox} --name=e --filename=/dev/ng0n2 {pt} --rw=write --size=64k --md_per_io_size=64; echo rc=$?"
    ));
    b.shell(&format!(
        "{fiox} --name=e --filename=/dev/ng0n4 {pt} --rw=read --size=64k --write_mode=zeroes; echo rc=$?"
    ));
    let r = b.boot();
    check(&r, tools);
}

fn check(r: &Results, tools: &[Tool]) {
    for &t in tools {
        for (name, _, _, want) in RUNS {
            let (code, err, bytes, ios, _) = r.outcome(name, t);
            eprintln!("{name}: {t:?}: {:?}", (code, err, bytes, ios));
            let out = r.out(name, t);
            assert_eq!(
                (code, err, bytes, ios),
                *want,
                "{name}: {t:?} (exit status, error, bytes, I/Os): {}\n{}",
                out.stdout,
                out.stderr
            );
        }
        for (name, lines) in ERROR_LINES {
            eprintln!("{name}: {t:?}: {:?}", r.error_lines(name, t));
            assert_eq!(r.error_lines(name, t), *lines, "{name}: {t:?}: error lines");
        }
        for (name, md) in METADATA {
            let got = r.saved(name, t, "md");
            eprintln!("{name}: {t:?}: metadata {got}");
            assert_eq!(
                got.split_whitespace().collect::<Vec<_>>().join(" "),
                *md,
                "{name}: {t:?}: metadata of LBAs 0, 1, 8"
            );
        }
        for name in ["trim", "zeroes-deac"] {
            assert_eq!(
                r.saved(name, t, "zeros").trim(),
                "zeros",
                "{name}: {t:?}: the blocks did not read back as zeros"
            );
        }
    }
    if tools.len() == 2 {
        for (name, ..) in RUNS {
            let ordered = *name != "pi-verify";
            if r.outcome(name, Tool::Fio).0 == 0 {
                r.same(name, ordered);
            }
        }
    }
    let g = &r.guest;
    assert!(g.stderr.contains("/dev/ng0n2: md_per_io_size should be at least 128 bytes"), "{}", g.stderr);
    assert!(g.stderr.contains("'readwrite=|rw=' has no write"), "{}", g.stderr);
    assert_eq!(g.stdout.matches("rc=1").count(), 3, "{}", g.stdout);
}
