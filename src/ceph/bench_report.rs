//! What fiox adds to its reimplementations of Ceph's bench tools (`fiox rados bench`, `fiox rbd
//! bench`): every operation's latency in fio's log-linear histogram (`fiox-stats`), the
//! process's CPU time, and a report in fio's JSON layout (one job, `read`/`write` with
//! `clat_ns` percentiles and `bins`), so `fiox plot` and `fiox compare` read a bench like any
//! fio run, and the percentiles neither Ceph tool prints are there. The tool's own figures go
//! into the report's `fiox` object.
//!
//! Also the signal handling both benches share: SIGINT/SIGTERM stop issuing, in-flight
//! operations get a bounded time to finish, and the summary covers what completed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fiox_stats::LatHist;
use serde_json::{json, Map, Value};

/// Set by SIGINT/SIGTERM during a bench.
static STOP: AtomicBool = AtomicBool::new(false);

/// Makes SIGINT and SIGTERM ask the bench to stop instead of killing it.
pub fn catch_signals() {
    fiox_engine::sys::stop_on_signals(&STOP);
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// The signal's name, for the message about an interrupted run.
pub fn signal_name() -> &'static str {
    match fiox_engine::sys::caught_signal() {
        2 => "SIGINT",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

/// The start the Ceph subcommands (`fiox rados`, `fiox rbd`, `fiox ceph`) share: `--help` or
/// `-h` anywhere prints `help` and ends the command successfully; otherwise `parse` reads the
/// arguments, and its refusal is printed on stderr and ends the command with `status(refusal)`.
/// `Err` holds the command's exit status.
pub fn parse_or_exit<A>(
    args: &[String],
    help: fn() -> String,
    parse: impl FnOnce(&[String]) -> anyhow::Result<A>,
    status: impl FnOnce(&anyhow::Error) -> u8,
) -> Result<A, std::process::ExitCode> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{}", help());
        return Err(std::process::ExitCode::SUCCESS);
    }
    parse(args).map_err(|e| {
        eprintln!("{e}");
        std::process::ExitCode::from(status(&e))
    })
}

/// The command line with `$CEPH_ARGS` (Ceph's tools' default options, e.g. `--id bench -c
/// /etc/ceph/test.conf`, split at whitespace as the tools split it) in front, so options given
/// on the command line come later and win.
pub fn with_ceph_args(args: &[String]) -> Vec<String> {
    let env = std::env::var("CEPH_ARGS").unwrap_or_default();
    env.split_whitespace().map(str::to_string).chain(args.iter().cloned()).collect()
}

/// The line on stderr that ends a bench stopped by SIGINT/SIGTERM: how long it ran, how many
/// operations the summary covers, and how many a stalled cluster still holds.
pub fn interrupted_line(tool: &str, elapsed_s: f64, completed: u64, left: u32) -> String {
    let stalled = if left > 0 {
        format!(" ({left} still in flight after {} s: is the cluster stalled?)", DRAIN_LIMIT.as_secs())
    } else {
        String::new()
    };
    format!(
        "{tool}: interrupted by {} after {}; the summary covers the {completed} operations completed{stalled}",
        signal_name(),
        fmt_g(elapsed_s)
    )
}

/// How long in-flight operations may take to finish once a stop was asked for; a cluster that
/// stopped answering leaves them in flight, and the bench reports without them.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(3);

/// How long without any completion before a bench says the cluster may be stalled.
pub const STALL_WARN: Duration = Duration::from_secs(10);

/// fio's default percentile list.
const PCTS: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// A sample's running sums: its mean, and its standard deviation with the n − 1 divisor (as
/// fio's and Ceph's tools compute them).
#[derive(Default)]
pub struct Moments {
    pub n: u64,
    sum: f64,
    sum_sq: f64,
}

impl Moments {
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        self.sum += x;
        self.sum_sq += x * x;
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }

    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        ((self.sum_sq - self.sum * self.sum / n) / (n - 1.0)).max(0.0).sqrt()
    }
}

/// The operations of one direction: counts, bytes and latencies.
#[derive(Default)]
pub struct DirStat {
    pub ios: u64,
    pub bytes: u64,
    hist: Option<LatHist>,
    /// The latencies in nanoseconds.
    lat: Moments,
    min: u64,
    max: u64,
}

