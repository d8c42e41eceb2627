//! From reports to table rows: one row per point and series (job and direction), each metric
//! averaged over the point's runs with a 95% confidence interval when there are several; and
//! the rows as `summary.csv`.

use crate::lab::results::{Dir, Figures, Run};
use fiox_stats::runs as stats;

/// One run's figures for one series, with the run's device utilisation.
#[derive(Debug, Clone)]
pub struct Sample {
    pub fig: Figures,
    pub util: Option<f64>,
}

/// A column of the summary: its CSV name and how a run yields it.
pub struct Metric {
    pub key: &'static str,
    pub get: fn(&Sample) -> Option<f64>,
}

/// Index of each metric in [`METRICS`], for readers of [`Row::stats`].
pub const IOPS: usize = 0;
pub const BW: usize = 1;
pub const CLAT_MEAN: usize = 2;
pub const CLAT_P50: usize = 3;
pub const CLAT_P99: usize = 4;
pub const CLAT_P999: usize = 5;
pub const LAT_MEAN: usize = 6;
pub const UTIL: usize = 7;
pub const CPU: usize = 8;

pub const METRICS: [Metric; 9] = [
    Metric { key: "iops", get: |s| Some(s.fig.iops) },
    Metric { key: "bw_bytes", get: |s| Some(s.fig.bw) },
    Metric { key: "clat_mean_ns", get: |s| Some(s.fig.clat_mean) },
    Metric { key: "clat_p50_ns", get: |s| s.fig.percentile(50.0) },
    Metric { key: "clat_p99_ns", get: |s| s.fig.percentile(99.0) },
    Metric { key: "clat_p99.9_ns", get: |s| s.fig.percentile(99.9) },
    Metric { key: "lat_mean_ns", get: |s| Some(s.fig.lat_mean) },
    Metric { key: "util_pct", get: |s| s.util },
    Metric { key: "cpu_pct", get: |s| Some(s.fig.cpu) },
];

/// A metric over a point's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Stat {
    pub mean: f64,
    /// Half-width of the 95% confidence interval; `None` for a single run.
    pub ci: Option<f64>,
    pub values: Vec<f64>,
}

impl Stat {
    pub fn of(values: Vec<f64>) -> Option<Stat> {
        if values.is_empty() {
            return None;
        }
        Some(Stat { mean: stats::mean(&values), ci: stats::ci95(&values), values })
    }
}

#[derive(Debug, Clone)]
pub struct Row {
    /// Index of the point (in the caller's point list).
    pub point: usize,
    pub job: String,
    pub dir: Dir,
    pub runs: usize,
    /// One entry per [`METRICS`] column.
    pub stats: Vec<Option<Stat>>,
}

impl Row {
    /// `job read`, as in legends.
    pub fn series(&self) -> String {
        format!("{} {}", self.job, self.dir.name())
    }

    pub fn mean(&self, metric: usize) -> Option<f64> {
        self.stats[metric].as_ref().map(|s| s.mean)
    }

    pub fn ci(&self, metric: usize) -> Option<f64> {
        self.stats[metric].as_ref().and_then(|s| s.ci)
    }
}

/// Rows for every point (`points[i]` holds point i's runs), series in order of appearance.
pub fn rows(points: &[Vec<Run>]) -> Vec<Row> {
    let mut out = Vec::new();
    for (i, runs) in points.iter().enumerate() {
        let mut order: Vec<(String, Dir)> = Vec::new();
        for r in runs {
            for j in &r.jobs {
                let k = (j.job.clone(), j.dir);
                if !order.contains(&k) {
                    order.push(k);
                }
            }
        }
        for (job, dir) in order {
            let samples: Vec<Sample> = runs
                .iter()
                .filter_map(|r| {
                    r.jobs
                        .iter()
                        .find(|j| j.job == job && j.dir == dir)
                        .map(|j| Sample { fig: j.fig.clone(), util: r.util })
                })
                .collect();
            let stats = METRICS.iter().map(|m| Stat::of(samples.iter().filter_map(|s| (m.get)(s)).collect())).collect();
            out.push(Row { point: i, job, dir, runs: samples.len(), stats });
        }
    }
    out
}

/// The series names over all rows, in order of appearance.
pub fn series_names(rows: &[Row]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in rows {
        let s = r.series();
        if !v.contains(&s) {
            v.push(s);
        }
    }
    v
}

/// `summary.csv`: the axis columns (`labels` gives each point's values), job, direction, the
/// number of runs, then each metric (and its `_ci95` half-width when `with_ci`).
pub fn csv(axis_names: &[String], labels: &[Vec<String>], rows: &[Row], with_ci: bool) -> String {
    let mut head: Vec<String> = axis_names.to_vec();
    head.extend(["job", "dir", "runs"].map(String::from));
    for m in &METRICS {
        head.push(m.key.to_string());
        if with_ci {
            head.push(format!("{}_ci95", m.key));
        }
    }
    let mut out = line(&head);
    for r in rows {
        let mut cells: Vec<String> = labels[r.point].clone();
        cells.extend([r.job.clone(), r.dir.name().to_string(), r.runs.to_string()]);
        for (i, _) in METRICS.iter().enumerate() {
            let s = r.stats[i].as_ref();
            cells.push(s.map(|s| num(s.mean)).unwrap_or_default());
            if with_ci {
                cells.push(s.and_then(|s| s.ci).map(num).unwrap_or_default());
            }
        }
        out.push_str(&line(&cells));
    }
    out
}

/// A number for the CSV: integers as such, others with up to six decimals.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        let s = format!("{v:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn line(cells: &[String]) -> String {
    let quoted: Vec<String> = cells
        .iter()
        .map(|c| if c.contains([',', '"', '\n']) { format!("\"{}\"", c.replace('"', "\"\"")) } else { c.clone() })
        .collect();
    quoted.join(",") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::results::JobResult;

    fn run(iops: f64, util: f64) -> Run {
        let fig = Figures { iops, bw: iops * 4096.0, clat_mean: 1e6 / iops, ios: 100, ..Default::default() };
        Run {
            version: "fiox".into(),
            jobs: vec![JobResult { job: "j".into(), group: 0, dir: Dir::Read, fig }],
            util: Some(util),
            fiox: None,
        }
    }

    #[test]
    fn rows_average_runs_with_intervals() {
        let rows = rows(&[vec![run(100.0, 50.0), run(110.0, 52.0), run(90.0, 48.0)], vec![run(200.0, 90.0)]]);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].runs, 3);
        assert_eq!(rows[0].mean(IOPS), Some(100.0));
        // s = 10, n = 3: 4.303 · 10 / √3.
        assert!((rows[0].ci(IOPS).unwrap() - 24.843).abs() < 1e-3);
        assert_eq!(rows[1].ci(IOPS), None);
        assert_eq!(rows[1].mean(UTIL), Some(90.0));
        let text = csv(&["bs".into()], &[vec!["4k,8k".into()], vec!["64k".into()]], &rows, true);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("bs,job,dir,runs,iops,iops_ci95,bw_bytes,"), "{}", lines[0]);
        assert!(lines[1].starts_with("\"4k,8k\",j,read,3,100,24.843"), "{}", lines[1]);
        assert!(lines[2].starts_with("64k,j,read,1,200,,819200,"), "{}", lines[2]);
    }
}
