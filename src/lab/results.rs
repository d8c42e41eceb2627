//! fio's and fiox's JSON reports read into figures per job and direction. This is the one place
//! that knows the report's layout; `sweep`, `plot` and `compare` all read results through it.
//!
//! - Entries of the same job in the same group (the `numjobs` clones of a job run without
//!   `group_reporting`) are merged as fio merges a group: IOPS, bandwidth and I/O counts add up,
//!   means are weighted by I/O count, CPU is the clones' mean, and completion-latency
//!   percentiles come from the merged histogram when the report has one (`json+`; sweeps always
//!   ask for it), else from the I/O-weighted mean of the clones' percentiles.
//! - Different jobs (or groups) stay separate: each is one series.
//! - Device utilisation is the busiest device's `util` in `disk_util` (it covers the whole run).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// An I/O direction as fio's report names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    Read,
    Write,
    Trim,
}

impl Dir {
    pub const ALL: [Dir; 3] = [Dir::Read, Dir::Write, Dir::Trim];

    pub fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Trim => "trim",
        }
    }
}

/// The figures of one job in one direction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    pub iops: f64,
    /// Bytes per second.
    pub bw: f64,
    /// Completion latency mean, nanoseconds.
    pub clat_mean: f64,
    /// Total latency (submission + completion) mean, nanoseconds.
    pub lat_mean: f64,
    /// usr + sys CPU, percent of one CPU.
    pub cpu: f64,
    pub ios: u64,
    pub runtime_ms: u64,
    /// Completion-latency histogram: (bucket value in ns, count), ascending; `json+` only.
    pub bins: Vec<(u64, u64)>,
    /// The report's completion-latency percentiles: (percent, ns), ascending.
    pub pcts: Vec<(f64, f64)>,
}

impl Figures {
    /// A completion-latency percentile in nanoseconds: exact from the histogram when there is
    /// one (as fio computes it: the first bucket where the running count reaches p% of all),
    /// else the report's own value for that percentile.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if !self.bins.is_empty() {
            let total: u64 = self.bins.iter().map(|b| b.1).sum();
            let threshold = p / 100.0 * total as f64;
            let mut sum = 0u64;
            for &(v, n) in &self.bins {
                sum += n;
                if sum as f64 >= threshold {
                    return Some(v as f64);
                }
            }
            return self.bins.last().map(|b| b.0 as f64);
        }
        self.pcts.iter().find(|(q, _)| (q - p).abs() < 1e-6).map(|x| x.1)
    }
}

/// One series of a report: a job (merged over its clones) in one direction.
#[derive(Debug, Clone, PartialEq)]
pub struct JobResult {
    pub job: String,
    pub group: u64,
    pub dir: Dir,
    pub fig: Figures,
}

impl JobResult {
    /// How the series is named in tables and legends: `job read`.
    pub fn key(&self) -> String {
        format!("{} {}", self.job, self.dir.name())
    }
}

/// One report.
#[derive(Debug, Clone)]
pub struct Run {
    /// `fio-3.33` or `fiox-0.1.0`.
    pub version: String,
    pub jobs: Vec<JobResult>,
    /// Percent, the busiest device's; `None` when the report has no disk statistics.
    pub util: Option<f64>,
    /// fiox's run manifest, when the report is fiox's.
    pub fiox: Option<Value>,
}

pub fn load(path: &Path) -> Result<Run> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read '{}'", path.display()))?;
    parse(&text, path)
}

/// The first character of a JSON report (a constant, so that brace-counting tools reading
/// this file see the function below balanced).
const JSON_START: char = '{';

/// Parses a report. Text before the JSON (fio's warnings, a normal-format report) is skipped;
/// when the file holds several reports (`--status-interval`), the last one is read.
pub fn parse(text: &str, path: &Path) -> Result<Run> {
    let lead = text.len() - text.trim_start().len();
    let starts_json = |i: &usize| text[*i..].starts_with(JSON_START);
    let start = Some(lead)
        .filter(starts_json)
        .or_else(|| text.match_indices('\n').map(|(i, _)| i + 1).find(starts_json))
        .with_context(|| format!("'{}' holds no JSON report (run fio with --output-format=json)", path.display()))?;
    let mut last = None;
    for v in serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>() {
        match v {
            Ok(v) if v.get("jobs").is_some() => last = Some(v),
            Ok(_) => {}
            // A report cut short (an interrupted run) or trailing text: keep what was read.
            Err(e) if last.is_some() => {
                let _ = e;
                break;
            }
            Err(e) => bail!("'{}' is not a complete fio JSON report: {e}", path.display()),
        }
    }
    let v = last.with_context(|| format!("'{}' holds no fio JSON report (no \"jobs\")", path.display()))?;
    from_value(&v, path)
}

