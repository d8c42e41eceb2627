//! `fiox rados bench SECONDS write|seq|rand` and `fiox rados cleanup`: Ceph's `rados bench`
//! (pacific 16.2.15's command line, objects and output; reference/ceph.md section 3) on
//! librados through `fiox_engine::PoolClient`. The objects, their contents and the metadata
//! object are the real tool's, so each tool reads and verifies what the other wrote, and each
//! one's cleanup removes the other's objects.
//!
//! Beyond the real tool: every operation's latency goes into fio's histogram, and
//! `--output-format=json` (or `--fiox-json FILE` beside the tool's own output) gives a report in
//! fio's JSON layout with percentiles; SIGINT/SIGTERM end a run with a summary of what
//! completed, after at most `DRAIN_LIMIT` for operations a stalled cluster holds.
//!
//! Every write is one compound operation as the real tool's: the allocation hint (unless
//! `--no-hints`) and the data, an omap entry (`--write-omap`) and an xattr (`--write-xattr`).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use fiox_engine::{Finish, PoolClient, WriteParts};
use fiox_options::CephOpts;
use serde_json::{json, Map, Value};

use crate::ceph::args::{self, Dialect};
use crate::ceph::bench_loop::{Meter, Rand, Slots};
use crate::ceph::bench_report::{self, fmt_g, BenchReport, DirStat, Moments};
use crate::cli::{self, Complete, Flag};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Test {
    Write,
    Seq,
    Rand,
}

impl Test {
    fn name(self) -> &'static str {
        match self {
            Test::Write => "write",
            Test::Seq => "seq",
            Test::Rand => "rand",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Plain,
    Json,
    JsonPretty,
}

enum Command {
    Bench(Test),
    Cleanup,
}

struct Args {
    ceph: CephOpts,
    command: Command,
    seconds: u64,
    threads: u32,
    /// `-b`: only for write.
    op_size: Option<u64>,
    object_size: Option<u64>,
    max_objects: u64,
    cleanup: bool,
    run_name: Option<String>,
    prefix: Option<String>,
    hints: bool,
    verify: bool,
    /// `--reuse-bench`: write into the objects of the run the metadata object names.
    reuse: bool,
    /// `--show-time`: lines start with the local time.
    show_time: bool,
    /// Where writes go (`--write-object`, `--write-omap`, `--write-xattr`; none: the object).
    dest_object: bool,
    dest_omap: bool,
    dest_xattr: bool,
    format: Format,
    /// `-o FILE`: the `-f json` output goes there.
    output: Option<String>,
    /// fiox's report: `-` for stdout (instead of the tool's output), or a file.
    fiox_json: Option<String>,
}

const USAGE: &str =
    "fiox rados: usage: fiox rados -p POOL bench SECONDS write|seq|rand [-t N] [-b SIZE] [-O SIZE] [--no-cleanup] | cleanup";

/// `fiox rados`' flags, the real tool's spellings (and fiox's report flags).
pub const FLAGS: &[Flag] = &[
    cli::HELP,
    args::CONF,
    args::CLUSTER,
    args::ID,
    args::NAME,
    args::KEYRING,
    args::POOL,
    args::NAMESPACE.aliases(&["-N"]),
    Flag::value("--concurrent-ios", "N", "operations in flight (default 16)").aliases(&["-t"]),
    Flag::value("--block-size", "SIZE", "the size of each write (default the object size)").aliases(&["-b"]),
    Flag::value("--object-size", "SIZE", "the size of each object (default 4M)").aliases(&["-O"]),
    Flag::value("--max-objects", "N", "at most N objects written (default no limit)"),
    Flag::switch("--no-cleanup", "keep the objects written (for seq and rand)"),
    Flag::switch("--no-hints", "no allocation hint with each write"),
    Flag::switch("--no-verify", "do not check the contents read"),
    Flag::switch("--reuse-bench", "write into the objects of the last run"),
    Flag::switch("--show-time", "start every line with the local time"),
    Flag::switch("--write-object", "write the data to the objects (the default)"),
    Flag::switch("--write-omap", "write the data as an omap entry"),
    Flag::switch("--write-xattr", "write the data as an xattr"),
    // The real tool takes it and benches plain RADOS objects all the same.
    Flag::switch("--striper", "taken, as the real tool's; the bench uses plain objects"),
    Flag::value("--run-name", "NAME", "the metadata object's name (default benchmark_last_metadata)"),
    Flag::value("--prefix", "PREFIX", "the objects' prefix, for cleanup"),
    Flag::value("--format", "FORMAT", "plain, json or json-pretty").aliases(&["-f"]).completes(Complete::Words(&[
        "plain",
        "json",
        "json-pretty",
    ])),
    Flag::value("--output", "FILE", "where --format's output goes").aliases(&["-o"]).completes(Complete::File),
    Flag::value("--output-format", "FORMAT", "json: fiox's report in fio's JSON layout instead")
        .completes(Complete::Words(&["json", "normal"])),
    Flag::value("--fiox-json", "FILE", "also write fiox's report there (- for stdout)").completes(Complete::File),
];

impl Args {
    /// One of rados' own flags (the connection flags are `args::parse`'s).
    fn flag(&mut self, name: &str, v: String) -> Result<()> {
        match name {
            "--concurrent-ios" => {
                // 0 is refused as the real tool refuses it: when the bench starts, EINVAL.
                self.threads = v.parse().map_err(|_| anyhow::anyhow!("rados: invalid concurrent-ios: '{v}'"))?;
            }
            "--block-size" => {
                self.op_size = Some(
                    args::size(&v)
                        .filter(|&s| s > 0)
                        .ok_or_else(|| anyhow::anyhow!("rados: invalid block size: '{v}'"))?,
                );
            }
            "--object-size" => {
                self.object_size = Some(
                    args::size(&v)
                        .filter(|&s| s > 0)
                        .ok_or_else(|| anyhow::anyhow!("rados: invalid object size: '{v}'"))?,
                );
            }
            "--max-objects" => {
                self.max_objects = v.parse().map_err(|_| anyhow::anyhow!("rados: invalid max objects: '{v}'"))?;
            }
            "--no-cleanup" => self.cleanup = false,
            "--no-hints" => self.hints = false,
            "--no-verify" => self.verify = false,
            "--reuse-bench" => self.reuse = true,
            "--show-time" => self.show_time = true,
            "--write-object" => self.dest_object = true,
            "--write-omap" => self.dest_omap = true,
            "--write-xattr" => self.dest_xattr = true,
            "--striper" | "--help" => {}
            "--run-name" => self.run_name = Some(v),
            "--prefix" => self.prefix = Some(v),
            "--format" => {
                self.format = match v.as_str() {
                    "plain" => Format::Plain,
                    "json" => Format::Json,
                    "json-pretty" => Format::JsonPretty,
                    other => bail!("rados: unrecognized format: {other}"),
                }
            }
            "--output" => self.output = Some(v),
            "--output-format" => match v.as_str() {
                "json" => self.fiox_json = Some("-".into()),
                "normal" => self.fiox_json = None,
                other => bail!("fiox rados: --output-format takes json or normal, not '{other}'"),
            },
            "--fiox-json" => self.fiox_json = Some(v),
            other => unreachable!("{other} is a rados flag without a meaning"),
        }
        Ok(())
    }
}

/// How rados refuses a command line.
const DIALECT: Dialect = Dialect {
    needs_value: |name| anyhow::anyhow!("Option {name} requires an argument."),
    takes_no_value: |name| anyhow::anyhow!("Option {name} takes no argument."),
    unknown: |_, name| anyhow::anyhow!("fiox rados: option {name} is not supported yet"),
    words: true,
};

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        ceph: CephOpts::default(),
        command: Command::Cleanup,
        seconds: 0,
        threads: 16,
        op_size: None,
        object_size: None,
        max_objects: 0,
        cleanup: true,
        run_name: None,
        prefix: None,
        hints: true,
        verify: true,
        reuse: false,
        show_time: false,
        dest_object: false,
        dest_omap: false,
        dest_xattr: false,
        format: Format::Plain,
        output: None,
        fiox_json: None,
    };
    let mut ceph = CephOpts::default();
    let words = args::parse(FLAGS, args, &mut ceph, &DIALECT, |f, v| a.flag(f.name, v))?;
    a.ceph = ceph;
    match words.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["bench", secs, test, ..] => {
            a.seconds = secs.parse().map_err(|_| anyhow::anyhow!("Invalid value for seconds: '{secs}'"))?;
            a.command = Command::Bench(match *test {
                "write" => Test::Write,
                "seq" => Test::Seq,
                "rand" => Test::Rand,
                other => bail!("Unknown benchmark name: '{other}'"),
            });
        }
        ["cleanup", ..] => a.command = Command::Cleanup,
        ["bench", ..] | [] => bail!("{USAGE}"),
        [other, ..] => bail!("fiox rados: only 'bench' and 'cleanup' are implemented, not '{other}'"),
    }
    if a.ceph.pool.is_none() {
        bail!("error: must specify pool");
    }
    if a.op_size.is_some() && !matches!(a.command, Command::Bench(Test::Write)) {
        bail!("-b|--block_size option can be used only with 'write' bench test");
    }
    let dest = a.dest_object || a.dest_omap || a.dest_xattr;
    if dest && !matches!(a.command, Command::Bench(Test::Write)) {
        bail!("--write-object, --write-omap and --write-xattr options can only be used with the 'write' bench test");
    }
    if !dest {
        a.dest_object = true;
    }
    if a.output.is_some() && a.format == Format::Plain {
        bail!("-o|--output option can only be used with '--format' option");
    }
    Ok(a)
}

