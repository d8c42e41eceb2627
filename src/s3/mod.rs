//! `fiox s3 bench MODE`: an S3 benchmark with MinIO warp's command shape (`put`, `get`,
//! `delete`, `stat`, `list`, `mixed`; `--host`, `--access-key`, `--secret-key`, `--bucket`,
//! `--prefix`, `--concurrent`, `--obj.size`, `--objects`, `--duration`, `--tls`, `--insecure`,
//! `--region`) and what warp lacks: percentiles from fio's mergeable histograms (exact under
//! merging workers, where warp averages per-segment percentiles), per operation, for the time
//! to first byte and the whole request, in fio's JSON layout (`jobs[]`, one per operation:
//! GET under `read`, PUT under `write`, DELETE under `trim`; HEAD and LIST under `read` with
//! no bytes).
//!
//! Bucket safety: a missing bucket is created and, at the end, removed again; an existing one
//! must be empty unless `--use-existing` is given. Only objects this run created (its own
//! prefix, listed in memory as they are made) are deleted, and with `--noclear` none.

mod client;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use fiox_stats::{IoStat, LatHist};

use client::{describe, Client, Endpoint};

const MODES: &[&str] = &["put", "get", "delete", "stat", "list", "mixed"];
const PERCENTILES: &[f64] = &[1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99];

pub fn help() -> String {
    "usage: fiox s3 bench put|get|delete|stat|list|mixed [options]

MinIO warp's flags, on one S3 endpoint or several:
  --host HOST[:PORT][,HOST...]  endpoints (workers take them in turn; default 127.0.0.1:9000)
  --access-key KEY --secret-key SECRET
                                credentials (default: $AWS_ACCESS_KEY_ID/$AWS_SECRET_ACCESS_KEY,
                                then ~/.aws/credentials, profile $AWS_PROFILE or default)
  --region REGION               signing region (default $AWS_REGION or us-east-1)
  --tls, --insecure             HTTPS; --insecure does not check the certificate
  --bucket NAME                 bucket (default fiox-benchmark-bucket); created and removed
                                when missing, refused when it holds objects (--use-existing)
  --prefix P                    object names' prefix (default: a run id)
  --concurrent N                parallel requests, one connection each (default 20)
  --obj.size SIZE               object size (default 10MiB; 64KiB, 4k, 1MB ...)
  --objects N                   objects uploaded first for get, stat, delete, list, mixed
                                (default 2500; delete: until they are gone)
  --duration TIME               how long to measure (default 5m; 30s, 2m)
  --get-distrib, --stat-distrib, --put-distrib, --delete-distrib W
                                mixed's weights (default 45, 30, 15, 10)
  --noclear                     keep the objects created
  --json                        fio-shaped JSON instead of the text summary
Percentiles come from fio's latency histograms, merged across workers, per operation, for
the time to first byte and the whole request.
"
    .to_string()
}

#[derive(Debug, Clone)]
struct Opts {
    mode: String,
    hosts: Vec<String>,
    key: String,
    secret: String,
    region: String,
    tls: bool,
    insecure: bool,
    bucket: String,
    prefix: String,
    concurrent: usize,
    size: u64,
    objects: usize,
    duration: Duration,
    weights: [u32; 4],
    noclear: bool,
    json: bool,
    use_existing: bool,
}

fn size_arg(flag: &str, v: &str) -> Result<u64> {
    let t = v.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().with_context(|| format!("{flag}={v}: not a size (64KiB, 10MiB, 4k, 1MB)"))?;
    let mult: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" | "ki" => 1024.0,
        "kb" => 1e3,
        "m" | "mib" | "mi" => 1048576.0,
        "mb" => 1e6,
        "g" | "gib" | "gi" => 1073741824.0,
        "gb" => 1e9,
        _ => bail!("{flag}={v}: unknown unit '{unit}' (KiB, MiB, GiB, KB, MB, GB)"),
    };
    let bytes = (n * mult) as u64;
    if bytes == 0 {
        bail!("{flag}={v}: objects must have at least one byte");
    }
    Ok(bytes)
}