impl DirStat {
    pub fn add(&mut self, lat: Duration, bytes: u64) {
        let ns = lat.as_nanos().min(u64::MAX as u128) as u64;
        if self.ios == 0 {
            self.min = ns;
            self.max = ns;
        }
        self.ios += 1;
        self.bytes += bytes;
        self.hist.get_or_insert_with(LatHist::default).add(ns);
        self.lat.add(ns as f64);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    /// A latency percentile in nanoseconds (a histogram bucket's midpoint, as fio).
    pub fn percentile(&self, p: f64) -> Option<u64> {
        self.hist.as_ref()?.percentiles(&[p]).first().map(|x| x.1)
    }

    /// One direction as fio's JSON (json+: with `bins`), `runtime_s` the run's length.
    fn json(&self, runtime_s: f64) -> Value {
        let runtime_ms = (runtime_s * 1000.0).round() as u64;
        let (iops, bw) = if self.ios > 0 && runtime_s > 0.0 {
            (self.ios as f64 / runtime_s, self.bytes as f64 / runtime_s)
        } else {
            (0.0, 0.0)
        };
        let mut clat = Map::new();
        clat.insert("min".into(), json!(if self.ios > 0 { self.min } else { 0 }));
        clat.insert("max".into(), json!(self.max));
        clat.insert("mean".into(), json!(self.lat.mean()));
        clat.insert("stddev".into(), json!(self.lat.stddev()));
        clat.insert("N".into(), json!(self.ios));
        let lat = Value::Object(clat.clone());
        if let Some(h) = &self.hist {
            let pcts: Map<String, Value> =
                h.percentiles(&PCTS).into_iter().map(|(p, v)| (format!("{p:.6}"), json!(v))).collect();
            clat.insert("percentile".into(), Value::Object(pcts));
            let bins: Map<String, Value> = h.bins().map(|(v, n)| (v.to_string(), json!(n))).collect();
            clat.insert("bins".into(), Value::Object(bins));
        }
        json!({
            "io_bytes": self.bytes,
            "io_kbytes": self.bytes / 1024,
            "bw_bytes": bw.round() as u64,
            "bw": (bw / 1024.0).round() as u64,
            "iops": iops,
            "runtime": runtime_ms,
            "total_ios": self.ios,
            "short_ios": 0,
            "drop_ios": 0,
            "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
            "clat_ns": Value::Object(clat),
            "lat_ns": lat,
        })
    }

    /// `{"p50": s, "p99": s, "p99.9": s}` in seconds, for the `fiox` object and tables.
    pub fn percentiles_s(&self) -> Value {
        let p = |q| self.percentile(q).map_or(Value::Null, |ns| json!(ns as f64 / 1e9));
        json!({"p50": p(50.0), "p99": p(99.0), "p99.9": p(99.9)})
    }
}

/// One bench run, as fiox reports it.
pub struct BenchReport {
    /// The job's name in the report (`rados-bench-write`, ...).
    pub job: String,
    pub runtime_s: f64,
    pub read: DirStat,
    pub write: DirStat,
    /// The process's CPU seconds (user, system) over the run, the Ceph client's threads
    /// included.
    pub cpu_s: (f64, f64),
    /// 0, or the errno that ended the run.
    pub error: i64,
    /// The tool and its own figures (`tool`, `command`, the summary as the tool prints it, ...).
    pub fiox: Map<String, Value>,
}

/// The process's CPU time so far, in seconds (user, system).
pub fn cpu_now() -> (f64, f64) {
    let u = fiox_engine::sys::process_usage();
    (u.usr_us as f64 / 1e6, u.sys_us as f64 / 1e6)
}

impl BenchReport {
    /// The report in fio's JSON layout with fiox's object last.
    pub fn json(&self) -> Value {
        let pct = |s: f64| if self.runtime_s > 0.0 { s / self.runtime_s * 100.0 } else { 0.0 };
        let job = json!({
            "jobname": self.job,
            "groupid": 0,
            "error": self.error,
            "elapsed": self.runtime_s.round() as u64,
            "read": self.read.json(self.runtime_s),
            "write": self.write.json(self.runtime_s),
            "trim": DirStat::default().json(self.runtime_s),
            "usr_cpu": pct(self.cpu_s.0),
            "sys_cpu": pct(self.cpu_s.1),
        });
        let mut fiox = self.fiox.clone();
        let ios = self.read.ios + self.write.ios;
        let mut lat = Map::new();
        for (name, d) in [("read", &self.read), ("write", &self.write)] {
            if d.ios > 0 {
                lat.insert(name.into(), d.percentiles_s());
            }
        }
        fiox.insert("latency_s".into(), Value::Object(lat));
        if ios > 0 {
            fiox.insert("cpu_us_per_io".into(), json!((self.cpu_s.0 + self.cpu_s.1) * 1e6 / ios as f64));
        }
        json!({
            "fio version": crate::VERSION_STRING,
            "timestamp": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            "jobs": [job],
            "fiox": Value::Object(fiox),
        })
    }