fn f(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn u(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

pub fn from_value(v: &Value, path: &Path) -> Result<Run> {
    let jobs = v
        .get("jobs")
        .and_then(Value::as_array)
        .with_context(|| format!("'{}': \"jobs\" is not a list", path.display()))?;
    // (group, name) in order of first appearance, with the entries of each.
    let mut order: Vec<(u64, String)> = Vec::new();
    let mut entries: BTreeMap<(u64, String), Vec<&Value>> = BTreeMap::new();
    for j in jobs {
        let name = j.get("jobname").and_then(Value::as_str).unwrap_or("").to_string();
        let key = (u(j, "groupid"), name);
        if !entries.contains_key(&key) {
            order.push(key.clone());
        }
        entries.entry(key).or_default().push(j);
    }
    let mut out = Vec::new();
    for key in order {
        let list = &entries[&key];
        for dir in Dir::ALL {
            let parts: Vec<Figures> = list.iter().filter_map(|j| j.get(dir.name())).map(figures).collect();
            let ios: u64 = parts.iter().map(|p| p.ios).sum();
            if ios == 0 {
                continue;
            }
            let mut fig = merge(&parts);
            fig.cpu = list.iter().map(|j| f(j, "usr_cpu") + f(j, "sys_cpu")).sum::<f64>() / list.len() as f64;
            out.push(JobResult { job: key.1.clone(), group: key.0, dir, fig });
        }
    }
    let util = v
        .get("disk_util")
        .and_then(Value::as_array)
        .and_then(|d| d.iter().filter_map(|x| x.get("util").and_then(Value::as_f64)).reduce(f64::max));
    Ok(Run {
        version: v.get("fio version").and_then(Value::as_str).unwrap_or("").to_string(),
        jobs: out,
        util,
        fiox: v.get("fiox").cloned(),
    })
}

/// One direction of one JSON job entry.
fn figures(d: &Value) -> Figures {
    let clat = d.get("clat_ns").unwrap_or(&Value::Null);
    // With lat_percentiles=1 fio reports percentiles under lat_ns instead.
    let with_pcts = if clat.get("percentile").is_some() { clat } else { d.get("lat_ns").unwrap_or(&Value::Null) };
    let mut pcts: Vec<(f64, f64)> = with_pcts
        .get("percentile")
        .and_then(Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| Some((k.parse().ok()?, v.as_f64()?))).collect())
        .unwrap_or_default();
    pcts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut bins: Vec<(u64, u64)> = with_pcts
        .get("bins")
        .and_then(Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| Some((k.parse().ok()?, v.as_u64()?))).collect())
        .unwrap_or_default();
    bins.sort_unstable();
    Figures {
        iops: f(d, "iops"),
        bw: f(d, "bw_bytes"),
        clat_mean: f(clat, "mean"),
        lat_mean: f(d.get("lat_ns").unwrap_or(&Value::Null), "mean"),
        cpu: 0.0,
        ios: u(d, "total_ios"),
        runtime_ms: u(d, "runtime"),
        bins,
        pcts,
    }
}

/// A group's figures from its members' (see the module comment).
fn merge(parts: &[Figures]) -> Figures {
    let parts: Vec<&Figures> = parts.iter().filter(|p| p.ios > 0).collect();
    if parts.len() == 1 {
        return parts[0].clone();
    }
    let ios: u64 = parts.iter().map(|p| p.ios).sum();
    let w = |g: fn(&Figures) -> f64| parts.iter().map(|p| g(p) * p.ios as f64).sum::<f64>() / ios.max(1) as f64;
    let mut bins = Vec::new();
    if parts.iter().all(|p| !p.bins.is_empty()) {
        let mut m: BTreeMap<u64, u64> = BTreeMap::new();
        for p in &parts {
            for &(v, n) in &p.bins {
                *m.entry(v).or_default() += n;
            }
        }
        bins = m.into_iter().collect();
    }
    let pcts = parts[0]
        .pcts
        .iter()
        .map(|&(q, _)| {
            let v = parts.iter().map(|p| p.percentile(q).unwrap_or(0.0) * p.ios as f64).sum::<f64>() / ios as f64;
            (q, v)
        })
        .collect();
    let mut out = Figures {
        iops: parts.iter().map(|p| p.iops).sum(),
        bw: parts.iter().map(|p| p.bw).sum(),
        clat_mean: w(|p| p.clat_mean),
        lat_mean: w(|p| p.lat_mean),
        cpu: 0.0,
        ios,
        runtime_ms: parts.iter().map(|p| p.runtime_ms).max().unwrap_or(0),
        bins,
        pcts,
    };
    // With a merged histogram the listed percentiles are recomputed from it.
    if !out.bins.is_empty() {
        let qs: Vec<f64> = out.pcts.iter().map(|p| p.0).collect();
        out.pcts = qs.iter().map(|&q| (q, out.percentile(q).unwrap_or(0.0))).collect();
    }
    out
}

