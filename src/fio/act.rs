//! The verdict of fio's ACT profile (`--profile=act`): each slice of the run (an hour, as in the
//! Aerospike Certification Tool) gets a row with the share of reads slower than 1, 8 and 64 ms,
//! measured from submission ("trans", fio's total latency) and from the device's side ("device",
//! completion latency), and the run passes when no slice exceeds ACT's limits (5%, 1%, 0.1%).
//!
//! The table is fio 3.33's, tabs included. It goes with the normal and terse outputs, before the
//! report, as fio prints it; under JSON fiox leaves it out so that standard output stays one JSON
//! document (fio prints it in front of the JSON).

use std::fmt::Write as _;

use fiox_options::profile::{ACT_LIMITS, ACT_SLICE_SECS};
use fiox_stats::{plat_val_to_idx, LatHist};

use crate::plan::Plan;
use crate::runner::worker::WorkerResult;

/// Slices of an ACT run, fed with the workers' cumulative figures.
pub struct ActTable {
    /// Indices (in plan order) of the workers that do ACT's reads.
    readers: Vec<usize>,
    /// The readers' histograms (total latency, completion latency) at the last slice's end.
    last: (LatHist, LatHist),
    rows: Vec<[f64; 6]>,
}

impl ActTable {
    /// `None` unless the plan holds ACT's read jobs.
    pub fn new(plan: &Plan) -> Option<ActTable> {
        let readers: Vec<usize> = plan
            .workers
            .iter()
            .enumerate()
            .filter(|(_, w)| w.spec.name.starts_with("act-read-"))
            .map(|(i, _)| i)
            .collect();
        (!readers.is_empty()).then(|| ActTable { readers, last: Default::default(), rows: Vec::new() })
    }

    /// How often a slice ends.
    pub fn slice() -> std::time::Duration {
        std::time::Duration::from_secs(ACT_SLICE_SECS)
    }

    /// fio's table heading.
    pub fn heading() -> &'static str {
        "        trans                   device\n        %>(ms)                  %>(ms)\n slice\t  1\t  8\t 64\t  1\t  8\t 64\n -----  -----   -----  ------   -----   -----  ------\n"
    }

    /// Closes a slice at `now` (cumulative figures) and returns its row, or nothing when no read
    /// completed in it (the run ended on a slice boundary).
    pub fn close_slice(&mut self, now: &[WorkerResult]) -> Option<String> {
        let (mut lat, mut clat) = (LatHist::default(), LatHist::default());
        for &i in &self.readers {
            let Some(r) = now.get(i) else { continue };
            let read = &r.ts.dirs[0];
            if let Some(h) = &read.lat_hist {
                lat.merge(h);
            }
            if let Some(h) = &read.clat_hist {
                clat.merge(h);
            }
        }
        let (d_lat, d_clat) = (lat.since(&self.last.0), clat.since(&self.last.1));
        self.last = (lat, clat);
        if d_clat.total() == 0 && !self.rows.is_empty() {
            return None;
        }
        let mut row = [0.0; 6];
        for (k, &(usec, _)) in ACT_LIMITS.iter().enumerate() {
            row[k] = share_over(&d_lat, usec * 1000);
            row[k + 3] = share_over(&d_clat, usec * 1000);
        }
        self.rows.push(row);
        let mut text = format!("{:5}", self.rows.len());
        for v in row {
            let _ = write!(text, "\t{v:.2}");
        }
        text.push('\n');
        Some(text)
    }

    /// fio's closing line: the run passes when every slice is within every limit.
    pub fn verdict(&self) -> String {
        let pass = self.rows.iter().all(|row| {
            ACT_LIMITS.iter().enumerate().all(|(k, &(_, perm))| {
                let limit = perm as f64 / 10.0;
                row[k] <= limit && row[k + 3] <= limit
            })
        });
        format!("\nact: test complete, device(s): {}\n", if pass { "PASSED" } else { "FAILED" })
    }
}

/// The percentage of samples above `ns`, from the histogram's buckets: those in buckets wholly
/// above the one `ns` falls in (its relative width is under 1%, so the share is exact to that).
fn share_over(h: &LatHist, ns: u64) -> f64 {
    let total = h.total();
    if total == 0 {
        return 0.0;
    }
    let slow: u64 = h.counts()[plat_val_to_idx(ns) + 1..].iter().sum();
    slow as f64 * 100.0 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readers(lat_us: &[(u64, u64)]) -> Vec<WorkerResult> {
        let mut r = WorkerResult::default();
        let (mut lat, mut clat) = (LatHist::default(), LatHist::default());
        for &(us, n) in lat_us {
            for _ in 0..n {
                lat.add(us * 1000);
                clat.add(us * 1000);
            }
        }
        r.ts.dirs[0].lat_hist = Some(lat);
        r.ts.dirs[0].clat_hist = Some(clat);
        vec![r]
    }

    #[test]
    fn rows_are_per_slice_and_the_verdict_checks_every_limit() {
        let mut t = ActTable { readers: vec![0], last: Default::default(), rows: Vec::new() };
        // Slice 1: 4% over 1 ms, 1% over 8 ms, nothing over 64 ms: within every limit.
        let first = readers(&[(100, 96), (2_000, 3), (10_000, 1)]);
        assert_eq!(t.close_slice(&first).unwrap(), "    1\t4.00\t1.00\t0.00\t4.00\t1.00\t0.00\n");
        assert!(t.verdict().ends_with("PASSED\n"));
        // Slice 2 adds 100 reads, 2 of them over 64 ms: 2% > 0.1%.
        let second = readers(&[(100, 194), (2_000, 3), (10_000, 1), (70_000, 2)]);
        assert_eq!(t.close_slice(&second).unwrap(), "    2\t2.00\t2.00\t2.00\t2.00\t2.00\t2.00\n");
        assert!(t.verdict().ends_with("FAILED\n"));
        // Nothing new: no third row.
        assert_eq!(t.close_slice(&second), None);
    }

    #[test]
    fn a_bucket_holding_the_limit_is_not_counted_slow() {
        let mut h = LatHist::default();
        h.add(1_000_000);
        h.add(1_000_001);
        h.add(1_100_000);
        assert!((share_over(&h, 1_000_000) - 100.0 / 3.0).abs() < 1e-9);
    }
}
