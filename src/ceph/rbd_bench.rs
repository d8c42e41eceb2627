//! `fiox rbd bench` (and the deprecated `bench-write`): Ceph's `rbd bench` command line and
//! output (pacific 16.2.15's layout, reference/ceph.md section 4), on librbd through
//! `fiox_engine::ImageClient`. "Threads" are offset streams with one I/O in flight each; the
//! run issues ceil(io_total / io_size) I/Os, prints a row whenever the elapsed second changes
//! (rates over the last five rows) and a summary.
//!
//! Reads may name a snapshot (`pool/image@snap`); every read and write carries the fadvise
//! flag of its pattern (random for `rand`, sequential otherwise), as the real tool's.
//!
//! Not done yet: the rule by which pacific's `seq` streams continue once the bytes issued pass
//! one chunk per stream (here a stream that reaches the image's end wraps to the start of its
//! chunk).

use std::collections::VecDeque;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use fiox_engine::{Finish, ImageClient};
use fiox_options::CephOpts;
use serde_json::{json, Map};

use crate::ceph::args::{self, Dialect};
use crate::ceph::bench_report::{self, fmt_g, BenchReport, DirStat};
use crate::cli::{self, Complete, Flag};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IoType {
    Read,
    Write,
    ReadWrite,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pattern {
    Rand,
    Seq,
    FullSeq,
}

impl Pattern {
    fn name(self) -> &'static str {
        match self {
            Pattern::Rand => "rand",
            Pattern::Seq => "seq",
            Pattern::FullSeq => "full-seq",
        }
    }
}

struct Args {
    ceph: CephOpts,
    io_type: Option<IoType>,
    io_size: u64,
    io_threads: u64,
    io_total: u64,
    pattern: Pattern,
    rw_mix_read: u64,
    /// The snapshot of `image@snap` (reads only).
    snap: Option<String>,
    deprecated: bool,
    /// fiox's report: `-` for stdout (instead of the tool's output), or a file.
    fiox_json: Option<String>,
}

/// A size in Ceph's 1024-based form (`4K`, `16M`, `1G`, `4096`), or rbd's refusal of it.
fn size(opt: &str, v: &str) -> Result<u64> {
    args::size(v).ok_or_else(|| invalid(opt))
}

/// A command-line error and the exit status the real tool gives it (1 for the option parser's
/// errors, 22 for the rest).
#[derive(Debug)]
struct Usage(String, u8);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// rbd's option parser's message for a value it cannot take.
fn invalid(opt: &str) -> anyhow::Error {
    Usage(format!("rbd: the argument for option '{opt}' is invalid"), 1).into()
}

/// `fiox rbd`'s flags, the real tool's spellings (and fiox's report flags).
pub const FLAGS: &[Flag] = &[
    cli::HELP,
    args::CONF,
    args::CLUSTER,
    args::ID,
    args::NAME,
    args::KEYRING,
    args::POOL,
    args::NAMESPACE,
    Flag::value("--image", "IMAGE", "the image (instead of IMAGE-SPEC)"),
    Flag::value("--io-type", "TYPE", "read, write or readwrite (rw)").completes(Complete::Words(&[
        "read",
        "write",
        "readwrite",
        "rw",
    ])),
    Flag::value("--io-size", "SIZE", "the size of each I/O (default 4K)"),
    Flag::value("--io-threads", "N", "I/Os in flight (default 16)"),
    Flag::value("--io-total", "SIZE", "the bytes to move (default 1G)"),
    Flag::value("--io-pattern", "PATTERN", "rand, seq or full-seq (default seq)")
        .completes(Complete::Words(&["rand", "seq", "full-seq"])),
    Flag::value("--rw-mix-read", "PERCENT", "the share of reads with readwrite (default 50)"),
    Flag::value("--output-format", "FORMAT", "json: fiox's report in fio's JSON layout instead")
        .completes(Complete::Words(&["json", "normal"])),
    Flag::value("--fiox-json", "FILE", "also write fiox's report there (- for stdout)").completes(Complete::File),
];

/// How rbd refuses a command line: its option parser's errors end with status 1.
const DIALECT: Dialect = Dialect {
    needs_value: |name| anyhow::anyhow!("rbd: {name} needs a value"),
    takes_no_value: |name| Usage(format!("rbd: option '{name}' does not take any arguments"), 1).into(),
    unknown: |arg, _| Usage(format!("rbd: unrecognised option '{arg}'"), 1).into(),
    words: true,
};

