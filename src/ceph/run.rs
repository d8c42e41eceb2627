//! `fiox ceph`: seed 003's three-layer Ceph measurement in one command (reference/ceph.md
//! section 9.4). In order: `rados bench` write (kept), seq, rand and cleanup at the object
//! layer; `rbd bench` writes then reads, sequential and random, per I/O size, on an image; fio's
//! `rbd` engine over the seed's matrix of workloads per I/O size on the same image. Each run is
//! a child `fiox` process (so a stuck Ceph client is one killable process), its own output
//! saved in the results folder, and every run also leaves a report in fio's JSON layout, which
//! `fiox plot` and `fiox compare` read. One table follows, in one unit convention, with the
//! same figures for every layer and footnotes on what makes the layers differ. What fiox
//! created (the bench objects and their metadata, an image it made) is removed at the end,
//! also after a failure or a signal; nothing else is touched.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Context, Result};
use fiox_options::CephOpts;
use serde_json::Value;

use crate::ceph::args::{self, Dialect};
use crate::cli::{self, Complete, Flag};

/// Set by SIGINT/SIGTERM: no further layer runs.
static STOP: AtomicBool = AtomicBool::new(false);

const FIO_WORKLOADS: [&str; 6] = ["read", "randread", "write", "randwrite", "rw", "randrw"];

struct Args {
    ceph: CephOpts,
    conf: Option<String>,
    image: Option<String>,
    image_size: u64,
    threads: u32,
    runtime: u64,
    sizes: Vec<u64>,
    layers: Vec<String>,
    workloads: Vec<String>,
    io_total: Option<u64>,
    /// fio's layer as the seed ran it: `--threads` jobs of iodepth 1 (one librbd client each)
    /// instead of one job of iodepth `--threads`.
    fio_numjobs: bool,
    /// The RADOS Gateway's S3 endpoint (`HOST:PORT`) and the keys of its user, for the rgw
    /// layer; keys not given come from where `fiox s3 bench` finds them.
    rgw_host: Option<String>,
    access_key: Option<String>,
    secret_key: Option<String>,
    /// Whether `--layers` was given (else `--rgw-host` adds the rgw layer to the default ones).
    layers_given: bool,
    out: PathBuf,
}

/// `fiox ceph`'s flags, in the order `--help` lists them.
pub const FLAGS: &[Flag] = &[
    cli::HELP,
    Flag { help: "the pool to measure", ..args::POOL },
    args::CONF,
    args::CLUSTER,
    args::ID,
    args::NAME,
    Flag::value("--image", "NAME", "the image of the block layers (made and removed when missing)"),
    Flag::value("--image-size", "SIZE", "the size of the image fiox makes (default 1G)"),
    Flag::value("--threads", "N", "operations in flight in every run (default 30)").aliases(&["-t"]),
    Flag::value("--runtime", "SECS", "seconds per run (default 30)"),
    Flag::value("--sizes", "SIZES", "I/O sizes (default 4k,4m)"),
    Flag::value("--layers", "LAYERS", "rados, rgw, rbd, fio-rbd, dir:PATH (default rados,rbd,fio-rbd)"),
    Flag::value("--workloads", "RWS", "fio's workloads (default read,randread,write,randwrite,rw,randrw)"),
    Flag::value("--io-total", "SIZE", "bytes per rbd bench run (default the image's size)"),
    Flag::switch("--fio-numjobs", "fio's layer as the seed ran it: --threads jobs of iodepth 1, one client each"),
    Flag::value("--rgw-host", "HOST:PORT", "the RADOS Gateway's S3 endpoint: adds the rgw layer"),
    Flag::value("--access-key", "KEY", "the gateway user's S3 access key (default as fiox s3 bench)"),
    Flag::value("--secret-key", "SECRET", "the gateway user's S3 secret key (default as fiox s3 bench)"),
    Flag::value("--out", "DIR", "the results folder (default fiox-ceph)").aliases(&["-o"]).completes(Complete::Dir),
];

/// How `fiox ceph` refuses a command line.
const DIALECT: Dialect = Dialect {
    needs_value: |name| anyhow::anyhow!("fiox ceph: {name} needs a value"),
    takes_no_value: |name| anyhow::anyhow!("fiox ceph: {name} takes no value"),
    unknown: |arg, _| anyhow::anyhow!("fiox ceph: unknown option '{arg}' (see fiox ceph --help)"),
    words: false,
};

