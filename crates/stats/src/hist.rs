//! fio's latency histogram: 29 groups of 64 buckets (6 bits of precision). Values below 128 ns
//! are exact; above, each power-of-two range is split into 64 equal buckets, so the relative
//! error is at most 1/128. A bucket reports its midpoint. Values from about 17.2 s upwards all
//! land in the last bucket, as in fio.

const BITS: u32 = 6;
const VAL: u64 = 1 << BITS;
const GROUPS: usize = 29;
/// Number of buckets.
pub const PLAT_NR: usize = GROUPS * VAL as usize;

/// The bucket a value (in ns) falls into.
#[inline]
pub fn plat_val_to_idx(val: u64) -> usize {
    let msb = if val == 0 { 0 } else { 63 - val.leading_zeros() };
    if msb <= BITS {
        return val as usize;
    }
    let error_bits = msb - BITS;
    let base = (error_bits as usize + 1) << BITS;
    let offset = ((val >> error_bits) & (VAL - 1)) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// The value a bucket stands for: its midpoint (exact below 128 ns).
pub fn plat_idx_to_val(idx: usize) -> u64 {
    debug_assert!(idx < PLAT_NR);
    if idx < (VAL as usize) << 1 {
        return idx as u64;
    }
    let error_bits = (idx >> BITS) as u32 - 1;
    let base = 1u64 << (error_bits + BITS);
    let k = (idx % VAL as usize) as u64;
    // The midpoint of bucket k: base + (k + 0.5) * 2^error_bits.
    base + ((2 * k + 1) << error_bits) / 2
}

/// Bucket counts. Allocated only for directions that see I/O, to keep idle jobs small.
#[derive(Clone, PartialEq)]
pub struct LatHist {
    counts: Box<[u64]>,
    total: u64,
}

impl std::fmt::Debug for LatHist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LatHist {{ total: {} }}", self.total)
    }
}

impl Default for LatHist {
    fn default() -> Self {
        LatHist { counts: vec![0; PLAT_NR].into_boxed_slice(), total: 0 }
    }
}

impl LatHist {
    #[inline]
    pub fn add(&mut self, ns: u64) {
        self.counts[plat_val_to_idx(ns)] += 1;
        self.total += 1;
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn merge(&mut self, other: &LatHist) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.total += other.total;
    }

    /// The samples added since `earlier` (a snapshot of this same histogram).
    pub fn since(&self, earlier: &LatHist) -> LatHist {
        let counts: Box<[u64]> =
            self.counts.iter().zip(earlier.counts.iter()).map(|(a, b)| a.saturating_sub(*b)).collect();
        LatHist { total: counts.iter().sum(), counts }
    }

    /// Every bucket's count, in bucket order.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The midpoints of the lowest and highest non-empty buckets.
    pub fn range(&self) -> Option<(u64, u64)> {
        let lo = self.counts.iter().position(|&c| c > 0)?;
        let hi = self.counts.iter().rposition(|&c| c > 0)?;
        Some((plat_idx_to_val(lo), plat_idx_to_val(hi)))
    }

    /// Non-empty buckets as `(midpoint ns, count)`, for json+ `bins`.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| (plat_idx_to_val(i), c))
    }

    /// For each percentile in `list` (in the order given), the midpoint of the first bucket at
    /// which the running count reaches `p/100 * total`. Empty when there are no samples.
    pub fn percentiles(&self, list: &[f64]) -> Vec<(f64, u64)> {
        if self.total == 0 {
            return Vec::new();
        }
        let mut sorted: Vec<f64> = list.to_vec();
        sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        let mut out = Vec::with_capacity(sorted.len());
        let mut cum = 0u64;
        let mut j = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            cum += c;
            while j < sorted.len() && cum as f64 >= sorted[j] / 100.0 * self.total as f64 {
                out.push((sorted[j], plat_idx_to_val(i)));
                j += 1;
            }
            if j == sorted.len() {
                break;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact() {
        for v in 0..128 {
            assert_eq!(plat_idx_to_val(plat_val_to_idx(v)), v);
        }
    }

    #[test]
    fn relative_error_is_bounded() {
        let mut v = 128u64;
        while v < 17_000_000_000 {
            let back = plat_idx_to_val(plat_val_to_idx(v));
            let err = (back as f64 - v as f64).abs() / v as f64;
            assert!(err <= 1.0 / 128.0 + 1e-12, "v={v} back={back}");
            v = v * 21 / 20 + 1;
        }
    }

    #[test]
    fn known_buckets() {
        // 4096 ns: msb 12, error_bits 6, base index 7*64, offset 0; midpoint 4096 + 32.
        assert_eq!(plat_val_to_idx(4096), 448);
        assert_eq!(plat_idx_to_val(448), 4128);
        assert_eq!(plat_val_to_idx(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn percentiles_walk_the_buckets() {
        let mut h = LatHist::default();
        for v in 1..=100 {
            h.add(v);
        }
        let p = h.percentiles(&[50.0, 99.0, 1.0]);
        assert_eq!(p, vec![(1.0, 1), (50.0, 50), (99.0, 99)]);
        assert!(LatHist::default().percentiles(&[50.0]).is_empty());
    }
}
