//! `fiox s3 bench`'s command line: warp's flags as one table in the crate's flag model
//! (`crate::cli`), which parses them, writes the flag lines of `--help` and gives the man page
//! and the completions their flags, and the options they become.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::sizes::{size_arg, Sizes};
use crate::cli::{self, Arg, Flag, Syntax, HELP};
use fiox_options::repeat::{self, RepeatUntil};

/// The modes, warp's words.
pub const MODES: &[&str] = &["put", "get", "delete", "stat", "list", "mixed", "multipart", "multipart-put"];

/// The column where `--help` starts the flags' descriptions.
const COLUMN: usize = 32;

/// Every flag, in the order `--help` lists them.
pub const FLAGS: &[Flag] = &[
    HELP,
    Flag::value(
        "--host",
        "HOST[:PORT][,HOST...]",
        "endpoints (workers take them in turn; default 127.0.0.1:9000)",
    ),
    Flag::value("--access-key", "KEY", "the access key (default $AWS_ACCESS_KEY_ID, then\n~/.aws/credentials, profile $AWS_PROFILE or default)"),
    Flag::value("--secret-key", "SECRET", "the secret key (default $AWS_SECRET_ACCESS_KEY, then the\nsame file)"),
    Flag::value("--region", "REGION", "signing region (default $AWS_REGION or us-east-1)"),
    Flag::switch("--tls", "HTTPS"),
    Flag::switch("--insecure", "HTTPS without checking the server's certificate"),
    Flag::value(
        "--bucket",
        "NAME",
        "bucket (default fiox-benchmark-bucket); created and removed when\nmissing, refused when it holds objects (see --use-existing)",
    ),
    Flag::switch("--use-existing", "run in a bucket that holds others' objects (fiox deletes\nonly its own)"),
    Flag::value("--prefix", "P", "object names' prefix (default: a run id)"),
    Flag::value("--concurrent", "N", "parallel requests, one connection each (default 20)"),
    Flag::value(
        "--obj.size",
        "SIZE",
        "object size (default 10MiB; 64KiB, 4k, 1MB); MIN-MAX: sizes\n\
         spread evenly between two; SIZE:WEIGHT,SIZE:WEIGHT,...: a\n\
         distribution, each size drawn in proportion to its weight",
    ),
    Flag::switch(
        "--obj.randsize",
        "random sizes spread evenly in log2 over the 8 binary orders\n\
         of magnitude below --obj.size (at least 128 B), as warp's;\n\
         with MIN-MAX: in log2 between the two",
    ),
    Flag::value("--objects", "N", "objects uploaded first for get, stat, delete, list, mixed\n(default 2500; delete: until they are gone)"),
    Flag::value("--part.size", "SIZE", "multipart, multipart-put: the size of each part but the last\n(default 5MiB, S3's smallest; a server may refuse smaller ones)"),
    Flag::value("--parts", "N", "multipart: the parts of its one object (default 200, warp's)"),
    Flag::value("--obj.name", "NAME", "multipart: its object's name under the prefix (default\nfiox-multipart.bin)"),
    Flag::value(
        "--part.concurrent",
        "N",
        "multipart-put: parts of one upload sent at once, each on a\n\
         connection of its own (default 1; warp's flag): --concurrent\n\
         uploads take --concurrent x N connections",
    ),
    Flag::value("--duration", "TIME", "how long to measure (default 5m; 30s, 2m)"),
    Flag::value(
        "--timeout",
        "TIME",
        "a request not answered in TIME fails (default 60s): a stalled\n\
         server ends the run with the results so far",
    ),
    Flag::value(
        "--rate",
        "N/s",
        "open loop: start N requests a second on a fixed schedule,\n\
         whatever the server's pace; latency counts from each request's\n\
         intended start (no coordinated omission); --concurrent bounds\n\
         the requests in flight",
    ),
    Flag::value(
        "--rate.process",
        "linear|poisson",
        "--rate's arrivals: evenly spaced (linear, the default) or\n\
         Poisson (exponential gaps with the same mean, as fio's\n\
         rate_process=poisson): bursts as independent clients make them",
    ),
    Flag::value("--get-distrib", "W", "mixed: the weight of GET (default 45)"),
    Flag::value("--stat-distrib", "W", "mixed: the weight of HEAD (default 30)"),
    Flag::value("--put-distrib", "W", "mixed: the weight of PUT (default 15)"),
    Flag::value("--delete-distrib", "W", "mixed: the weight of DELETE (default 10; at most --put-distrib)"),
    Flag::switch("--noclear", "keep the objects created"),
    Flag::switch("--json", "fio-shaped JSON instead of the text summary"),
    Flag::value(
        "--repeat-until",
        "METRIC:BOUND%",
        "run the bench again until the 95% confidence interval of\n\
         the metric's mean is within BOUND% of it (iops, bw, lat,\n\
         p99; as fiox's --repeat-until); the report is the last run's",
    ),
    Flag::value("--repeat-max", "N", "at most N runs with --repeat-until (default 10, at least 3)"),
    Flag::value(
        "--live",
        "ADDR",
        "serve a live page at http://ADDR/ (requests/s, MiB/s, latency\n\
         p50/p99/p99.9 each second, per operation; ADDR: host:port,\n\
         or a port on 127.0.0.1)",
    ),
    Flag::value("--metrics", "ADDR", "serve Prometheus metrics at http://ADDR/metrics (per operation)"),
    Flag::value(
        "--client",
        "HOST[,PORT]",
        "run on a fiox server (fiox --server) too; repeat for more hosts\n\
         (or name a file listing them): each runs the bench under\n\
         PREFIX/hN, the report merges them; --live, --metrics and\n\
         --repeat-until are the coordinator's, over the merged figures",
    ),
    Flag::value("--hosts", "H1,H2,...", "run on these fiox servers (as --client for each)"),
    Flag::value("--hosts-file", "FILE", "run on the fiox servers listed in FILE"),
    Flag::value(
        "--join",
        "HOST:PORT",
        "let --join-count servers (fiox --server=join:HOST:PORT) join\n\
         here and run the bench; one run (no --repeat-until)",
    ),
    Flag::value("--join-count", "N", "with --join: how many servers join"),
    Flag::value("--join-timeout", "TIME", "with --join: how long to wait for them (default 60s)"),
    Flag::value("--connect-timeout", "TIME", "with hosts: give up connecting to one after TIME (default 5s)"),
    Flag::value("--host-timeout", "TIME", "with hosts: a host silent for TIME is lost (default 10s)"),
];

