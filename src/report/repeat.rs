//! `--repeat-until=METRIC:BOUND%` (fiox), judged: a run's figure for the metric (one per run,
//! over all its jobs and directions), and whether the runs so far are within the bound (the
//! 95% confidence interval of the mean, Student's t, `fiox_stats::runs`, at least [`MIN_RUNS`]
//! and at most `--repeat-max` runs). Local runs (`fio`), multi-host runs (`multihost`) and the
//! lab's repeated sweep points share it; the runs themselves are theirs.

use fiox_options::repeat::{Metric, RepeatUntil, MIN_RUNS};
use fiox_report::{RepeatSummary, RunReport};
use fiox_stats::runs as stats;
use fiox_stats::LatHist;

/// The exit status of a run whose interval never came within the bound: the run worked, but
/// its figure is not as certain as asked (1 and up are fio's count of failed jobs, and fiox's
/// bad input is 1).
pub const NOT_MET: u8 = 2;

/// The metric's figure for one finished run (`None`: the run measured nothing it could be
/// read from, e.g. no I/O, or `disable_lat` for `lat`).
pub fn of_report(r: &RunReport, metric: Metric) -> Option<f64> {
    let dirs = || r.jobs.iter().flat_map(|j| j.ts.dirs.iter()).filter(|d| d.runtime_ms > 0 && d.total_ios > 0);
    let per_s = |n: u64, ms: u64| n as f64 * 1000.0 / ms as f64;
    match metric {
        Metric::Iops => dirs().map(|d| per_s(d.total_ios, d.runtime_ms)).reduce(|a, b| a + b),
        Metric::Bw => dirs().map(|d| per_s(d.io_bytes, d.runtime_ms)).reduce(|a, b| a + b),
        Metric::Lat => {
            let (sum, n) =
                dirs().fold((0.0, 0u64), |(s, n), d| (s + d.lat.mean() * d.lat.samples as f64, n + d.lat.samples));
            (n > 0).then(|| sum / n as f64)
        }
        Metric::P99 => {
            let mut merged = LatHist::default();
            for h in dirs().filter_map(|d| d.clat_hist.as_ref()) {
                merged.merge(h);
            }
            (merged.total() > 0).then(|| merged.percentiles(&[99.0])[0].1 as f64)
        }
    }
}

/// The runs so far, judged against the bound.
pub fn summary(values: &[f64], r: &RepeatUntil) -> RepeatSummary {
    let mean = stats::mean(values);
    let ci95 = stats::ci95(values).unwrap_or(f64::INFINITY);
    let ci95_pct = if mean != 0.0 { ci95 / mean.abs() * 100.0 } else { f64::INFINITY };
    RepeatSummary {
        metric: r.metric.name().to_string(),
        unit: match r.metric {
            Metric::Iops => "IOPS",
            Metric::Bw => "B/s",
            Metric::Lat | Metric::P99 => "ns",
        }
        .to_string(),
        bound_pct: r.bound_pct,
        max_runs: r.max_runs,
        values: values.to_vec(),
        mean,
        ci95,
        ci95_pct,
        met: values.len() as u32 >= MIN_RUNS && ci95_pct <= r.bound_pct,
    }
}

/// Whether another run is needed: fewer than the minimum, or not within the bound and under
/// the maximum.
pub fn more(values: &[f64], r: &RepeatUntil) -> bool {
    (values.len() as u32) < r.max_runs && !summary(values, r).met
}

#[cfg(test)]
mod tests {
    use super::*;

    fn until(bound_pct: f64, max_runs: u32) -> RepeatUntil {
        RepeatUntil { metric: Metric::Iops, bound_pct, max_runs }
    }

    #[test]
    fn stops_at_the_bound_the_minimum_or_the_maximum() {
        let loose = until(50.0, 10);
        assert!(more(&[100.0, 101.0], &loose), "at least three runs");
        assert!(!more(&[100.0, 101.0, 99.0], &loose));
        let s = summary(&[100.0, 101.0, 99.0], &loose);
        // t(0.975, 2) = 4.303, s = 1, n = 3: 4.303 / sqrt(3) = 2.484.
        assert!((s.ci95 - 2.484).abs() < 0.001 && (s.ci95_pct - 2.484).abs() < 0.001, "{s:?}");
        assert!(s.met);
        let tight = until(0.1, 4);
        assert!(more(&[100.0, 101.0, 99.0], &tight));
        assert!(!more(&[100.0, 101.0, 99.0, 100.0], &tight), "the maximum");
        assert!(!summary(&[100.0, 101.0, 99.0, 100.0], &tight).met);
        // Identical runs: a zero-width interval is within any bound.
        assert!(summary(&[5.0, 5.0, 5.0], &tight).met);
    }
}
