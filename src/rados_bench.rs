//! `fiox rados bench SECONDS write`: Ceph's `rados bench` write test (pacific 16.2.15's
//! command line, objects and output; reference/ceph.md section 3) on librados through
//! `fiox_engine::PoolClient`. The objects, their contents and the metadata object are the real
//! tool's, so `rados bench SECONDS seq|rand` reads and verifies what fiox wrote, and `rados
//! cleanup` removes it.
//!
//! Not done yet: the `seq` and `rand` tests, `rados cleanup`, `--reuse-bench`, `-f json`,
//! `--show-time`, `--write-omap|xattr|object`, namespaces, and the allocation hints (`hints =
//! 1` is printed, as the real tool does by default, but no hint is sent).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use fiox_engine::{Finish, PoolClient};
use fiox_options::CephOpts;

use crate::rbd_bench::fmt_g;

struct Args {
    ceph: CephOpts,
    seconds: u64,
    threads: u32,
    op_size: u64,
    object_size: Option<u64>,
    max_objects: u64,
    cleanup: bool,
    run_name: Option<String>,
    hints: bool,
}

/// A size as rados takes it (`4M`, `64K`, `4194304`; 1024-based).
fn size(v: &str) -> Option<u64> {
    let digits = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(digits);
    let shift = match unit.to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return None,
    };
    num.parse::<u64>().ok()?.checked_mul(1 << shift)
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        ceph: CephOpts::default(),
        seconds: 0,
        threads: 16,
        op_size: 4 << 20,
        object_size: None,
        max_objects: 0,
        cleanup: true,
        run_name: None,
        hints: true,
    };
    let mut words = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        if !name.starts_with('-') {
            words.push(arg.clone());
            i += 1;
            continue;
        }
        let mut value = || -> Result<String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            args.get(i).cloned().ok_or_else(|| anyhow::anyhow!("Option {name} requires an argument."))
        };
        match name {
            "-c" | "--conf" => a.ceph.conf = Some(value()?),
            "--cluster" => a.ceph.clustername = Some(value()?),
            "--id" | "-i" | "-n" | "--name" => a.ceph.clientname = Some(value()?),
            "-p" | "--pool" => a.ceph.pool = Some(value()?),
            "-t" | "--concurrent-ios" => {
                let v = value()?;
                a.threads = v
                    .parse()
                    .ok()
                    .filter(|&t| t > 0)
                    .ok_or_else(|| anyhow::anyhow!("rados: invalid concurrent-ios: '{v}'"))?;
            }
            "-b" | "--block-size" => {
                let v = value()?;
                a.op_size =
                    size(&v).filter(|&s| s > 0).ok_or_else(|| anyhow::anyhow!("rados: invalid block size: '{v}'"))?;
            }
            "-O" | "--object-size" => {
                let v = value()?;
                a.object_size = Some(
                    size(&v).filter(|&s| s > 0).ok_or_else(|| anyhow::anyhow!("rados: invalid object size: '{v}'"))?,
                );
            }
            "--max-objects" => {
                let v = value()?;
                a.max_objects = v.parse().map_err(|_| anyhow::anyhow!("rados: invalid max objects: '{v}'"))?;
            }
            "--no-cleanup" => a.cleanup = false,
            "--no-hints" => a.hints = false,
            "--run-name" => a.run_name = Some(value()?),
            _ => bail!("fiox rados: option {name} is not supported yet"),
        }
        i += 1;
    }
    match words.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["bench", secs, "write"] => {
            a.seconds = secs.parse().map_err(|_| anyhow::anyhow!("Invalid value for seconds: '{secs}'"))?;
        }
        ["bench", _, test @ ("seq" | "rand")] => {
            bail!("fiox rados: 'bench ... {test}' is not implemented yet (only write)")
        }
        ["bench", ..] => {
            bail!("fiox rados: usage: fiox rados -p POOL bench SECONDS write [-t N] [-b SIZE] [-O SIZE] [--no-cleanup]")
        }
        [other, ..] => bail!("fiox rados: only 'bench SECONDS write' is implemented, not '{other}'"),
        [] => {
            bail!("fiox rados: usage: fiox rados -p POOL bench SECONDS write [-t N] [-b SIZE] [-O SIZE] [--no-cleanup]")
        }
    }
    if a.ceph.pool.is_none() {
        bail!("error: must specify pool");
    }
    Ok(a)
}

