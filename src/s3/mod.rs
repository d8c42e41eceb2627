//! `fiox s3 bench MODE`: an S3 benchmark with MinIO warp's command shape (`put`, `get`,
//! `delete`, `stat`, `list`, `mixed`, `multipart`, `multipart-put`; warp's flags, `args`) and what warp lacks:
//! percentiles from fio's mergeable histograms (exact under merging workers, where warp
//! averages per-segment percentiles), per operation, for the time to first byte and the whole
//! request, in fio's JSON layout (`report`); object sizes from a distribution (`sizes`); and an
//! open loop (`--rate`) whose latencies count from each request's intended start.
//!
//! Bucket safety: a missing bucket is created and, at the end, removed again; an existing one
//! must be empty unless `--use-existing` is given. Only objects this run created (its own
//! prefix, listed in memory as they are made) are deleted, and with `--noclear` none.

mod args;
mod client;
mod pool;
pub mod remote;
mod report;
mod sizes;
mod watch;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use args::Opts;
use client::{describe, Client, Endpoint};
use report::OpStat;
use watch::Watch;

pub use args::{help, FLAGS};

/// The operations' places in the statistics (report::OPS's order).
const GET: usize = 0;
const PUT: usize = 1;
const DELETE: usize = 2;
const STAT: usize = 3;
const LIST: usize = 4;
const MULTIPART: usize = 5;
const PART: usize = 6;
type Stats = [OpStat; report::OPS.len()];

/// Set by SIGINT/SIGTERM: the uploads and the measurement stop early, and the cleanup still
/// removes what the run made (`fiox ceph` stops its rgw layer this way).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

struct Shared {
    opts: Opts,
    endpoints: Vec<Endpoint>,
    /// Objects that exist now (made by this run): GET/STAT/DELETE pick from them.
    pool: pool::Pool,
    /// Every object this run made and has not deleted: what the cleanup removes.
    made: Mutex<std::collections::BTreeSet<String>>,
    next: AtomicU64,
    stop: AtomicBool,
    first_error: Mutex<Option<String>>,
    /// Random bytes, as many as the largest object: every body is a prefix of it.
    body: Vec<u8>,
    /// Open loop: when the next request is due.
    schedule: Mutex<Schedule>,
    /// Open loop: requests that started more than a millisecond after their intended time.
    behind: AtomicU64,
    /// `--live`/`--metrics`: each worker's copy of its statistics, made when `snap` (the
    /// generation asked for) moves past the copy's; see [`Shared::snapshot`].
    watched: bool,
    snap: AtomicU64,
    slots: Vec<Mutex<(u64, Stats)>>,
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
    /// Every worker's statistics now, merged: asks each for a copy and waits for the copies
    /// (a quarter of a second at most; a worker inside a slow request gives its last one).
    fn snapshot(&self) -> Vec<OpStat> {
        let g = self.snap.fetch_add(1, Ordering::Relaxed) + 1;
        let until = Instant::now() + Duration::from_millis(250);
        while Instant::now() < until && self.slots.iter().any(|s| s.lock().unwrap().0 < g) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut all = vec![OpStat::default(); report::OPS.len()];
        for slot in &self.slots {
            let slot = slot.lock().unwrap();
            all.iter_mut().zip(slot.1.iter()).for_each(|(a, b)| a.merge(b));
        }
        all
    }

    /// Ready for another run of `--repeat-until` (the objects were removed by the cleanup).
    fn reset(&self) {
        self.pool.clear();
        self.stop.store(false, Ordering::Relaxed);
        self.schedule.lock().unwrap().next = 0.0;
        self.behind.store(0, Ordering::Relaxed);
        *self.first_error.lock().unwrap() = None;
    }

    /// A body for a new object, its size drawn from `--obj.size`.
    fn body(&self, rng: &mut u64) -> &[u8] {
        &self.body[..self.opts.sizes.draw(rand(rng)) as usize]
    }
}

/// The open loop's arrivals, shared by the workers: each takes the next intended start.
/// Linear arrivals are `1/rate` apart; Poisson arrivals are apart by exponentially
/// distributed gaps of the same mean (fio's `rate_process=poisson`), so the requests come in
/// the bursts many independent clients make, and a server's queue shows in the latencies.
struct Schedule {
    /// Seconds after the start.
    next: f64,
    rng: u64,
}

