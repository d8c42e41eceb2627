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
use crate::ceph::bench_loop::{Meter, Rand, Slots};
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

    /// The pattern as the header says it.
    fn text(self) -> &'static str {
        match self {
            Pattern::Rand => "random",
            Pattern::Seq => "sequential",
            Pattern::FullSeq => "full sequential",
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
    Ok(bench(&a).unwrap_or_else(|code| code))
}

/// The bench in its phases: rbd's checks, the image, the header, the I/Os issued, the drain and
/// the summary. `Err` is the exit status of a bench that ends early.
fn bench(a: &Args) -> Result<ExitCode, ExitCode> {
    let io_type = check(a)?;
    let client = open(a, io_type)?;
    let type_text = match io_type {
        IoType::Read => "read".to_string(),
        IoType::Write => "write".to_string(),
        IoType::ReadWrite => format!("readwrite read:write={}:{}", a.rw_mix_read, 100 - a.rw_mix_read),
    };
    let plain = a.fiox_json.as_deref() != Some("-");
    let unwritten = unwritten_share(&client, io_type, a.ceph.rbdname.as_deref().unwrap_or_default());
    if plain {
        println!(
            "bench  type {type_text} io_size {} io_threads {} bytes {} pattern {}",
            a.io_size,
            a.io_threads,
            a.io_total,
            a.pattern.text()
        );
        println!("  SEC       OPS   OPS/SEC   BYTES/SEC");
    }
    let mut bench = Bench::new(a, io_type, client, type_text, unwritten, plain);
    bench.issue()?;
    bench.drain()?;
    bench.finish()
}

/// rbd's checks of the command line, in its order, and its messages; the I/O type.
fn check(a: &Args) -> Result<IoType, ExitCode> {
    if a.snap.is_some() && matches!(a.io_type, Some(IoType::Write | IoType::ReadWrite)) {
        // A snapshot cannot be written.
        eprintln!("rbd: snapshot name specified for a command that doesn't use it");
        return Err(ExitCode::from(22));
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
        return Err(ExitCode::from(22));
    }
    Ok(a.io_type.expect("checked"))
}

/// The image (or its snapshot): opened, as large as one I/O at least, flushed, and with the
/// fadvise flag of the pattern on every operation.
fn open(a: &Args, io_type: IoType) -> Result<ImageClient, ExitCode> {
    let image = a.ceph.rbdname.as_deref().unwrap_or_default();
    let mut client = ImageClient::open_at(&a.ceph, a.snap.as_deref(), a.io_threads as u32, a.io_size as usize)
        .map_err(|e| {
            eprintln!("rbd: error opening image {image}: {e}");
            ExitCode::from(2)
        })?;
    let size = client.size();
    if a.io_size > size {
        eprintln!("rbd: io-size {} larger than image size {}", byte_u(a.io_size), byte_u(size));
        eprintln!("bench failed: (22) Invalid argument");
        return Err(ExitCode::from(22));
    }
    if let Err(e) = client.flush() {
        // A read-only image (a snapshot) has nothing to flush: fine for a read bench.
        if !(io_type == IoType::Read && e.starts_with("Read-only file system")) {
            eprintln!("rbd: failed to flush: {e}");
            return Err(ExitCode::from(1));
        }
    }
    // The fadvise hint rbd bench gives the OSDs with every operation
    // (LIBRADOS_OP_FLAG_FADVISE_RANDOM, LIBRADOS_OP_FLAG_FADVISE_SEQUENTIAL).
    client.set_op_flags(if a.pattern == Pattern::Rand { 0x4 } else { 0x8 });
    Ok(client)
}

/// How much of the image a bench that reads finds never written, with a warning when some is:
/// reads of those ranges cost the cluster nothing (a thin image answers zeros), so they
/// measure little.
fn unwritten_share(client: &ImageClient, io_type: IoType, image: &str) -> Option<f64> {
    if io_type == IoType::Write {
        return None;
    }
    let size = client.size();
    let written = client.written_bytes(0, size).ok()?;
    let share = 1.0 - written as f64 / size as f64;
    if share > 0.0 {
        eprintln!(
            "fiox rbd bench: warning: {:.0}% of image '{image}' was never written; reads there return zeros without disk I/O",
            (share * 100.0).ceil()
        );
    }
    Some(share)
}

