//! fio 3.42's `sprandom` (SSD preconditioning): the blocks written, in order, and the totals,
//! against fio 3.42 itself where it is built and always against what it did, recorded below
//! (2026-11-27, fio 3.42 built from ../shared/fio-src, psync on a new file in a scratch
//! directory of ext4, the commands being the ones each test runs).

use std::path::Path;

use super::fio342::fio342_run;
use crate::util::{fiox, json, scratch, Out};

/// A job's written offsets as its `write_iolog` lists them, in order.
fn written(log: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(log).expect("the iolog");
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[2] == "write").then(|| f[3].parse().expect("an offset"))
        })
        .collect()
}

/// FNV-1a over the offsets: a sequence's fingerprint.
fn fingerprint(offsets: &[u64]) -> u64 {
    offsets.iter().fold(0xcbf2_9ce4_8422_2325, |h, &o| (h ^ o).wrapping_mul(0x0100_0000_01b3))
}

/// What fio 3.42 wrote: the job's options, the number of writes (one block each), the first
/// offsets and the fingerprint of all of them.
struct Recorded {
    options: &'static [&'static str],
    bs: u64,
    writes: usize,
    first: [u64; 4],
    fingerprint: u64,
}

const RECORDED: &[Recorded] = &[
    // The defaults: 100 regions of 11 writes, plus the region after the last; 1111 writes.
    Recorded {
        options: &["--size=4m"],
        bs: 4096,
        writes: 1111,
        first: [2899968, 401408, 1249280, 3457024],
        fingerprint: 0x28a8_2071_80d7_8367,
    },
    // With a cache size, each region's rewrites come after its new blocks; the LFSR runs out
    // in region 9, whose rewrites are still written.
    Recorded {
        options: &["--size=3m", "--spr_num_regions=10", "--randseed=11", "--spr_cs=4096"],
        bs: 4096,
        writes: 850,
        first: [1327104, 925696, 200704, 2195456],
        fingerprint: 0xe004_dc38_e2a0_ec2d,
    },
    // Capped at the physical size: 333 blocks of 8 KiB for 2 MiB at 30% over-provisioning.
    Recorded {
        options: &["--size=2m", "--bs=8k", "--spr_op=0.3", "--spr_num_regions=37", "--randseed=7"],
        bs: 8192,
        writes: 333,
        first: [1204224, 1589248, 925696, 1146880],
        fingerprint: 0x2770_ace1_f661_b42f,
    },
    // A draw equal to a region's share picks the block (region 3's block 1846 here).
    Recorded {
        options: &["--size=1m", "--bs=512", "--spr_op=0.5", "--spr_num_regions=7", "--randseed=3"],
        bs: 512,
        writes: 3072,
        first: [546304, 874496, 458240, 1029120],
        fingerprint: 0xdfe6_6369_8978_a525,
    },
    // Op 5%, 50 regions.
    Recorded {
        options: &["--size=2m", "--spr_op=0.05", "--spr_num_regions=50", "--randseed=99"],
        bs: 4096,
        writes: 510,
        first: [1417216, 970752, 1552384, 2027520],
        fingerprint: 0xbd6c_6f07_8f5e_139d,
    },
];

/// The job on a new file `name` of `dir`, logging its I/O to `name.log`.
fn run(dir: &Path, name: &str, options: &[&str], fio: bool) -> Option<(Out, Vec<u64>)> {
    let file = format!("--filename={}", dir.join(name).display());
    let log = format!("--write_iolog={name}.log");
    let mut args = vec!["--name=j", &file, "--ioengine=psync", "--rw=randwrite", "--sprandom=1", &log];
    args.extend_from_slice(options);
    let out = if fio { fio342_run(dir, &args)? } else { fiox(dir, &args) };
    assert_eq!(out.code, 0, "{options:?}: {}", out.stderr);
    Some((out, written(&dir.join(format!("{name}.log")))))
}

