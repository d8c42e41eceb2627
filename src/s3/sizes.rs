//! Object sizes for `--obj.size` and `--obj.randsize`: one size, a range, or a measured
//! distribution of sizes with weights (`4KiB:60,64KiB:30,1MiB:10`), each PUT drawing its size
//! from it.

use anyhow::{bail, Result};

#[derive(Debug, Clone, PartialEq)]
pub enum Sizes {
    Fixed(u64),
    /// Uniform between the two, both included.
    Uniform(u64, u64),
    /// log2-uniform between the two: as many objects between 1 and 2 KiB as between 1 and
    /// 2 MiB. warp's `--obj.randsize` spreads sizes so over the 8 binary orders of magnitude
    /// below the largest; its mean is then (max - min) / ln(256), about 0.18 of the largest.
    Log2(u64, u64),
    /// Sizes with weights: each drawn with probability weight / the weights' sum.
    Weighted(Vec<(u64, u64)>),
}

impl Sizes {
    /// `--obj.size`'s value, with `--obj.randsize` or not.
    pub fn parse(v: &str, randsize: bool) -> Result<Sizes> {
        const FLAG: &str = "--obj.size";
        if v.contains(':') || v.contains(',') {
            if randsize {
                bail!("s3 bench: --obj.randsize with --obj.size={v}: a distribution of sizes is random already");
            }
            let mut buckets = Vec::new();
            for part in v.split(',') {
                let Some((s, w)) = part.split_once(':') else {
                    bail!("s3 bench: {FLAG}={v}: '{part}' is not SIZE:WEIGHT (4KiB:60,64KiB:40)")
                };
                let w: u64 = w
                    .trim()
                    .parse()
                    .ok()
                    .filter(|&w| w < 1 << 32)
                    .ok_or_else(|| anyhow::anyhow!("s3 bench: {FLAG}={v}: weight '{w}' is not a whole number"))?;
                buckets.push((size_arg(FLAG, s)?, w));
            }
            if buckets.iter().all(|b| b.1 == 0) {
                bail!("s3 bench: {FLAG}={v}: every weight is 0");
            }
            return Ok(Sizes::Weighted(buckets));
        }
        if let Some((lo, hi)) = v.split_once('-') {
            let (lo, hi) = (size_arg(FLAG, lo)?, size_arg(FLAG, hi)?);
            if lo > hi {
                bail!("s3 bench: {FLAG}={v}: the smallest size comes first");
            }
            return Ok(if randsize { Sizes::Log2(lo, hi) } else { Sizes::Uniform(lo, hi) });
        }
        let max = size_arg(FLAG, v)?;
        Ok(if randsize { Sizes::Log2((max / 256).max(128).min(max), max) } else { Sizes::Fixed(max) })
    }

    /// The largest size drawn: the length of the body buffer.
    pub fn max(&self) -> u64 {
        match self {
            Sizes::Fixed(s) => *s,
            Sizes::Uniform(_, hi) | Sizes::Log2(_, hi) => *hi,
            Sizes::Weighted(b) => b.iter().filter(|b| b.1 > 0).map(|b| b.0).max().unwrap_or(0),
        }
    }

    /// One size, from a uniform 64-bit random number `r`.
    pub fn draw(&self, r: u64) -> u64 {
        // 53 random bits as a fraction in [0, 1).
        let unit = (r >> 11) as f64 / (1u64 << 53) as f64;
        match self {
            Sizes::Fixed(s) => *s,
            Sizes::Uniform(lo, hi) => lo + r % (hi - lo + 1),
            Sizes::Log2(lo, hi) => {
                let (a, b) = ((*lo as f64).log2(), (*hi as f64).log2());
                ((a + unit * (b - a)).exp2().round() as u64).clamp(*lo, *hi)
            }
            Sizes::Weighted(buckets) => {
                let total: u64 = buckets.iter().map(|b| b.1).sum();
                let mut x = r % total;
                for &(size, w) in buckets {
                    if x < w {
                        return size;
                    }
                    x -= w;
                }
                unreachable!("a draw below the weights' sum lands in a bucket")
            }
        }
    }

    /// How `--help`-style text names it (the text report's header).
    pub fn describe(&self) -> String {
        let h = human_size;
        match self {
            Sizes::Fixed(s) => h(*s),
            Sizes::Uniform(lo, hi) => format!("{}-{}", h(*lo), h(*hi)),
            Sizes::Log2(lo, hi) => format!("{}-{} (log2)", h(*lo), h(*hi)),
            Sizes::Weighted(b) => b.iter().map(|(s, w)| format!("{}:{w}", h(*s))).collect::<Vec<_>>().join(","),
        }
    }
}

/// A size in warp's spelling (`64KiB`, `10MiB`, `4k`, `1MB`), read by the options crate.
pub fn size_arg(flag: &str, v: &str) -> Result<u64> {
    fiox_options::value::parse_si_size(v).map_err(|e| anyhow::anyhow!("s3 bench: {flag}={v}: {e}"))
}

/// A size as the reports write it: `4 KiB`, `10 MiB`, `1000 B`.
pub fn human_size(b: u64) -> String {
    match b {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(s: &Sizes, n: usize) -> Vec<u64> {
        let mut state = 0x1234_5678_9abc_def1u64;
        (0..n).map(|_| s.draw(super::super::rand(&mut state))).collect()
    }

    #[test]
    fn spellings() {
        assert_eq!(Sizes::parse("64KiB", false).unwrap(), Sizes::Fixed(65536));
        assert_eq!(Sizes::parse("10MiB", true).unwrap(), Sizes::Log2(40960, 10 << 20));
        assert_eq!(Sizes::parse("1KiB", true).unwrap(), Sizes::Log2(128, 1024));
        assert_eq!(Sizes::parse("100", true).unwrap(), Sizes::Log2(100, 100));
        assert_eq!(Sizes::parse("4k-8k", false).unwrap(), Sizes::Uniform(4096, 8192));
        assert_eq!(Sizes::parse("4KiB:3,1MiB:1", false).unwrap(), Sizes::Weighted(vec![(4096, 3), (1 << 20, 1)]));
        for bad in ["8k-4k", "4k:x", "4k:0,8k:0", "4k;1", "4k:1,8k", "-", ""] {
            assert!(Sizes::parse(bad, false).is_err(), "{bad}");
        }
        assert!(Sizes::parse("4k:1", true).is_err());
    }

    #[test]
    fn draws_follow_the_distribution() {
        let w = draws(&Sizes::Weighted(vec![(1, 3), (2, 1), (3, 0)]), 40_000);
        let ones = w.iter().filter(|&&s| s == 1).count() as f64 / w.len() as f64;
        assert!((ones - 0.75).abs() < 0.02, "{ones}");
        assert!(!w.contains(&3));
        // warp's randsize: a mean near 0.18 of the largest, as many in each binary order.
        let max = 10u64 << 20;
        let l = draws(&Sizes::parse("10MiB", true).unwrap(), 40_000);
        let mean = l.iter().sum::<u64>() as f64 / l.len() as f64 / max as f64;
        assert!((mean - 0.18).abs() < 0.01, "{mean}");
        assert!(l.iter().all(|&s| (max / 256..=max).contains(&s)));
        let low_octave = l.iter().filter(|&&s| s < max / 128).count() as f64 / l.len() as f64;
        assert!((low_octave - 0.125).abs() < 0.01, "{low_octave}");
        let u = draws(&Sizes::Uniform(10, 12), 3000);
        assert!([10, 11, 12].iter().all(|v| u.contains(v)) && u.iter().all(|&s| (10..=12).contains(&s)));
    }
}