/// The offset streams (rbd bench's "threads"): each stream's next offset, and how it moves on
/// after each round.
struct Streams {
    pattern: Pattern,
    io: u64,
    /// The image's size.
    size: u64,
    /// Whole I/Os in the image.
    blocks: u64,
    /// A `seq` stream's share of the image.
    chunk: u64,
    offs: Vec<u64>,
}

impl Streams {
    fn new(pattern: Pattern, io: u64, threads: u64, size: u64, rng: &mut Rand) -> Streams {
        let blocks = size / io;
        let chunk = (size / io / threads) * io;
        let mut s = Streams { pattern, io, size, blocks, chunk, offs: Vec::new() };
        s.offs = (0..threads)
            .map(|t| match pattern {
                Pattern::Rand => (rng.next() % blocks) * io,
                _ => s.start(t),
            })
            .collect();
        s
    }

    /// Where stream `t` of a sequential pattern starts, and starts again at the image's end.
    fn start(&self, t: u64) -> u64 {
        match self.pattern {
            Pattern::FullSeq => (t * self.io) % (self.blocks * self.io),
            _ => self.chunk * t,
        }
    }

    /// The streams' next offsets: a random block each, or the next block of the stream (the
    /// next I/O for `seq`, one I/O per stream further for `full-seq`).
    fn advance(&mut self, rng: &mut Rand) {
        let step = if self.pattern == Pattern::FullSeq { self.io * self.offs.len() as u64 } else { self.io };
        for t in 0..self.offs.len() {
            let next = self.offs[t] + step;
            self.offs[t] = match self.pattern {
                Pattern::Rand => (rng.next() % self.blocks) * self.io,
                _ if next + self.io > self.size => self.start(t as u64),
                _ => next,
            };
        }
    }
}

/// The rows' rates: a row whenever the elapsed second changes, with the rate over the last five
/// rows' time.
#[derive(Default)]
struct Rates {
    /// The last row's second, time and I/Os issued; none before the first round.
    last: Option<(u64, f64, u64)>,
    window: VecDeque<(f64, u64)>,
}

impl Rates {
    /// After a round, `now` seconds into the run with `issued` I/Os issued: the second and rate
    /// of a row when the second changed.
    fn tick(&mut self, now: f64, issued: u64) -> Option<(u64, f64)> {
        let sec = now as u64;
        let Some((last_sec, then, issued_then)) = self.last else {
            self.last = Some((sec, now, issued));
            return None;
        };
        if sec == last_sec {
            return None;
        }
        self.last = Some((sec, now, issued));
        self.window.push_back((now - then, issued - issued_then));
        if self.window.len() > 5 {
            self.window.pop_front();
        }
        let time: f64 = self.window.iter().map(|w| w.0).sum();
        let n: u64 = self.window.iter().map(|w| w.1).sum();
        Some((sec, n as f64 / time))
    }
}

/// A finished I/O checked as rbd bench checks it (not in readwrite mode): a failure or a short
/// read prints rbd's line and gives the exit status.
fn check_result(io_type: IoType, io: u64, f: &Finish, write: bool) -> Option<ExitCode> {
    if io_type == IoType::ReadWrite {
        return None;
    }
    let bad = if write { f.result != 0 } else { f.result != io as i64 };
    if !bad {
        return None;
    }
    let what = if write { "write" } else { "read" };
    let err = if f.result < 0 { -f.result } else { 5 };
    println!("{what} error: {}", fiox_engine::ceph_errno_text(-err));
    Some(ExitCode::from(err.clamp(1, 255) as u8))
}