impl Args {
    /// One of rbd's own flags (the connection flags are `args::parse`'s).
    fn flag(&mut self, name: &str, v: String, image: &mut Option<String>) -> Result<()> {
        match name {
            "--image" => *image = Some(v),
            "--io-size" => self.io_size = size(name, &v)?,
            "--io-total" => self.io_total = size(name, &v)?,
            "--io-threads" => self.io_threads = v.parse().map_err(|_| invalid(name))?,
            "--rw-mix-read" => self.rw_mix_read = v.parse().map_err(|_| invalid(name))?,
            "--io-pattern" => {
                self.pattern = match v.as_str() {
                    "rand" => Pattern::Rand,
                    "seq" => Pattern::Seq,
                    "full-seq" => Pattern::FullSeq,
                    _ => return Err(invalid(name)),
                }
            }
            "--io-type" => {
                self.io_type = Some(match v.as_str() {
                    "read" => IoType::Read,
                    "write" => IoType::Write,
                    "readwrite" | "rw" => IoType::ReadWrite,
                    _ => return Err(invalid(name)),
                })
            }
            "--output-format" => match v.as_str() {
                "json" => self.fiox_json = Some("-".into()),
                "normal" => self.fiox_json = None,
                other => bail!("fiox rbd: --output-format takes json or normal, not '{other}'"),
            },
            "--fiox-json" => self.fiox_json = Some(v),
            "--help" => {}
            other => unreachable!("{other} is an rbd flag without a meaning"),
        }
        Ok(())
    }
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        ceph: CephOpts::default(),
        io_type: None,
        io_size: 4096,
        io_threads: 16,
        io_total: 1 << 30,
        pattern: Pattern::Seq,
        rw_mix_read: 50,
        snap: None,
        deprecated: false,
        fiox_json: None,
    };
    let mut ceph = CephOpts::default();
    let mut image = None;
    let words = args::parse(FLAGS, args, &mut ceph, &DIALECT, |f, v| a.flag(f.name, v, &mut image))?;
    a.ceph = ceph;
    if image.is_some() {
        a.ceph.rbdname = image;
    }
    match words.first().map(String::as_str) {
        Some("bench") => {}
        Some("bench-write") => {
            a.deprecated = true;
            if a.io_type.is_none() {
                a.io_type = Some(IoType::Write);
            }
        }
        Some(other) => bail!("fiox rbd: only 'bench' and 'bench-write' are implemented, not '{other}'"),
        None => {
            bail!("fiox rbd: usage: fiox rbd [-c CONF] [-p POOL] bench --io-type read|write|rw [options] IMAGE-SPEC")
        }
    }
    match words.get(1) {
        Some(spec) => {
            // [pool/[namespace/]]image
            let parts: Vec<&str> = spec.split('/').collect();
            match parts.as_slice() {
                [image] => a.ceph.rbdname = Some(image.to_string()),
                [pool, image] => {
                    a.ceph.pool = Some(pool.to_string());
                    a.ceph.rbdname = Some(image.to_string());
                }
                [pool, namespace, image] => {
                    a.ceph.pool = Some(pool.to_string());
                    a.ceph.namespace = Some(namespace.to_string());
                    a.ceph.rbdname = Some(image.to_string());
                }
                _ => bail!("rbd: invalid image spec: {spec}"),
            }
        }
        None if a.ceph.rbdname.is_some() => {}
        None => bail!("rbd: image name was not specified"),
    }
    if words.len() > 2 {
        bail!("rbd: too many arguments: {}", words[2..].join(" "));
    }
    if a.ceph.pool.is_none() {
        a.ceph.pool = Some("rbd".into());
    }
    if let Some((image, snap)) = a.ceph.rbdname.clone().as_deref().and_then(|n| n.split_once('@')) {
        if image.is_empty() || snap.is_empty() || snap.contains('@') {
            bail!(
                "rbd: invalid spec '{}'",
                words.get(1).map_or(a.ceph.rbdname.as_deref().unwrap_or(""), |w| w.as_str())
            );
        }
        a.ceph.rbdname = Some(image.to_string());
        a.snap = Some(snap.to_string());
    }
    Ok(a)
}

