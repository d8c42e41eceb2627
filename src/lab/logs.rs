//! fio's (and fiox's) per-job logs: `write_bw_log`, `write_iops_log` and `write_lat_log` files,
//! one sample per line: `time (ms), value, direction, block size, offset[, priority]`.
//! Bandwidth is in KiB/s, latencies in nanoseconds, IOPS a count.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::lab::results::Dir;

/// What a log measures, from its file name (`job_bw.1.log`, `job_clat.2.log`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogKind {
    Bw,
    Iops,
    Lat,
    Clat,
    Slat,
}

impl LogKind {
    pub fn of(path: &Path) -> Result<LogKind> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let has = |k: &str| name.contains(&format!("_{k}.")) || name.ends_with(&format!("_{k}.log"));
        if name.contains("_clat_hist") || name.contains("_hist.") {
            bail!("'{}' is a latency histogram log; fiox plot reads bw, iops, lat, clat and slat logs", path.display());
        }
        Ok(if has("bw") {
            LogKind::Bw
        } else if has("iops") {
            LogKind::Iops
        } else if has("clat") {
            LogKind::Clat
        } else if has("slat") {
            LogKind::Slat
        } else if has("lat") {
            LogKind::Lat
        } else {
            bail!(
                "cannot tell what '{}' holds: fio names its logs PREFIX_bw.N.log, _iops, _lat, _clat or _slat",
                path.display()
            )
        })
    }

    pub fn title(self) -> &'static str {
        match self {
            LogKind::Bw => "bandwidth",
            LogKind::Iops => "IOPS",
            LogKind::Lat => "total latency",
            LogKind::Clat => "completion latency",
            LogKind::Slat => "submission latency",
        }
    }

    pub fn file(self) -> &'static str {
        match self {
            LogKind::Bw => "log-bw",
            LogKind::Iops => "log-iops",
            LogKind::Lat => "log-lat",
            LogKind::Clat => "log-clat",
            LogKind::Slat => "log-slat",
        }
    }
}

/// One log: its samples per direction, as (seconds, value in base units: B/s, IOPS, ns); no
/// series for an empty log (fio writes an empty slat log for synchronous engines).
#[derive(Debug, Clone)]
pub struct Log {
    pub kind: LogKind,
    pub name: String,
    pub series: Vec<(Dir, Vec<(f64, f64)>)>,
}

pub fn load(path: &Path) -> Result<Log> {
    let kind = LogKind::of(path)?;
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read '{}'", path.display()))?;
    let name = path.file_name().map(|n| n.to_string_lossy().trim_end_matches(".log").to_string()).unwrap_or_default();
    parse(&text, kind, &name, path)
}

pub fn parse(text: &str, kind: LogKind, name: &str, path: &Path) -> Result<Log> {
    let mut series: Vec<(Dir, Vec<(f64, f64)>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = || {
            anyhow::anyhow!(
                "'{}', line {}: not a fio log line (time, value, direction, ...): '{line}'",
                path.display(),
                i + 1
            )
        };
        if f.len() < 3 {
            return Err(bad());
        }
        let t: f64 = f[0].parse().map_err(|_| bad())?;
        let v: f64 = f[1].parse().map_err(|_| bad())?;
        let dir = match f[2] {
            "0" => Dir::Read,
            "1" => Dir::Write,
            "2" => Dir::Trim,
            _ => return Err(bad()),
        };
        let v = if kind == LogKind::Bw { v * 1024.0 } else { v };
        match series.iter_mut().find(|s| s.0 == dir) {
            Some(s) => s.1.push((t / 1000.0, v)),
            None => series.push((dir, vec![(t / 1000.0, v)])),
        }
    }
    for s in &mut series {
        s.1 = thin(std::mem::take(&mut s.1), 2000);
    }
    Ok(Log { kind, name: name.to_string(), series })
}

/// At most about `max` points: per-I/O logs can hold millions of samples, so long ones are
/// averaged over equal time slices.
fn thin(samples: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    if samples.len() <= max * 2 {
        return samples;
    }
    let (t0, t1) = (samples[0].0, samples[samples.len() - 1].0);
    let width = ((t1 - t0) / max as f64).max(1e-9);
    let mut out: Vec<(f64, f64)> = Vec::new();
    let (mut slot, mut st, mut sv, mut n) = (0usize, 0.0, 0.0, 0.0);
    for (t, v) in samples {
        let s = ((t - t0) / width) as usize;
        if s != slot && n > 0.0 {
            out.push((st / n, sv / n));
            (st, sv, n) = (0.0, 0.0, 0.0);
        }
        slot = s;
        st += t;
        sv += v;
        n += 1.0;
    }
    if n > 0.0 {
        out.push((st / n, sv / n));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_names() {
        assert_eq!(LogKind::of(Path::new("x/j_bw.1.log")).unwrap(), LogKind::Bw);
        assert_eq!(LogKind::of(Path::new("j_iops.2.log")).unwrap(), LogKind::Iops);
        assert_eq!(LogKind::of(Path::new("j_clat.1.log")).unwrap(), LogKind::Clat);
        assert_eq!(LogKind::of(Path::new("j_slat.1.log")).unwrap(), LogKind::Slat);
        assert_eq!(LogKind::of(Path::new("j_lat.1.log")).unwrap(), LogKind::Lat);
        assert!(LogKind::of(Path::new("j_clat_hist.1.log")).unwrap_err().to_string().contains("histogram"));
        assert!(LogKind::of(Path::new("notes.log")).unwrap_err().to_string().contains("cannot tell"));
    }

    #[test]
    fn samples_and_directions() {
        let l = parse(
            "100, 2048, 0, 4096, 0\n200, 4096, 1, 4096, 0, 0\n300, 1024, 0, 4096, 0\n",
            LogKind::Bw,
            "j_bw.1",
            Path::new("j_bw.1.log"),
        )
        .unwrap();
        assert_eq!(l.series.len(), 2);
        assert_eq!(l.series[0], (Dir::Read, vec![(0.1, 2048.0 * 1024.0), (0.3, 1024.0 * 1024.0)]));
        assert!(parse("1, x, 0\n", LogKind::Iops, "j", Path::new("j_iops.log"))
            .unwrap_err()
            .to_string()
            .contains("line 1"));
        let many: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, 1.0)).collect();
        assert!(thin(many, 2000).len() <= 2001);
    }
}
