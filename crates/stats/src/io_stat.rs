//! Running statistics of a series: min, max, count, mean and sample standard deviation (n-1).
//!
//! fio updates a Welford mean and variance per sample. fiox keeps exact integer sums instead
//! (sum in u128, sum of squares in u128): cheaper per I/O, exact to merge across jobs, and the
//! mean and deviation come out the same to floating-point rounding.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IoStat {
    pub min: u64,
    pub max: u64,
    pub samples: u64,
    #[serde(with = "u128_text")]
    sum: u128,
    #[serde(with = "u128_text")]
    sumsq: u128,
}

/// The exact sums as decimal text on the wire: JSON readers (and serde's buffering of tagged
/// enums) stop at 64-bit integers, and a sum of squares of nanoseconds outgrows them.
mod u128_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(|_| serde::de::Error::custom(format!("'{text}' is not a 128-bit count")))
    }
}

impl Default for IoStat {
    fn default() -> Self {
        IoStat { min: u64::MAX, max: 0, samples: 0, sum: 0, sumsq: 0 }
    }
}

impl IoStat {
    /// The empty statistic (for statics; same as `default()`).
    pub const ZERO: IoStat = IoStat { min: u64::MAX, max: 0, samples: 0, sum: 0, sumsq: 0 };

    #[inline]
    pub fn add(&mut self, v: u64) {
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.samples += 1;
        self.sum += v as u128;
        self.sumsq += (v as u128) * (v as u128);
    }

    pub fn merge(&mut self, o: &IoStat) {
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.samples += o.samples;
        self.sum += o.sum;
        self.sumsq += o.sumsq;
    }

    /// 0 when empty, as fio prints it.
    pub fn min(&self) -> u64 {
        if self.samples == 0 {
            0
        } else {
            self.min
        }
    }

    /// The samples added since `earlier`. Sums subtract exactly; min and max cannot, so they
    /// are taken from the interval's histogram (within its 1/128 resolution), if given.
    pub fn since(&self, earlier: &IoStat, hist: Option<&crate::LatHist>) -> IoStat {
        let samples = self.samples.saturating_sub(earlier.samples);
        let (min, max) = match hist.and_then(|h| h.range()) {
            Some(r) if samples > 0 => r,
            _ if samples > 0 => (self.min, self.max),
            _ => (u64::MAX, 0),
        };
        IoStat {
            min,
            max,
            samples,
            sum: self.sum.saturating_sub(earlier.sum),
            sumsq: self.sumsq.saturating_sub(earlier.sumsq),
        }
    }

    pub fn sum(&self) -> u128 {
        self.sum
    }

    pub fn mean(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.sum as f64 / self.samples as f64
        }
    }

    /// Sample standard deviation (divides by n-1); 0 for fewer than two samples.
    pub fn stddev(&self) -> f64 {
        if self.samples < 2 {
            return 0.0;
        }
        let n = self.samples as u128;
        // n*sumsq - sum^2 is exact in integers; only the final division is in floating point.
        let num = n.saturating_mul(self.sumsq).saturating_sub(self.sum.saturating_mul(self.sum));
        ((num as f64) / (n as f64 * (n - 1) as f64)).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_stddev() {
        let mut s = IoStat::default();
        for v in [2, 4, 4, 4, 5, 5, 7, 9] {
            s.add(v);
        }
        assert_eq!(s.mean(), 5.0);
        // Sample stddev of that series: sqrt(32/7).
        assert!((s.stddev() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!((s.min(), s.max), (2, 9));
    }

    #[test]
    fn merge_equals_adding_all() {
        let (mut a, mut b, mut all) = (IoStat::default(), IoStat::default(), IoStat::default());
        for v in 0..100u64 {
            let x = v * v % 97;
            if v % 3 == 0 {
                a.add(x)
            } else {
                b.add(x)
            }
            all.add(x);
        }
        a.merge(&b);
        assert_eq!(a, all);
        assert_eq!(IoStat::default().min(), 0);
    }
}

/// Statistics of the bandwidth and IOPS samples (a few per second, so a Welford update per sample
/// costs nothing). Kept separate from [`IoStat`] because group reporting merges them differently:
/// fio adds the means and variances of the jobs (the group's bandwidth is the jobs' sum), where
/// latencies are pooled.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SampleStat {
    pub min: u64,
    pub max: u64,
    pub samples: u64,
    pub mean: f64,
    /// Sum of squared deviations from the mean.
    pub m2: f64,
}

impl SampleStat {
    /// The empty statistic (for statics; same as `default()`).
    pub const ZERO: SampleStat = SampleStat { min: 0, max: 0, samples: 0, mean: 0.0, m2: 0.0 };

    pub fn add(&mut self, v: u64) {
        if self.samples == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.samples += 1;
        let x = v as f64;
        let delta = x - self.mean;
        self.mean += delta / self.samples as f64;
        self.m2 += delta * (x - self.mean);
    }

    pub fn stddev(&self) -> f64 {
        if self.samples < 2 {
            0.0
        } else {
            (self.m2 / (self.samples - 1) as f64).sqrt()
        }
    }

    /// Group-reporting merge: sums of means, variances, minimums and maximums.
    pub fn merge_sum(&mut self, o: &SampleStat) {
        if o.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *o;
            return;
        }
        // fio's "pure sum" adds the extremes too (observed: two jobs of ~20000 KiB/s each give a
        // group bw_min of ~40000), so min and max read as the group's total at its slowest and
        // fastest sample, like the mean.
        self.min += o.min;
        self.max += o.max;
        self.mean += o.mean;
        self.m2 += o.m2;
        self.samples += o.samples;
    }
}