/// Ceph's `byte_u_t` of a byte count (1024-based units; see reference/ceph.md 4.3).
pub fn byte_u(v: u64) -> String {
    const UNITS: [&str; 7] = [" B", " KiB", " MiB", " GiB", " TiB", " PiB", " EiB"];
    let mut index = 0;
    let mut n = v;
    while n >= 1024 && index < UNITS.len() - 1 {
        n /= 1024;
        index += 1;
    }
    let unit = UNITS[index];
    if index == 0 {
        return format!("{v}{unit}");
    }
    let div = (1u64 << (10 * index)) as f64;
    if v % (1u64 << (10 * index)) == 0 {
        return format!("{}{unit}", v >> (10 * index));
    }
    let x = v as f64 / div;
    for prec in [2, 1, 0] {
        let s = format!("{x:.prec$}{unit}");
        if s.len() <= 7 {
            return s;
        }
    }
    format!("{x:.0}{unit}")
}

/// The share of `io`-aligned I/Os of `io` bytes (every pattern's offsets are) that cross a
/// boundary between `object`-byte RADOS objects, which librbd splits into two operations: 0
/// for 4 KiB or 4 MiB I/Os on 4 MiB objects, most of them for the seed's 4,096,000 bytes.
pub fn straddling_share(io: u64, object: u64, blocks: u64) -> f64 {
    let object = object.max(1);
    // The pattern repeats; a million offsets is plenty to measure it.
    let n = blocks.clamp(1, 1 << 20);
    let crossing = (0..n).filter(|k| (k * io) / object != (k * io + io - 1) / object).count();
    crossing as f64 / n as f64
}

/// libc-like pseudo-random numbers for offsets and the read/write mix (rbd bench uses
/// `rand()` seeded with the time; only the distribution matters).
struct Rand(u64);

impl Rand {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 >> 1
    }
}

/// `fiox rbd --help`.
pub fn help() -> String {
    "usage: fiox rbd [-c CONF] [--cluster NAME] [--id ID] [-k KEYRING] [-p POOL] bench
                --io-type read|write|rw [--io-size SIZE] [--io-threads N] [--io-total SIZE]
                [--io-pattern rand|seq|full-seq] [--rw-mix-read PERCENT] [POOL/[NS/]]IMAGE[@SNAP]
       fiox rbd bench-write ... (deprecated: bench --io-type write)

Ceph's `rbd bench` on an RBD image through librbd: the same offsets and output layout as
pacific's tool (per-second rows, then `elapsed: ... ops: ... ops/sec: ... bytes/sec: ...`).
Needs librbd1 and librados2 at run time.
"
    .to_string()
        + &args::options_help(FLAGS)
}