fn time_arg(flag: &str, v: &str) -> Result<Duration> {
    let t = v.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().with_context(|| format!("{flag}={v}: not a duration (30s, 2m, 1h)"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => bail!("{flag}={v}: unknown unit '{unit}' (ms, s, m, h)"),
    };
    if secs <= 0.0 {
        bail!("{flag}={v}: must be more than 0");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `~/.aws/credentials`' keys for `profile`, if the file has them.
fn profile_credentials(profile: &str) -> Option<(String, String)> {
    let path = std::env::var("AWS_SHARED_CREDENTIALS_FILE")
        .ok()
        .unwrap_or_else(|| format!("{}/.aws/credentials", std::env::var("HOME").unwrap_or_default()));
    let text = std::fs::read_to_string(path).ok()?;
    let (mut inside, mut key, mut secret) = (false, None, None);
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line.trim_matches(|c| c == '[' || c == ']').trim() == profile;
        } else if let (true, Some((k, v))) = (inside, line.split_once('=')) {
            match k.trim() {
                "aws_access_key_id" => key = Some(v.trim().to_string()),
                "aws_secret_access_key" => secret = Some(v.trim().to_string()),
                _ => {}
            }
        }
    }
    Some((key?, secret?))
}

fn parse(args: &[String]) -> Result<Opts> {
    let Some(mode) = args.first() else { bail!("s3 bench: give a mode: {}", MODES.join(", ")) };
    if !MODES.contains(&mode.as_str()) {
        bail!("s3 bench: unknown mode '{mode}' (modes: {})", MODES.join(", "));
    }
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut o = Opts {
        mode: mode.clone(),
        hosts: vec!["127.0.0.1:9000".into()],
        key: String::new(),
        secret: String::new(),
        region: env("AWS_REGION").or_else(|| env("AWS_DEFAULT_REGION")).unwrap_or_else(|| "us-east-1".into()),
        tls: false,
        insecure: false,
        bucket: "fiox-benchmark-bucket".into(),
        prefix: format!(
            "fiox-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
        ),
        concurrent: 20,
        size: 10 << 20,
        objects: 2500,
        duration: Duration::from_secs(300),
        weights: [45, 30, 15, 10],
        noclear: false,
        json: false,
        use_existing: false,
    };
    let (mut key, mut secret) = (None, None);
    let mut i = 1;
    while i < args.len() {
        let a = &args[i];
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        let switch = matches!(flag.as_str(), "--tls" | "--insecure" | "--noclear" | "--json" | "--use-existing");
        let value = if switch {
            String::new()
        } else if let Some(v) = inline {
            v
        } else {
            i += 1;
            args.get(i).cloned().with_context(|| format!("s3 bench: {flag} needs a value"))?
        };
        let int = |v: &str| v.parse::<u64>().with_context(|| format!("s3 bench: {flag}={v}: not a whole number"));
        match flag.as_str() {
            "--host" => o.hosts = value.split(',').filter(|h| !h.is_empty()).map(str::to_string).collect(),
            "--access-key" => key = Some(value),
            "--secret-key" => secret = Some(value),
            "--region" => o.region = value,
            "--tls" => o.tls = true,
            "--insecure" => o.insecure = true,
            "--bucket" => o.bucket = value,
            "--prefix" => o.prefix = value.trim_matches('/').to_string(),
            "--concurrent" => o.concurrent = int(&value)? as usize,
            "--obj.size" => o.size = size_arg(&flag, &value)?,
            "--objects" => o.objects = int(&value)? as usize,
            "--duration" => o.duration = time_arg(&flag, &value)?,
            "--get-distrib" => o.weights[0] = int(&value)? as u32,
            "--stat-distrib" => o.weights[1] = int(&value)? as u32,
            "--put-distrib" => o.weights[2] = int(&value)? as u32,
            "--delete-distrib" => o.weights[3] = int(&value)? as u32,
            "--noclear" => o.noclear = true,
            "--json" => o.json = true,
            "--use-existing" => o.use_existing = true,
            other => bail!("s3 bench: unknown option '{other}' (fiox s3 bench --help)"),
        }
        i += 1;
    }
    let profile = env("AWS_PROFILE").unwrap_or_else(|| "default".into());
    let from_file = profile_credentials(&profile);
    o.key = key
        .or_else(|| env("AWS_ACCESS_KEY_ID"))
        .or_else(|| from_file.as_ref().map(|f| f.0.clone()))
        .context("s3 bench: no access key (--access-key, $AWS_ACCESS_KEY_ID or ~/.aws/credentials)")?;
    o.secret = secret
        .or_else(|| env("AWS_SECRET_ACCESS_KEY"))
        .or_else(|| from_file.map(|f| f.1))
        .context("s3 bench: no secret key (--secret-key, $AWS_SECRET_ACCESS_KEY or ~/.aws/credentials)")?;
    if o.hosts.is_empty() {
        bail!("s3 bench: --host is empty");
    }
    if o.concurrent == 0 {
        bail!("s3 bench: --concurrent must be at least 1");
    }
    if o.mode != "put" && o.objects == 0 {
        bail!("s3 bench: --objects must be at least 1 for {}", o.mode);
    }
    if o.mode == "mixed" && o.weights[3] > o.weights[2] {
        bail!("s3 bench: --delete-distrib must not exceed --put-distrib (warp's rule: deletes only remove what puts made)");
    }
    if o.mode == "mixed" && o.weights.iter().all(|&w| w == 0) {
        bail!("s3 bench: every mixed weight is 0");
    }
    Ok(o)
}

/// Operations, in the report's order.
const OPS: [&str; 5] = ["GET", "PUT", "DELETE", "STAT", "LIST"];

/// One operation's statistics: merged from every worker, exactly (histogram bucket counts and
/// integer sums add).
#[derive(Default, Clone)]
struct OpStat {
    total: IoStat,
    total_hist: LatHist,
    ttfb: IoStat,
    ttfb_hist: LatHist,
    bytes: u64,
    errors: u64,
}

impl OpStat {
    fn merge(&mut self, o: &OpStat) {
        self.total.merge(&o.total);
        self.total_hist.merge(&o.total_hist);
        self.ttfb.merge(&o.ttfb);
        self.ttfb_hist.merge(&o.ttfb_hist);
        self.bytes += o.bytes;
        self.errors += o.errors;
    }
}

struct Shared {
    opts: Opts,
    endpoints: Vec<Endpoint>,
    /// Objects that exist now (made by this run): GET/STAT/DELETE pick from them.
    pool: Mutex<Vec<String>>,
    /// Every object this run made and has not deleted: what the cleanup removes.
    made: Mutex<std::collections::BTreeSet<String>>,
    next: AtomicU64,
    stop: AtomicBool,
    first_error: Mutex<Option<String>>,
    body: Vec<u8>,
}

impl Shared {
    fn new_name(&self) -> String {
        format!("{}/{:08}", self.opts.prefix, self.next.fetch_add(1, Ordering::Relaxed))
    }
    fn path(&self, key: &str) -> String {
        format!("/{}/{key}", self.opts.bucket)
    }
    fn error(&self, e: String) {
        let mut f = self.first_error.lock().unwrap();
        if f.is_none() {
            *f = Some(e);
        }
    }
}

/// xorshift64*: the workers' object and operation choices.
fn rand(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

fn timeout() -> Duration {
    Duration::from_secs(60)
}

/// One operation, recorded into `stats`.
fn one(c: &mut Client, sh: &Shared, op: usize, stats: &mut [OpStat; 5], rng: &mut u64) {
    let pick = |rng: &mut u64, remove: bool| -> Option<String> {
        let mut pool = sh.pool.lock().unwrap();
        if pool.is_empty() {
            return None;
        }
        let i = (rand(rng) % pool.len() as u64) as usize;
        Some(if remove { pool.swap_remove(i) } else { pool[i].clone() })
    };
    let (method, key, body): (&str, Option<String>, &[u8]) = match op {
        0 => ("GET", pick(rng, false), &[]),
        1 => ("PUT", Some(sh.new_name()), &sh.body),
        2 => ("DELETE", pick(rng, true), &[]),
        3 => ("HEAD", pick(rng, false), &[]),
        _ => ("GET", None, &[]),
    };
    if op != 4 && key.is_none() {
        // Nothing left to read or delete.
        sh.stop.store(true, Ordering::Relaxed);
        return;
    }
    let path = match &key {
        Some(k) => sh.path(k),
        None => format!("/{}", sh.opts.bucket),
    };
    let prefix_q = format!("{}/", sh.opts.prefix);
    let query: Vec<(&str, &str)> =
        if op == 4 { vec![("list-type", "2"), ("max-keys", "100"), ("prefix", &prefix_q)] } else { Vec::new() };
    if op == 1 {
        sh.made.lock().unwrap().insert(key.clone().unwrap());
    }
    let s = &mut stats[op];
    match c.call(method, &path, &query, body, false) {
        Ok(d) if (200..300).contains(&d.status) => {
            s.total.add(d.total.as_nanos() as u64);
            s.total_hist.add(d.total.as_nanos() as u64);
            s.ttfb.add(d.ttfb.as_nanos() as u64);
            s.ttfb_hist.add(d.ttfb.as_nanos() as u64);
            s.bytes += if op == 1 { body.len() as u64 } else { d.bytes };
            match op {
                1 => sh.pool.lock().unwrap().push(key.unwrap()),
                2 => {
                    sh.made.lock().unwrap().remove(key.as_ref().unwrap());
                }
                _ => {}
            }
        }
        Ok(d) => {
            s.errors += 1;
            if op == 1 {
                // The server refused it: there is no object to clean up.
                sh.made.lock().unwrap().remove(key.as_ref().unwrap());
            }
            sh.error(format!("{method} {path}: {}", describe(d.status, &d.body)));
        }
        Err(e) => {
            s.errors += 1;
            sh.error(e);
        }
    }
}

/// Uploads `n` objects with `concurrent` workers (not measured): the data get, stat, delete,
/// list and mixed work on.
fn prepare(sh: &Arc<Shared>, n: usize) -> Result<()> {
    let left = Arc::new(AtomicU64::new(n as u64));
    let workers: Vec<_> = (0..sh.opts.concurrent.min(n))
        .map(|w| {
            let (sh, left) = (sh.clone(), left.clone());
            std::thread::spawn(move || {
                let mut c = Client::new(&sh.endpoints[w % sh.endpoints.len()], timeout());
                while left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| v.checked_sub(1)).is_ok() {
                    let key = sh.new_name();
                    sh.made.lock().unwrap().insert(key.clone());
                    match c.call("PUT", &sh.path(&key), &[], &sh.body, false) {
                        Ok(d) if (200..300).contains(&d.status) => sh.pool.lock().unwrap().push(key),
                        Ok(d) => {
                            sh.made.lock().unwrap().remove(&key);
                            return Err(format!("uploading {key}: {}", describe(d.status, &d.body)));
                        }
                        Err(e) => return Err(format!("uploading {key}: {e}")),
                    }
                }
                Ok(())
            })
        })
        .collect();
    for w in workers {
        w.join().expect("an upload worker panicked").map_err(|e| anyhow::anyhow!("s3 bench: {e}"))?;
    }
    Ok(())
}

/// Creates the bucket when missing (then it is ours to remove); refuses one that holds objects
/// unless `--use-existing`.
fn bucket(c: &mut Client, o: &Opts) -> Result<bool> {
    let path = format!("/{}", o.bucket);
    let head = c.call("HEAD", &path, &[], &[], false).map_err(|e| anyhow::anyhow!("s3 bench: {e}"))?;
    match head.status {
        200 => {
            let list = c
                .call("GET", &path, &[("list-type", "2"), ("max-keys", "1")], &[], true)
                .map_err(|e| anyhow::anyhow!("s3 bench: {e}"))?;
            if !(200..300).contains(&list.status) {
                bail!("s3 bench: cannot list bucket '{}': {}", o.bucket, describe(list.status, &list.body));
            }
            if String::from_utf8_lossy(&list.body).contains("<Key>") && !o.use_existing {
                bail!(
                    "s3 bench: bucket '{}' holds objects fiox did not create; give --use-existing to run beside them (fiox deletes only its own, under --prefix {})",
                    o.bucket,
                    o.prefix
                );
            }
            Ok(false)
        }
        404 => {
            let made = c.call("PUT", &path, &[], &[], true).map_err(|e| anyhow::anyhow!("s3 bench: {e}"))?;
            if !(200..300).contains(&made.status) {
                bail!("s3 bench: cannot create bucket '{}': {}", o.bucket, describe(made.status, &made.body));
            }
            Ok(true)
        }
        s => {
            // HEAD answers carry no body: ask again with a GET for the server's error code.
            let why = c.call("GET", &path, &[("list-type", "2"), ("max-keys", "1")], &[], true).ok();
            let why = why.map_or(format!("HTTP {s}"), |d| describe(d.status, &d.body));
            bail!("s3 bench: bucket '{}' on {}: {why}", o.bucket, o.hosts[0])
        }
    }
}

fn cleanup(sh: &Arc<Shared>, created_bucket: bool) -> Result<usize> {
    let keys: Vec<String> = std::mem::take(&mut *sh.made.lock().unwrap()).into_iter().collect();
    let n = keys.len();
    let keys = Arc::new(Mutex::new(keys));
    let workers: Vec<_> = (0..sh.opts.concurrent.min(n.max(1)))
        .map(|w| {
            let (sh, keys) = (sh.clone(), keys.clone());
            std::thread::spawn(move || {
                let mut c = Client::new(&sh.endpoints[w % sh.endpoints.len()], timeout());
                while let Some(k) = keys.lock().unwrap().pop() {
                    let _ = c.call("DELETE", &sh.path(&k), &[], &[], false);
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    if created_bucket {
        let mut c = Client::new(&sh.endpoints[0], timeout());
        let d = c.call("DELETE", &format!("/{}", sh.opts.bucket), &[], &[], true).map_err(|e| anyhow::anyhow!(e))?;
        if !(200..300).contains(&d.status) {
            eprintln!("fiox: s3 bench: cannot remove bucket '{}': {}", sh.opts.bucket, describe(d.status, &d.body));
        }
    }
    Ok(n)
}

pub fn run(args: &[String]) -> Result<ExitCode> {
    if args.first().map(String::as_str) != Some("bench") || args.iter().any(|a| a == "--help" || a == "-h") {
        if args.iter().any(|a| a == "--help" || a == "-h") {
            print!("{}", help());
            return Ok(ExitCode::SUCCESS);
        }
        bail!("s3: the one command is 'fiox s3 bench MODE' (fiox s3 bench --help)");
    }
    let o = parse(&args[1..])?;
    let endpoints: Vec<Endpoint> = o
        .hosts
        .iter()
        .map(|h| {
            let default = if o.tls { ":443" } else { ":80" };
            Endpoint {
                host: h.strip_suffix(default).unwrap_or(h).to_string(),
                tls: o.tls,
                insecure: o.insecure,
                key_id: o.key.clone(),
                secret: o.secret.clone(),
                region: o.region.clone(),
            }
        })
        .collect();
    let mut c0 = Client::new(&endpoints[0], Duration::from_secs(15));
    let created_bucket = bucket(&mut c0, &o)?;
    let mut body = vec![0u8; o.size as usize];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ std::process::id() as u64;
    for chunk in body.chunks_mut(8) {
        let r = rand(&mut seed).to_le_bytes();
        chunk.copy_from_slice(&r[..chunk.len()]);
    }
    let sh = Arc::new(Shared {
        opts: o.clone(),
        endpoints,
        pool: Mutex::new(Vec::new()),
        made: Mutex::new(Default::default()),
        next: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        first_error: Mutex::new(None),
        body,
    });
    let result = (|| -> Result<(Vec<OpStat>, Duration)> {
        if o.mode != "put" {
            prepare(&sh, o.objects)?;
        }
        let start = Instant::now();
        let end = start + o.duration;
        let workers: Vec<_> = (0..o.concurrent)
            .map(|w| {
                let sh = sh.clone();
                std::thread::spawn(move || {
                    let mut c = Client::new(&sh.endpoints[w % sh.endpoints.len()], timeout());
                    let mut stats: [OpStat; 5] = Default::default();
                    let mut rng = 0x2545_f491_4f6c_dd1du64.wrapping_mul(w as u64 + 1);
                    let weights = sh.opts.weights;
                    let wsum: u32 = weights.iter().sum();
                    while Instant::now() < end && !sh.stop.load(Ordering::Relaxed) {
                        let op = match sh.opts.mode.as_str() {
                            "get" => 0,
                            "put" => 1,
                            "delete" => 2,
                            "stat" => 3,
                            "list" => 4,
                            _ => {
                                let mut r = (rand(&mut rng) % wsum as u64) as u32;
                                let mut op = 0;
                                for (i, &wt) in weights.iter().enumerate() {
                                    if r < wt {
                                        op = i;
                                        break;
                                    }
                                    r -= wt;
                                }
                                // Weights are in warp's order: get, stat, put, delete.
                                [0, 3, 1, 2][op]
                            }
                        };
                        one(&mut c, &sh, op, &mut stats, &mut rng);
                    }
                    stats
                })
            })
            .collect();
        let mut all: Vec<OpStat> = vec![OpStat::default(); 5];
        for w in workers {
            let s = w.join().expect("a bench worker panicked");
            for (a, b) in all.iter_mut().zip(s.iter()) {
                a.merge(b);
            }
        }
        Ok((all, start.elapsed()))
    })();
    let removed = if o.noclear { 0 } else { cleanup(&sh, created_bucket && !o.noclear)? };
    let (stats, elapsed) = result?;
    let first_error = sh.first_error.lock().unwrap().clone();
    let done: u64 = stats.iter().map(|s| s.total.samples).sum();
    let report = if o.json { json(&o, &stats, elapsed, first_error.as_deref()) } else { text(&o, &stats, elapsed) };
    print!("{report}");
    if let Some(e) = &first_error {
        let errors: u64 = stats.iter().map(|s| s.errors).sum();
        eprintln!("fiox: s3 bench: {errors} requests failed; the first: {e}");
    }
    if !o.noclear && removed > 0 && !o.json {
        println!("Cleanup: removed the {removed} objects this run created under {}/{}/", o.bucket, o.prefix);
    }
    // Errors beside successes are reported (stderr, `total_err`); a run that did nothing fails.
    Ok(if done == 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn human_size(b: u64) -> String {
    match b {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

fn ms(ns: u64) -> String {
    format!("{:.1}ms", ns as f64 / 1e6)
}

/// warp's summary shape, one block per operation seen.
fn text(o: &Opts, stats: &[OpStat], elapsed: Duration) -> String {
    let mut out = String::new();
    let secs = elapsed.as_secs_f64().max(1e-9);
    for (i, s) in stats.iter().enumerate() {
        let n = s.total.samples;
        if n == 0 && s.errors == 0 {
            continue;
        }
        let p = s.total_hist.percentiles(&[50.0, 90.0, 99.0]);
        let t = s.ttfb_hist.percentiles(&[50.0, 90.0, 99.0]);
        let at = |v: &[(f64, u64)], i: usize| v.get(i).map_or(0, |x| x.1);
        out.push_str(&format!(
            "Operation: {}, {} objects, {} concurrent, {:.1}s\n * Throughput: {:.2} MiB/s, {:.2} obj/s ({} ok, {} errors)\n * Requests: avg {}, 50% {}, 90% {}, 99% {}, fastest {}, slowest {}\n * TTFB: avg {}, 50% {}, 90% {}, 99% {}\n",
            OPS[i],
            human_size(o.size),
            o.concurrent,
            secs,
            s.bytes as f64 / secs / 1048576.0,
            n as f64 / secs,
            n,
            s.errors,
            ms(s.total.mean() as u64),
            ms(at(&p, 0)),
            ms(at(&p, 1)),
            ms(at(&p, 2)),
            ms(s.total.min()),
            ms(s.total.max),
            ms(s.ttfb.mean() as u64),
            ms(at(&t, 0)),
            ms(at(&t, 1)),
            ms(at(&t, 2)),
        ));
    }
    out
}

fn lat_json(st: &IoStat, h: &LatHist) -> serde_json::Value {
    let mut pct = serde_json::Map::new();
    for (p, v) in h.percentiles(PERCENTILES) {
        pct.insert(format!("{p:.6}"), v.into());
    }
    serde_json::json!({
        "min": st.min(),
        "max": st.max,
        "mean": st.mean(),
        "stddev": st.stddev(),
        "N": st.samples,
        "percentile": pct,
    })
}

/// fio's JSON layout: one `jobs[]` entry per operation, its figures under the direction fio
/// would use (GET, HEAD and LIST: read; PUT: write; DELETE: trim), `clat_ns` the whole request
/// and `ttfb_ns` (fiox) the time to the answer's first byte, `iops` operations per second, `bw`
/// KiB/s.
fn json(o: &Opts, stats: &[OpStat], elapsed: Duration, first_error: Option<&str>) -> String {
    let secs = elapsed.as_secs_f64().max(1e-9);
    let runtime_ms = elapsed.as_millis() as u64;
    let mut jobs = Vec::new();
    for (i, s) in stats.iter().enumerate() {
        if s.total.samples == 0 && s.errors == 0 {
            continue;
        }
        let dir = match OPS[i] {
            "PUT" => "write",
            "DELETE" => "trim",
            _ => "read",
        };
        let block = serde_json::json!({
            "io_bytes": s.bytes,
            "io_kbytes": s.bytes / 1024,
            "bw_bytes": (s.bytes as f64 / secs) as u64,
            "bw": (s.bytes as f64 / secs / 1024.0) as u64,
            "iops": s.total.samples as f64 / secs,
            "runtime": runtime_ms,
            "total_ios": s.total.samples,
            "clat_ns": lat_json(&s.total, &s.total_hist),
            "ttfb_ns": lat_json(&s.ttfb, &s.ttfb_hist),
        });
        let mut job = serde_json::json!({
            "jobname": OPS[i].to_lowercase(),
            "groupid": 0,
            "error": if s.errors > 0 { libc::EIO } else { 0 },
            "total_err": s.errors,
            "job options": {
                "mode": o.mode, "host": o.hosts.join(","), "bucket": o.bucket, "prefix": o.prefix,
                "concurrent": o.concurrent, "obj.size": o.size, "duration": o.duration.as_secs_f64(),
            },
        });
        for d in ["read", "write", "trim"] {
            job[d] = if d == dir {
                block.clone()
            } else {
                serde_json::json!({"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0})
            };
        }
        jobs.push(job);
    }
    let doc = serde_json::json!({
        "fio version": crate::VERSION_STRING,
        "timestamp": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        "jobs": jobs,
        "fiox": { "s3 bench": { "mode": o.mode, "first_error": first_error, "seconds": secs } },
    });
    format!("{}\n", serde_json::to_string_pretty(&doc).unwrap_or_default())
}