impl Schedule {
    /// The next intended start (seconds after the start), moving the schedule on.
    fn take(&mut self, rate: f64, poisson: bool) -> f64 {
        let due = self.next;
        let mut gap = 1.0 / rate;
        if poisson {
            // Inverse transform: -ln(1 - U) is exponential with mean 1 for U uniform in [0, 1).
            let u = (rand(&mut self.rng) >> 11) as f64 / (1u64 << 53) as f64;
            gap *= -(1.0 - u).ln();
        }
        self.next += gap;
        due
    }
}

/// xorshift64*: the workers' object, size and operation choices.
fn rand(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

fn ns(d: Duration) -> u64 {
    d.as_nanos() as u64
}

/// One operation, recorded into `stats`. `late` is how long after its intended start the
/// request goes out (open loop; zero otherwise): its latencies count from the intended start.
fn one(c: &mut [Client], sh: &Shared, op: usize, stats: &mut Stats, rng: &mut u64, late: Duration) {
    if op == MULTIPART {
        return multipart(c, sh, stats, rng, late);
    }
    let c = &mut c[0];
    let (method, key, body): (&str, Option<String>, &[u8]) = match op {
        GET => ("GET", sh.pool.read(rand(rng)), &[]),
        PUT => ("PUT", Some(sh.new_name()), sh.body(rng)),
        DELETE => match sh.pool.take(rand(rng)) {
            pool::Take::Key(k) => ("DELETE", Some(k), &[]),
            pool::Take::Empty => ("DELETE", None, &[]),
            pool::Take::Busy => {
                // Every object left is being read: another draw, a moment later.
                std::thread::sleep(Duration::from_millis(1));
                return;
            }
        },
        STAT => ("HEAD", sh.pool.read(rand(rng)), &[]),
        _ => ("GET", None, &[]),
    };
    if op != LIST && key.is_none() {
        // Nothing left to read or delete.
        sh.stop.store(true, Ordering::Relaxed);
        return;
    }
    let path = match &key {
        Some(k) => sh.path(k),
        None => format!("/{}", sh.opts.bucket),
    };
    // Only LIST and multipart's GET (one part of the one object) carry a query.
    let prefix_q = if op == LIST { format!("{}/", sh.opts.prefix) } else { String::new() };
    let multipart_get = op == GET && sh.opts.mode == "multipart";
    let part_n = if multipart_get { (rand(rng) % sh.opts.parts as u64 + 1).to_string() } else { String::new() };
    let query: Vec<(&str, &str)> = match op {
        LIST => vec![("list-type", "2"), ("max-keys", "100"), ("prefix", &prefix_q)],
        GET if multipart_get => vec![("partNumber", &part_n)],
        _ => Vec::new(),
    };
    if op == PUT {
        sh.made.lock().unwrap().insert(key.clone().unwrap());
    }
    let s = &mut stats[op];
    let answer = c.call(method, &path, &query, body, false);
    if matches!(op, GET | STAT) {
        sh.pool.done(key.as_deref().unwrap_or_default());
    }
    match answer {
        Ok(d) if (200..300).contains(&d.status) => {
            s.add(ns(late + d.ttfb), ns(late + d.total), if op == PUT { body.len() as u64 } else { d.bytes });
            match op {
                PUT => sh.pool.add(key.unwrap()),
                DELETE => {
                    sh.made.lock().unwrap().remove(key.as_ref().unwrap());
                }
                _ => {}
            }
        }
        Ok(d) => {
            s.errors += 1;
            if op == PUT {
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

/// One multipart upload (S3's CreateMultipartUpload, UploadPart for each `--part.size` piece,
/// CompleteMultipartUpload), recorded as a MULTIPART operation from its first request to its
/// last, with each part as a PART (multipart-put).
fn multipart(conns: &mut [Client], sh: &Shared, stats: &mut Stats, rng: &mut u64, late: Duration) {
    let key = sh.new_name();
    let body = sh.body(rng);
    let t0 = Instant::now();
    let chunks: Vec<&[u8]> = body.chunks(sh.opts.part_size as usize).collect();
    match upload(conns, sh, &key, &chunks, &mut stats[PART]) {
        Ok(ttfb) => {
            stats[MULTIPART].add(ns(late + ttfb), ns(late + t0.elapsed()), body.len() as u64);
            sh.pool.add(key);
        }
        Err(why) => {
            stats[MULTIPART].errors += 1;
            sh.error(why);
        }
    }
}

/// Uploads `chunks` as the parts of object `key`: created on the first connection, the parts
/// on all of `conns` at once (warp's `--part.concurrent`), each recorded into `part`, then
/// completed. The time to the creation's first byte, or why it failed; a failed upload is
/// aborted, so it leaves no parts behind.
fn upload(
    conns: &mut [Client],
    sh: &Shared,
    key: &str,
    chunks: &[&[u8]],
    part: &mut OpStat,
) -> Result<Duration, String> {
    let path = sh.path(key);
    let why = |e: String| format!("multipart upload of {path}: {e}");
    let created = match conns[0].call("POST", &path, &[("uploads", "")], &[], true) {
        Ok(d) if (200..300).contains(&d.status) => d,
        Ok(d) => return Err(why(describe(d.status, &d.body))),
        Err(e) => return Err(why(e)),
    };
    let Some(id) = client::tag(&created.body, "UploadId") else {
        return Err(why("the server's answer has no UploadId".into()));
    };
    let failed = match upload_parts(conns, &path, &id, chunks, part) {
        Ok(etags) => {
            let mut xml = String::from("<CompleteMultipartUpload>");
            for (i, e) in etags.iter().enumerate() {
                xml.push_str(&format!("<Part><PartNumber>{}</PartNumber><ETag>{e}</ETag></Part>", i + 1));
            }
            xml.push_str("</CompleteMultipartUpload>");
            sh.made.lock().unwrap().insert(key.to_string());
            let failed = match conns[0].call("POST", &path, &[("uploadId", &id)], xml.as_bytes(), true) {
                // S3 may answer 200 with an error inside when completing fails late.
                Ok(d) if (200..300).contains(&d.status) && client::tag(&d.body, "Code").is_none() => {
                    return Ok(created.ttfb)
                }
                Ok(d) => format!("completing: {}", describe(d.status, &d.body)),
                Err(e) => format!("completing: {e}"),
            };
            sh.made.lock().unwrap().remove(key);
            failed
        }
        Err(e) => e,
    };
    // Abort, so the parts uploaded so far do not linger on the server.
    let _ = conns[0].call("DELETE", &path, &[("uploadId", &id)], &[], false);
    Err(why(failed))
}

/// multipart (warp's): the one object of `--parts` parts of `--part.size`, uploaded with
/// `--concurrent` connections before the measurement (not measured); each GET then reads one
/// of its parts.
fn upload_multipart(sh: &Shared) -> Result<()> {
    let o = &sh.opts;
    let key = format!("{}/{}", o.prefix, o.obj_name);
    let mut conns: Vec<Client> =
        (0..o.concurrent.min(o.parts)).map(|w| Client::new(&sh.endpoints[w % sh.endpoints.len()], o.timeout)).collect();
    let chunks = vec![&sh.body[..]; o.parts];
    upload(&mut conns, sh, &key, &chunks, &mut OpStat::default()).map_err(|e| anyhow::anyhow!("s3 bench: {e}"))?;
    sh.pool.add(key);
    Ok(())
}

/// What the mode works on, uploaded before the measurement: `--objects` objects, or
/// multipart's one object; nothing for the modes that upload.
fn upload_first(sh: &Arc<Shared>) -> Result<()> {
    match sh.opts.mode.as_str() {
        "put" | "multipart-put" => Ok(()),
        "multipart" => upload_multipart(sh),
        _ => prepare(sh, sh.opts.objects),
    }
}

/// Sends `chunks` as the parts of upload `id`, on every connection of `conns` at once, each
/// taking the next part not yet sent; records each part into `part`. The parts' ETags in part
/// order, or the first failure (the other connections stop after their part).
fn upload_parts(
    conns: &mut [Client],
    path: &str,
    id: &str,
    chunks: &[&[u8]],
    part: &mut OpStat,
) -> Result<Vec<String>, String> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let send = |c: &mut Client| {
        let (mut st, mut tags, mut why) = (OpStat::default(), Vec::new(), None);
        while !failed.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(chunk) = chunks.get(i) else { break };
            let n = (i + 1).to_string();
            match c.call("PUT", path, &[("partNumber", &n), ("uploadId", id)], chunk, false) {
                Ok(d) if (200..300).contains(&d.status) => {
                    st.add(ns(d.ttfb), ns(d.total), chunk.len() as u64);
                    tags.push((i, d.etag.unwrap_or_default()));
                    continue;
                }
                Ok(d) => why = Some(format!("part {n}: {}", describe(d.status, &d.body))),
                Err(e) => why = Some(format!("part {n}: {e}")),
            }
            st.errors += 1;
            failed.store(true, Ordering::Relaxed);
        }
        (st, tags, why)
    };
    let send = &send;
    let results: Vec<_> = if conns.len() == 1 {
        vec![send(&mut conns[0])]
    } else {
        std::thread::scope(|s| {
            let running: Vec<_> = conns.iter_mut().map(|c| s.spawn(move || send(c))).collect();
            running.into_iter().map(|t| t.join().expect("a part uploader panicked")).collect()
        })
    };
    let mut tags = Vec::new();
    let mut first = None;
    for (st, t, why) in results {
        part.merge(&st);
        tags.extend(t);
        first = first.or(why);
    }
    if let Some(why) = first {
        return Err(why);
    }
    tags.sort();
    Ok(tags.into_iter().map(|t| t.1).collect())
}

/// Uploads `n` objects with `concurrent` workers (not measured): the data get, stat, delete,
/// list and mixed work on.
fn prepare(sh: &Arc<Shared>, n: usize) -> Result<()> {
    let left = Arc::new(AtomicU64::new(n as u64));
    let workers: Vec<_> = (0..sh.opts.concurrent.min(n))
        .map(|w| {
            let (sh, left) = (sh.clone(), left.clone());
            std::thread::spawn(move || {
                let mut c = Client::new(&sh.endpoints[w % sh.endpoints.len()], sh.opts.timeout);
                let mut rng = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(w as u64 + 1);
                while !interrupted()
                    && left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| v.checked_sub(1)).is_ok()
                {
                    let key = sh.new_name();
                    sh.made.lock().unwrap().insert(key.clone());
                    match c.call("PUT", &sh.path(&key), &[], sh.body(&mut rng), false) {
                        Ok(d) if (200..300).contains(&d.status) => sh.pool.add(key),
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

/// Deletes every object this run made, then the bucket if the run made it. A request that
/// gets no answer (a stalled or vanished server) ends the cleanup at once, naming what is
/// left, rather than waiting `--timeout` for each object in turn.
fn cleanup(sh: &Arc<Shared>, created_bucket: bool) -> usize {
    let keys: Vec<String> = std::mem::take(&mut *sh.made.lock().unwrap()).into_iter().collect();
    let n = keys.len();
    let keys = Arc::new(Mutex::new(keys));
    let broken: Arc<Mutex<Option<(String, usize)>>> = Arc::new(Mutex::new(None));
    let workers: Vec<_> = (0..sh.opts.concurrent.min(n.max(1)))
        .map(|w| {
            let (sh, keys, broken) = (sh.clone(), keys.clone(), broken.clone());
            std::thread::spawn(move || {
                let mut c = Client::new(&sh.endpoints[w % sh.endpoints.len()], sh.opts.timeout);
                while broken.lock().unwrap().is_none() {
                    // The lock is let go before the request.
                    let Some(k) = keys.lock().unwrap().pop() else { break };
                    if let Err(e) = c.call("DELETE", &sh.path(&k), &[], &[], false) {
                        let mut b = broken.lock().unwrap();
                        let lost = b.as_ref().map_or(0, |b| b.1);
                        *b = Some((b.take().map_or(e, |b| b.0), lost + 1));
                    }
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    if let Some((e, lost)) = broken.lock().unwrap().take() {
        let left = keys.lock().unwrap().len() + lost;
        eprintln!(
            "fiox: s3 bench: cleanup stopped ({e}); {left} objects this run made remain under {}/{}/",
            sh.opts.bucket, sh.opts.prefix
        );
        return n - left;
    }
    if created_bucket {
        let mut c = Client::new(&sh.endpoints[0], sh.opts.timeout);
        let why = match c.call("DELETE", &format!("/{}", sh.opts.bucket), &[], &[], true) {
            Ok(d) if (200..300).contains(&d.status) => None,
            Ok(d) => Some(describe(d.status, &d.body)),
            Err(e) => Some(e),
        };
        if let Some(why) = why {
            eprintln!("fiox: s3 bench: cannot remove bucket '{}': {why}", sh.opts.bucket);
        }
    }
    n
}

/// The operation a worker runs next.
fn next_op(o: &Opts, rng: &mut u64) -> usize {
    match o.mode.as_str() {
        "get" => GET,
        "put" => PUT,
        "delete" => DELETE,
        "stat" => STAT,
        "list" => LIST,
        "multipart" => GET,
        "multipart-put" => MULTIPART,
        _ => {
            let wsum: u32 = o.weights.iter().sum();
            let mut r = (rand(rng) % wsum as u64) as u32;
            // Weights are in warp's order: get, stat, put, delete.
            for (wt, op) in o.weights.iter().zip([GET, STAT, PUT, DELETE]) {
                if r < *wt {
                    return op;
                }
                r -= wt;
            }
            unreachable!("a draw below the weights' sum lands on a weight")
        }
    }
}

/// One worker until the end: closed loop (the next request as soon as the last is answered),
/// or open loop, where it takes the schedule's next slot, waits for its time and measures from
/// it, so a server that falls behind shows its backlog in the latencies.
fn worker(sh: &Shared, w: usize, start: Instant, end: Instant) -> Stats {
    // A multipart upload's parts go out on --part.concurrent connections; other modes use one.
    let conns = if sh.opts.mode == "multipart-put" { sh.opts.part_concurrent } else { 1 };
    let mut c: Vec<Client> =
        (0..conns).map(|_| Client::new(&sh.endpoints[w % sh.endpoints.len()], sh.opts.timeout)).collect();
    let mut stats: Stats = Default::default();
    let mut rng = 0x2545_f491_4f6c_dd1du64.wrapping_mul(w as u64 + 1);
    let mut copied = 0;
    loop {
        if sh.stop.load(Ordering::Relaxed) || interrupted() {
            break;
        }
        let late = match sh.opts.rate {
            None if Instant::now() >= end => break,
            None => Duration::ZERO,
            Some(rate) => {
                let at = sh.schedule.lock().unwrap().take(rate, sh.opts.poisson);
                let due = start + Duration::from_secs_f64(at);
                // Every slot scheduled before the end runs, however late: the count is exact.
                if due >= end {
                    break;
                }
                let now = Instant::now();
                if now < due {
                    std::thread::sleep(due - now);
                }
                let late = due.elapsed();
                if late > Duration::from_millis(1) {
                    sh.behind.fetch_add(1, Ordering::Relaxed);
                }
                late
            }
        };
        let op = next_op(&sh.opts, &mut rng);
        one(&mut c, sh, op, &mut stats, &mut rng, late);
        if sh.watched && sh.snap.load(Ordering::Relaxed) > copied {
            copied = sh.snap.load(Ordering::Relaxed);
            *sh.slots[w].lock().unwrap() = (copied, stats.clone());
        }
    }
    stats
}

/// What a finished bench gives its caller: the last run's statistics and circumstances,
/// the objects the cleanups removed, and `--repeat-until`'s judgement.
struct Outcome {
    stats: Vec<OpStat>,
    elapsed: Duration,
    first_error: Option<String>,
    behind: u64,
    removed: usize,
    repeat: Option<fiox_report::RepeatSummary>,
}

/// The endpoints `--host` names, each with the credentials.
fn endpoints(o: &Opts) -> Vec<Endpoint> {
    o.hosts
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
        .collect()
}

/// Uploads the objects the mode works on (not measured), then measures for `--duration`,
/// handing `watch` the merged statistics each second.
fn measure(sh: &Arc<Shared>, watch: Option<&Watch>, uploaded: bool) -> Result<(Vec<OpStat>, Duration)> {
    let o = &sh.opts;
    if !uploaded {
        upload_first(sh)?;
    }
    sh.snap.store(0, Ordering::Relaxed);
    for slot in &sh.slots {
        *slot.lock().unwrap() = (0, Default::default());
    }
    if let Some(w) = watch {
        w.measuring();
    }
    let start = Instant::now();
    let end = start + o.duration;
    let done = AtomicBool::new(false);
    let mut all: Vec<OpStat> = vec![OpStat::default(); report::OPS.len()];
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..o.concurrent).map(|w| scope.spawn(move || worker(sh, w, start, end))).collect();
        if let Some(watch) = watch {
            let done = &done;
            scope.spawn(move || {
                let mut next = start + Duration::from_secs(1);
                while !done.load(Ordering::Relaxed) {
                    if Instant::now() < next {
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    }
                    next += Duration::from_secs(1);
                    watch.interval(&sh.snapshot());
                }
            });
        }
        for w in workers {
            let s = w.join().expect("a bench worker panicked");
            all.iter_mut().zip(s.iter()).for_each(|(a, b)| a.merge(b));
        }
        done.store(true, Ordering::Relaxed);
    });
    let elapsed = start.elapsed();
    if let Some(w) = watch {
        w.end(&all, elapsed);
    }
    Ok((all, elapsed))
}

/// `--repeat-until`: adds this run's figure and says whether another run is needed, with the
/// summary once none is. A run that was interrupted or had a failed request ends the
/// repetition (as a failed job ends the jobs'); one that completed nothing is an error.
fn judge(
    sh: &Shared,
    values: &mut Vec<f64>,
    result: &Result<(Vec<OpStat>, Duration)>,
) -> Result<(bool, Option<fiox_report::RepeatSummary>)> {
    let (Some(until), Ok((stats, elapsed))) = (&sh.opts.repeat, result) else { return Ok((false, None)) };
    let failed = interrupted() || stats.iter().any(|s| s.errors > 0);
    if !failed {
        let Some(v) = watch::repeat_value(stats, *elapsed, until.metric) else {
            bail!("s3 bench: --repeat-until: run {} completed no operation", values.len() + 1)
        };
        values.push(v);
    }
    let more = !failed && crate::lab::repeat::more(values, until);
    Ok((more, (!more).then(|| crate::lab::repeat::summary(values, until))))
}

/// The state the workers share, for a bench with options `o`.
fn shared(o: &Opts, watched: bool) -> Arc<Shared> {
    let mut body = vec![0u8; o.sizes.max() as usize];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ std::process::id() as u64;
    for chunk in body.chunks_mut(8) {
        let r = rand(&mut seed).to_le_bytes();
        chunk.copy_from_slice(&r[..chunk.len()]);
    }
    Arc::new(Shared {
        opts: o.clone(),
        endpoints: endpoints(o),
        pool: pool::Pool::new(o.mode == "mixed"),
        made: Mutex::new(Default::default()),
        next: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        first_error: Mutex::new(None),
        body,
        schedule: Mutex::new(Schedule { next: 0.0, rng: seed | 1 }),
        behind: AtomicU64::new(0),
        watched,
        snap: AtomicU64::new(0),
        slots: (0..o.concurrent).map(|_| Mutex::new((0, Default::default()))).collect(),
    })
}

/// The bench: the bucket checked (or made), then runs (one, or as many as `--repeat-until`
/// needs), each cleaned up after; the bucket removed at the end if this bench made it.
fn bench(o: &Opts, watch: Option<&Watch>) -> Result<Outcome> {
    let created_bucket = {
        // Its connection closes before the workers open theirs.
        let mut c0 = Client::new(&endpoints(o)[0], o.timeout.min(Duration::from_secs(15)));
        bucket(&mut c0, o)?
    };
    let sh = shared(o, watch.is_some());
    let (mut values, mut removed) = (Vec::new(), 0);
    for run in 1.. {
        if let Some(w) = watch {
            w.begin(run);
        }
        let result = measure(&sh, watch, false);
        let judged = judge(&sh, &mut values, &result);
        let more = matches!(judged, Ok((true, _)));
        // The objects go after every run; the bucket (if this bench made it) after the last.
        removed += if o.noclear { 0 } else { cleanup(&sh, created_bucket && !more) };
        let (_, repeat) = judged?;
        if more {
            sh.reset();
            continue;
        }
        let (stats, elapsed) = result?;
        return Ok(Outcome {
            stats,
            elapsed,
            first_error: sh.first_error.lock().unwrap().clone(),
            behind: sh.behind.load(Ordering::Relaxed),
            removed,
            repeat,
        });
    }
    unreachable!("the runs end with a return")
}

pub fn run(args: &[String]) -> Result<ExitCode> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{}", help());
        return Ok(ExitCode::SUCCESS);
    }
    if args.first().map(String::as_str) != Some("bench") {
        bail!("s3: the one command is 'fiox s3 bench MODE' (fiox s3 bench --help)");
    }
    let o = args::parse(&args[1..])?;
    let watch = Watch::start(&o)?;
    fiox_engine::sys::stop_on_signals(&INTERRUPTED);
    let out = bench(&o, watch.as_ref())?;
    let stats = &out.stats;
    // Parts alone are not a finished multipart upload.
    let done: u64 = stats.iter().enumerate().filter(|(i, _)| *i != PART).map(|(_, s)| s.total.samples).sum();
    let r = report::Run {
        opts: &o,
        elapsed: out.elapsed,
        first_error: out.first_error.as_deref(),
        behind: out.behind,
        repeat: out.repeat.as_ref(),
    };
    print!("{}", if o.json { report::json(&r, stats) } else { report::text(&r, stats) });
    if let Some(e) = &out.first_error {
        let errors: u64 = stats.iter().map(|s| s.errors).sum();
        eprintln!("fiox: s3 bench: {errors} requests failed; the first: {e}");
    }
    let removed = out.removed;
    if !o.noclear && removed > 0 && !o.json {
        println!("Cleanup: removed the {removed} objects this run created under {}/{}/", o.bucket, o.prefix);
    }
    if interrupted() {
        eprintln!(
            "fiox: s3 bench: interrupted by {}; the {removed} objects this run made were removed",
            if fiox_engine::sys::caught_signal() == libc::SIGINT { "SIGINT" } else { "SIGTERM" }
        );
        return Ok(ExitCode::FAILURE);
    }
    // Errors beside successes are reported (stderr, `total_err`); a run that did nothing fails.
    if done == 0 {
        return Ok(ExitCode::FAILURE);
    }
    // As the jobs': a repetition that never came within the bound exits with 2.
    Ok(if out.repeat.is_some_and(|r| !r.met) { ExitCode::from(crate::lab::repeat::NOT_MET) } else { ExitCode::SUCCESS })
}

#[cfg(test)]
mod tests {
    use super::Schedule;

    /// Linear arrivals are evenly spaced; Poisson ones have exponential gaps of the same mean:
    /// a coefficient of variation near 1 and about 63% of the gaps under the mean.
    #[test]
    fn arrivals_are_spaced_by_the_process() {
        let gaps = |poisson: bool| -> Vec<f64> {
            let mut s = Schedule { next: 0.0, rng: 0x1234_5678_9abc_def1 };
            let t: Vec<f64> = (0..20_000).map(|_| s.take(100.0, poisson)).collect();
            t.windows(2).map(|w| w[1] - w[0]).collect()
        };
        let linear = gaps(false);
        assert!(linear.iter().all(|g| (g - 0.01).abs() < 1e-9));
        let p = gaps(true);
        let mean = p.iter().sum::<f64>() / p.len() as f64;
        let sd = (p.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / p.len() as f64).sqrt();
        assert!((mean - 0.01).abs() < 0.0003, "{mean}");
        assert!((sd / mean - 1.0).abs() < 0.03, "{}", sd / mean);
        let under = p.iter().filter(|&&g| g < mean).count() as f64 / p.len() as f64;
        assert!((under - (1.0 - (-1.0f64).exp())).abs() < 0.01, "{under}");
    }
}