#[test]
fn sprandom_writes_fios_blocks_in_fios_order() {
    let dir = scratch();
    for (i, r) in RECORDED.iter().enumerate() {
        let mut opts = r.options.to_vec();
        opts.push("--output-format=json");
        let (out, ours) = run(dir.path(), &format!("x{i}"), &opts, false).unwrap();
        assert_eq!(ours.len(), r.writes, "{:?}", r.options);
        assert_eq!(ours[..4], r.first, "{:?}", r.options);
        assert_eq!(fingerprint(&ours), r.fingerprint, "{:?}", r.options);
        let j = json(&out);
        assert_eq!(j["jobs"][0]["write"]["total_ios"], r.writes as u64, "{:?}", r.options);
        assert_eq!(j["jobs"][0]["write"]["io_bytes"], r.writes as u64 * r.bs, "{:?}", r.options);
        if let Some((_, fios)) = run(dir.path(), &format!("f{i}"), r.options, true) {
            assert_eq!(fingerprint(&fios), r.fingerprint, "fio 3.42 {:?}: the recording is stale", r.options);
            assert_eq!(ours, fios, "{:?}", r.options);
        }
    }
}

#[test]
fn sprandom_notes_come_before_the_header_as_fios() {
    let dir = scratch();
    let (out, _) = run(dir.path(), "n", &["--size=1m", "--norandommap"], false).unwrap();
    // fio 3.42 prints on standard output, before the job header, what sprandom chose.
    let first = out.stdout.lines().next().unwrap_or_default();
    assert_eq!(first, "fio: sprandom sets random_generator=lfsr", "{}", out.stdout);
    assert!(!out.stdout.contains("sets norandommap"), "{}", out.stdout);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

/// Refusals: the job's options, what fio 3.42 said (recorded) and what fiox says.
const REFUSED: &[(&[&str], &str, &str)] = &[
    (
        &["--rw=randread"],
        "sprandom requires random write, random_generator=lfsr, norandommap=1",
        "sprandom requires random write",
    ),
    (
        &["--rw=write"],
        "sprandom requires random write, random_generator=lfsr, norandommap=1",
        "sprandom requires random write",
    ),
    (
        &["--random_generator=tausworthe"],
        "sprandom requires random_generator=lfsr",
        "sprandom requires random_generator=lfsr",
    ),
    (&["--norandommap=0"], "sprandom requires norandommap=1", "sprandom requires norandommap=1"),
    (&["--spr_num_regions=0"], "requires at least one region", "requires at least one region"),
    (
        &["--spr_cs=1m"],
        "spr_cs [1048576] must be smaller than region_sz [12083] which means [1] regions allowed",
        "spr_cs [1048576] must be smaller than region_sz [12083] which means [1] regions allowed",
    ),
];

#[test]
fn sprandom_refusals_follow_fio_3_42() {
    let dir = scratch();
    let file = format!("--filename={}", dir.path().join("r").display());
    for (extra, fio_says, fiox_says) in REFUSED {
        let mut args = vec!["--name=j", &file, "--size=1m", "--ioengine=psync", "--rw=randwrite", "--sprandom=1"];
        args.extend_from_slice(extra);
        let o = fiox(dir.path(), &args);
        assert_eq!(o.code, 1, "fiox {extra:?} should be refused: {}", o.stdout);
        assert!(o.stderr.contains(fiox_says), "fiox {extra:?}: expected {fiox_says:?}, got: {}", o.stderr);
        assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
        assert!(o.stdout.is_empty(), "{}", o.stdout);
        assert!(!dir.path().join("r").exists(), "{extra:?}: no I/O, no file");
        if let Some(f) = fio342_run(dir.path(), &args) {
            assert_ne!(f.code, 0, "fio 3.42 {extra:?} ran: the recording is stale");
            let said = format!("{}{}", f.stderr, f.stdout);
            assert!(said.contains(fio_says), "fio 3.42 {extra:?} no longer says {fio_says:?}: {said}");
        }
        let _ = std::fs::remove_file(dir.path().join("r"));
    }
}