/// Per-second samples and latencies: the real tool's figures (Welford's mean and deviation,
/// with the n − 1 divisor, and the extremes).
#[derive(Default)]
struct Series {
    sums: Moments,
    max: f64,
    min: f64,
}

impl Series {
    fn add(&mut self, x: f64) {
        if self.sums.n == 0 {
            self.min = x;
            self.max = x;
        }
        self.sums.add(x);
        self.max = self.max.max(x);
        self.min = self.min.min(x);
    }
    fn n(&self) -> u64 {
        self.sums.n
    }
    fn mean(&self) -> f64 {
        self.sums.mean()
    }
    fn stddev(&self) -> f64 {
        self.sums.stddev()
    }
}

pub(crate) fn hostname() -> String {
    let h = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    h.trim().chars().take(29).collect()
}

/// `(2) No such file or directory`, as rados prints an errno.
fn rados_err(r: i64) -> String {
    let text = std::io::Error::from_raw_os_error((-r) as i32).to_string();
    let text = text.split(" (os error").next().unwrap_or(&text).to_string();
    format!("({}) {text}", -r)
}

/// The two lines with which rados reports a failed command, and its exit status.
fn fail(what: &str, r: i64) -> ExitCode {
    eprintln!("{what}: {}", rados_err(r));
    eprintln!("error {}: {}", -r, rados_err(r));
    ExitCode::from(1)
}

const HEADER: &str = "  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)";
/// The allocation hint's flags: sequential writes and reads, append-only, immutable
/// (`LIBRADOS_ALLOC_HINT_FLAG_*`), as the real tool sends them.
const ALLOC_HINT_FLAGS: u32 = 1 | 4 | 16 | 32;
const META_DEFAULT: &str = "benchmark_last_metadata";
const BENCH_PREFIX: &str = "benchmark_data";