/// Latencies and per-second samples, with the running sums the summary needs.
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
    /// Sample standard deviation (n − 1), 0 below two samples.
    fn stddev(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        ((self.sum_sq - self.sum * self.sum / n) / (n - 1.0)).max(0.0).sqrt()
    }
}

fn hostname() -> String {
    let h = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    h.trim().chars().take(29).collect()
}

const HEADER: &str = "  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)";

/// `fiox rados --help`.
pub fn help() -> String {
    "usage: fiox rados [-c CONF] [--cluster NAME] [--id ID] -p POOL bench SECONDS write [-t N]
                  [-b SIZE] [-O SIZE] [--max-objects N] [--no-cleanup] [--run-name NAME]

Ceph's `rados bench` write test through librados: the same objects, contents and metadata
object as pacific's tool, so `rados bench SECONDS seq|rand` reads them back and `rados cleanup`
removes them, and the same output (per-second rows, then the summary).
Needs librados2 at run time.
"
    .to_string()
}

pub fn run(args: &[String]) -> Result<ExitCode> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{}", help());
        return Ok(ExitCode::SUCCESS);
    }
    let a = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(1));
        }
    };
    let object_size = a.object_size.unwrap_or(a.op_size);
    // An object smaller than an op: the op shrinks to the object (as rados bench does).
    let op_size = a.op_size.min(object_size);
    let wpo = (object_size / op_size).max(1);
    let pool = a.ceph.pool.clone().unwrap_or_default();
    let mut client = match PoolClient::open(&a.ceph, a.threads, op_size as usize) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error opening pool {pool}: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    println!("hints = {}", u8::from(a.hints));
    let pid = std::process::id();
    let prefix = format!("benchmark_data_{}_{pid}", hostname());
    println!(
        "Maintaining {} concurrent writes of {op_size} bytes to objects of size {object_size} for up to {} seconds or {} objects",
        a.threads, a.seconds, a.max_objects
    );
    println!("Object prefix: {prefix}");
    println!("{HEADER}");
    let max_ops = if a.max_objects > 0 { a.max_objects * wpo } else { u64::MAX };
    let mut submitted_at = vec![Instant::now(); a.threads as usize];
    let mut finished: Vec<Finish> = Vec::new();
    let (mut started, mut done) = (0u64, 0u64);
    let mut lat = Series::default();
    let mut last_lat: Option<f64> = None;
    let (mut bw, mut iops) = (Series::default(), Series::default());
    let start = Instant::now();
    let stop = start + Duration::from_secs(a.seconds);
    let row =
        |sec: u64, in_flight: u32, started: u64, done: u64, avg: f64, cur: f64, last: Option<f64>, avg_lat: f64| {
            println!(
                "{sec:5} {in_flight:7} {started:9} {done:9} {:>9} {:>9} {:>11} {:>11}",
                fmt_g(avg),
                fmt_g(cur),
                last.map_or("-".to_string(), fmt_g),
                fmt_g(avg_lat)
            );
        };
    row(0, 0, 0, 0, 0.0, 0.0, None, 0.0);
    let mut next_row = 1u64;
    let mut done_at_row = 0u64;
    let mut row_sec = 0u64;
    let mut idle: Vec<u32> = (0..a.threads).rev().collect();
    let mut failure: Option<i64> = None;
    loop {
        let now = Instant::now();
        let issuing = now < stop && started < max_ops && failure.is_none();
        while issuing && !idle.is_empty() && started < max_ops {
            let slot = idle.pop().expect("an idle slot");
            let buf = client.buf_mut(slot);
            buf.fill(b'z');
            let text = format!("I'm the {started:>16}th op!\0");
            let n = text.len().min(buf.len());
            buf[..n].copy_from_slice(&text.as_bytes()[..n]);
            let oid = format!("{prefix}_object{}", started / wpo);
            submitted_at[slot as usize] = Instant::now();
            if let Err(r) = client.write(slot, &oid, op_size as usize, op_size * (started % wpo)) {
                failure = Some(r);
                idle.push(slot);
                break;
            }
            started += 1;
        }
        if client.in_flight() == 0 && (!issuing || failure.is_some()) {
            break;
        }
        // Wake for the next completion or the next status row, whichever comes first.
        let row_at = start + Duration::from_secs(next_row);
        let limit = row_at.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        client.wait(1, Some(limit), &mut finished);
        let now = Instant::now();
        for f in finished.drain(..) {
            if f.result < 0 && failure.is_none() {
                failure = Some(f.result);
            }
            let l = now.duration_since(submitted_at[f.slot as usize]).as_secs_f64();
            lat.add(l);
            last_lat = Some(l);
            done += 1;
            idle.push(f.slot);
        }
        if now >= row_at {
            let elapsed = now.duration_since(start).as_secs_f64();
            // Whole seconds since the last row, as the real tool's status thread counts them.
            let since = (next_row - row_sec).max(1) as f64;
            let cur = (done - done_at_row) as f64 * op_size as f64 / 1048576.0 / since;
            let cur_iops = ((done - done_at_row) as f64 / since) as u64;
            bw.add(cur);
            iops.add(cur_iops as f64);
            let last = if done > done_at_row { last_lat } else { None };
            if next_row % 20 == 0 {
                println!(
                    "{} min lat: {} max lat: {} avg lat: {}",
                    now_text(),
                    fmt_g(lat.min),
                    fmt_g(lat.max),
                    fmt_g(lat.mean())
                );
                println!("{HEADER}");
            }
            let avg = done as f64 * op_size as f64 / 1048576.0 / elapsed;
            row(next_row, client.in_flight(), started, done, avg, cur, last, lat.mean());
            done_at_row = done;
            row_sec = next_row;
            next_row = elapsed as u64 + 1;
        }
    }
    let time = start.elapsed().as_secs_f64();
    if let Some(r) = failure {
        eprintln!("error during benchmark: {}", fiox_engine::ceph_errno_text(r));
        return Ok(ExitCode::from(1));
    }
    if iops.n == 0 {
        // Never sampled: rados bench's fallback.
        let v = done as f64 / time;
        iops.add(v);
    }
    let bandwidth = done as f64 * op_size as f64 / time / 1048576.0;
    let lines: [(&str, String); 16] = [
        ("Total time run:", fmt_g(time)),
        ("Total writes made:", done.to_string()),
        ("Write size:", op_size.to_string()),
        ("Object size:", object_size.to_string()),
        ("Bandwidth (MB/sec):", fmt_g(bandwidth)),
        ("Stddev Bandwidth:", fmt_g(bw.stddev())),
        ("Max bandwidth (MB/sec):", fmt_g(if bw.n > 0 { bw.max } else { 0.0 })),
        ("Min bandwidth (MB/sec):", fmt_g(if bw.n > 0 { bw.min } else { f64::MAX })),
        ("Average IOPS:", ((done as f64 / time) as u64).to_string()),
        ("Stddev IOPS:", fmt_g(iops.stddev())),
        ("Max IOPS:", fmt_g(iops.max)),
        ("Min IOPS:", fmt_g(iops.min)),
        ("Average Latency(s):", fmt_g(lat.mean())),
        ("Stddev Latency(s):", fmt_g(lat.stddev())),
        ("Max latency(s):", fmt_g(lat.max)),
        ("Min latency(s):", fmt_g(if lat.n > 0 { lat.min } else { 9999.0 })),
    ];
    for (label, value) in lines {
        println!("{label:<24}{value}");
    }
    // The metadata object seq/rand read: object size, ops done, pid, op size (little-endian).
    let meta_name = a.run_name.clone().unwrap_or_else(|| "benchmark_last_metadata".into());
    let mut meta = Vec::with_capacity(24);
    meta.extend_from_slice(&object_size.to_le_bytes());
    meta.extend_from_slice(&(done as i32).to_le_bytes());
    meta.extend_from_slice(&(pid as i32).to_le_bytes());
    meta.extend_from_slice(&op_size.to_le_bytes());
    if let Err(r) = client.write_full(&meta_name, &meta) {
        eprintln!("error during benchmark: {}", fiox_engine::ceph_errno_text(r));
        return Ok(ExitCode::from(1));
    }
    if a.cleanup {
        println!("Cleaning up (deleting benchmark objects)");
        let t0 = Instant::now();
        let objects = done.div_ceil(wpo);
        let mut removed = 0u64;
        for k in 0..objects {
            match client.remove(&format!("{prefix}_object{k}")) {
                Ok(()) => removed += 1,
                Err(r) if r == -(libc::ENOENT as i64) => {}
                Err(r) => {
                    eprintln!("error during cleanup: {}", fiox_engine::ceph_errno_text(r));
                    return Ok(ExitCode::from(1));
                }
            }
        }
        println!("Removed {removed} object{}", if removed == 1 { "" } else { "s" });
        println!("Clean up completed and total clean up time :{}", fmt_g(t0.elapsed().as_secs_f64()));
        let _ = client.remove(&meta_name);
    }
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