/// Every report under `path`: the file itself, or the `.json` files in a folder (and in its
/// `points/` folder, for a sweep's results), in natural order of their names.
pub fn files_under(path: &Path) -> Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if !path.is_dir() {
        bail!("'{}' does not exist", path.display());
    }
    let dir = if path.join("points").is_dir() { path.join("points") } else { path.to_path_buf() };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot list '{}'", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
        .collect();
    files.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
    if files.is_empty() {
        bail!("'{}' holds no .json reports", dir.display());
    }
    Ok(files)
}

/// Compares names with their numbers as numbers: `2.json` before `10.json`, `4k` before `64k`.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let chunks = |s: &str| -> Vec<(bool, String)> {
        let mut v: Vec<(bool, String)> = Vec::new();
        for c in s.chars() {
            let d = c.is_ascii_digit();
            match v.last_mut() {
                Some((kind, text)) if *kind == d => text.push(c),
                _ => v.push((d, c.to_string())),
            }
        }
        v
    };
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(&cb) {
        let o = match (x.0, y.0) {
            (true, true) => {
                let (p, q) = (x.1.trim_start_matches('0'), y.1.trim_start_matches('0'));
                p.len().cmp(&q.len()).then_with(|| p.cmp(q))
            }
            _ => x.1.cmp(&y.1),
        };
        if o.is_ne() {
            return o;
        }
    }
    ca.len().cmp(&cb.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference() -> Run {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/fio-3.33-example.json");
        load(&p).expect("fio's example JSON (shared/reference)")
    }

    #[test]
    fn reads_fios_own_report() {
        let r = reference();
        assert_eq!(r.version, "fio-3.33");
        let keys: Vec<String> = r.jobs.iter().map(JobResult::key).collect();
        assert_eq!(keys, ["randrw-libaio read", "randrw-libaio write", "seqread-psync read"]);
        let rd = &r.jobs[0].fig;
        assert_eq!(rd.ios, 44404);
        // Percentiles from the histogram equal fio's own.
        for &(q, v) in &rd.pcts {
            assert_eq!(rd.percentile(q), Some(v), "p{q}");
        }
        assert_eq!(rd.percentile(99.0), Some(757760.0));
        assert!((r.util.unwrap() - 74.173455).abs() < 1e-9);
    }

    #[test]
    fn clones_merge_like_a_group() {
        let one = r#"{"groupid":0,"jobname":"j","usr_cpu":10.0,"sys_cpu":20.0,
            "read":{"iops":100.0,"bw_bytes":409600,"total_ios":100,"runtime":1000,
              "clat_ns":{"mean":1000.0,"percentile":{"50.000000":1000,"99.000000":2000},"bins":{"1000":60,"2000":40}},
              "lat_ns":{"mean":1100.0}},
            "write":{"total_ios":0}}"#;
        let two = r#"{"groupid":0,"jobname":"j","usr_cpu":30.0,"sys_cpu":0.0,
            "read":{"iops":300.0,"bw_bytes":1228800,"total_ios":300,"runtime":1000,
              "clat_ns":{"mean":3000.0,"percentile":{"50.000000":3000,"99.000000":3000},"bins":{"3000":300}},
              "lat_ns":{"mean":3100.0}},
            "write":{"total_ios":0}}"#;
        let text = format!("fio: a warning first\n{{\"fio version\":\"fio-3.33\",\"jobs\":[{one},{two}]}}\n");
        let r = parse(&text, Path::new("x.json")).unwrap();
        assert_eq!(r.jobs.len(), 1);
        let g = &r.jobs[0].fig;
        assert_eq!((g.iops, g.bw, g.ios), (400.0, 1638400.0, 400));
        assert_eq!(g.clat_mean, 2500.0);
        assert_eq!(g.lat_mean, 2600.0);
        assert_eq!(r.jobs[0].fig.cpu, 30.0);
        // 60 at 1000, 40 at 2000, 300 at 3000: the median is 3000 (cumulative 100 < 200).
        assert_eq!(g.percentile(50.0), Some(3000.0));
        assert_eq!(g.percentile(15.0), Some(1000.0));
    }

    #[test]
    fn natural_order() {
        let mut v = vec!["bs=64k", "bs=4k", "10.json", "2.json", "run10", "run9"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["2.json", "10.json", "bs=4k", "bs=64k", "run9", "run10"]);
    }
}