/// `fiox rados --help`.
pub fn help() -> String {
    "usage: fiox rados [-c CONF] [--cluster NAME] [--id ID] [--keyring FILE] -p POOL [-N NAMESPACE]
                  bench SECONDS write|seq|rand [-t N] [-b SIZE] [-O SIZE] [--max-objects N]
                  [--no-cleanup] [--run-name NAME] [--no-hints] [--reuse-bench] [--no-verify]
                  [--show-time] [--write-object] [--write-omap] [--write-xattr]
                  [-f plain|json|json-pretty [-o FILE]]
                  [--output-format=json | --fiox-json FILE]
       fiox rados [...] -p POOL cleanup [--run-name NAME] [--prefix PREFIX]

Ceph's `rados bench` through librados: the same objects, contents and metadata object as
pacific's tool (so either tool's seq/rand reads and verifies the other's writes, and either
one's cleanup removes them) and the same output (per-second rows, then the summary; -f json as
the tool's). `cleanup` removes a run's objects and its metadata object, found through the
metadata (or, without it, every object whose name starts with the prefix).
fiox adds: --output-format=json prints a report in fio's JSON layout (latency percentiles from
fio's histogram, CPU per operation) instead; --fiox-json FILE writes it beside the usual output.
SIGINT/SIGTERM end the run with a summary of the operations completed.
Needs librados2 at run time.
"
    .to_string()
        + &args::options_help(FLAGS)
}