pub fn help() -> String {
    "usage: fiox ceph -p POOL [-c CONF] [--cluster NAME] [--id ID] [--image NAME] [--image-size SIZE]
                 [--threads N] [--runtime SECS] [--sizes 4k,4m] [--layers rados,rgw,rbd,fio-rbd[,dir:PATH]]
                 [--workloads read,randread,write,randwrite,rw,randrw] [--io-total SIZE]
                 [--fio-numjobs] [--rgw-host HOST:PORT [--access-key KEY --secret-key SECRET]]
                 [--out DIR]

Seed 003's comparison of Ceph's layers in one command: rados bench (write, seq, rand, then
cleanup, op size the largest of --sizes), S3 PUT and GET through the RADOS Gateway per size
(with --rgw-host: fiox s3 bench, --threads requests in flight), rbd bench (write then read,
seq and rand, per size)
and fio's rbd engine (the workloads per size, --threads deep) on one image, then one table:
IOPS, MiB/s and MB/s, latency mean, p50, p99 and max for every run, with footnotes on where
the layers differ (librbd's cache, I/Os split across objects, never-written ranges).
Defaults: --threads 30, --runtime 30 (per run), --sizes 4k,4m, every layer and workload, an
image fiox creates (--image-size 1G) and removes; an existing --image is used and kept.
--io-total caps each rbd bench run (default: the image's size). --fio-numjobs runs fio's layer
as the seed did: --threads jobs of iodepth 1 (one librbd client each) instead of one job.
dir:PATH adds the seed's block layer: the same fio workloads with libaio and direct=1 on a
file of --image-size bytes that fiox makes (and removes) in PATH, a file system on Ceph
(rbd-nbd or rbd-fuse plus a loop device, mounted there).
The rgw layer works in a bucket of its own (fiox-ceph-PID, made and removed): PUT for
--runtime seconds, then GET of --image-size worth of objects (at least --threads, at most
2500) uploaded first; every object it made is deleted. Keys: --access-key and --secret-key,
else $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY, else ~/.aws/credentials.
Sizes are 1024-based; the
seed's \"4M\" was --sizes 4096000.
The results folder (--out, default fiox-ceph, new or empty) keeps each run's own output
(native/), a report per run in fio's JSON layout (*.json: fiox plot DIR, fiox compare A B),
the table (table.txt) and the equivalent commands for the real tools (commands.txt).
"
    .to_string()
        + &args::options_help(FLAGS)
}

/// A size as `fiox ceph` takes it: Ceph's 1024-based units, more than 0.
fn size(v: &str) -> Option<u64> {
    args::size(v).filter(|&n| n > 0)
}

impl Args {
    /// One of `fiox ceph`'s own flags (the connection flags are `args::parse`'s).
    fn flag(&mut self, name: &str, v: String) -> Result<()> {
        let bad = |v: &str| anyhow::anyhow!("fiox ceph: bad value '{v}' for {name}");
        match name {
            "--image" => self.image = Some(v),
            "--image-size" => self.image_size = size(&v).ok_or_else(|| bad(&v))?,
            "--threads" => self.threads = v.parse().ok().filter(|&t| t > 0).ok_or_else(|| bad(&v))?,
            "--runtime" => self.runtime = v.parse().ok().filter(|&t| t > 0).ok_or_else(|| bad(&v))?,
            "--sizes" => self.sizes = v.split(',').map(|s| size(s).ok_or_else(|| bad(s))).collect::<Result<_>>()?,
            "--io-total" => self.io_total = Some(size(&v).ok_or_else(|| bad(&v))?),
            "--layers" => {
                self.layers = v.split(',').map(str::to_string).collect();
                self.layers_given = true;
                for l in &self.layers {
                    if let Some(d) = l.strip_prefix("dir:") {
                        if d.is_empty() {
                            bail!("fiox ceph: layer 'dir:' needs a directory (dir:/mnt/test)");
                        }
                        if !std::path::Path::new(d).is_dir() {
                            bail!("fiox ceph: layer '{l}': '{d}' is not a directory");
                        }
                    } else if !["rados", "rgw", "rbd", "fio-rbd"].contains(&l.as_str()) {
                        bail!("fiox ceph: unknown layer '{l}' (layers: rados, rgw, rbd, fio-rbd, dir:PATH)");
                    }
                }
                if self.layers.iter().filter(|l| l.starts_with("dir:")).count() > 1 {
                    bail!("fiox ceph: one dir: layer at most");
                }
            }
            "--workloads" => {
                self.workloads = v.split(',').map(str::to_string).collect();
                for w in &self.workloads {
                    if !FIO_WORKLOADS.contains(&w.as_str()) {
                        bail!("fiox ceph: unknown workload '{w}' (workloads: {})", FIO_WORKLOADS.join(", "));
                    }
                }
            }
            "--out" => self.out = PathBuf::from(v),
            "--fio-numjobs" => self.fio_numjobs = true,
            "--rgw-host" if v.is_empty() => return Err(bad(&v)),
            "--rgw-host" => self.rgw_host = Some(v),
            "--access-key" => self.access_key = Some(v),
            "--secret-key" => self.secret_key = Some(v),
            "--help" => {}
            other => unreachable!("{other} is a ceph flag without a meaning"),
        }
        Ok(())
    }
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        ceph: CephOpts::default(),
        conf: None,
        image: None,
        image_size: 1 << 30,
        threads: 30,
        runtime: 30,
        sizes: vec![4 << 10, 4 << 20],
        layers: vec!["rados".into(), "rbd".into(), "fio-rbd".into()],
        workloads: FIO_WORKLOADS.iter().map(|s| s.to_string()).collect(),
        io_total: None,
        fio_numjobs: false,
        rgw_host: None,
        access_key: None,
        secret_key: None,
        layers_given: false,
        out: PathBuf::from("fiox-ceph"),
    };
    let mut ceph = CephOpts::default();
    args::parse(FLAGS, args, &mut ceph, &DIALECT, |f, v| a.flag(f.name, v))?;
    a.conf = ceph.conf.clone();
    a.ceph = ceph;
    if a.ceph.pool.is_none() {
        bail!("fiox ceph: give the pool to measure: -p POOL");
    }
    if a.rgw_host.is_some() && !a.layers_given {
        a.layers.insert(1, "rgw".into());
    }
    if a.layers.iter().any(|l| l == "rgw") && a.rgw_host.is_none() {
        bail!("fiox ceph: layer rgw needs the gateway's S3 endpoint: --rgw-host HOST:PORT");
    }
    if a.sizes.is_empty() || a.layers.is_empty() {
        bail!("fiox ceph: nothing to run");
    }
    Ok(a)
}

/// One finished run: where its report is, and how to say what it was.
struct Row {
    layer: &'static str,
    tool: &'static str,
    workload: String,
    bs: u64,
    report: PathBuf,
    /// The equivalent command for the real tool.
    reference: String,
}

/// A byte size as people write it: `4 KiB`, `4 MiB`, `4000 KiB`, `4096000 B`.
fn size_text(b: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if b % (1 << shift) == 0 {
            return format!("{} {unit}", b >> shift);
        }
    }
    format!("{b} B")
}