pub fn run(args: &[String]) -> Result<ExitCode> {
    let args = &bench_report::with_ceph_args(args);
    let a = match bench_report::parse_or_exit(args, help, parse, |e| e.downcast_ref::<Usage>().map_or(22, |u| u.1)) {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    if a.snap.is_some() && matches!(a.io_type, Some(IoType::Write | IoType::ReadWrite)) {
        // A snapshot cannot be written.
        eprintln!("rbd: snapshot name specified for a command that doesn't use it");
        return Ok(ExitCode::from(22));
    }
    if a.deprecated {
        eprintln!("rbd: bench-write is deprecated, use rbd bench --io-type write ...");
    }
    let checks = [
        (a.io_size == 0, "rbd: --io-size should be greater than zero."),
        (a.io_size > u32::MAX as u64, "rbd: io-size should be less than 4G"),
        (a.io_threads == 0, "rbd: --io-threads should be greater than zero."),
        (a.rw_mix_read > 100, "rbd: --rw-mix-read should not be larger than 100."),
        (a.io_type.is_none(), "rbd: --io-type must be specified."),
    ];
    if let Some((_, msg)) = checks.iter().find(|(bad, _)| *bad) {
        eprintln!("{msg}");
        return Ok(ExitCode::from(22));
    }
    let io_type = a.io_type.expect("checked");
    let image = a.ceph.rbdname.clone().unwrap_or_default();
    let mut client = match ImageClient::open_at(&a.ceph, a.snap.as_deref(), a.io_threads as u32, a.io_size as usize) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rbd: error opening image {image}: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let size = client.size();
    if a.io_size > size {
        eprintln!("rbd: io-size {} larger than image size {}", byte_u(a.io_size), byte_u(size));
        eprintln!("bench failed: (22) Invalid argument");
        return Ok(ExitCode::from(22));
    }
    if let Err(e) = client.flush() {
        // A read-only image (a snapshot) has nothing to flush: fine for a read bench.
        if !(io_type == IoType::Read && e.starts_with("Read-only file system")) {
            eprintln!("rbd: failed to flush: {e}");
            return Ok(ExitCode::from(1));
        }
    }
    // The fadvise hint rbd bench gives the OSDs with every operation
    // (LIBRADOS_OP_FLAG_FADVISE_RANDOM, LIBRADOS_OP_FLAG_FADVISE_SEQUENTIAL).
    client.set_op_flags(if a.pattern == Pattern::Rand { 0x4 } else { 0x8 });
    let type_text = match io_type {
        IoType::Read => "read".to_string(),
        IoType::Write => "write".to_string(),
        IoType::ReadWrite => format!("readwrite read:write={}:{}", a.rw_mix_read, 100 - a.rw_mix_read),
    };
    let pattern_text = match a.pattern {
        Pattern::Rand => "random",
        Pattern::Seq => "sequential",
        Pattern::FullSeq => "full sequential",
    };
    let plain = a.fiox_json.as_deref() != Some("-");
    // Reads of ranges never written cost the cluster nothing (a thin image answers zeros), so
    // a read bench on them measures little: say how much of the image that is.
    let mut unwritten = None;
    if io_type != IoType::Write {
        if let Ok(w) = client.written_bytes(0, size) {
            let share = 1.0 - w as f64 / size as f64;
            unwritten = Some(share);
            if share > 0.0 {
                eprintln!(
                    "fiox rbd bench: warning: {:.0}% of image '{image}' was never written; reads there return zeros without disk I/O",
                    (share * 100.0).ceil()
                );
            }
        }
    }
    if plain {
        println!(
            "bench  type {type_text} io_size {} io_threads {} bytes {} pattern {pattern_text}",
            a.io_size, a.io_threads, a.io_total
        );
        println!("  SEC       OPS   OPS/SEC   BYTES/SEC");
    }

    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
    let mut rng = Rand(seed | 1);
    let (io, threads) = (a.io_size, a.io_threads);
    let blocks = size / io;
    let chunk = (size / io / threads) * io;
    let start_of = |i: u64| match a.pattern {
        Pattern::Seq => chunk * i,
        Pattern::FullSeq => (i * io) % (blocks * io),
        Pattern::Rand => 0,
    };
    let mut offs: Vec<u64> = (0..threads).map(start_of).collect();
    if a.pattern == Pattern::Rand {
        for o in offs.iter_mut() {
            *o = (rng.next() % blocks) * io;
        }
    }
    // The same random byte in every write, as rbd bench writes.
    let byte = (rng.next() & 0xff) as u8;
    for s in 0..threads as u32 {
        client.buf_mut(s).fill(byte);
    }
    let ops = a.io_total.div_ceil(io);
    let mut idle: Vec<u32> = (0..threads as u32).rev().collect();
    let mut finished: Vec<Finish> = Vec::new();
    let mut slot_write = vec![false; threads as usize];
    let mut submitted_at = vec![Instant::now(); threads as usize];
    let (mut rd, mut wr) = (DirStat::default(), DirStat::default());
    let (mut issued, mut reads, mut writes) = (0u64, 0u64, 0u64);
    bench_report::catch_signals();
    let cpu0 = bench_report::cpu_now();
    let start = Instant::now();
    let mut last_sec = 0u64;
    let mut last = (0.0f64, 0u64);
    let mut window: VecDeque<(f64, u64)> = VecDeque::new();
    let mut armed = false;
    let mut interrupted = false;
    // Each completion is checked as rbd bench checks it (not in readwrite mode).
    let check = |f: &Finish, write: bool| -> Option<ExitCode> {
        if io_type == IoType::ReadWrite {
            return None;
        }
        let bad = if write { f.result != 0 } else { f.result != io as i64 };
        if bad {
            let what = if write { "write" } else { "read" };
            let err = if f.result < 0 { -f.result } else { 5 };
            println!("{what} error: {}", fiox_engine::ceph_errno_text(-err));
            return Some(ExitCode::from(err.clamp(1, 255) as u8));
        }
        None
    };
    // Books the finished operations; a failed one ends the run as rbd bench ends it.
    let reap = |finished: &mut Vec<Finish>,
                idle: &mut Vec<u32>,
                rd: &mut DirStat,
                wr: &mut DirStat,
                slot_write: &[bool],
                submitted_at: &[Instant]|
     -> Option<ExitCode> {
        let now = Instant::now();
        for f in finished.drain(..) {
            let i = f.slot as usize;
            if let Some(code) = check(&f, slot_write[i]) {
                return Some(code);
            }
            let d = if slot_write[i] { &mut *wr } else { &mut *rd };
            d.add(now.duration_since(submitted_at[i]), io);
            idle.push(f.slot);
        }
        None
    };
    'issue: while issued < ops {
        for &off in &offs {
            if issued >= ops {
                break;
            }
            while idle.is_empty() {
                if bench_report::stop_requested() {
                    interrupted = true;
                    break 'issue;
                }
                client.wait(1, Some(Duration::from_millis(200)), &mut finished);
                if let Some(code) = reap(&mut finished, &mut idle, &mut rd, &mut wr, &slot_write, &submitted_at) {
                    return Ok(code);
                }
            }
            if bench_report::stop_requested() {
                interrupted = true;
                break 'issue;
            }
            let slot = idle.pop().expect("an idle slot");
            let write = match io_type {
                IoType::Read => false,
                IoType::Write => true,
                IoType::ReadWrite => rng.next() % 100 >= a.rw_mix_read,
            };
            if write {
                writes += 1;
            } else {
                reads += 1;
            }
            slot_write[slot as usize] = write;
            submitted_at[slot as usize] = Instant::now();
            if let Err(r) = client.submit(slot, write, off, io as usize) {
                println!("{} error: {}", if write { "write" } else { "read" }, fiox_engine::ceph_errno_text(r));
                return Ok(ExitCode::from((-r).clamp(1, 255) as u8));
            }
            issued += 1;
        }
        // The streams' next offsets.
        for (t, o) in offs.iter_mut().enumerate() {
            let t = t as u64;
            *o = match a.pattern {
                Pattern::Rand => (rng.next() % blocks) * io,
                Pattern::Seq => {
                    let next = *o + io;
                    if next + io > size {
                        chunk * t
                    } else {
                        next
                    }
                }
                Pattern::FullSeq => {
                    let next = *o + io * threads;
                    if next + io > size {
                        (t * io) % (blocks * io)
                    } else {
                        next
                    }
                }
            };
        }
        let now = start.elapsed().as_secs_f64();
        let sec = now as u64;
        if !armed {
            armed = true;
            last_sec = sec;
            last = (now, issued);
        } else if sec != last_sec {
            last_sec = sec;
            window.push_back((now - last.0, issued - last.1));
            if window.len() > 5 {
                window.pop_front();
            }
            last = (now, issued);
            let time: f64 = window.iter().map(|w| w.0).sum();
            let n: u64 = window.iter().map(|w| w.1).sum();
            let rate = n as f64 / time;
            if plain {
                println!(
                    "{sec:5}{:>10}{:>10}{:>10}/s",
                    issued.saturating_sub(threads),
                    fmt_g(rate),
                    byte_u((rate * io as f64) as u64)
                );
            }
        }
    }
    // In-flight operations finish; after a signal they get DRAIN_LIMIT (a stalled cluster
    // holds them forever).
    let drain_until = Instant::now() + bench_report::DRAIN_LIMIT;
    while client.in_flight() > 0 {
        if bench_report::stop_requested() {
            interrupted = true;
        }
        if interrupted && Instant::now() >= drain_until {
            break;
        }
        client.wait(client.in_flight(), Some(Duration::from_millis(200)), &mut finished);
        if let Some(code) = reap(&mut finished, &mut idle, &mut rd, &mut wr, &slot_write, &submitted_at) {
            return Ok(code);
        }
    }
    let left = client.in_flight();
    if io_type != IoType::Read && left == 0 {
        if let Err(e) = client.flush() {
            eprintln!("rbd: failed to flush at the end: {e}");
            return Ok(ExitCode::from(1));
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let cpu1 = bench_report::cpu_now();
    let summary = format!(
        "elapsed: {}   ops: {issued}   ops/sec: {}   bytes/sec: {}/s",
        elapsed as u64,
        fmt_g(issued as f64 / elapsed),
        byte_u((issued as f64 * io as f64 / elapsed) as u64)
    );
    let mut lines = vec![summary];
    if io_type == IoType::ReadWrite {
        for (what, n) in [("read", reads), ("write", writes)] {
            lines.push(format!(
                "{what}_ops: {n}   {what}_ops/sec: {}   {what}_bytes/sec: {}/s",
                fmt_g(n as f64 / elapsed),
                byte_u((n as f64 * io as f64 / elapsed) as u64)
            ));
        }
    }
    if plain {
        for l in &lines {
            println!("{l}");
        }
    }
    if let Some(path) = &a.fiox_json {
        let mut fiox = Map::new();
        fiox.insert("tool".into(), json!("rbd bench"));
        fiox.insert("io_type".into(), json!(type_text));
        fiox.insert("pattern".into(), json!(pattern_text));
        fiox.insert("pool".into(), json!(a.ceph.pool));
        fiox.insert("image".into(), json!(image));
        if let Some(s) = &a.snap {
            fiox.insert("snapshot".into(), json!(s));
        }
        fiox.insert("image_size".into(), json!(size));
        fiox.insert("io_size".into(), json!(io));
        fiox.insert("io_threads".into(), json!(threads));
        fiox.insert("io_total".into(), json!(a.io_total));
        fiox.insert("ops".into(), json!(issued));
        fiox.insert("rbd_cache".into(), json!(client.conf_value("rbd_cache")));
        fiox.insert("object_size".into(), json!(client.object_size()));
        // I/Os that cross an object boundary are split by librbd into two OSD operations.
        fiox.insert("straddling_share".into(), json!(straddling_share(io, client.object_size(), blocks)));
        fiox.insert("summary".into(), json!(lines));
        if let Some(u) = unwritten {
            fiox.insert("unwritten_share".into(), json!(u));
        }
        if interrupted {
            fiox.insert("interrupted".into(), json!(bench_report::signal_name()));
            fiox.insert("left_in_flight".into(), json!(left));
        }
        let report = BenchReport {
            job: format!("rbd-bench-{}-{}", type_text.split(' ').next().unwrap_or("io"), a.pattern.name()),
            runtime_s: elapsed,
            read: rd,
            write: wr,
            cpu_s: (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1),
            error: 0,
            fiox,
        };
        if let Err(e) = report.save(path) {
            eprintln!("fiox rbd bench: cannot write {path}: {e}");
            return Ok(ExitCode::from(1));
        }
    }
    if interrupted {
        eprintln!("{}", bench_report::interrupted_line("fiox rbd bench", elapsed, issued - left as u64, left));
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of reference/ceph.md 4.3 and rows seen from Debian's rbd 16.2.15.
    #[test]
    fn byte_units_as_ceph() {
        assert_eq!(byte_u(297704487), "284 MiB");
        assert_eq!(byte_u(10066329), "9.6 MiB");
        assert_eq!(byte_u(1073741824), "1 GiB");
        assert_eq!(byte_u(1000), "1000 B");
        assert_eq!(byte_u(4 * 1024 * 1024 + 1), "4.0 MiB");
        assert_eq!(byte_u(12 * 1024 * 1024 + 700_000), "13 MiB");
    }

    #[test]
    fn g_format_as_c() {
        assert_eq!(fmt_g(72681.76), "72681.8");
        assert_eq!(fmt_g(2416.0), "2416");
        assert_eq!(fmt_g(780.7234), "780.723");
        assert_eq!(fmt_g(1.797_693_134_862_315_7e308), "1.79769e+308");
        assert_eq!(fmt_g(999999.7), "1e+06");
        assert_eq!(fmt_g(0.0001234), "0.0001234");
    }

    #[test]
    fn straddling_io() {
        assert_eq!(straddling_share(4096, 4 << 20, 1 << 18), 0.0);
        assert_eq!(straddling_share(4 << 20, 4 << 20, 256), 0.0);
        // 4,096,000-byte I/Os on 4 MiB objects: only those ending before the next boundary stay
        // whole (the seed's "4M" runs).
        let s = straddling_share(4_096_000, 4 << 20, 262);
        assert!(s > 0.9, "{s}");
    }

    #[test]
    fn sizes_are_1024_based() {
        assert_eq!(size("--io-size", "4K").unwrap(), 4096);
        assert_eq!(size("--io-total", "16M").unwrap(), 16 << 20);
        assert_eq!(size("--io-size", "4096").unwrap(), 4096);
        assert!(size("--io-size", "4Q").is_err());
    }
}
