//! fio 3.33 itself verifies files made with `Layout::fill`: every kind × bs {512, 4k, 64k} ×
//! verify_interval {default, 512} × verify_offset {0, 64} × patterns where meaningful, plus
//! fio's messages for planted damage compared with `Failure::fio_message`. Skipped (with a line
//! on stdout) when /usr/bin/fio is missing.

use fiox_verify::{Kind, Layout, Pattern, Stamp, What};
use std::path::{Path, PathBuf};
use std::process::Command;

const FIO: &str = "/usr/bin/fio";

fn have_fio() -> bool {
    if Path::new(FIO).exists() {
        return true;
    }
    println!("skip: {FIO} not found");
    false
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fiox-verify-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const PATTERNS: [&str; 3] = ["0xdeadbeef", "%o", "\"abcd\"-120xdeadface"];

struct Case {
    kind: Kind,
    bs: usize,
    interval: Option<usize>,
    verify_offset: usize,
    pattern: Option<&'static str>,
}

impl Case {
    fn layout(&self) -> Layout {
        Layout {
            kind: self.kind,
            interval: self.interval.unwrap_or(self.bs),
            verify_offset: self.verify_offset,
            pattern: self.pattern.map(|p| Pattern::parse(p, &|_: &str| Ok(vec![])).unwrap()),
        }
    }

    /// fio's options for a read job checking this case's file.
    fn options(&self) -> Vec<String> {
        let mut o = vec![format!("bs={}", self.bs), format!("size={}", 2 * self.bs)];
        // fio 3.33 has no verify=pattern_hdr: type 17 is verify_pattern without verify=.
        if self.kind != Kind::PatternHdr {
            o.push(format!("verify={}", self.kind.word()));
        }
        if let Some(p) = self.pattern {
            o.push(format!("verify_pattern={p}"));
        }
        if let Some(i) = self.interval {
            o.push(format!("verify_interval={i}"));
        }
        if self.verify_offset != 0 {
            o.push(format!("verify_offset={}", self.verify_offset));
        }
        o
    }

    /// Two blocks at offsets 0 and bs, as two writes.
    fn write(&self, path: &Path) {
        let layout = self.layout();
        let mut file = vec![0u8; 2 * self.bs];
        for (n, block) in file.chunks_mut(self.bs).enumerate() {
            let stamp = Stamp {
                rand_seed: 0x1234_5678_9abc_def0 ^ n as u64,
                time_sec: 7,
                time_nsec: 11,
                thread: 1,
                numberio: n as u16,
            };
            layout.fill(block, (n * self.bs) as u64, &stamp);
        }
        std::fs::write(path, file).unwrap();
    }
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for kind in Kind::ALL {
        let pats: Vec<Option<&'static str>> = match kind {
            Kind::Pattern | Kind::PatternHdr => PATTERNS.iter().copied().map(Some).collect(),
            Kind::Meta => std::iter::once(None).chain(PATTERNS.iter().copied().map(Some)).collect(),
            Kind::Md5 => vec![None, Some(PATTERNS[2])],
            _ => vec![None],
        };
        for bs in [512, 4096, 65536] {
            for interval in [None, Some(512)] {
                if bs == 512 && interval.is_some() {
                    continue;
                }
                for verify_offset in [0, 64] {
                    for &pattern in &pats {
                        let c = Case { kind, bs, interval, verify_offset, pattern };
                        if c.layout().validate().is_ok() {
                            v.push(c);
                        }
                    }
                }
            }
        }
    }
    v
}