fn size_arg(b: u64) -> String {
    for (shift, unit) in [(30, "G"), (20, "M"), (10, "K")] {
        if b % (1 << shift) == 0 {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

/// The child running now (0: none), for forwarding SIGTERM.
static CHILD: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// A `fiox ceph` session: the command line, what every child run is given, and what the layers
/// found so far (their rows, failures and notes, the image they share).
struct Session<'a> {
    a: &'a Args,
    exe: PathBuf,
    native: PathBuf,
    /// The connection options every Ceph tool takes.
    conn: Vec<String>,
    pool: String,
    /// `--threads` and `--runtime` as the runs take them.
    threads: String,
    secs: String,
    /// The rados bench runs' metadata object.
    run_name: String,
    /// The image both block layers use, and its size.
    image: String,
    image_size: u64,
    /// The image, when fiox created it (and so removes it).
    created_image: Option<String>,
    /// How much of the image the fio layer's reads find unwritten.
    unwritten: Option<f64>,
    rows: Vec<Row>,
    notes: Vec<String>,
    failed: Vec<String>,
}

/// Set once SIGINT/SIGTERM came: no further run starts.
fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

pub fn run(args: &[String]) -> Result<ExitCode> {
    let a = match crate::ceph::bench_report::parse_or_exit(args, help, parse, |_| 1) {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    let dir_file = match check_paths(&a) {
        Ok(f) => f,
        Err(code) => return Ok(code),
    };
    let mut s = Session::new(&a)?;
    if s.wants("rados") {
        s.rados_layer()?;
    }
    if s.wants("rgw") {
        s.rgw_layer()?;
    }
    if (s.wants("rbd") || s.wants("fio-rbd")) && !stopped() {
        if let Err(code) = s.open_image() {
            return Ok(code);
        }
    }
    if s.wants("rbd") {
        s.rbd_layer()?;
    }
    if s.wants("fio-rbd") {
        s.fio_rbd_layer()?;
    }
    if let Some(file) = &dir_file {
        s.dir_layer(file)?;
    }
    s.remove_image();
    s.finish()
}

/// The results folder must be new or empty, and the dir: layer's file (a name of fiox's own)
/// must not exist: fiox removes only what it made. The file's path.
fn check_paths(a: &Args) -> Result<Option<PathBuf>, ExitCode> {
    if a.out.exists() && std::fs::read_dir(&a.out).map(|mut d| d.next().is_some()).unwrap_or(true) {
        eprintln!("fiox ceph: the results folder '{}' is not empty; give a new one with --out", a.out.display());
        return Err(ExitCode::from(1));
    }
    let dir_file = a
        .layers
        .iter()
        .find_map(|l| l.strip_prefix("dir:"))
        .map(|d| PathBuf::from(d).join(format!("fiox-ceph-{}.dat", std::process::id())));
    if let Some(f) = dir_file.as_ref().filter(|f| f.exists()) {
        eprintln!("fiox ceph: {} exists already; fiox does not use or remove a file it did not make", f.display());
        return Err(ExitCode::from(1));
    }
    Ok(dir_file)
}

/// SIGINT/SIGTERM stop `fiox ceph` after the run in progress, and reach that run too (a Ctrl-C
/// on a terminal reaches the whole process group anyway).
fn forward_signals() {
    fiox_engine::sys::stop_on_signals(&STOP);
    std::thread::spawn(|| loop {
        std::thread::sleep(std::time::Duration::from_millis(100));
        if STOP.load(Ordering::Relaxed) {
            let pid = CHILD.load(Ordering::Relaxed);
            if pid != 0 {
                let _ = fiox_engine::sys::send_signal(pid, fiox_engine::sys::caught_signal().max(15));
            }
            return;
        }
    });
}

impl<'a> Session<'a> {
    /// The results folder's `native/` made, signals caught, the children's settings.
    fn new(a: &'a Args) -> Result<Session<'a>> {
        let native = a.out.join("native");
        std::fs::create_dir_all(&native).with_context(|| format!("cannot create {}", native.display()))?;
        forward_signals();
        let mut conn: Vec<String> = Vec::new();
        if let Some(c) = &a.conf {
            conn.extend(["-c".into(), c.clone()]);
        }
        if let Some(c) = &a.ceph.clustername {
            conn.extend(["--cluster".into(), c.clone()]);
        }
        if let Some(c) = &a.ceph.clientname {
            conn.extend(["--id".into(), c.clone()]);
        }
        Ok(Session {
            a,
            exe: std::env::current_exe().context("cannot find the fiox binary")?,
            native,
            conn,
            pool: a.ceph.pool.clone().unwrap_or_default(),
            threads: a.threads.to_string(),
            secs: a.runtime.to_string(),
            run_name: format!("fiox-ceph-{}", std::process::id()),
            image: a.image.clone().unwrap_or_else(|| format!("fiox-ceph-{}", std::process::id())),
            image_size: a.image_size,
            created_image: None,
            unwritten: None,
            rows: Vec::new(),
            notes: Vec::new(),
            failed: Vec::new(),
        })
    }

    fn wants(&self, layer: &str) -> bool {
        self.a.layers.iter().any(|x| x == layer)
    }

    /// Runs `fiox ARGS` with stdout into `native/NAME`; true when it ended well.
    fn child(&self, args: &[String], native: &str) -> Result<bool> {
        let out = std::fs::File::create(self.native.join(native))
            .with_context(|| format!("cannot create {}", self.native.join(native).display()))?;
        let mut cmd = Command::new(&self.exe);
        cmd.args(args).stdout(out).stderr(Stdio::piped()).stdin(Stdio::null());
        // The rgw layer's keys reach `fiox s3 bench` as the AWS variables, not on its command
        // line, where any user could read them.
        if let Some(k) = &self.a.access_key {
            cmd.env("AWS_ACCESS_KEY_ID", k);
        }
        if let Some(k) = &self.a.secret_key {
            cmd.env("AWS_SECRET_ACCESS_KEY", k);
        }
        if let Some(c) = &self.a.conf {
            // fio's rbd engine has no conf= option: the configuration reaches it (and every
            // other run) through CEPH_CONF, as librados reads it.
            cmd.env("CEPH_CONF", c);
        }
        let child = cmd.spawn().context("cannot start a fiox run")?;
        CHILD.store(child.id(), Ordering::Relaxed);
        let o = child.wait_with_output()?;
        CHILD.store(0, Ordering::Relaxed);
        let err = String::from_utf8_lossy(&o.stderr);
        // Warnings the table's footnotes repeat are not repeated here.
        for l in err.lines().filter(|l| !l.contains("warning: ") || !l.contains("never written")) {
            eprintln!("fiox ceph: {native}: {l}");
        }
        Ok(o.status.success())
    }

    /// `fiox TOOL` and the connection options.
    fn tool_args(&self, tool: &str) -> Vec<String> {
        let mut args = vec![tool.to_string()];
        args.extend(self.conn.iter().cloned());
        args
    }

    /// Books a run that ended: its row if it ended well, else `name` among the failed.
    fn book(&mut self, ok: bool, row: Row, name: String) {
        if ok {
            self.rows.push(row);
        } else {
            self.failed.push(name);
        }
    }

    /// The object layer: the seed's rados bench write, seq and rand at the largest size, then
    /// the cleanup of the write's objects.
    fn rados_layer(&mut self) -> Result<()> {
        let op = *self.a.sizes.iter().max().expect("sizes");
        let (pool, t, secs, run_name) =
            (self.pool.clone(), self.threads.clone(), self.secs.clone(), self.run_name.clone());
        let mut wrote = false;
        for test in ["write", "seq", "rand"] {
            if stopped() || (test != "write" && !wrote) {
                break;
            }
            let report = self.a.out.join(format!("rados-bench-{test}.json"));
            let mut args = self.tool_args("rados");
            args.extend(["-p".into(), pool.clone(), "bench".into(), secs.clone(), test.into(), "-t".into(), t.clone()]);
            let mut reference = format!("rados -p {pool} bench {secs} {test} -t {t}");
            if test == "write" {
                args.extend(["-b".into(), op.to_string(), "--no-cleanup".into()]);
                write!(reference, " -b {} --no-cleanup", size_arg(op)).ok();
            }
            args.extend(["--run-name".into(), run_name.clone()]);
            write!(reference, " --run-name {run_name}").ok();
            args.extend(["--fiox-json".into(), report.display().to_string()]);
            let ok = self.child(&args, &format!("rados-bench-{test}.txt"))?;
            if test == "write" {
                wrote = true;
            }
            let workload = match test {
                "seq" => "seq read".into(),
                "rand" => "rand read".into(),
                w => w.into(),
            };
            let row = Row { layer: "RADOS", tool: "rados bench", workload, bs: op, report, reference };
            self.book(ok, row, format!("rados bench {test}"));
        }
        if wrote {
            let mut args = self.tool_args("rados");
            args.extend(["-p".into(), pool.clone(), "cleanup".into(), "--run-name".into(), run_name.clone()]);
            if !self.child(&args, "rados-cleanup.txt")? {
                self.failed.push("rados cleanup".into());
                self.notes.push(format!(
                    "The rados bench objects could not all be removed: `rados -p {pool} cleanup --run-name {run_name}` removes them."
                ));
            }
        }
        Ok(())
    }

    /// The gateway layer: per size, S3 PUTs for `--runtime` seconds, then GETs of objects
    /// uploaded first, each a `fiox s3 bench` run in a bucket of fiox's own (made and removed
    /// by the run, with every object the run made).
    fn rgw_layer(&mut self) -> Result<()> {
        let a = self.a;
        let host = a.rgw_host.clone().expect("checked by parse");
        let bucket = format!("fiox-ceph-{}", std::process::id());
        for &bs in &a.sizes {
            for mode in ["put", "get"] {
                if stopped() {
                    return Ok(());
                }
                let name = format!("rgw-{mode}-{}", size_arg(bs).to_lowercase());
                let report = a.out.join(format!("{name}.json"));
                let mut args: Vec<String> =
                    ["s3", "bench", mode, "--host", &host, "--bucket", &bucket].map(String::from).to_vec();
                args.extend(["--concurrent".into(), self.threads.clone(), "--obj.size".into(), bs.to_string()]);
                args.extend(["--duration".into(), format!("{}s", self.secs)]);
                let mut reference = format!(
                    "warp {mode} --host {host} --bucket {bucket} --concurrent {} --obj.size {} --duration {}s",
                    self.threads,
                    size_text(bs).replace(' ', ""),
                    self.secs
                );
                if mode == "get" {
                    let objects = rgw_objects(a.image_size, bs, a.threads);
                    args.extend(["--objects".into(), objects.to_string()]);
                    write!(reference, " --objects {objects}").ok();
                }
                args.push("--json".into());
                let native = format!("{name}.json");
                let ok = self.child(&args, &native)?;
                if ok {
                    std::fs::rename(self.native.join(&native), &report)
                        .with_context(|| format!("cannot move {native} to {}", report.display()))?;
                }
                let workload = format!("S3 {}", mode.to_uppercase());
                self.book(ok, Row { layer: "RGW", tool: "fiox s3 bench", workload, bs, report, reference }, name);
            }
        }
        Ok(())
    }

    /// The image both block layers use: an existing one's size, or one fiox makes (and removes
    /// at the end). `Err`: the exit status when neither can be.
    fn open_image(&mut self) -> Result<(), ExitCode> {
        let mut opts = self.a.ceph.clone();
        opts.rbdname = Some(self.image.clone());
        match fiox_engine::ImageClient::open(&opts, 1, 0) {
            Ok(c) => self.image_size = c.size(),
            Err(e) if e.contains("not found") => {
                if let Err(e) = fiox_engine::ceph_create_image(&self.a.ceph, &self.image, self.a.image_size) {
                    eprintln!("fiox ceph: {e}");
                    return Err(ExitCode::from(1));
                }
                self.created_image = Some(self.image.clone());
            }
            Err(e) => {
                eprintln!("fiox ceph: {e}");
                return Err(ExitCode::from(1));
            }
        }
        Ok(())
    }

    /// The block layer of rbd bench: writes then reads, sequential and random, per size.
    fn rbd_layer(&mut self) -> Result<()> {
        let a = self.a;
        let io_total = a.io_total.unwrap_or(self.image_size).min(self.image_size);
        let spec = format!("{}/{}", self.pool, self.image);
        for &bs in &a.sizes {
            for (io_type, pattern) in [("write", "seq"), ("write", "rand"), ("read", "seq"), ("read", "rand")] {
                if stopped() {
                    return Ok(());
                }
                let name = format!("rbd-bench-{io_type}-{pattern}-{}", size_arg(bs).to_lowercase());
                let report = a.out.join(format!("{name}.json"));
                let mut args = self.tool_args("rbd");
                let tail = [
                    "bench",
                    "--io-type",
                    io_type,
                    "--io-size",
                    &bs.to_string(),
                    "--io-threads",
                    &self.threads,
                    "--io-total",
                    &io_total.to_string(),
                    "--io-pattern",
                    pattern,
                    &spec,
                ]
                .map(String::from);
                args.extend(tail.iter().cloned());
                args.extend(["--fiox-json".into(), report.display().to_string()]);
                let reference = format!(
                    "rbd bench --io-type {io_type} --io-size {} --io-threads {} --io-total {} --io-pattern {pattern} {spec}",
                    size_arg(bs),
                    self.threads,
                    size_arg(io_total)
                );
                let ok = self.child(&args, &format!("{name}.txt"))?;
                let workload = format!("{pattern} {io_type}");
                self.book(ok, Row { layer: "RBD", tool: "rbd bench", workload, bs, report, reference }, name);
            }
        }
        Ok(())
    }

    /// fio's rbd engine on the image: the workloads per size, after a prefill when the rbd
    /// layer did not write the image.
    fn fio_rbd_layer(&mut self) -> Result<()> {
        // Reads of a thin image's unwritten ranges cost the cluster nothing: fill it first
        // when the rbd layer did not (its sequential writes cover the whole image).
        if !self.wants("rbd") && !stopped() {
            let mut args: Vec<String> = vec![
                "--name=prefill".into(),
                "--ioengine=rbd".into(),
                format!("--pool={}", self.pool),
                format!("--rbdname={}", self.image),
                "--rw=write".into(),
                "--bs=4m".into(),
                "--iodepth=16".into(),
                "--output-format=json".into(),
            ];
            args.extend(engine_conn(self.a));
            if !self.child(&args, "fio-rbd-prefill.json")? {
                self.failed.push("fio-rbd prefill".into());
            }
        }
        let mut opts = self.a.ceph.clone();
        opts.rbdname = Some(self.image.clone());
        if let Ok(c) = fiox_engine::ImageClient::open(&opts, 1, 0) {
            if let Ok(w) = c.written_bytes(0, c.size()) {
                self.unwritten = Some(1.0 - w as f64 / c.size() as f64);
            }
        }
        self.fio_runs("fio-rbd", "RBD", "fio rbd engine", |s, name, w, bs| {
            let mut job = vec![
                format!("--name={name}"),
                "--ioengine=rbd".into(),
                format!("--pool={}", s.pool),
                format!("--rbdname={}", s.image),
                format!("--rw={w}"),
                format!("--bs={bs}"),
                format!("--runtime={}", s.secs),
            ];
            job.extend(s.depth(false));
            job.extend(engine_conn(s.a));
            job
        })
    }

    /// The seed's block layer: fio's libaio engine, direct, on `file` in a file system on Ceph
    /// (removed afterwards).
    fn dir_layer(&mut self, file: &std::path::Path) -> Result<()> {
        self.fio_runs("dir", "BLOCK", "fio libaio (dir)", |s, name, w, bs| {
            let mut job = vec![
                format!("--name={name}"),
                format!("--filename={}", file.display()),
                "--ioengine=libaio".into(),
                "--direct=1".into(),
                format!("--rw={w}"),
                format!("--bs={bs}"),
                format!("--size={}", s.a.image_size),
                format!("--runtime={}", s.secs),
            ];
            job.extend(s.depth(true));
            job
        })?;
        if file.exists() {
            if let Err(e) = std::fs::remove_file(file) {
                eprintln!("fiox ceph: cannot remove {}: {e}", file.display());
                self.notes.push(format!("The dir: layer's file was left behind: `rm {}` removes it.", file.display()));
            }
        }
        Ok(())
    }

    /// A fio layer's depth: one job `--threads` deep, or with `--fio-numjobs` `--threads` jobs
    /// of depth 1 (threads, not processes, with `thread`).
    fn depth(&self, thread: bool) -> Vec<String> {
        let t = &self.threads;
        if !self.a.fio_numjobs {
            return vec![format!("--iodepth={t}")];
        }
        let mut v = vec![format!("--numjobs={t}"), "--iodepth=1".into()];
        if thread {
            v.push("--thread".into());
        }
        v.push("--group_reporting".into());
        v
    }

    /// A layer of fio-compatible runs named `LABEL-WORKLOAD-SIZE`: the workloads per size, each
    /// job's options from `job(session, name, workload, size)`. The fio-layout report is a
    /// run's own output; `native/` keeps nothing of a run that ended well.
    fn fio_runs(
        &mut self,
        label: &str,
        layer: &'static str,
        tool: &'static str,
        job: impl Fn(&Self, &str, &str, u64) -> Vec<String>,
    ) -> Result<()> {
        let a = self.a;
        for &bs in &a.sizes {
            for w in &a.workloads {
                if stopped() {
                    return Ok(());
                }
                let name = format!("{label}-{w}-{}", size_arg(bs).to_lowercase());
                let report = a.out.join(format!("{name}.json"));
                let job = job(self, &name, w, bs);
                let reference = format!("fio {}", job.join(" "));
                let mut args = job;
                args.extend(["--output-format=json+".into(), format!("--output={}", report.display())]);
                let ok = self.child(&args, &format!("{name}.txt"))?;
                if ok {
                    let _ = std::fs::remove_file(self.native.join(format!("{name}.txt")));
                }
                self.book(ok, Row { layer, tool, workload: w.clone(), bs, report, reference }, name);
            }
        }
        Ok(())
    }

    /// The image fiox created, removed (or a note saying how to).
    fn remove_image(&mut self) {
        if let Some(img) = &self.created_image {
            if let Err(e) = fiox_engine::ceph_remove_image(&self.a.ceph, img) {
                eprintln!("fiox ceph: {e}");
                self.notes
                    .push(format!("The image fiox created was left behind: `rbd rm {}/{img}` removes it.", self.pool));
            }
        }
    }

    /// The table and its footnotes (printed, and in table.txt), the real tools' commands
    /// (commands.txt), and the exit status.
    fn finish(self) -> Result<ExitCode> {
        let a = self.a;
        let (table, mut foot) = render(&self.rows, self.unwritten, self.image_size, a);
        foot.extend(self.notes);
        let mut text = table;
        for (i, n) in foot.iter().enumerate() {
            writeln!(text, "[{}] {n}", i + 1).ok();
        }
        print!("{text}");
        std::fs::write(a.out.join("table.txt"), &text)?;
        let mut cmds = String::new();
        for r in &self.rows {
            writeln!(cmds, "{}", r.reference).ok();
        }
        std::fs::write(a.out.join("commands.txt"), cmds)?;
        if stopped() {
            eprintln!(
                "fiox ceph: interrupted by {}; the table holds the runs that finished",
                crate::ceph::bench_report::signal_name()
            );
            return Ok(ExitCode::from(1));
        }
        if !self.failed.is_empty() {
            eprintln!(
                "fiox ceph: these runs failed (their output is in {}): {}",
                self.native.display(),
                self.failed.join(", ")
            );
            return Ok(ExitCode::from(1));
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// How many objects the rgw layer's GET run uploads first: the image's worth of `bs`-byte
/// objects, at least one per request in flight and at most 2500 (warp's default).
fn rgw_objects(image_size: u64, bs: u64, threads: u32) -> u64 {
    (image_size / bs.max(1)).clamp(u64::from(threads), 2500.max(u64::from(threads)))
}

/// The connection as fio's rbd engine options.
fn engine_conn(a: &Args) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(c) = &a.ceph.clustername {
        v.push(format!("--clustername={c}"));
    }
    if let Some(c) = &a.ceph.clientname {
        v.push(format!("--clientname={c}"));
    }
    v
}

/// The figures of one direction of a report, as the table shows them.
struct Fig {
    ios: u64,
    secs: f64,
    iops: f64,
    bw: f64,
    mean_ns: f64,
    p50_ns: Option<f64>,
    p99_ns: Option<f64>,
    max_ns: f64,
}

fn figures(report: &Value, dir: &str) -> Option<Fig> {
    let jobs = report.get("jobs")?.as_array()?;
    let (mut ios, mut bytes, mut ms, mut sum_ns, mut max_ns) = (0u64, 0.0f64, 0u64, 0.0f64, 0.0f64);
    let mut pcts: Option<(f64, f64)> = None;
    for j in jobs {
        let d = j.get(dir)?;
        let n = d.get("total_ios").and_then(Value::as_u64).unwrap_or(0);
        if n == 0 {
            continue;
        }
        ios += n;
        bytes += d.get("io_bytes").and_then(Value::as_f64).unwrap_or(0.0);
        ms = ms.max(d.get("runtime").and_then(Value::as_u64).unwrap_or(0));
        let clat = d.get("clat_ns")?;
        sum_ns += clat.get("mean").and_then(Value::as_f64).unwrap_or(0.0) * n as f64;
        max_ns = max_ns.max(clat.get("max").and_then(Value::as_f64).unwrap_or(0.0));
        let p = |k: &str| clat.get("percentile").and_then(|p| p.get(k)).and_then(Value::as_f64);
        if let (Some(a), Some(b)) = (p("50.000000"), p("99.000000")) {
            pcts = Some((a, b));
        }
    }
    if ios == 0 {
        return None;
    }
    let secs = ms as f64 / 1000.0;
    Some(Fig {
        ios,
        secs,
        iops: if secs > 0.0 { ios as f64 / secs } else { 0.0 },
        bw: if secs > 0.0 { bytes / secs } else { 0.0 },
        mean_ns: sum_ns / ios as f64,
        p50_ns: pcts.map(|p| p.0),
        p99_ns: pcts.map(|p| p.1),
        max_ns,
    })
}

/// What a path is on: `ext4 on /dev/loop0, mounted at /mnt/test` (the longest mount point
/// that holds it).
fn mount_of(path: &std::path::Path) -> String {
    let dir = path.parent().and_then(|d| d.canonicalize().ok()).unwrap_or_default();
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let best = mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            // Spaces in mount points are written \040.
            let mp = f.get(1)?.replace("\\040", " ");
            dir.starts_with(&mp).then(|| (mp, f[0].to_string(), f.get(2).copied().unwrap_or("").to_string()))
        })
        .max_by_key(|(mp, _, _)| mp.len());
    match best {
        Some((mp, dev, fs)) => {
            let mut text = format!("{fs} on {dev}, mounted at {mp}");
            // A loop device without direct I/O goes through the page cache of its backing
            // file: reads of data already there never reach Ceph.
            if let Some(lo) = dev.strip_prefix("/dev/").filter(|d| d.starts_with("loop")) {
                let sys = std::path::Path::new("/sys/block").join(lo).join("loop");
                let read = |f: &str| std::fs::read_to_string(sys.join(f)).unwrap_or_default().trim().to_string();
                if read("dio") == "0" {
                    write!(
                        text,
                        "; {dev} reads {} through the page cache (no direct I/O), so reads may not reach the cluster",
                        read("backing_file")
                    )
                    .ok();
                }
            }
            text
        }
        None => "file system unknown".into(),
    }
}

fn ms(ns: f64) -> String {
    let v = ns / 1e6;
    if v >= 100.0 {
        format!("{v:.1} ms")
    } else if v >= 1.0 {
        format!("{v:.2} ms")
    } else {
        format!("{v:.3} ms")
    }
}

/// The table and its footnotes.
/// The table's footnotes: each text once, numbered in the order first used.
struct Footnotes(Vec<String>);

impl Footnotes {
    /// The number of `text`'s footnote, added if new.
    fn note(&mut self, text: String) -> usize {
        if let Some(i) = self.0.iter().position(|f| *f == text) {
            return i + 1;
        }
        self.0.push(text);
        self.0.len()
    }
}

/// The footnotes of one row (a run's direction `d`): what makes its layer's figures differ.
fn row_notes(
    r: &Row,
    d: &str,
    fiox: &Value,
    unwritten: Option<f64>,
    image_size: u64,
    a: &Args,
    foot: &mut Footnotes,
) -> Vec<usize> {
    let mut marks: Vec<usize> = Vec::new();
    if r.tool == "rbd bench" {
        if let Some(c) = fiox.get("rbd_cache").and_then(Value::as_str) {
            let on = c == "true";
            let merged = if on {
                "; sequential small writes are merged in the client, so \"seq write\" measures the cache more than the cluster"
            } else {
                ""
            };
            marks.push(
                foot.note(format!("rbd bench uses librbd's cache as the configuration sets it: rbd_cache={c}{merged}")),
            );
        }
        let share = fiox.get("straddling_share").and_then(Value::as_f64).unwrap_or(0.0);
        if share > 0.0 {
            marks.push(foot.note(format!(
                "{:.0}% of the {}-byte I/Os cross a {} object boundary: librbd splits each into two RADOS operations",
                share * 100.0,
                r.bs,
                size_text(fiox.get("object_size").and_then(Value::as_u64).unwrap_or(4 << 20))
            )));
        }
    }
    if r.tool == "fio rbd engine" {
        marks.push(foot.note(
                                if a.fio_numjobs {
                    format!(
                        "fio's rbd engine: numjobs={} iodepth=1 (as the seed's fio), that is {} librbd clients on one image: with the exclusive-lock feature every write moves the lock between them, so writes measure lock hand-overs as much as the cluster; direct=0 keeps librbd's cache as configured",
                        a.threads, a.threads
                    )
                } else {
                    format!(
                        "fio's rbd engine: one job, iodepth={} (the seed ran numjobs=30 iodepth=1 through rbd-nbd: --fio-numjobs); direct=0 keeps librbd's cache as configured",
                        a.threads
                    )
                },
            ));
        let obj = 4u64 << 20;
        let share = crate::ceph::rbd_bench::straddling_share(r.bs, obj, image_size / r.bs.max(1));
        if share > 0.0 {
            marks.push(foot.note(format!(
                "{:.0}% of the {}-byte I/Os cross a {} object boundary: librbd splits each into two RADOS operations",
                share * 100.0,
                r.bs,
                size_text(obj)
            )));
        }
    }
    if r.layer == "BLOCK" {
        let file = r.reference.split(' ').find_map(|w| w.strip_prefix("--filename=")).unwrap_or("");
        marks.push(foot.note(
                                format!(
                    "fio's libaio engine, direct=1, on {file} ({}): a file system and the kernel's block layer over the Ceph client (the seed's rbd-nbd layer); {}",
                    mount_of(std::path::Path::new(file)),
                    if a.fio_numjobs {
                        format!("numjobs={} iodepth=1, one file", a.threads)
                    } else {
                        format!("one job, iodepth={}", a.threads)
                    }
                ),
            ));
    }
    if d == "read" && r.layer == "RBD" {
        let u = if r.tool == "rbd bench" { fiox.get("unwritten_share").and_then(Value::as_f64) } else { unwritten };
        if let Some(u) = u.filter(|&u| u > 0.0) {
            marks.push(foot.note(
                                        format!(
                        "{:.0}% of the image was never written before these reads (librbd counts whole objects): reads there return zeros without disk I/O",
                        (u * 100.0).ceil()
                    ),
                ));
        }
    }
    if r.layer == "RGW" {
        let host = a.rgw_host.as_deref().unwrap_or("");
        marks.push(foot.note(format!(
            "S3 through the RADOS Gateway at {host} (fiox s3 bench): one HTTP/1.1 keep-alive connection per request in flight, every request signed with AWS Signature V4 over the payload's SHA-256; latency is the whole request, from sending it to the answer's last byte (the report's ttfb_ns has the time to the first); each object also costs the gateway a bucket-index update"
        )));
        if r.workload == "S3 GET" {
            marks.push(foot.note(format!(
                "S3 GET reads, in random order, {} objects of {} uploaded before the clock started",
                rgw_objects(a.image_size, r.bs, a.threads),
                size_text(r.bs)
            )));
        }
    }
    if fiox.get("interrupted").is_some() {
        marks.push(foot.note("interrupted: the figures cover the operations completed".into()));
    }
    marks
}

/// An S3 row whose answers' last byte comes some 40 ms after their first (p50): the footnote
/// naming the cause seen on radosgw's beast front end, whose small answers on a keep-alive
/// connection wait for the client's delayed ACK (Nagle's algorithm) unless it runs with
/// `tcp_nodelay=1`; curl on one connection shows the same wait.
fn delayed_body(report: &Value, d: &str, foot: &mut Footnotes) -> Option<usize> {
    let block = report.get("jobs")?.get(0)?.get(d)?;
    let p50 = |k: &str| block.get(k)?.get("percentile")?.get("50.000000")?.as_f64();
    let (first, last) = (p50("ttfb_ns")?, p50("clat_ns")?);
    let wait = last - first;
    (30e6..60e6).contains(&wait).then(|| {
        foot.note(format!(
            "the answers' first byte came after {} and their last after {} (p50): a wait of about 40 ms between them is the server's Nagle algorithm meeting the client's delayed ACK; radosgw's beast front end avoids it with tcp_nodelay=1 (rgw_frontends \"beast ... tcp_nodelay=1\")",
            ms(first),
            ms(last)
        ))
    })
}

/// The table's lines as text: words left, figures right, columns as wide as their widest cell.
fn lay_out(lines: &[Vec<String>]) -> String {
    let columns = lines.first().map_or(0, Vec::len);
    let widths: Vec<usize> =
        (0..columns).map(|c| lines.iter().map(|l| l[c].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for l in lines {
        let mut s = String::new();
        for (c, cell) in l.iter().enumerate() {
            let w = widths[c];
            if c <= 3 || c == columns - 1 {
                write!(s, "{cell:<w$}  ").ok();
            } else {
                write!(s, "{cell:>w$}  ").ok();
            }
        }
        writeln!(out, "{}", s.trim_end()).ok();
    }
    out
}

fn render(rows: &[Row], unwritten: Option<f64>, image_size: u64, a: &Args) -> (String, Vec<String>) {
    let head = [
        "layer", "tool", "workload", "bs", "conc", "ops", "time(s)", "IOPS", "MiB/s", "MB/s", "lat avg", "p50", "p99",
        "max", "notes",
    ];
    let mut lines: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
    let mut foot = Footnotes(Vec::new());
    foot.note(
        "Units: MiB/s = 2^20 bytes/s (what rados bench calls \"MB/sec\"); MB/s = 10^6 bytes/s (what rbd bench's bytes/sec divide to). Latency: from submission to completion as each tool measures it (fio: clat; p50/p99 from fio's histogram for every row).".into(),
    );
    for r in rows {
        let Ok(text) = std::fs::read_to_string(&r.report) else { continue };
        let Ok(v) = serde_json::from_str::<Value>(&text) else { continue };
        let fiox = v.get("fiox").cloned().unwrap_or(Value::Null);
        let dirs: Vec<&str> = ["read", "write"].into_iter().filter(|d| figures(&v, d).is_some()).collect();
        for d in &dirs {
            let f = figures(&v, d).expect("checked");
            let workload = if dirs.len() > 1 { format!("{} ({d})", r.workload) } else { r.workload.clone() };
            let mut marks = row_notes(r, d, &fiox, unwritten, image_size, a, &mut foot);
            if let Some(m) = delayed_body(&v, d, &mut foot) {
                marks.push(m);
            }
            lines.push(vec![
                r.layer.into(),
                r.tool.into(),
                workload,
                size_text(r.bs),
                a.threads.to_string(),
                f.ios.to_string(),
                format!("{:.2}", f.secs),
                format!("{:.1}", f.iops),
                format!("{:.1}", f.bw / 1048576.0),
                format!("{:.1}", f.bw / 1e6),
                ms(f.mean_ns),
                f.p50_ns.map_or("-".into(), ms),
                f.p99_ns.map_or("-".into(), ms),
                ms(f.max_ns),
                marks.iter().map(|m| format!("[{m}]")).collect::<Vec<_>>().join(""),
            ]);
        }
    }
    if rows.iter().any(|r| r.layer == "RGW") {
        foot.note(
            "Each rgw run deletes the objects it made and then its bucket (fiox-ceph-PID), and says so on stderr when it cannot; no other bucket is touched".into(),
        );
    }
    if rows.iter().any(|r| r.layer == "RADOS") {
        foot.note(
            "rados bench reads what its write left (seq: every op written, then stops; rand: until the time is up); its objects and metadata were removed afterwards".into(),
        );
    }
    (lay_out(&lines), foot.0)
}
