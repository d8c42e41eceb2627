//! `--repeat-until` in the lab: a sweep point's figure read back from its report; the judging
//! (the metrics of a finished run, the bound, the exit status) is `report::repeat`'s, shared
//! with plain and multi-host runs, and named here for the lab and the S3 bench.

use fiox_options::repeat::Metric;

pub use crate::report::repeat::{more, summary, NOT_MET};

use crate::lab::results::Run;

/// The same figure from a report read back (a sweep point's JSON+), over all its series.
pub fn of_run(r: &Run, metric: Metric) -> Option<f64> {
    let figs = || r.jobs.iter().map(|j| &j.fig).filter(|f| f.ios > 0);
    match metric {
        Metric::Iops => figs().map(|f| f.iops).reduce(|a, b| a + b),
        Metric::Bw => figs().map(|f| f.bw).reduce(|a, b| a + b),
        Metric::Lat => {
            let (sum, n) = figs().fold((0.0, 0u64), |(s, n), f| (s + f.lat_mean * f.ios as f64, n + f.ios));
            (n > 0).then(|| sum / n as f64)
        }
        Metric::P99 => {
            // Merge the series' histograms (sweeps ask for JSON+), as fio merges a group.
            let mut bins: std::collections::BTreeMap<u64, u64> = Default::default();
            for f in figs() {
                for &(v, n) in &f.bins {
                    *bins.entry(v).or_default() += n;
                }
            }
            let merged = crate::lab::results::Figures { bins: bins.into_iter().collect(), ..Default::default() };
            if merged.bins.is_empty() {
                return figs().next().and_then(|f| f.percentile(99.0));
            }
            merged.percentile(99.0)
        }
    }
}
