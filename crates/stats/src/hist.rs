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

thread_local! {
    /// How many more histograms the message being decoded on this thread may hold (`None`: no
    /// limit). Each costs 1856 counters (about 15 KiB) however short its text, so a peer could
    /// otherwise make a 16 MiB frame of `[]`s allocate gigabytes.
    static WIRE_BUDGET: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` (a decoder) allowing at most `max` histograms to be read on this thread, so the
/// memory a decoded message takes is bounded whatever its text.
pub fn with_wire_budget<T>(max: usize, f: impl FnOnce() -> T) -> T {
    let before = WIRE_BUDGET.with(|b| b.replace(Some(max)));
    let out = f();
    WIRE_BUDGET.with(|b| b.set(before));
    out
}

fn take_wire_budget() -> Result<(), String> {
    WIRE_BUDGET.with(|b| match b.get() {
        None => Ok(()),
        Some(0) => Err("too many histograms in one message".to_string()),
        Some(n) => {
            b.set(Some(n - 1));
            Ok(())
        }
    })
}

/// On the wire (fiox's multi-host protocol) a histogram is sparse: only its non-empty buckets,
/// as `[index, count]` pairs in bucket order, so an idle direction costs a few bytes rather
/// than 1856 numbers. The total is recomputed on reading, never trusted.
impl serde::Serialize for LatHist {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let n = self.counts.iter().filter(|&&c| c > 0).count();
        let mut seq = s.serialize_seq(Some(n))?;
        for (i, &c) in self.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            seq.serialize_element(&(i as u32, c))?;
        }
        seq.end()
    }
}

/// Reading checks what a peer could get wrong: an index beyond the last bucket, or counts whose
/// sum overflows, are errors (never a panic); a bucket named twice adds up.
impl<'de> serde::Deserialize<'de> for LatHist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Sparse;
        impl<'de> serde::de::Visitor<'de> for Sparse {
            type Value = LatHist;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of [bucket index, count] pairs")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<LatHist, A::Error> {
                use serde::de::Error;
                take_wire_budget().map_err(A::Error::custom)?;
                let mut h = LatHist::default();
                while let Some((i, c)) = seq.next_element::<(u32, u64)>()? {
                    let slot = h.counts.get_mut(i as usize).ok_or_else(|| {
                        A::Error::custom(format!("histogram bucket {i} is beyond the last ({})", PLAT_NR - 1))
                    })?;
                    *slot = slot.checked_add(c).ok_or_else(|| A::Error::custom("histogram count overflows"))?;
                    h.total = h.total.checked_add(c).ok_or_else(|| A::Error::custom("histogram total overflows"))?;
                }
                Ok(h)
            }
        }
        d.deserialize_seq(Sparse)
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

    #[test]
    fn wire_form_is_sparse_and_checked() {
        let mut h = LatHist::default();
        for v in [5, 5, 4096, 1_000_000] {
            h.add(v);
        }
        let text = serde_json::to_string(&h).unwrap();
        assert_eq!(text, "[[5,2],[448,1],[954,1]]");
        let back: LatHist = serde_json::from_str(&text).unwrap();
        assert_eq!(back, h);
        assert!(serde_json::from_str::<LatHist>("[[1856,1]]").unwrap_err().to_string().contains("beyond the last"));
        assert!(serde_json::from_str::<LatHist>("[[1,18446744073709551615],[2,1]]").is_err());
        let twice: LatHist = serde_json::from_str("[[3,1],[3,2]]").unwrap();
        assert_eq!((twice.counts()[3], twice.total()), (3, 3));
    }
}
