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
use crate::ceph::bench_report::fmt_g;
use crate::ceph::bench_report::{self, BenchReport, DirStat};
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

/// Per-second samples and latencies with the running sums the summary needs (the real tool's
/// Welford figures; n − 1 divisor).
#[derive(Default)]
struct Series {
    n: u64,
    sum: f64,
    sum_sq: f64,
    max: f64,
    min: f64,
}

impl Series {
    fn add(&mut self, x: f64) {
        if self.n == 0 {
            self.min = x;
            self.max = x;
        }
        self.n += 1;
        self.sum += x;
        self.sum_sq += x * x;
        self.max = self.max.max(x);
        self.min = self.min.min(x);
    }
    fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }
    fn stddev(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        ((self.sum_sq - self.sum * self.sum / n) / (n - 1.0)).max(0.0).sqrt()
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

/// libc-like pseudo-random numbers for rand's op picks (the real tool seeds rand() with the
/// time; only the distribution matters).
struct Rand(u64);

impl Rand {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 >> 1
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

/// One line of the bench's output; with `--show-time` after the local time, as the real tool
/// prefixes its preamble, header, rows, the summary's first line and the cleanup lines.
fn line(show_time: bool, text: &str) {
    if show_time {
        println!("{} {text}", now_text());
    } else {
        println!("{text}");
    }
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

fn bench(mut client: PoolClient, a: &Args, test: Test) -> Result<ExitCode> {
    let plain = a.format == Format::Plain && a.fiox_json.as_deref() != Some("-");
    let meta_name = a.run_name.clone().unwrap_or_else(|| META_DEFAULT.into());
    let host = hostname();
    // What to do: sizes, the object prefix, and for reads how many ops the writer made.
    let st = a.show_time;
    let (op_size, object_size, prefix, num_ops, pid) = match test {
        Test::Write if !a.reuse => {
            let op = a.op_size.unwrap_or(4 << 20);
            let object_size = a.object_size.unwrap_or(op);
            // An object smaller than an op: the op shrinks to the object (as rados bench does).
            let op = op.min(object_size);
            let pid = std::process::id();
            (op, object_size, format!("{BENCH_PREFIX}_{host}_{pid}"), 0, pid)
        }
        // Reads, and writes with --reuse-bench, take the sizes and the writer's pid (the
        // objects' names) from the metadata object.
        _ => match read_meta(&client, &meta_name) {
            Ok(m) => {
                let prefix = format!("{BENCH_PREFIX}_{host}_{}", m.pid);
                (m.op_size.min(m.object_size).max(1), m.object_size, prefix, m.num_ops, m.pid)
            }
            Err(r) if r == -(libc::ENOENT as i64) => {
                if a.reuse {
                    eprintln!("Must write data before using reuse_bench for a write benchmark!");
                } else {
                    eprintln!("Must write data before running a read benchmark!");
                }
                return Ok(fail("error during benchmark", r));
            }
            Err(r) => return Ok(fail("error during benchmark", r)),
        },
    };
    if test != Test::Write || a.reuse {
        client.resize_buffers(op_size as usize);
    }
    let wpo = (object_size / op_size).max(1);
    if test == Test::Write && plain {
        line(st, &format!(
            "Maintaining {} concurrent writes of {op_size} bytes to objects of size {object_size} for up to {} seconds or {} objects",
            a.threads, a.seconds, a.max_objects
        ));
        line(st, &format!("Object prefix: {prefix}"));
    }
    if plain {
        line(st, HEADER);
    }
    let max_ops = match test {
        Test::Write if a.max_objects > 0 => a.max_objects * wpo,
        Test::Write | Test::Rand => u64::MAX,
        Test::Seq => num_ops,
    };
    let threads = a.threads;
    let mut submitted_at = vec![Instant::now(); threads as usize];
    let mut slot_op = vec![0u64; threads as usize];
    let mut finished: Vec<Finish> = Vec::new();
    let (mut started, mut done) = (0u64, 0u64);
    let mut lat = Series::default();
    let mut dir = DirStat::default();
    let mut last_lat: Option<f64> = None;
    let (mut bw, mut iops) = (Series::default(), Series::default());
    let mut rows: Vec<Row> = Vec::new();
    let mut rng =
        Rand(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64) | 1);
    let cpu0 = bench_report::cpu_now();
    let start = Instant::now();
    let stop = start + Duration::from_secs(a.seconds);
    let mut next_row = 1u64;
    let mut done_at_row = 0u64;
    let mut row_sec = 0u64;
    let mut idle: Vec<u32> = (0..threads).rev().collect();
    let mut failure: Option<i64> = None;
    let mut incorrect = 0u64;
    let mut row0 = false;
    let mut interrupted = false;
    let mut drain_until: Option<Instant> = None;
    let mut last_completion = Instant::now();
    let mut stall_warned = false;
    loop {
        let now = Instant::now();
        if bench_report::stop_requested() && !interrupted {
            interrupted = true;
            drain_until = Some(now + bench_report::DRAIN_LIMIT);
        }
        // SECONDS = 0 still issues the first round, as the real tool does.
        let in_time = now < stop || (a.seconds == 0 && started < threads as u64);
        let issuing = in_time && started < max_ops && failure.is_none() && !interrupted;
        while issuing && !idle.is_empty() && started < max_ops {
            let slot = idle.pop().expect("an idle slot");
            let k = match test {
                Test::Write | Test::Seq => started,
                Test::Rand if started < threads as u64 && started < num_ops => started,
                Test::Rand => rng.next() % num_ops.max(1),
            };
            let oid = format!("{prefix}_object{}", k / wpo);
            let off = op_size * (k % wpo);
            slot_op[slot as usize] = k;
            submitted_at[slot as usize] = Instant::now();
            let r = if test == Test::Write {
                fill_op(client.buf_mut(slot), k);
                let parts = WriteParts {
                    alloc_hint: a.hints.then_some((object_size, op_size, ALLOC_HINT_FLAGS)),
                    object: a.dest_object,
                    omap_key: a.dest_omap.then(|| format!("bench-omap-key-{off}")),
                    xattr: a.dest_xattr.then(|| format!("bench-xattr-key-{off}")),
                };
                client.write_parts(slot, &oid, op_size as usize, off, &parts)
            } else {
                client.read(slot, &oid, op_size as usize, off)
            };
            if let Err(r) = r {
                failure = Some(r);
                idle.push(slot);
                break;
            }
            started += 1;
        }
        if !row0 {
            row0 = true;
            let r = Row {
                sec: 0,
                cur_ops: client.in_flight(),
                started,
                finished: 0,
                avg_bw: 0.0,
                cur_bw: 0.0,
                last_lat: None,
                avg_lat: 0.0,
            };
            if plain {
                line(st, &row_text(&r));
            }
            rows.push(r);
        }
        // Rows come after the slots were refilled, so `Cur ops` shows the ops in flight.
        let now = Instant::now();
        let row_at = start + Duration::from_secs(next_row);
        if now >= row_at {
            let elapsed = now.duration_since(start).as_secs_f64();
            // Whole seconds since the last row, as the real tool's status thread counts them.
            let since = (next_row - row_sec).max(1) as f64;
            let cur = (done - done_at_row) as f64 * op_size as f64 / 1048576.0 / since;
            let cur_iops = ((done - done_at_row) as f64 / since) as u64;
            bw.add(cur);
            iops.add(cur_iops as f64);
            let last = if done > done_at_row { last_lat } else { None };
            if next_row % 20 == 0 && plain {
                println!(
                    "{} min lat: {} max lat: {} avg lat: {}",
                    now_text(),
                    fmt_g(lat.min),
                    fmt_g(lat.max),
                    fmt_g(lat.mean())
                );
                line(st, HEADER);
            }
            let r = Row {
                sec: next_row,
                cur_ops: client.in_flight(),
                started,
                finished: done,
                avg_bw: done as f64 * op_size as f64 / 1048576.0 / elapsed,
                cur_bw: cur,
                last_lat: last,
                avg_lat: lat.mean(),
            };
            if plain {
                line(st, &row_text(&r));
            }
            rows.push(r);
            done_at_row = done;
            row_sec = next_row;
            next_row = elapsed as u64 + 1;
        }
        if client.in_flight() == 0 && (!issuing || failure.is_some()) {
            break;
        }
        if drain_until.is_some_and(|d| now >= d) {
            break;
        }
        // Wake for the next completion, the next status row or a signal, whichever is first.
        let row_at = start + Duration::from_secs(next_row);
        let limit = row_at
            .saturating_duration_since(Instant::now())
            .clamp(Duration::from_millis(1), Duration::from_millis(200));
        client.wait(1, Some(limit), &mut finished);
        let now = Instant::now();
        for f in finished.drain(..) {
            let slot = f.slot as usize;
            let k = slot_op[slot];
            if test == Test::Write {
                if f.result < 0 && failure.is_none() {
                    failure = Some(f.result);
                }
            } else if f.result < 0 {
                eprintln!("read got {}", f.result);
                failure.get_or_insert(f.result);
            } else if a.verify && !op_is_correct(&client.buf(f.slot)[..f.result as usize], k) {
                eprintln!("{prefix}_object{} is not correct!", k / wpo);
                incorrect += 1;
            }
            let l = now.duration_since(submitted_at[slot]);
            lat.add(l.as_secs_f64());
            dir.add(l, op_size);
            last_lat = Some(l.as_secs_f64());
            done += 1;
            last_completion = now;
            stall_warned = false;
            idle.push(f.slot);
        }
        if client.in_flight() > 0 && !stall_warned && now.duration_since(last_completion) >= bench_report::STALL_WARN {
            stall_warned = true;
            let oldest = submitted_at
                .iter()
                .enumerate()
                .filter(|(i, _)| !idle.contains(&(*i as u32)))
                .map(|(_, t)| now.duration_since(*t))
                .max()
                .unwrap_or_default();
            eprintln!(
                "fiox rados bench: no operation completed for {} s; {} in flight, the oldest for {:.1} s (is the cluster stalled?)",
                bench_report::STALL_WARN.as_secs(),
                client.in_flight(),
                oldest.as_secs_f64()
            );
        }
    }
    let time = start.elapsed().as_secs_f64();
    let cpu1 = bench_report::cpu_now();
    let left = client.in_flight();
    if let Some(r) = failure {
        return Ok(fail("error during benchmark", r));
    }
    if iops.n == 0 {
        // Never sampled: rados bench's fallback.
        iops.add((done as f64 / time).trunc());
    }
    let bandwidth = done as f64 * op_size as f64 / time / 1048576.0;
    let avg_iops = (done as f64 / time) as u64;
    let min_lat = if lat.n > 0 { lat.min } else { 9999.0 };
    // The summary, as label/value pairs (text) and key/value pairs (-f json).
    let mut text: Vec<(&str, String)> = Vec::new();
    let mut keys: Vec<(&str, String)> = Vec::new();
    let f6 = |x: f64| format!("{x:.6}");
    text.push(("Total time run:", fmt_g(time)));
    keys.push(("total_time_run", f6(time)));
    if test == Test::Write {
        text.extend([
            ("Total writes made:", done.to_string()),
            ("Write size:", op_size.to_string()),
            ("Object size:", object_size.to_string()),
            ("Bandwidth (MB/sec):", fmt_g(bandwidth)),
            ("Stddev Bandwidth:", fmt_g(bw.stddev())),
            ("Max bandwidth (MB/sec):", fmt_g(if bw.n > 0 { bw.max } else { 0.0 })),
            ("Min bandwidth (MB/sec):", fmt_g(if bw.n > 0 { bw.min } else { f64::MAX })),
            ("Average IOPS:", avg_iops.to_string()),
            ("Stddev IOPS:", fmt_g(iops.stddev())),
            ("Max IOPS:", fmt_g(iops.max)),
            ("Min IOPS:", fmt_g(iops.min)),
            ("Average Latency(s):", fmt_g(lat.mean())),
            ("Stddev Latency(s):", fmt_g(lat.stddev())),
            ("Max latency(s):", fmt_g(lat.max)),
            ("Min latency(s):", fmt_g(min_lat)),
        ]);
        keys.extend([
            ("total_writes_made", done.to_string()),
            ("write_size", op_size.to_string()),
            ("object_size", object_size.to_string()),
            ("bandwidth", f6(bandwidth)),
            ("stddev_bandwidth", f6(bw.stddev())),
            ("max_bandwidth", f6(if bw.n > 0 { bw.max } else { 0.0 })),
            ("min_bandwidth", f6(if bw.n > 0 { bw.min } else { f64::MAX })),
            ("average_iops", avg_iops.to_string()),
            // The real tool prints this double through %d (a garbage integer); fiox the
            // integer part of the real figure.
            ("stddev_iops", (iops.stddev() as i64).to_string()),
            ("max_iops", (iops.max as i64).to_string()),
            ("min_iops", (iops.min as i64).to_string()),
            ("average_latency", f6(lat.mean())),
            ("stddev_latency", f6(lat.stddev())),
            ("max_latency", f6(lat.max)),
            ("min_latency", f6(min_lat)),
        ]);
    } else {
        text.extend([
            ("Total reads made:", done.to_string()),
            ("Read size:", op_size.to_string()),
            ("Object size:", object_size.to_string()),
            ("Bandwidth (MB/sec):", fmt_g(bandwidth)),
            ("Average IOPS:", avg_iops.to_string()),
            ("Stddev IOPS:", fmt_g(iops.stddev())),
            ("Max IOPS:", fmt_g(iops.max)),
            ("Min IOPS:", fmt_g(iops.min)),
            ("Average Latency(s):", fmt_g(lat.mean())),
            ("Max latency(s):", fmt_g(lat.max)),
            ("Min latency(s):", fmt_g(min_lat)),
        ]);
        keys.extend([
            ("total_reads_made", done.to_string()),
            ("read_size", op_size.to_string()),
            ("object_size", object_size.to_string()),
            ("bandwidth", f6(bandwidth)),
            ("average_iops", avg_iops.to_string()),
            ("stddev_iops", f6(iops.stddev())),
            ("max_iops", (iops.max as i64).to_string()),
            ("min_iops", (iops.min as i64).to_string()),
            ("average_latency", f6(lat.mean())),
            ("max_latency", f6(lat.max)),
            ("min_latency", f6(min_lat)),
        ]);
    }
    let width = if test == Test::Write { 24 } else { 22 };
    if plain {
        for (i, (label, value)) in text.iter().enumerate() {
            // The summary is one statement in the real tool: only its first line has the time.
            line(st && i == 0, &format!("{label:<width$}{value}"));
        }
    } else if a.fiox_json.as_deref() != Some("-") {
        let mut m = Map::new();
        if test == Test::Write {
            for (k, v) in [
                ("concurrent_ios", a.threads.to_string()),
                ("object_size", object_size.to_string()),
                ("op_size", op_size.to_string()),
                ("seconds_to_run", a.seconds.to_string()),
                ("max_objects", a.max_objects.to_string()),
                ("object_prefix", prefix.clone()),
            ] {
                m.insert(k.into(), json!(v));
            }
        }
        let datas: Vec<Value> = rows
            .iter()
            .map(|r| {
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
            })
            .collect();
        m.insert("datas".into(), Value::Array(datas));
        for (k, v) in &keys {
            m.insert((*k).into(), json!(v));
        }
        let doc = Value::Object(m);
        let out = if a.format == Format::JsonPretty {
            pretty4(&doc)
        } else {
            serde_json::to_string(&doc).unwrap_or_default()
        };
        match &a.output {
            Some(f) => std::fs::write(f, format!("{out}\n"))?,
            None => println!("{out}"),
        }
    }
    // The metadata object seq/rand read: object size, ops done, pid, op size (little-endian).
    if test == Test::Write && left == 0 {
        let mut meta = Vec::with_capacity(24);
        meta.extend_from_slice(&object_size.to_le_bytes());
        meta.extend_from_slice(&(done as i32).to_le_bytes());
        meta.extend_from_slice(&(pid as i32).to_le_bytes());
        meta.extend_from_slice(&op_size.to_le_bytes());
        if let Err(r) = client.write_full(&meta_name, &meta) {
            return Ok(fail("error during benchmark", r));
        }
    }
    let mut removed = None;
    if test == Test::Write && a.cleanup && left == 0 {
        if plain {
            line(st, "Cleaning up (deleting benchmark objects)");
        }
        let t0 = Instant::now();
        match remove_run(&mut client, &prefix, done.div_ceil(wpo), a.threads) {
            Ok(n) => removed = Some(n),
            Err(r) => return Ok(fail("error during cleanup", r)),
        }
        if plain {
            let n = removed.unwrap_or(0);
            line(st, &format!("Removed {n} object{}", if n == 1 { "" } else { "s" }));
            line(st, &format!("Clean up completed and total clean up time :{}", fmt_g(t0.elapsed().as_secs_f64())));
        }
        let _ = client.remove(&meta_name);
    }
    let error = if incorrect > 0 { -(libc::EIO as i64) } else { 0 };
    if let Some(path) = &a.fiox_json {
        let mut fiox = Map::new();
        fiox.insert("tool".into(), json!("rados bench"));
        fiox.insert("test".into(), json!(test.name()));
        fiox.insert("pool".into(), json!(a.ceph.pool));
        fiox.insert("concurrent_ios".into(), json!(a.threads));
        fiox.insert("op_size".into(), json!(op_size));
        fiox.insert("object_size".into(), json!(object_size));
        fiox.insert("object_prefix".into(), json!(prefix));
        fiox.insert("metadata_object".into(), json!(meta_name));
        if test == Test::Write {
            let objects = done.div_ceil(wpo);
            fiox.insert("objects_written".into(), json!(objects));
            fiox.insert("objects_removed".into(), json!(removed.unwrap_or(0)));
        }
        let summary: Map<String, Value> = keys.iter().map(|(k, v)| ((*k).to_string(), json!(v))).collect();
        fiox.insert("summary".into(), Value::Object(summary));
        if interrupted {
            fiox.insert("interrupted".into(), json!(bench_report::signal_name()));
            fiox.insert("left_in_flight".into(), json!(left));
        }
        let (read, write) = if test == Test::Write { (DirStat::default(), dir) } else { (dir, DirStat::default()) };
        let report = BenchReport {
            job: format!("rados-bench-{}", test.name()),
            runtime_s: time,
            read,
            write,
            cpu_s: (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1),
            error: -error,
            fiox,
        };
        if let Err(e) = report.save(path) {
            eprintln!("fiox rados bench: cannot write {path}: {e}");
            return Ok(ExitCode::from(1));
        }
    }
    if interrupted {
        eprintln!("{}", bench_report::interrupted_line("fiox rados bench", time, done, left));
        if test == Test::Write && left > 0 {
            // No metadata object could be written: the prefix finds the objects.
            let pool = a.ceph.pool.as_deref().unwrap_or_default();
            eprintln!(
                "fiox rados bench: the objects written are left in pool '{pool}'; `rados -p {pool} cleanup --prefix {prefix}` removes them"
            );
        }
        return Ok(ExitCode::from(1));
    }
    if incorrect > 0 {
        return Ok(fail("error during benchmark", -(libc::EIO as i64)));
    }
    Ok(ExitCode::SUCCESS)
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