pub fn run(args: &[String]) -> Result<ExitCode> {
    let args = &bench_report::with_ceph_args(args);
    let a = match bench_report::parse_or_exit(args, help, parse, |_| 1) {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    let pool = a.ceph.pool.clone().unwrap_or_default();
    let threads = a.threads;
    let buf = match a.command {
        Command::Bench(Test::Write) => {
            let op = a.op_size.unwrap_or(4 << 20);
            op.min(a.object_size.unwrap_or(op))
        }
        // Reads learn their size from the metadata; the buffers grow then.
        _ => 0,
    };
    let mut client = match PoolClient::open(&a.ceph, threads.max(1), buf as usize) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error opening pool {pool}: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    match a.command {
        Command::Cleanup => cleanup(&mut client, &a),
        Command::Bench(test) => {
            bench_report::catch_signals();
            if a.fiox_json.as_deref() != Some("-") {
                println!("hints = {}", u8::from(a.hints));
            }
            if threads == 0 {
                return Ok(fail("error during benchmark", -(libc::EINVAL as i64)));
            }
            bench(client, &a, test)
        }
    }
}

/// A run's metadata object: object size, operations done, the writer's pid, op size.
struct Meta {
    object_size: u64,
    num_ops: u64,
    pid: u32,
    op_size: u64,
}

fn read_meta(client: &PoolClient, name: &str) -> Result<Meta, i64> {
    let b = client.read_sync(name, 24, 0)?;
    if b.len() < 16 {
        return Err(-(libc::EINVAL as i64));
    }
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let i32_at = |i: usize| i32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    let object_size = u64_at(0);
    // Before op sizes were recorded, an op was a whole object.
    let op_size = if b.len() >= 24 { u64_at(16) } else { object_size };
    Ok(Meta { object_size, num_ops: i32_at(8).max(0) as u64, pid: i32_at(12) as u32, op_size })
}

/// Op k's contents: `I'm the %16dth op!` with its NUL, then `z` to the end.
fn op_text(k: u64) -> String {
    format!("I'm the {k:>16}th op!\0")
}

fn fill_op(buf: &mut [u8], k: u64) {
    buf.fill(b'z');
    let text = op_text(k);
    let n = text.len().min(buf.len());
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
}

fn op_is_correct(buf: &[u8], k: u64) -> bool {
    // Compared a block at a time against a block of `z` (memcmp), not byte by byte: at 1 MiB
    // ops this was most of the read bench's CPU time.
    const ZS: [u8; 4096] = [b'z'; 4096];
    let text = op_text(k);
    let n = text.len().min(buf.len());
    buf[..n] == text.as_bytes()[..n] && buf[n..].chunks(ZS.len()).all(|c| c == &ZS[..c.len()])
}

/// One line of the bench's output; with `--show-time` after the local time, as the real tool
/// prefixes its preamble, header, rows, the summary's first line and the cleanup lines.
fn line(show_time: bool, text: &str) {
    if show_time {
        println!("{} {text}", now_text());
    } else {
        println!("{text}");
    }
}

/// A bench's objects: the sizes, the names and, for reads (and `--reuse-bench`), what the
/// writer left in the metadata object.
struct Objects {
    op_size: u64,
    object_size: u64,
    /// Ops per object.
    per_object: u64,
    /// `benchmark_data_HOST_PID`: the objects are `PREFIX_objectN`.
    prefix: String,
    /// The ops the writer made (0 for a new write).
    num_ops: u64,
    /// The writer's pid.
    pid: u32,
    meta_name: String,
}

impl Objects {
    /// A new write's objects, or those the metadata object describes; `Err` is the exit status
    /// of a bench that cannot start.
    fn new(client: &PoolClient, a: &Args, test: Test) -> Result<Objects, ExitCode> {
        let meta_name = a.run_name.clone().unwrap_or_else(|| META_DEFAULT.into());
        let (op_size, object_size, num_ops, pid) = match test {
            Test::Write if !a.reuse => {
                let op = a.op_size.unwrap_or(4 << 20);
                let object_size = a.object_size.unwrap_or(op);
                // An object smaller than an op: the op shrinks to the object (as rados bench does).
                (op.min(object_size), object_size, 0, std::process::id())
            }
            // Reads, and writes with --reuse-bench, take the sizes and the writer's pid (the
            // objects' names) from the metadata object.
            _ => match read_meta(client, &meta_name) {
                Ok(m) => (m.op_size.min(m.object_size).max(1), m.object_size, m.num_ops, m.pid),
                Err(r) if r == -(libc::ENOENT as i64) => {
                    if a.reuse {
                        eprintln!("Must write data before using reuse_bench for a write benchmark!");
                    } else {
                        eprintln!("Must write data before running a read benchmark!");
                    }
                    return Err(fail("error during benchmark", r));
                }
                Err(r) => return Err(fail("error during benchmark", r)),
            },
        };
        let prefix = format!("{BENCH_PREFIX}_{}_{pid}", hostname());
        let per_object = (object_size / op_size).max(1);
        Ok(Objects { op_size, object_size, per_object, prefix, num_ops, pid, meta_name })
    }

    /// Op `k`'s object.
    fn object(&self, k: u64) -> String {
        format!("{}_object{}", self.prefix, k / self.per_object)
    }

    /// Op `k`'s offset in its object.
    fn offset(&self, k: u64) -> u64 {
        self.op_size * (k % self.per_object)
    }

    /// How many objects `ops` ops write into.
    fn objects(&self, ops: u64) -> u64 {
        ops.div_ceil(self.per_object)
    }
}

/// One row of the per-second table (kept for `-f json`'s `datas`).
struct Row {
    sec: u64,
    cur_ops: u32,
    started: u64,
    finished: u64,
    avg_bw: f64,
    cur_bw: f64,
    last_lat: Option<f64>,
    avg_lat: f64,
}

fn row_text(r: &Row) -> String {
    format!(
        "{:5} {:7} {:9} {:9} {:>9} {:>9} {:>11} {:>11}",
        r.sec,
        r.cur_ops,
        r.started,
        r.finished,
        fmt_g(r.avg_bw),
        fmt_g(r.cur_bw),
        r.last_lat.map_or("-".to_string(), fmt_g),
        fmt_g(r.avg_lat)
    )
}

fn row_json(r: &Row) -> Value {
    json!({
        "sec": r.sec.to_string(),
        "cur_ops": r.cur_ops.to_string(),
        "started": r.started.to_string(),
        "finished": r.finished.to_string(),
        "avg_bw": f6(r.avg_bw),
        "cur_bw": f6(r.cur_bw),
        "last_lat": f6(r.last_lat.unwrap_or(0.0)),
        "avg_lat": f6(r.avg_lat),
    })
}

/// `%.6f`, as `-f json` prints figures.
fn f6(x: f64) -> String {
    format!("{x:.6}")
}

/// The per-second rows and the samples of them the summary reports.
struct Status {
    rows: Vec<Row>,
    /// The second whose row is due next.
    next: u64,
    /// The second of the last row, and the ops done by then.
    last_sec: u64,
    done_then: u64,
    /// MB/s and IOPS of each row since the one before.
    bw: Series,
    iops: Series,
}

/// One line of the summary: the text's label and value, `-f json`'s key and value.
struct Figure {
    label: &'static str,
    key: &'static str,
    text: String,
    json: String,
}

impl Figure {
    /// A figure as `%g`, and as `%.6f` in `-f json`.
    fn real(label: &'static str, key: &'static str, x: f64) -> Figure {
        Figure { label, key, text: fmt_g(x), json: f6(x) }
    }

    fn count(label: &'static str, key: &'static str, n: u64) -> Figure {
        Figure { label, key, text: n.to_string(), json: n.to_string() }
    }

    /// A figure as `%g`, and as its integer part in `-f json`.
    fn whole(label: &'static str, key: &'static str, x: f64) -> Figure {
        Figure { label, key, text: fmt_g(x), json: (x as i64).to_string() }
    }
}

/// A running `rados bench`: its objects, the slots in flight, the counts and latencies, the
/// per-second rows, and what ends it (the time, a failure, a signal).
struct Bench<'a> {
    a: &'a Args,
    test: Test,
    client: PoolClient,
    obj: Objects,
    /// The tool's own output is printed (not `-f json`, not fiox's report on stdout).
    plain: bool,
    /// The ops to start at most.
    max_ops: u64,
    slots: Slots,
    /// The op each slot carries.
    slot_op: Vec<u64>,
    finished: Vec<Finish>,
    started: u64,
    done: u64,
    /// Every op's latency: the tool's figures (seconds) and fio's histogram.
    lat: Series,
    dir: DirStat,
    last_lat: Option<f64>,
    status: Status,
    rng: Rand,
    meter: Meter,
    /// SECONDS after the start: no op starts after it.
    deadline: Instant,
    failure: Option<i64>,
    /// Reads whose contents were not their op's.
    incorrect: u64,
    interrupted: bool,
    /// Once a signal came: when the ops still in flight are given up.
    drain_until: Option<Instant>,
    last_completion: Instant,
    stall_warned: bool,
}

/// How the loop ended: its length, the CPU it took, the ops still in flight.
struct End {
    time: f64,
    cpu: (f64, f64),
    left: u32,
}

fn bench(mut client: PoolClient, a: &Args, test: Test) -> Result<ExitCode> {
    let obj = match Objects::new(&client, a, test) {
        Ok(o) => o,
        Err(code) => return Ok(code),
    };
    if test != Test::Write || a.reuse {
        client.resize_buffers(obj.op_size as usize);
    }
    let plain = a.format == Format::Plain && a.fiox_json.as_deref() != Some("-");
    if plain {
        announce(a, test, &obj);
    }
    let mut bench = Bench::new(client, a, test, obj, plain);
    bench.run();
    bench.finish()
}

/// The lines before the rows: what a write does, then the rows' header.
fn announce(a: &Args, test: Test, obj: &Objects) {
    let st = a.show_time;
    if test == Test::Write {
        line(st, &format!(
            "Maintaining {} concurrent writes of {op_size} bytes to objects of size {object_size} for up to {} seconds or {} objects",
            a.threads, a.seconds, a.max_objects, op_size = obj.op_size, object_size = obj.object_size
        ));
        line(st, &format!("Object prefix: {}", obj.prefix));
    }
    line(st, HEADER);
}