/// `fiox s3 bench --help`.
pub fn help() -> String {
    let head = format!(
        "usage: fiox s3 bench {} [options]\n\nMinIO warp's modes and flags, on one S3 endpoint or several:\n",
        MODES.join("|")
    );
    let tail = "Percentiles come from fio's latency histograms, merged across workers, per operation, for
the time to first byte and the whole request. multipart-put: each operation is one upload of
an --obj.size object in --part.size parts (create, parts, complete), reported as MULTIPART
with its parts as PART. multipart (warp's): one object of --parts parts of --part.size is
uploaded first (not measured), then each operation GETs one of its parts (partNumber=N).
";
    cli::usage(FLAGS, Syntax::Gnu, COLUMN, &head, tail)
}

#[derive(Debug, Clone)]
pub struct Opts {
    pub mode: String,
    pub hosts: Vec<String>,
    pub key: String,
    pub secret: String,
    pub region: String,
    pub tls: bool,
    pub insecure: bool,
    pub bucket: String,
    pub prefix: String,
    pub concurrent: usize,
    pub sizes: Sizes,
    pub objects: usize,
    pub part_size: u64,
    /// multipart: the parts of its one object, and the object's name (under the prefix).
    pub parts: usize,
    pub obj_name: String,
    /// Parts of one upload in flight at once.
    pub part_concurrent: usize,
    pub duration: Duration,
    /// Each request's bound, connecting included.
    pub timeout: Duration,
    /// Open loop: requests started per second.
    pub rate: Option<f64>,
    /// Open loop: exponential gaps between intended starts (Poisson arrivals) rather than equal.
    pub poisson: bool,
    pub weights: [u32; 4],
    pub noclear: bool,
    pub json: bool,
    pub use_existing: bool,
    /// `--repeat-until` with `--repeat-max`.
    pub repeat: Option<RepeatUntil>,
    /// `--live`: the live page's address.
    pub live: Option<SocketAddr>,
    /// `--metrics`: the Prometheus endpoint's address.
    pub metrics: Option<SocketAddr>,
}

fn time_arg(flag: &str, v: &str) -> Result<Duration> {
    let t = v.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().with_context(|| format!("s3 bench: {flag}={v}: not a duration (30s, 2m, 1h)"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => bail!("s3 bench: {flag}={v}: unknown unit '{unit}' (ms, s, m, h)"),
    };
    if !(secs > 0.0 && secs < 1e9) {
        bail!("s3 bench: {flag}={v}: must be more than 0");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `N/s`, `N/m` or a bare `N` (a second): requests started per second.
fn rate_arg(flag: &str, v: &str) -> Result<f64> {
    let (n, per) = v.split_once('/').unwrap_or((v, "s"));
    let n: f64 = n
        .trim()
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n > 0.0)
        .with_context(|| format!("s3 bench: {flag}={v}: not a rate (a number above 0, then /s or /m: 200/s)"))?;
    let secs = match per.trim() {
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        p => bail!("s3 bench: {flag}={v}: unknown unit '/{p}' (/s, /m, /h)"),
    };
    let rate = n / secs;
    if rate > 1e7 {
        bail!("s3 bench: {flag}={v}: at most 10 million requests a second");
    }
    Ok(rate)
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

/// Reads `MODE [flags]` (the arguments after `bench`).
pub fn parse(args: &[String]) -> Result<Opts> {
    let Some(mode) = args.first() else { bail!("s3 bench: give a mode: {}", MODES.join(", ")) };
    if !MODES.contains(&mode.as_str()) {
        bail!("s3 bench: unknown mode '{mode}' (modes: {})", MODES.join(", "));
    }
    let mode = mode.clone();
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
        sizes: Sizes::Fixed(10 << 20),
        objects: 2500,
        part_size: 5 << 20,
        parts: 200,
        obj_name: "fiox-multipart.bin".into(),
        part_concurrent: 1,
        duration: Duration::from_secs(300),
        timeout: Duration::from_secs(60),
        rate: None,
        poisson: false,
        weights: [45, 30, 15, 10],
        noclear: false,
        json: false,
        use_existing: false,
        repeat: None,
        live: None,
        metrics: None,
    };
    let (mut key, mut secret, mut size, mut randsize) = (None, None, None, false);
    let mut repeat_max = None;
    for arg in cli::args(FLAGS, Syntax::Gnu, &args[1..]) {
        let (f, value) = match arg.map_err(|e| anyhow::anyhow!(e.message("s3 bench")))? {
            Arg::Flag(f, v) => (f, v),
            Arg::Other(a) if a.starts_with('-') => {
                let name = a.split_once('=').map_or(a, |(n, _)| n);
                bail!("s3 bench: unknown option '{name}' (fiox s3 bench --help)")
            }
            Arg::Other(a) => bail!("s3 bench: unexpected argument '{a}' after the mode (fiox s3 bench --help)"),
        };
        let flag = f.name;
        let int = |v: &str| {
            v.parse::<u64>()
                .ok()
                .filter(|&n| n < 1 << 32)
                .with_context(|| format!("s3 bench: {flag}={v}: not a whole number"))
        };
        match flag {
            "--help" => {}
            "--host" => o.hosts = value.split(',').filter(|h| !h.is_empty()).map(str::to_string).collect(),
            "--access-key" => key = Some(value),
            "--secret-key" => secret = Some(value),
            "--region" => o.region = value,
            "--tls" => o.tls = true,
            "--insecure" => o.insecure = true,
            "--bucket" => o.bucket = value,
            "--use-existing" => o.use_existing = true,
            "--prefix" => o.prefix = value.trim_matches('/').to_string(),
            "--concurrent" => o.concurrent = int(&value)? as usize,
            "--obj.size" => size = Some(value),
            "--obj.randsize" => randsize = true,
            "--objects" => o.objects = int(&value)? as usize,
            "--part.size" => o.part_size = size_arg(flag, &value)?,
            "--part.concurrent" => o.part_concurrent = int(&value)? as usize,
            "--parts" => o.parts = int(&value)? as usize,
            "--obj.name" => o.obj_name = value.trim_matches('/').to_string(),
            "--duration" => o.duration = time_arg(flag, &value)?,
            "--timeout" => o.timeout = time_arg(flag, &value)?,
            "--rate" => o.rate = Some(rate_arg(flag, &value)?),
            "--rate.process" => {
                o.poisson = match value.as_str() {
                    "linear" => false,
                    "poisson" => true,
                    v => bail!("s3 bench: --rate.process={v}: linear or poisson"),
                }
            }
            "--get-distrib" => o.weights[0] = int(&value)? as u32,
            "--stat-distrib" => o.weights[1] = int(&value)? as u32,
            "--put-distrib" => o.weights[2] = int(&value)? as u32,
            "--delete-distrib" => o.weights[3] = int(&value)? as u32,
            "--noclear" => o.noclear = true,
            "--json" => o.json = true,
            "--repeat-until" => {
                let (metric, bound_pct) =
                    repeat::parse_until(&value).map_err(|e| anyhow::anyhow!("s3 bench: {flag}={value}: {e}"))?;
                o.repeat = Some(RepeatUntil { metric, bound_pct, max_runs: repeat::DEFAULT_MAX });
            }
            "--repeat-max" => {
                repeat_max =
                    Some(repeat::parse_max(&value).map_err(|e| anyhow::anyhow!("s3 bench: {flag}={value}: {e}"))?)
            }
            // A bench with hosts goes to the multi-host wing, which takes them out first.
            "--client" | "--hosts" | "--hosts-file" | "--join" | "--join-count" | "--join-timeout"
            | "--connect-timeout" | "--host-timeout" => {}
            "--live" | "--metrics" => {
                let addr = fiox_options::spec::listen_addr(&value)
                    .map_err(|e| anyhow::anyhow!("s3 bench: {flag}={value}: {e}"))?;
                *if flag == "--live" { &mut o.live } else { &mut o.metrics } = Some(addr);
            }
            other => unreachable!("s3 bench: the flag table has {other}, which parse() does not read"),
        }
    }
    match (&mut o.repeat, repeat_max) {
        (Some(r), Some(n)) => r.max_runs = n,
        (None, Some(_)) => bail!("s3 bench: --repeat-max needs --repeat-until"),
        _ => {}
    }
    o.sizes = Sizes::parse(size.as_deref().unwrap_or("10MiB"), randsize)?;
    if o.mode == "multipart" {
        // Each GET reads one part: the part is the size the reports and the bodies know.
        o.sizes = Sizes::Fixed(o.part_size);
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
    check(&o)?;
    Ok(o)
}

/// What no single flag can judge alone.
fn check(o: &Opts) -> Result<()> {
    if o.poisson && o.rate.is_none() {
        bail!("s3 bench: --rate.process=poisson spaces --rate's requests: give --rate too");
    }
    if o.hosts.is_empty() {
        bail!("s3 bench: --host is empty");
    }
    if o.bucket.is_empty() || o.bucket.contains('/') {
        bail!("s3 bench: --bucket={}: a bucket's name, without '/'", o.bucket);
    }
    if o.concurrent == 0 || o.concurrent > 4096 {
        bail!("s3 bench: --concurrent={}: from 1 to 4096", o.concurrent);
    }
    if o.part_concurrent == 0 || o.concurrent * o.part_concurrent > 4096 {
        bail!(
            "s3 bench: --part.concurrent={}: from 1, and at most 4096 connections with --concurrent={}",
            o.part_concurrent,
            o.concurrent
        );
    }
    if !matches!(o.mode.as_str(), "put" | "multipart" | "multipart-put") && o.objects == 0 {
        bail!("s3 bench: --objects must be at least 1 for {}", o.mode);
    }
    if o.mode == "mixed" && o.weights[3] > o.weights[2] {
        bail!("s3 bench: --delete-distrib must not exceed --put-distrib (warp's rule: deletes only remove what puts made)");
    }
    if o.mode == "mixed" && o.weights.iter().all(|&w| w == 0) {
        bail!("s3 bench: every mixed weight is 0");
    }
    if o.mode == "multipart-put" && o.sizes.max().div_ceil(o.part_size) > 10_000 {
        bail!("s3 bench: --obj.size over --part.size makes more than S3's 10000 parts");
    }
    if !(1..=10_000).contains(&o.parts) {
        bail!("s3 bench: --parts={}: from 1 to 10000 (S3's limit)", o.parts);
    }
    if o.mode == "multipart" && (o.obj_name.is_empty() || o.part_size > 5 << 30) {
        bail!("s3 bench: multipart: --obj.name must not be empty and --part.size at most 5GiB");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Opts> {
        // The credentials first, so a flag at the end lacks its value.
        let mut v: Vec<String> = vec![args[0].to_string(), "--access-key=k".into(), "--secret-key=s".into()];
        v.extend(args[1..].iter().map(|s| s.to_string()));
        parse(&v)
    }

    #[test]
    fn every_row_has_a_meaning() {
        crate::cli::check_table(FLAGS).unwrap();
        for f in FLAGS {
            let mut args = vec!["get".to_string(), f.name.to_string()];
            if let Some(v) = f.value {
                args.push(
                    match v {
                        "SIZE" => "4KiB",
                        "TIME" => "2s",
                        "N/s" => "10/s",
                        "linear|poisson" => "poisson",
                        "N" | "W" => "3",
                        "METRIC:BOUND%" => "iops:5%",
                        "ADDR" => "9187",
                        _ => "x",
                    }
                    .to_string(),
                );
            }
            args.extend(["--access-key=k", "--secret-key=s", "--rate=5"].map(String::from));
            if f.name == "--repeat-max" {
                args.push("--repeat-until=bw:3%".into());
            }
            parse(&args).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        }
    }

    #[test]
    fn values_and_refusals() {
        let o = p(&["put", "--concurrent", "8", "--obj.size=64KiB", "--rate", "120/m", "--duration=1.5s"]).unwrap();
        assert_eq!(
            (o.concurrent, o.sizes.max(), o.rate, o.duration),
            (8, 65536, Some(2.0), Duration::from_millis(1500))
        );
        let e = |a: &[&str]| p(a).unwrap_err().to_string();
        assert_eq!(e(&["put", "--bogus=1"]), "s3 bench: unknown option '--bogus' (fiox s3 bench --help)");
        assert_eq!(e(&["put", "--concurrent"]), "s3 bench: --concurrent needs a value");
        assert_eq!(e(&["put", "--json=1"]), "s3 bench: --json takes no value");
        assert_eq!(
            e(&["put", "--rate=0/s"]),
            "s3 bench: --rate=0/s: not a rate (a number above 0, then /s or /m: 200/s)"
        );
        assert_eq!(e(&["put", "--rate=5/y"]), "s3 bench: --rate=5/y: unknown unit '/y' (/s, /m, /h)");
        assert_eq!(e(&["put", "--rate.process=bursty"]), "s3 bench: --rate.process=bursty: linear or poisson");
        assert!(p(&["put", "--rate=5", "--rate.process=poisson"]).unwrap().poisson);
        assert_eq!(e(&["put", "--concurrent=0"]), "s3 bench: --concurrent=0: from 1 to 4096");
        assert_eq!(
            e(&["nope"]),
            "s3 bench: unknown mode 'nope' (modes: put, get, delete, stat, list, mixed, multipart, multipart-put)"
        );
        assert!(e(&["multipart-put", "--obj.size=1GiB", "--part.size=1KiB"]).contains("more than S3's 10000 parts"));
        assert!(e(&["put", "extra"]).contains("unexpected argument 'extra'"));
        assert!(e(&["multipart-put", "--concurrent=64", "--part.concurrent=65"]).contains("at most 4096 connections"));
        let o = p(&["multipart-put", "--part.concurrent=4"]).unwrap();
        assert_eq!((o.mode.as_str(), o.part_concurrent), ("multipart-put", 4));
        assert_eq!(e(&["multipart", "--parts=0"]), "s3 bench: --parts=0: from 1 to 10000 (S3's limit)");
        let o = p(&["multipart", "--parts=3", "--part.size=6MiB", "--obj.name=/big.bin"]).unwrap();
        assert_eq!((o.parts, o.sizes.max(), o.obj_name.as_str()), (3, 6 << 20, "big.bin"));
        assert_eq!(e(&["put", "--repeat-max=4"]), "s3 bench: --repeat-max needs --repeat-until");
        assert!(
            e(&["put", "--repeat-until=ops:2%"]).starts_with("s3 bench: --repeat-until=ops:2%: unknown metric 'ops'")
        );
        assert!(e(&["put", "--repeat-until=iops:2%", "--repeat-max=2"]).contains("at least 3 runs"));
        assert!(e(&["put", "--live=nowhere"]).starts_with("s3 bench: --live=nowhere: nowhere: give host:port"));
        let o =
            p(&["get", "--repeat-until=p99:5%", "--repeat-max=4", "--live=9188", "--metrics=127.0.0.1:9189"]).unwrap();
        let r = o.repeat.unwrap();
        assert_eq!((r.metric.name(), r.bound_pct, r.max_runs), ("p99", 5.0, 4));
        assert_eq!((o.live.unwrap().port(), o.metrics.unwrap().port()), (9188, 9189));
    }

    #[test]
    fn help_lists_every_flag() {
        let h = help();
        for f in FLAGS.iter().filter(|f| !f.help.is_empty()) {
            assert!(h.contains(f.name), "{}", f.name);
        }
    }
}