/// Runs fio on a job file; returns stdout+stderr.
fn fio(dir: &Path, jobfile: &str) -> String {
    let jf = dir.join("jobs.fio");
    std::fs::write(&jf, jobfile).unwrap();
    let out = Command::new(FIO).arg(&jf).current_dir(dir).output().expect("run fio");
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn fio_verifies_every_layout() {
    if !have_fio() {
        return;
    }
    let dir = scratch("all");
    let cases = cases();
    assert!(cases.len() > 200, "{}", cases.len());
    // Batches of concurrent jobs (threads) per fio run keep the test short.
    for (b, batch) in cases.chunks(40).enumerate() {
        let mut jobs = String::from("[global]\nrw=read\nthread\n");
        for (j, c) in batch.iter().enumerate() {
            let name = format!("f{b}_{j}");
            c.write(&dir.join(&name));
            jobs += &format!("[j{b}_{j}]\nfilename={name}\n{}\n", c.options().join("\n"));
        }
        let out = fio(&dir, &jobs);
        for (j, c) in batch.iter().enumerate() {
            let line = out
                .lines()
                .find(|l| l.starts_with(&format!("j{b}_{j}: (groupid=")))
                .unwrap_or_else(|| panic!("no result line for {:?}\n{out}", c.options()));
            assert!(line.contains("err= 0:"), "fio rejected {:?} {:?}: {line}\n{out}", c.kind, c.options());
        }
    }
    println!("fio 3.33 verified {} layouts made by Layout::fill", cases.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The lines fio prints for verify failures (the job's own error lines left out).
fn verify_lines(out: &str) -> String {
    let mut s = String::new();
    for l in out.lines() {
        let keep = l.starts_with("verify: ")
            || l.starts_with("fio: got pattern")
            || l.starts_with("fio: bad pattern")
            || l.starts_with("fio: verify type mismatch")
            || l.contains(": verify failed at file ")
            || l.starts_with("       Expected CRC")
            || l.starts_with("       Received CRC");
        if keep {
            s += l;
            s.push('\n');
        }
    }
    s
}

/// What this crate says for the first failing block of `file`, as fio's read job reports it:
/// every failing interval of that block, stopping at a header failure.
fn our_lines(layout: &Layout, file: &[u8], bs: usize, name: &str) -> String {
    let mut s = String::new();
    for (b, block) in file.chunks(bs).enumerate() {
        let mut buf = block.to_vec();
        let off = (b * bs) as u64;
        for i in 0..layout.intervals(bs) {
            if let Err(f) = layout.check_interval(&mut buf, off, i) {
                s += &f.fio_message(layout.kind, name, off, bs as u64, 8);
                if !matches!(f.what, What::Checksum { .. } | What::Pattern { .. } | What::TypeMismatch { .. }) {
                    break;
                }
            }
        }
        if !s.is_empty() {
            break;
        }
    }
    s
}

/// Writes `layout`'s two blocks of `bs`, damages them with `damage`, and compares fio's lines
/// (read job with `opts`) with ours, after `adjust` (the documented deviations) on fio's.
fn planted(
    tag: &str,
    write: &Layout,
    read: &Layout,
    bs: usize,
    opts: &[&str],
    damage: impl Fn(&mut Vec<u8>),
    adjust: impl Fn(String) -> String,
) {
    let dir = scratch(tag);
    let mut file = vec![0u8; 2 * bs];
    for (n, block) in file.chunks_mut(bs).enumerate() {
        let stamp = Stamp { rand_seed: 99 + n as u64, numberio: n as u16, thread: 1, ..Default::default() };
        write.fill(block, (n * bs) as u64, &stamp);
    }
    damage(&mut file);
    std::fs::write(dir.join("F"), &file).unwrap();
    let mut job = format!("[r]\nfilename=F\nrw=read\nbs={bs}\nsize={}\n", 2 * bs);
    for o in opts {
        job += o;
        job.push('\n');
    }
    let theirs = adjust(verify_lines(&fio(&dir, &job)));
    let ours = our_lines(read, &file, bs, "F");
    assert!(!ours.is_empty(), "{tag}: no failure found");
    assert_eq!(ours, theirs, "{tag}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn lay(kind: Kind, interval: usize, verify_offset: usize, pattern: Option<&str>) -> Layout {
    Layout {
        kind,
        interval,
        verify_offset,
        pattern: pattern.map(|p| Pattern::parse(p, &|_: &str| Ok(vec![])).unwrap()),
    }
}

#[test]
fn fio_messages_for_planted_damage() {
    if !have_fio() {
        return;
    }
    let same = |s: String| s;
    let md5 = lay(Kind::Md5, 4096, 0, None);
    let o = ["verify=md5"];
    planted("flip", &md5, &md5, 4096, &o, |f| f[4096 + 3000] ^= 4, same);
    planted("zero", &md5, &md5, 4096, &o, |f| f[4096..4608].fill(0), same);
    planted("copy", &md5, &md5, 4096, &o, |f| f.copy_within(0..4096, 4096), same);
    planted("hdrcrc", &md5, &md5, 4096, &o, |f| f[4096 + 30] ^= 1, same);
    for kind in Kind::ALL.into_iter().filter(|k| k.field_len() > 0) {
        let l = lay(kind, 4096, 0, None);
        let w = format!("verify={}", kind.word());
        // Last data byte: inside even sha512's protected tail.
        planted(kind.word(), &l, &l, 4096, &[&w], |f| f[8191] ^= 0x80, same);
    }
    // A wrong-length header, and a misplaced interval with verify_offset (fio prints the
    // block's offset as "wanted").
    let l512 = lay(Kind::Crc32c, 512, 64, None);
    let o = ["verify=crc32c", "verify_interval=512", "verify_offset=64"];
    planted("ivcopy", &l512, &l512, 4096, &o, |f| f.copy_within(0..512, 4096 + 1024), same);
    planted("ivflip", &l512, &l512, 4096, &o, |f| f[4096 + 1030] ^= 1, same);
    let w4k = lay(Kind::Crc32c, 4096, 0, None);
    let r2k = lay(Kind::Crc32c, 2048, 0, None);
    planted("len", &w4k, &r2k, 4096, &["verify=crc32c", "verify_interval=2048"], |_| {}, same);
    // Another type on the medium.
    let rmd5 = lay(Kind::Md5, 4096, 0, None);
    let drop_crc = |s: String| s.lines().filter(|l| !l.contains(" CRC: ")).map(|l| format!("{l}\n")).collect();
    planted("type", &w4k, &rmd5, 4096, &["verify=md5"], |f| f[5000] ^= 1, drop_crc);
    // Patterns: fio 3.33 prints the offset from the data start (ours: from the interval start).
    let rel = |h: usize| {
        move |s: String| {
            s.lines()
                .map(|l| match l.strip_prefix("fio: bad pattern block offset ") {
                    Some(n) => format!("fio: bad pattern block offset {}\n", n.parse::<usize>().unwrap() + h),
                    None => format!("{l}\n"),
                })
                .collect()
        }
    };
    let p17 = lay(Kind::PatternHdr, 512, 0, Some(PATTERNS[2]));
    let o = ["verify_pattern=\"abcd\"-120xdeadface", "verify_interval=512"];
    planted("p17", &p17, &p17, 4096, &o, |f| f[4096 + 600] ^= 0x10, rel(40));
    let pm = lay(Kind::Meta, 4096, 0, Some(PATTERNS[1]));
    let o = ["verify=meta", "verify_pattern=%o"];
    planted("meta%o", &pm, &pm, 4096, &o, |f| f[4096 + 41] ^= 0x01, rel(40));
    planted("meta%o-copy", &pm, &pm, 4096, &o, |f| f.copy_within(40..4096, 4096 + 40), rel(40));
    // verify=pattern: fio 3.33 prints a length read from pattern bytes and a bogus type line.
    let p18 = lay(Kind::Pattern, 4096, 0, Some(PATTERNS[0]));
    let fix18 = |s: String| {
        s.lines()
            .filter(|l| !l.starts_with("fio: verify type mismatch"))
            .map(|l| match l.find(", length ") {
                Some(i) if l.starts_with("pattern: ") => {
                    let j = l.find(" (requested").unwrap();
                    format!("{}, length 4096{}\n", &l[..i], &l[j..])
                }
                _ => format!("{l}\n"),
            })
            .collect()
    };
    planted(
        "p18",
        &p18,
        &p18,
        4096,
        &["verify=pattern", "verify_pattern=0xdeadbeef"],
        |f| f[4096 + 1000] ^= 0x10,
        fix18,
    );
}