impl<'a> Bench<'a> {
    fn new(client: PoolClient, a: &'a Args, test: Test, obj: Objects, plain: bool) -> Bench<'a> {
        let max_ops = match test {
            Test::Write if a.max_objects > 0 => a.max_objects * obj.per_object,
            Test::Write | Test::Rand => u64::MAX,
            Test::Seq => obj.num_ops,
        };
        let status = Status {
            rows: Vec::new(),
            next: 1,
            last_sec: 0,
            done_then: 0,
            bw: Series::default(),
            iops: Series::default(),
        };
        let rng = Rand::from_clock();
        let meter = Meter::start();
        let deadline = meter.start + Duration::from_secs(a.seconds);
        Bench {
            a,
            test,
            client,
            obj,
            plain,
            max_ops,
            slots: Slots::new(a.threads),
            slot_op: vec![0; a.threads as usize],
            finished: Vec::new(),
            started: 0,
            done: 0,
            lat: Series::default(),
            dir: DirStat::default(),
            last_lat: None,
            status,
            rng,
            meter,
            deadline,
            failure: None,
            incorrect: 0,
            interrupted: false,
            drain_until: None,
            last_completion: Instant::now(),
            stall_warned: false,
        }
    }

    /// The loop: fill the idle slots, print the row that is due, wait for completions (or the
    /// next row, or a signal) and book them, until nothing is in flight and nothing may start.
    fn run(&mut self) {
        loop {
            let issuing = self.may_issue(Instant::now());
            if issuing {
                self.issue();
            }
            if self.status.rows.is_empty() {
                self.first_row();
            }
            // Rows come after the slots were refilled, so `Cur ops` shows the ops in flight.
            let now = Instant::now();
            if now >= self.row_due() {
                self.status_row(now);
            }
            if self.client.in_flight() == 0 && (!issuing || self.failure.is_some()) {
                break;
            }
            if self.drain_until.is_some_and(|d| now >= d) {
                break;
            }
            // Wake for the next completion, the next status row or a signal, whichever is first.
            let limit = self
                .row_due()
                .saturating_duration_since(Instant::now())
                .clamp(Duration::from_millis(1), Duration::from_millis(200));
            self.client.wait(1, Some(limit), &mut self.finished);
            let now = Instant::now();
            let mut finished = std::mem::take(&mut self.finished);
            for f in finished.drain(..) {
                self.complete(f, now);
            }
            self.finished = finished;
            self.warn_if_stalled(now);
        }
    }

    /// Whether ops may start now: in time, not all started, no failure and no signal (the
    /// first signal seen starts the drain's time).
    fn may_issue(&mut self, now: Instant) -> bool {
        if bench_report::stop_requested() && !self.interrupted {
            self.interrupted = true;
            self.drain_until = Some(now + bench_report::DRAIN_LIMIT);
        }
        // SECONDS = 0 still issues the first round, as the real tool does.
        let in_time = now < self.deadline || (self.a.seconds == 0 && self.started < self.a.threads as u64);
        in_time && self.started < self.max_ops && self.failure.is_none() && !self.interrupted
    }

    /// Starts ops in the idle slots until none is idle, all are started or one fails.
    fn issue(&mut self) {
        while self.started < self.max_ops {
            let Some(slot) = self.slots.take() else { break };
            let k = match self.test {
                Test::Write | Test::Seq => self.started,
                Test::Rand if self.started < self.a.threads as u64 && self.started < self.obj.num_ops => self.started,
                Test::Rand => self.rng.next() % self.obj.num_ops.max(1),
            };
            if let Err(r) = self.submit(slot, k) {
                self.failure = Some(r);
                self.slots.put_back(slot);
                break;
            }
            self.started += 1;
        }
    }

    /// Op `k` in `slot`: a write of its contents (and the parts `--write-*` ask for), or a read.
    fn submit(&mut self, slot: u32, k: u64) -> Result<(), i64> {
        let (oid, off, op_size) = (self.obj.object(k), self.obj.offset(k), self.obj.op_size);
        self.slot_op[slot as usize] = k;
        self.slots.submitted(slot);
        if self.test != Test::Write {
            return self.client.read(slot, &oid, op_size as usize, off);
        }
        fill_op(self.client.buf_mut(slot), k);
        let a = self.a;
        let parts = WriteParts {
            alloc_hint: a.hints.then_some((self.obj.object_size, op_size, ALLOC_HINT_FLAGS)),
            object: a.dest_object,
            omap_key: a.dest_omap.then(|| format!("bench-omap-key-{off}")),
            xattr: a.dest_xattr.then(|| format!("bench-xattr-key-{off}")),
        };
        self.client.write_parts(slot, &oid, op_size as usize, off, &parts)
    }

    /// Books a finished op: a failure, a read's check, its latency; its slot is idle again.
    fn complete(&mut self, f: Finish, now: Instant) {
        let k = self.slot_op[f.slot as usize];
        if self.test == Test::Write {
            if f.result < 0 && self.failure.is_none() {
                self.failure = Some(f.result);
            }
        } else if f.result < 0 {
            eprintln!("read got {}", f.result);
            self.failure.get_or_insert(f.result);
        } else if self.a.verify && !op_is_correct(&self.client.buf(f.slot)[..f.result as usize], k) {
            eprintln!("{} is not correct!", self.obj.object(k));
            self.incorrect += 1;
        }
        let l = self.slots.done(f.slot, now);
        self.lat.add(l.as_secs_f64());
        self.dir.add(l, self.obj.op_size);
        self.last_lat = Some(l.as_secs_f64());
        self.done += 1;
        self.last_completion = now;
        self.stall_warned = false;
    }

    /// Once per silence: a line on stderr when nothing completed for `STALL_WARN`.
    fn warn_if_stalled(&mut self, now: Instant) {
        let in_flight = self.client.in_flight();
        if in_flight == 0 || self.stall_warned || now.duration_since(self.last_completion) < bench_report::STALL_WARN {
            return;
        }
        self.stall_warned = true;
        eprintln!(
            "fiox rados bench: no operation completed for {} s; {} in flight, the oldest for {:.1} s (is the cluster stalled?)",
            bench_report::STALL_WARN.as_secs(),
            in_flight,
            self.slots.oldest_in_flight(now).as_secs_f64()
        );
    }

    /// When the next row is due.
    fn row_due(&self) -> Instant {
        self.meter.start + Duration::from_secs(self.status.next)
    }

    /// Row 0: the first round of ops started.
    fn first_row(&mut self) {
        let row = Row {
            sec: 0,
            cur_ops: self.client.in_flight(),
            started: self.started,
            finished: 0,
            avg_bw: 0.0,
            cur_bw: 0.0,
            last_lat: None,
            avg_lat: 0.0,
        };
        self.push_row(row);
    }

    /// The row that is due: MB/s and IOPS since the last row, and every 20 rows the latencies
    /// so far and the header again.
    fn status_row(&mut self, now: Instant) {
        let (done, op_size) = (self.done, self.obj.op_size as f64);
        let s = &mut self.status;
        let elapsed = now.duration_since(self.meter.start).as_secs_f64();
        // Whole seconds since the last row, as the real tool's status thread counts them.
        let since = (s.next - s.last_sec).max(1) as f64;
        let cur = (done - s.done_then) as f64 * op_size / 1048576.0 / since;
        let cur_iops = ((done - s.done_then) as f64 / since) as u64;
        s.bw.add(cur);
        s.iops.add(cur_iops as f64);
        let last_lat = if done > s.done_then { self.last_lat } else { None };
        if s.next % 20 == 0 && self.plain {
            let lat = &self.lat;
            println!(
                "{} min lat: {} max lat: {} avg lat: {}",
                now_text(),
                fmt_g(lat.min),
                fmt_g(lat.max),
                fmt_g(lat.mean())
            );
            line(self.a.show_time, HEADER);
        }
        let row = Row {
            sec: s.next,
            cur_ops: self.client.in_flight(),
            started: self.started,
            finished: done,
            avg_bw: done as f64 * op_size / 1048576.0 / elapsed,
            cur_bw: cur,
            last_lat,
            avg_lat: self.lat.mean(),
        };
        s.done_then = done;
        s.last_sec = s.next;
        s.next = elapsed as u64 + 1;
        self.push_row(row);
    }

    fn push_row(&mut self, row: Row) {
        if self.plain {
            line(self.a.show_time, &row_text(&row));
        }
        self.status.rows.push(row);
    }

    /// After the loop: the summary (text or `-f json`), the metadata object and the cleanup,
    /// fiox's report, and the exit status.
    fn finish(mut self) -> Result<ExitCode> {
        let end = End { time: self.meter.elapsed(), cpu: self.meter.cpu(), left: self.client.in_flight() };
        if let Some(r) = self.failure {
            return Ok(fail("error during benchmark", r));
        }
        if self.status.iops.n() == 0 {
            // Never sampled: rados bench's fallback.
            self.status.iops.add((self.done as f64 / end.time).trunc());
        }
        let summary = self.summary(end.time);
        self.print_summary(&summary)?;
        let removed = match self.keep_or_remove(end.left) {
            Ok(n) => n,
            Err(code) => return Ok(code),
        };
        if let Some(path) = &self.a.fiox_json {
            if let Err(code) = self.report(&end, &summary, removed).save_or_exit("fiox rados bench", path) {
                return Ok(code);
            }
        }
        Ok(self.exit_status(&end))
    }

    /// The summary's figures, in the tool's order.
    fn summary(&self, time: f64) -> Vec<Figure> {
        let (done, o, lat) = (self.done, &self.obj, &self.lat);
        let (bw, iops) = (&self.status.bw, &self.status.iops);
        let bandwidth = done as f64 * o.op_size as f64 / time / 1048576.0;
        let avg_iops = (done as f64 / time) as u64;
        let min_lat = if lat.n() > 0 { lat.min } else { 9999.0 };
        let mut s = vec![Figure::real("Total time run:", "total_time_run", time)];
        if self.test == Test::Write {
            let (max_bw, min_bw) = if bw.n() > 0 { (bw.max, bw.min) } else { (0.0, f64::MAX) };
            s.extend([
                Figure::count("Total writes made:", "total_writes_made", done),
                Figure::count("Write size:", "write_size", o.op_size),
                Figure::count("Object size:", "object_size", o.object_size),
                Figure::real("Bandwidth (MB/sec):", "bandwidth", bandwidth),
                Figure::real("Stddev Bandwidth:", "stddev_bandwidth", bw.stddev()),
                Figure::real("Max bandwidth (MB/sec):", "max_bandwidth", max_bw),
                Figure::real("Min bandwidth (MB/sec):", "min_bandwidth", min_bw),
                Figure::count("Average IOPS:", "average_iops", avg_iops),
                // The real tool prints this double through %d (a garbage integer); fiox the
                // integer part of the real figure.
                Figure::whole("Stddev IOPS:", "stddev_iops", iops.stddev()),
                Figure::whole("Max IOPS:", "max_iops", iops.max),
                Figure::whole("Min IOPS:", "min_iops", iops.min),
                Figure::real("Average Latency(s):", "average_latency", lat.mean()),
                Figure::real("Stddev Latency(s):", "stddev_latency", lat.stddev()),
                Figure::real("Max latency(s):", "max_latency", lat.max),
                Figure::real("Min latency(s):", "min_latency", min_lat),
            ]);
        } else {
            s.extend([
                Figure::count("Total reads made:", "total_reads_made", done),
                Figure::count("Read size:", "read_size", o.op_size),
                Figure::count("Object size:", "object_size", o.object_size),
                Figure::real("Bandwidth (MB/sec):", "bandwidth", bandwidth),
                Figure::count("Average IOPS:", "average_iops", avg_iops),
                Figure::real("Stddev IOPS:", "stddev_iops", iops.stddev()),
                Figure::whole("Max IOPS:", "max_iops", iops.max),
                Figure::whole("Min IOPS:", "min_iops", iops.min),
                Figure::real("Average Latency(s):", "average_latency", lat.mean()),
                Figure::real("Max latency(s):", "max_latency", lat.max),
                Figure::real("Min latency(s):", "min_latency", min_lat),
            ]);
        }
        s
    }

    /// The summary as the tool prints it: lines of text, or with `-f json` one object (to `-o
    /// FILE` if given); nothing when fiox's report takes stdout.
    fn print_summary(&self, summary: &[Figure]) -> Result<()> {
        if self.plain {
            let width = if self.test == Test::Write { 24 } else { 22 };
            for (i, f) in summary.iter().enumerate() {
                // The summary is one statement in the real tool: only its first line has the time.
                line(self.a.show_time && i == 0, &format!("{:<width$}{}", f.label, f.text));
            }
        } else if self.a.fiox_json.as_deref() != Some("-") {
            let doc = self.json_doc(summary);
            let out = if self.a.format == Format::JsonPretty {
                pretty4(&doc)
            } else {
                serde_json::to_string(&doc).unwrap_or_default()
            };
            match &self.a.output {
                Some(f) => std::fs::write(f, format!("{out}\n"))?,
                None => println!("{out}"),
            }
        }
        Ok(())
    }

    /// `-f json`'s object: a write's parameters, the rows (`datas`), the summary.
    fn json_doc(&self, summary: &[Figure]) -> Value {
        let (a, o) = (self.a, &self.obj);
        let mut m = Map::new();
        if self.test == Test::Write {
            for (k, v) in [
                ("concurrent_ios", a.threads.to_string()),
                ("object_size", o.object_size.to_string()),
                ("op_size", o.op_size.to_string()),
                ("seconds_to_run", a.seconds.to_string()),
                ("max_objects", a.max_objects.to_string()),
                ("object_prefix", o.prefix.clone()),
            ] {
                m.insert(k.into(), json!(v));
            }
        }
        m.insert("datas".into(), Value::Array(self.status.rows.iter().map(row_json).collect()));
        for f in summary {
            m.insert(f.key.into(), json!(f.json));
        }
        Value::Object(m)
    }

    /// After a write whose ops all finished: the metadata object seq and rand read (object
    /// size, ops done, pid, op size; little-endian), then, unless `--no-cleanup`, the objects
    /// and the metadata removed. The objects removed; `Err`, the exit status of a failure.
    fn keep_or_remove(&mut self, left: u32) -> Result<u64, ExitCode> {
        if self.test != Test::Write || left > 0 {
            return Ok(0);
        }
        let o = &self.obj;
        let mut meta = Vec::with_capacity(24);
        meta.extend_from_slice(&o.object_size.to_le_bytes());
        meta.extend_from_slice(&(self.done as i32).to_le_bytes());
        meta.extend_from_slice(&(o.pid as i32).to_le_bytes());
        meta.extend_from_slice(&o.op_size.to_le_bytes());
        self.client.write_full(&o.meta_name, &meta).map_err(|r| fail("error during benchmark", r))?;
        if !self.a.cleanup {
            return Ok(0);
        }
        let st = self.a.show_time;
        if self.plain {
            line(st, "Cleaning up (deleting benchmark objects)");
        }
        let t0 = Instant::now();
        let n = remove_run(&mut self.client, &o.prefix, o.objects(self.done), self.a.threads)
            .map_err(|r| fail("error during cleanup", r))?;
        if self.plain {
            line(st, &format!("Removed {n} object{}", if n == 1 { "" } else { "s" }));
            line(st, &format!("Clean up completed and total clean up time :{}", fmt_g(t0.elapsed().as_secs_f64())));
        }
        let _ = self.client.remove(&o.meta_name);
        Ok(n)
    }

    /// fiox's report: the run in fio's layout, the tool's parameters and summary in `fiox`.
    fn report(&mut self, end: &End, summary: &[Figure], removed: u64) -> BenchReport {
        let (a, o, test) = (self.a, &self.obj, self.test);
        let mut fiox = Map::new();
        fiox.insert("tool".into(), json!("rados bench"));
        fiox.insert("test".into(), json!(test.name()));
        fiox.insert("pool".into(), json!(a.ceph.pool));
        fiox.insert("concurrent_ios".into(), json!(a.threads));
        fiox.insert("op_size".into(), json!(o.op_size));
        fiox.insert("object_size".into(), json!(o.object_size));
        fiox.insert("object_prefix".into(), json!(o.prefix));
        fiox.insert("metadata_object".into(), json!(o.meta_name));
        if test == Test::Write {
            fiox.insert("objects_written".into(), json!(o.objects(self.done)));
            fiox.insert("objects_removed".into(), json!(removed));
        }
        let summary: Map<String, Value> = summary.iter().map(|f| (f.key.to_string(), json!(f.json))).collect();
        fiox.insert("summary".into(), Value::Object(summary));
        let dir = std::mem::take(&mut self.dir);
        let (read, write) = if test == Test::Write { (DirStat::default(), dir) } else { (dir, DirStat::default()) };
        let mut report = BenchReport {
            job: format!("rados-bench-{}", test.name()),
            runtime_s: end.time,
            read,
            write,
            cpu_s: end.cpu,
            error: if self.incorrect > 0 { libc::EIO as i64 } else { 0 },
            fiox,
        };
        if self.interrupted {
            report.note_interrupted(end.left);
        }
        report
    }

    /// A signal's end (saying where a write's objects were left), a read that found wrong
    /// contents, or success.
    fn exit_status(&self, end: &End) -> ExitCode {
        if self.interrupted {
            eprintln!("{}", bench_report::interrupted_line("fiox rados bench", end.time, self.done, end.left));
            if self.test == Test::Write && end.left > 0 {
                // No metadata object could be written: the prefix finds the objects.
                let (pool, prefix) = (self.a.ceph.pool.as_deref().unwrap_or_default(), &self.obj.prefix);
                eprintln!(
                    "fiox rados bench: the objects written are left in pool '{pool}'; `rados -p {pool} cleanup --prefix {prefix}` removes them"
                );
            }
            return ExitCode::from(1);
        }
        if self.incorrect > 0 {
            return fail("error during benchmark", -(libc::EIO as i64));
        }
        ExitCode::SUCCESS
    }
}

/// Ceph's pretty JSON: four-space indents.
fn pretty4(v: &Value) -> String {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    let _ = serde::Serialize::serialize(v, &mut ser);
    String::from_utf8(out).unwrap_or_default()
}

/// Removes objects `PREFIX_object0` .. `PREFIX_object{n-1}` with `threads` removals in flight;
/// a missing one is passed over. The number removed.
fn remove_run(client: &mut PoolClient, prefix: &str, n: u64, threads: u32) -> Result<u64, i64> {
    remove_names(client, (0..n).map(|k| format!("{prefix}_object{k}")), threads)
}

fn remove_names(client: &mut PoolClient, names: impl Iterator<Item = String>, threads: u32) -> Result<u64, i64> {
    let mut idle: Vec<u32> = (0..threads).rev().collect();
    let mut finished = Vec::new();
    let mut removed = 0u64;
    let mut failure = None;
    let mut reap = |client: &mut PoolClient, idle: &mut Vec<u32>, min: u32| {
        client.wait(min, None, &mut finished);
        for f in finished.drain(..) {
            match f.result {
                r if r >= 0 => removed += 1,
                r if r == -(libc::ENOENT as i64) => {}
                r => {
                    failure.get_or_insert(r);
                }
            }
            idle.push(f.slot);
        }
    };
    for name in names {
        while idle.is_empty() {
            reap(client, &mut idle, 1);
        }
        let slot = idle.pop().expect("an idle slot");
        if let Err(r) = client.remove_async(slot, &name) {
            idle.push(slot);
            reap(client, &mut idle, client.in_flight());
            return Err(r);
        }
    }
    while client.in_flight() > 0 {
        reap(client, &mut idle, client.in_flight());
    }
    match failure {
        Some(r) => Err(r),
        None => Ok(removed),
    }
}

/// `rados cleanup`: with the metadata object, the objects of the run it describes (this
/// host's name and the writer's pid) and then the metadata; without it, every object whose
/// name starts with the prefix (default `benchmark_data_<host>`).
fn cleanup(client: &mut PoolClient, a: &Args) -> Result<ExitCode> {
    let meta_name = a.run_name.clone().unwrap_or_else(|| META_DEFAULT.into());
    let prefix = a.prefix.clone().unwrap_or_else(|| format!("{BENCH_PREFIX}_{}", hostname()));
    if !prefix.starts_with(BENCH_PREFIX) {
        eprintln!("Specified --prefix invalid, it must begin with \"{BENCH_PREFIX}\"");
        return Ok(fail("error during cleanup", -(libc::EINVAL as i64)));
    }
    let objects = match client.list() {
        Ok(o) => o,
        Err(r) => return Ok(fail("error during cleanup", r)),
    };
    let ours: Vec<String> = objects.iter().filter(|o| o.starts_with(&prefix)).cloned().collect();
    if ours.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let removed = if objects.contains(&meta_name) {
        let m = match read_meta(client, &meta_name) {
            Ok(m) => m,
            Err(r) => return Ok(fail("error during cleanup", r)),
        };
        let wpo = (m.object_size / m.op_size.max(1)).max(1);
        let run_prefix = format!("{BENCH_PREFIX}_{}_{}", hostname(), m.pid);
        let n = match remove_run(client, &run_prefix, m.num_ops.div_ceil(wpo), a.threads) {
            Ok(n) => n,
            Err(r) => return Ok(fail("error during cleanup", r)),
        };
        if let Err(r) = client.remove(&meta_name) {
            return Ok(fail("error during cleanup", r));
        }
        n
    } else {
        println!("Warning: using slow linear search");
        match remove_names(client, ours.into_iter(), a.threads) {
            Ok(n) => n,
            Err(r) => return Ok(fail("error during cleanup", r)),
        }
    };
    println!("Removed {removed} object{}", if removed == 1 { "" } else { "s" });
    Ok(ExitCode::SUCCESS)
}

/// The time as rados prints it every 20 rows (`2020-01-30T18:55:04.687964+0000`, in UTC).
fn now_text() -> String {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}+0000",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_micros()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_contents_round_trip() {
        let mut b = vec![0u8; 4096];
        fill_op(&mut b, 1234);
        assert!(b.starts_with(b"I'm the             1234th op!\0zz"));
        assert!(op_is_correct(&b, 1234));
        assert!(!op_is_correct(&b, 1235));
        b[4000] = b'y';
        assert!(!op_is_correct(&b, 1234));
        // An op shorter than the text holds what fits.
        let mut s = vec![0u8; 8];
        fill_op(&mut s, 7);
        assert!(op_is_correct(&s, 7));
    }

    #[test]
    fn errno_as_rados_prints_it() {
        assert_eq!(rados_err(-2), "(2) No such file or directory");
        assert_eq!(rados_err(-22), "(22) Invalid argument");
    }
}