/// A running `rbd bench`: the streams, the slots in flight, the counts and latencies, the
/// rows' rates, and whether a signal stopped it.
struct Bench<'a> {
    a: &'a Args,
    io_type: IoType,
    client: ImageClient,
    /// `read`, `write` or `readwrite read:write=R:W`, as the header says it.
    type_text: String,
    /// The tool's own output is printed (not fiox's report on stdout).
    plain: bool,
    /// The share of the image never written (a bench that reads).
    unwritten: Option<f64>,
    streams: Streams,
    rng: Rand,
    /// The I/Os to issue.
    ops: u64,
    slots: Slots,
    /// Whether each slot's I/O is a write.
    slot_write: Vec<bool>,
    finished: Vec<Finish>,
    rd: DirStat,
    wr: DirStat,
    issued: u64,
    reads: u64,
    writes: u64,
    rates: Rates,
    meter: Meter,
    interrupted: bool,
}

impl<'a> Bench<'a> {
    fn new(
        a: &'a Args,
        io_type: IoType,
        mut client: ImageClient,
        type_text: String,
        unwritten: Option<f64>,
        plain: bool,
    ) -> Bench<'a> {
        let mut rng = Rand::from_clock();
        let (io, threads) = (a.io_size, a.io_threads);
        let streams = Streams::new(a.pattern, io, threads, client.size(), &mut rng);
        // The same random byte in every write, as rbd bench writes.
        let byte = (rng.next() & 0xff) as u8;
        for s in 0..threads as u32 {
            client.buf_mut(s).fill(byte);
        }
        let slots = Slots::new(threads as u32);
        bench_report::catch_signals();
        Bench {
            a,
            io_type,
            client,
            type_text,
            plain,
            unwritten,
            streams,
            rng,
            ops: a.io_total.div_ceil(io),
            slots,
            slot_write: vec![false; threads as usize],
            finished: Vec::new(),
            rd: DirStat::default(),
            wr: DirStat::default(),
            issued: 0,
            reads: 0,
            writes: 0,
            rates: Rates::default(),
            meter: Meter::start(),
            interrupted: false,
        }
    }

    /// Issues the I/Os round by round, one per stream, and prints a row whenever the second
    /// changes; a signal stops it.
    fn issue(&mut self) -> Result<(), ExitCode> {
        while self.issued < self.ops {
            for t in 0..self.streams.offs.len() {
                if self.issued >= self.ops {
                    break;
                }
                let Some(slot) = self.idle_slot()? else {
                    self.interrupted = true;
                    return Ok(());
                };
                self.submit(slot, self.streams.offs[t])?;
            }
            self.streams.advance(&mut self.rng);
            if let Some((sec, rate)) = self.rates.tick(self.meter.elapsed(), self.issued) {
                if self.plain {
                    println!(
                        "{sec:5}{:>10}{:>10}{:>10}/s",
                        self.issued.saturating_sub(self.a.io_threads),
                        fmt_g(rate),
                        byte_u((rate * self.a.io_size as f64) as u64)
                    );
                }
            }
        }
        Ok(())
    }

    /// An idle slot, after waiting for completions while none is; `None` once a signal asked
    /// to stop.
    fn idle_slot(&mut self) -> Result<Option<u32>, ExitCode> {
        loop {
            if bench_report::stop_requested() {
                return Ok(None);
            }
            if let Some(slot) = self.slots.take() {
                return Ok(Some(slot));
            }
            self.client.wait(1, Some(Duration::from_millis(200)), &mut self.finished);
            self.reap()?;
        }
    }

    /// One I/O at `off` in `slot`: a read or a write, as the type (for readwrite, the mix) says.
    fn submit(&mut self, slot: u32, off: u64) -> Result<(), ExitCode> {
        let write = match self.io_type {
            IoType::Read => false,
            IoType::Write => true,
            IoType::ReadWrite => self.rng.next() % 100 >= self.a.rw_mix_read,
        };
        if write {
            self.writes += 1;
        } else {
            self.reads += 1;
        }
        self.slot_write[slot as usize] = write;
        self.slots.submitted(slot);
        if let Err(r) = self.client.submit(slot, write, off, self.a.io_size as usize) {
            println!("{} error: {}", if write { "write" } else { "read" }, fiox_engine::ceph_errno_text(r));
            return Err(ExitCode::from((-r).clamp(1, 255) as u8));
        }
        self.issued += 1;
        Ok(())
    }

    /// Books the finished I/Os; a failed one ends the run as rbd bench ends it.
    fn reap(&mut self) -> Result<(), ExitCode> {
        let now = Instant::now();
        let mut finished = std::mem::take(&mut self.finished);
        for f in finished.drain(..) {
            let write = self.slot_write[f.slot as usize];
            if let Some(code) = check_result(self.io_type, self.a.io_size, &f, write) {
                return Err(code);
            }
            let lat = self.slots.done(f.slot, now);
            let dir = if write { &mut self.wr } else { &mut self.rd };
            dir.add(lat, self.a.io_size);
        }
        self.finished = finished;
        Ok(())
    }

    /// The I/Os in flight finish; after a signal they get `DRAIN_LIMIT` (a stalled cluster
    /// holds them forever).
    fn drain(&mut self) -> Result<(), ExitCode> {
        let drain_until = Instant::now() + bench_report::DRAIN_LIMIT;
        while self.client.in_flight() > 0 {
            if bench_report::stop_requested() {
                self.interrupted = true;
            }
            if self.interrupted && Instant::now() >= drain_until {
                break;
            }
            self.client.wait(self.client.in_flight(), Some(Duration::from_millis(200)), &mut self.finished);
            self.reap()?;
        }
        Ok(())
    }

    /// After the run: the image flushed (unless only read), the summary, fiox's report and the
    /// exit status.
    fn finish(mut self) -> Result<ExitCode, ExitCode> {
        let left = self.client.in_flight();
        if self.io_type != IoType::Read && left == 0 {
            if let Err(e) = self.client.flush() {
                eprintln!("rbd: failed to flush at the end: {e}");
                return Err(ExitCode::from(1));
            }
        }
        let elapsed = self.meter.elapsed();
        let cpu = self.meter.cpu();
        let lines = self.summary(elapsed);
        if self.plain {
            for l in &lines {
                println!("{l}");
            }
        }
        if let Some(path) = &self.a.fiox_json {
            self.report(elapsed, cpu, left, lines).save_or_exit("fiox rbd bench", path)?;
        }
        if self.interrupted {
            let done = self.issued - left as u64;
            eprintln!("{}", bench_report::interrupted_line("fiox rbd bench", elapsed, done, left));
            return Ok(ExitCode::from(1));
        }
        Ok(ExitCode::SUCCESS)
    }

    /// The summary's lines: all I/Os, and for readwrite the reads and the writes.
    fn summary(&self, elapsed: f64) -> Vec<String> {
        let (issued, io) = (self.issued, self.a.io_size);
        let mut lines = vec![format!(
            "elapsed: {}   ops: {issued}   ops/sec: {}   bytes/sec: {}/s",
            elapsed as u64,
            fmt_g(issued as f64 / elapsed),
            byte_u((issued as f64 * io as f64 / elapsed) as u64)
        )];
        if self.io_type == IoType::ReadWrite {
            for (what, n) in [("read", self.reads), ("write", self.writes)] {
                lines.push(format!(
                    "{what}_ops: {n}   {what}_ops/sec: {}   {what}_bytes/sec: {}/s",
                    fmt_g(n as f64 / elapsed),
                    byte_u((n as f64 * io as f64 / elapsed) as u64)
                ));
            }
        }
        lines
    }

    /// fiox's report: the run in fio's layout, the tool's parameters and summary in `fiox`.
    fn report(&mut self, elapsed: f64, cpu: (f64, f64), left: u32, lines: Vec<String>) -> BenchReport {
        let (a, io) = (self.a, self.a.io_size);
        let object_size = self.client.object_size();
        let mut fiox = Map::new();
        fiox.insert("tool".into(), json!("rbd bench"));
        fiox.insert("io_type".into(), json!(self.type_text));
        fiox.insert("pattern".into(), json!(a.pattern.text()));
        fiox.insert("pool".into(), json!(a.ceph.pool));
        fiox.insert("image".into(), json!(a.ceph.rbdname.as_deref().unwrap_or_default()));
        if let Some(s) = &a.snap {
            fiox.insert("snapshot".into(), json!(s));
        }
        fiox.insert("image_size".into(), json!(self.streams.size));
        fiox.insert("io_size".into(), json!(io));
        fiox.insert("io_threads".into(), json!(a.io_threads));
        fiox.insert("io_total".into(), json!(a.io_total));
        fiox.insert("ops".into(), json!(self.issued));
        fiox.insert("rbd_cache".into(), json!(self.client.conf_value("rbd_cache")));
        fiox.insert("object_size".into(), json!(object_size));
        // I/Os that cross an object boundary are split by librbd into two OSD operations.
        fiox.insert("straddling_share".into(), json!(straddling_share(io, object_size, self.streams.blocks)));
        fiox.insert("summary".into(), json!(lines));
        if let Some(u) = self.unwritten {
            fiox.insert("unwritten_share".into(), json!(u));
        }
        let mut report = BenchReport {
            job: format!("rbd-bench-{}-{}", self.type_text.split(' ').next().unwrap_or("io"), a.pattern.name()),
            runtime_s: elapsed,
            read: std::mem::take(&mut self.rd),
            write: std::mem::take(&mut self.wr),
            cpu_s: cpu,
            error: 0,
            fiox,
        };
        if self.interrupted {
            report.note_interrupted(left);
        }
        report
    }
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
    fn streams_move_as_rbd_bench_moves_them() {
        let mut rng = Rand::from_clock();
        // 16 blocks, 4 streams: seq streams own a quarter each and wrap to its start.
        let mut seq = Streams::new(Pattern::Seq, 1, 4, 16, &mut rng);
        assert_eq!(seq.offs, [0, 4, 8, 12]);
        for _ in 0..3 {
            seq.advance(&mut rng);
        }
        assert_eq!(seq.offs, [3, 7, 11, 15]);
        seq.advance(&mut rng);
        assert_eq!(seq.offs, [4, 8, 12, 12]);
        // full-seq streams interleave and wrap to the image's start.
        let mut full = Streams::new(Pattern::FullSeq, 2, 3, 16, &mut rng);
        assert_eq!(full.offs, [0, 2, 4]);
        full.advance(&mut rng);
        assert_eq!(full.offs, [6, 8, 10]);
        full.advance(&mut rng);
        assert_eq!(full.offs, [12, 14, 4]);
        let mut rand = Streams::new(Pattern::Rand, 4096, 8, 1 << 20, &mut rng);
        for _ in 0..100 {
            rand.advance(&mut rng);
            assert!(rand.offs.iter().all(|&o| o % 4096 == 0 && o + 4096 <= 1 << 20), "{:?}", rand.offs);
        }
    }

    #[test]
    fn rates_over_the_last_five_rows() {
        let mut r = Rates::default();
        assert_eq!(r.tick(0.2, 16), None);
        assert_eq!(r.tick(0.9, 32), None);
        let (sec, rate) = r.tick(1.2, 48).unwrap();
        assert_eq!(sec, 1);
        assert!((rate - 32.0).abs() < 1e-9, "{rate}");
        for s in 2..=7 {
            assert_eq!(r.tick(s as f64 + 0.2, 48 + 100 * (s - 1)).map(|t| t.0), Some(s));
        }
        // Five rows of one second and 100 I/Os each.
        let (sec, rate) = r.tick(8.2, 48 + 700).unwrap();
        assert_eq!(sec, 8);
        assert!((rate - 100.0).abs() < 1e-9, "{rate}");
    }

    #[test]
    fn sizes_are_1024_based() {
        assert_eq!(size("--io-size", "4K").unwrap(), 4096);
        assert_eq!(size("--io-total", "16M").unwrap(), 16 << 20);
        assert_eq!(size("--io-size", "4096").unwrap(), 4096);
        assert!(size("--io-size", "4Q").is_err());
    }
}
