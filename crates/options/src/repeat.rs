//! `--repeat-until=METRIC:BOUND` and `--repeat-max=N` (fiox): repeat a run (or each sweep
//! point) until the 95% confidence interval of a metric's mean is narrow enough. This module
//! only reads the two values; the runs and the statistics are the binary's.

/// The fewest runs a confidence interval is judged on: with two, t(0.975, 1) = 12.7 makes any
/// interval meaningless, and one pair of lucky runs could stop the repetition.
pub const MIN_RUNS: u32 = 3;
/// `--repeat-max` when not given.
pub const DEFAULT_MAX: u32 = 10;

/// What is measured once per run, over all the run's jobs and directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// I/Os per second, summed over the jobs.
    Iops,
    /// Bytes per second, summed over the jobs.
    Bw,
    /// Mean total latency (fio's `lat`), weighted by I/O count.
    Lat,
    /// 99th percentile of completion latency (fio's `clat` p99), from the merged histogram.
    P99,
}

impl Metric {
    pub const ALL: [(&'static str, Metric); 4] =
        [("iops", Metric::Iops), ("bw", Metric::Bw), ("lat", Metric::Lat), ("p99", Metric::P99)];

    pub fn name(self) -> &'static str {
        Metric::ALL.iter().find(|m| m.1 == self).map_or("?", |m| m.0)
    }
}

/// A parsed `--repeat-until`, with the run count bound from `--repeat-max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepeatUntil {
    pub metric: Metric,
    /// Largest acceptable half-width of the 95% confidence interval, in percent of the mean.
    pub bound_pct: f64,
    /// At most this many runs (at least [`MIN_RUNS`]).
    pub max_runs: u32,
}

/// Reads `METRIC:BOUND%` (e.g. `iops:2%`); the message says what is wrong.
pub fn parse_until(v: &str) -> Result<(Metric, f64), String> {
    let names = || Metric::ALL.iter().map(|m| m.0).collect::<Vec<_>>().join(", ");
    let Some((metric, bound)) = v.split_once(':') else {
        return Err(format!("expected METRIC:BOUND%, e.g. iops:2% (metrics: {})", names()));
    };
    let metric = Metric::ALL
        .iter()
        .find(|m| m.0 == metric.trim())
        .map(|m| m.1)
        .ok_or_else(|| format!("unknown metric '{}'; use one of {}", metric.trim(), names()))?;
    let bound = bound.trim();
    let Some(pct) = bound.strip_suffix('%') else {
        return Err(format!("the bound '{bound}' must be a percentage of the mean, e.g. 2%"));
    };
    let pct: f64 = pct.trim().parse().map_err(|_| format!("the bound '{bound}' is not a number"))?;
    if !(pct > 0.0 && pct <= 100.0) {
        return Err(format!("the bound '{bound}' must be above 0% and at most 100%"));
    }
    Ok((metric, pct))
}

/// Reads `--repeat-max`: a whole number of runs, at least [`MIN_RUNS`].
pub fn parse_max(v: &str) -> Result<u32, String> {
    let n: u32 = v.trim().parse().map_err(|_| "not a whole number".to_string())?;
    if n < MIN_RUNS {
        return Err(format!("at least {MIN_RUNS} runs are needed to judge a confidence interval"));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(parse_until("iops:2%"), Ok((Metric::Iops, 2.0)));
        assert_eq!(parse_until("p99:0.5%"), Ok((Metric::P99, 0.5)));
        assert!(parse_until("iops").unwrap_err().contains("METRIC:BOUND"));
        assert!(parse_until("ipos:2%").unwrap_err().contains("unknown metric 'ipos'"));
        assert!(parse_until("bw:2").unwrap_err().contains("percentage"));
        assert!(parse_until("bw:x%").unwrap_err().contains("not a number"));
        assert!(parse_until("lat:0%").unwrap_err().contains("above 0%"));
        assert!(parse_until("lat:nan%").is_err());
        assert_eq!(parse_max("5"), Ok(5));
        assert!(parse_max("2").unwrap_err().contains("at least 3"));
        assert!(parse_max("-1").is_err());
        assert_eq!(Metric::Bw.name(), "bw");
    }
}