    /// Notes in the `fiox` object that a signal ended the run with `left` operations in flight.
    pub fn note_interrupted(&mut self, left: u32) {
        self.fiox.insert("interrupted".into(), json!(signal_name()));
        self.fiox.insert("left_in_flight".into(), json!(left));
    }

    /// `save`, or `tool`'s line on stderr about the failure and the exit status 1.
    pub fn save_or_exit(&self, tool: &str, path: &str) -> Result<(), std::process::ExitCode> {
        self.save(path).map_err(|e| {
            eprintln!("{tool}: cannot write {path}: {e}");
            std::process::ExitCode::from(1)
        })
    }

    /// Writes the report (pretty, newline-terminated) to `path`, or to stdout for `-`.
    pub fn save(&self, path: &str) -> std::io::Result<()> {
        let text = format!("{}\n", serde_json::to_string_pretty(&self.json()).unwrap_or_default());
        if path == "-" {
            print!("{text}");
            Ok(())
        } else {
            std::fs::write(path, text)
        }
    }
}

/// C's `%g` (6 significant digits), as C++ streams print doubles.
pub fn fmt_g(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return format!("{x}");
    }
    let exp = x.abs().log10().floor() as i32;
    // Rounding may carry into the next power of ten: take the exponent of the rounded value.
    let rounded: f64 = format!("{x:.5e}").parse().unwrap_or(x);
    let exp = if rounded.abs() >= 10f64.powi(exp + 1) { exp + 1 } else { exp };
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&exp) {
        let s = format!("{x:.5e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{}e{}{:02}", trim(m.to_string()), if e < 0 { '-' } else { '+' }, e.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    trim(format!("{x:.decimals$}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupted_line_as_the_benches_print_it() {
        // No signal caught in this process: "a signal".
        assert_eq!(
            interrupted_line("fiox rbd bench", 2.5, 1234, 0),
            "fiox rbd bench: interrupted by a signal after 2.5; the summary covers the 1234 operations completed"
        );
        assert_eq!(
            interrupted_line("fiox rados bench", 12.0, 7, 3),
            "fiox rados bench: interrupted by a signal after 12; the summary covers the 7 operations completed \
             (3 still in flight after 3 s: is the cluster stalled?)"
        );
    }

    #[test]
    fn parse_or_exit_refuses_with_the_status_given() {
        let args = vec!["--bad".to_string()];
        let r = parse_or_exit(&args, || "help\n".into(), |_| -> anyhow::Result<u8> { anyhow::bail!("no") }, |_| 22);
        assert_eq!(r, Err(std::process::ExitCode::from(22)));
        let r = parse_or_exit(&args, || "help\n".into(), |a| Ok(a.len()), |_| 1);
        assert_eq!(r, Ok(1));
        let args = vec!["x".to_string(), "-h".to_string()];
        let r = parse_or_exit(&args, String::new, |_| Ok(()), |_| 1);
        assert_eq!(r, Err(std::process::ExitCode::SUCCESS));
    }

    #[test]
    fn report_reads_back_as_a_fio_report() {
        let mut r = BenchReport {
            job: "rados-bench-write".into(),
            runtime_s: 2.0,
            read: DirStat::default(),
            write: DirStat::default(),
            cpu_s: (0.1, 0.2),
            error: 0,
            fiox: Map::new(),
        };
        for us in 1..=100u64 {
            r.write.add(Duration::from_micros(us * 10), 4096);
        }
        let v = r.json();
        let run = crate::lab::results::from_value(&v, std::path::Path::new("x.json")).unwrap();
        assert_eq!(run.jobs.len(), 1);
        let f = &run.jobs[0].fig;
        assert_eq!(f.ios, 100);
        assert_eq!(f.iops, 50.0);
        assert_eq!(f.bw, 204800.0);
        let p50 = f.percentile(50.0).unwrap();
        assert!((480_000.0..=520_000.0).contains(&p50), "{p50}");
        assert!(v["fiox"]["latency_s"]["write"]["p99"].as_f64().unwrap() > 0.9e-3);
    }
}
