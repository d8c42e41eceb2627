//! Where each I/O goes: sequential positions per direction, and random offsets that touch every
//! block exactly once per pass.
//!
//! fio keeps a bitmap of the blocks done (its "random map") and searches it for a free block
//! when a random pick hits a used one. fiox instead walks a keyed pseudo-random permutation of
//! the block numbers (a 4-round Feistel network over the next power of two, skipping values past
//! the end): every block once per pass by construction, O(1) per I/O and no memory at all. With
//! `norandommap`, offsets are drawn independently and may repeat, as in fio.

/// A fast 64-bit mixer (the SplitMix64 finaliser), used as the Feistel round function and RNG.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A small, fast PRNG for direction choice and map-less offsets.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }
    /// Uniform in `0..n` (n > 0), without modulo bias worth caring about for n < 2^32.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

impl Rng {
    /// Uniform in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    pub fn gauss(&mut self) -> f64 {
        let u1 = self.unit().max(f64::MIN_POSITIVE);
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Non-uniform offset distributions (`random_distribution`), as block indices in `0..n`.
///
/// Zipf and Pareto draw a popularity rank and scatter ranks over the range with a hash, so the
/// hot blocks are not all at the start of the file (fio scatters them the same way). Zipf uses
/// rejection-inversion sampling (Hörmann and Derflinger): O(1) per draw and no table, whatever n.
#[derive(Debug, Clone)]
pub enum Dist {
    Zipf {
        s: f64,
        n: f64,
        h_x1: f64,
        h_n: f64,
        cutoff: f64,
    },
    Pareto {
        h: f64,
    },
    Normal {
        sigma: f64,
    },
    /// Cumulative access share (0..1) and the zone's `[start, len)` in blocks.
    Zones(Vec<(f64, u64, u64)>),
}

impl Dist {
    /// `None` for the uniform distribution (the random map handles that).
    pub fn new(d: &fiox_options::RandomDist, nblocks: u64, block: u64) -> Option<Dist> {
        use fiox_options::RandomDist as R;
        let n = nblocks.max(1);
        Some(match d {
            R::Random => return None,
            R::Zipf(s) => {
                let (s, nf) = (*s, n as f64);
                let h_x1 = zipf_h_integral(1.5, s) - 1.0;
                let h_n = zipf_h_integral(nf + 0.5, s);
                let cutoff = 2.0 - zipf_h_integral_inv(zipf_h_integral(2.5, s) - zipf_h(2.0, s), s);
                Dist::Zipf { s, n: nf, h_x1, h_n, cutoff }
            }
            R::Pareto(h) => Dist::Pareto { h: *h },
            R::Normal(sigma) => Dist::Normal { sigma: sigma / 100.0 },
            R::Zoned(z) => Dist::Zones(zones(z.iter().map(|&(p, r)| (p, (r / 100.0 * n as f64) as u64)), n)),
            R::ZonedAbs(z) => Dist::Zones(zones(z.iter().map(|&(p, bytes)| (p, bytes / block.max(1))), n)),
        })
    }

    /// A block index in `0..n`: a popularity rank scattered over the range by a hash (as fio
    /// scatters them), or for zones a block in the chosen zone.
    #[inline]
    pub fn sample(&self, rng: &mut Rng, n: u64) -> u64 {
        let n = n.max(1);
        match self {
            Dist::Zones(_) => self.rank(rng, n),
            _ => mix64(self.rank(rng, n)) % n,
        }
    }

    /// The popularity rank in `0..n` (0 hottest for Zipf and Pareto, the middle for Normal).
    #[inline]
    pub fn rank(&self, rng: &mut Rng, n: u64) -> u64 {
        let n = n.max(1);
        match self {
            Dist::Zipf { s, n: nf, h_x1, h_n, cutoff } => loop {
                let u = h_n + rng.unit() * (h_x1 - h_n);
                let x = zipf_h_integral_inv(u, *s);
                let k = (x + 0.5).floor().clamp(1.0, *nf);
                if k - x <= *cutoff || u >= zipf_h_integral(k + 0.5, *s) - zipf_h(k, *s) {
                    break (k as u64 - 1).min(n - 1);
                }
            },
            // P(rank < f n) = f^h.
            Dist::Pareto { h } => ((rng.unit().powf(1.0 / h) * n as f64) as u64).min(n - 1),
            Dist::Normal { sigma } => {
                let x = n as f64 / 2.0 + rng.gauss() * sigma * n as f64;
                (x.max(0.0) as u64).min(n - 1)
            }
            Dist::Zones(z) => {
                let u = rng.unit();
                let &(_, start, len) = z.iter().find(|z| u < z.0).or(z.last()).expect("zones are never empty");
                (start + rng.below(len.max(1))).min(n - 1)
            }
        }
    }
}

/// Zones as cumulative shares with their block ranges laid end to end.
fn zones(z: impl Iterator<Item = (f64, u64)>, n: u64) -> Vec<(f64, u64, u64)> {
    let mut out = Vec::new();
    let (mut cum, mut start) = (0.0, 0u64);
    for (pct, len) in z {
        cum += pct / 100.0;
        let len = len.max(1).min(n.saturating_sub(start).max(1));
        out.push((cum, start.min(n - 1), len));
        start += len;
    }
    out
}

fn zipf_h(x: f64, s: f64) -> f64 {
    (-s * x.ln()).exp()
}

/// (e^x - 1) / x, accurate near 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x / 2.0
    }
}

/// ln(1 + x) / x, accurate near 0.
fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x / 2.0
    }
}

fn zipf_h_integral(x: f64, s: f64) -> f64 {
    let lx = x.ln();
    expm1_over_x((1.0 - s) * lx) * lx
}

fn zipf_h_integral_inv(x: f64, s: f64) -> f64 {
    let t = (x * (1.0 - s)).max(-1.0);
    (ln1p_over_x(t) * x).exp()
}

/// A keyed permutation of `0..n`.
#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    mask: u64,
    keys: [u64; 4],
}

impl Permutation {
    pub fn new(n: u64, key: u64) -> Permutation {
        let bits = 64 - n.max(2).saturating_sub(1).leading_zeros();
        // An even number of bits splits into two equal halves.
        let bits = bits.max(2).div_ceil(2) * 2;
        let half_bits = bits / 2;
        let mut k = key;
        let keys = [0; 4].map(|_| {
            k = mix64(k);
            k
        });
        Permutation { n, half_bits, mask: (1u64 << half_bits) - 1, keys }
    }

    #[inline]
    fn feistel(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half_bits, x & self.mask);
        for k in self.keys {
            let f = mix64(r ^ k) & self.mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }

    /// The `i`-th element of the permutation (`i < n`).
    #[inline]
    pub fn get(&self, i: u64) -> u64 {
        // Cycle-walking: the Feistel domain is at most 4n, so this loops a few times at most.
        let mut x = self.feistel(i);
        while x >= self.n {
            x = self.feistel(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_hits_every_block_once() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let v = p.get(i) as usize;
                assert!(!seen[v], "n={n}: {v} twice");
                seen[v] = true;
            }
        }
    }

    #[test]
    fn permutation_depends_on_key_and_is_not_identity() {
        let a: Vec<u64> = (0..100).map(|i| Permutation::new(100, 1).get(i)).collect();
        let b: Vec<u64> = (0..100).map(|i| Permutation::new(100, 2).get(i)).collect();
        assert_ne!(a, b);
        assert_ne!(a, (0..100).collect::<Vec<_>>());
        let c: Vec<u64> = (0..100).map(|i| Permutation::new(100, 1).get(i)).collect();
        assert_eq!(a, c);
    }

    #[test]
    fn zipf_follows_its_law() {
        // With theta 1.2 over 1000 ranks, rank 1 is drawn 2^1.2 = 2.3 times as often as rank 2.
        let d = Dist::new(&fiox_options::RandomDist::Zipf(1.2), 1000, 1).unwrap();
        let mut r = Rng::new(5);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..200_000 {
            *counts.entry(d.rank(&mut r, 1000)).or_insert(0u64) += 1;
        }
        let mut c: Vec<u64> = counts.values().copied().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        let ratio = c[0] as f64 / c[1] as f64;
        assert!((2.0..2.7).contains(&ratio), "rank1/rank2 = {ratio}");
        // The partial zeta sum of 1/k^1.2 over 1000 terms is about 4.33, so rank 1 gets about 23%.
        assert_eq!(counts.keys().min(), Some(&0));
        let top = c[0] as f64 / 200_000.0;
        assert!((0.21..0.26).contains(&top), "rank 1 share {top}");
    }

    #[test]
    fn pareto_normal_and_zones() {
        let mut r = Rng::new(9);
        let n = 10_000;
        let p = Dist::new(&fiox_options::RandomDist::Pareto(0.2), n, 1).unwrap();
        let mut counts = std::collections::HashMap::new();
        for _ in 0..100_000 {
            *counts.entry(p.rank(&mut r, n)).or_insert(0u64) += 1;
        }
        let mut c: Vec<u64> = counts.values().copied().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        // The hottest 10% of the ranks get 0.1^0.2 = 63% of the accesses.
        let hot: u64 = c.iter().take((n / 10) as usize).sum();
        assert!((0.60..0.66).contains(&(hot as f64 / 100_000.0)), "{hot}");
        let g = Dist::new(&fiox_options::RandomDist::Normal(10.0), n, 1).unwrap();
        let within = (0..100_000).filter(|_| (g.rank(&mut r, n) as i64 - 5000).abs() < 1000).count();
        // One sigma (10% of the range) either side holds 68%.
        assert!((66_000..70_000).contains(&within), "{within}");
        let z = Dist::new(&fiox_options::RandomDist::Zoned(vec![(60.0, 10.0), (40.0, 90.0)]), n, 1).unwrap();
        let first = (0..100_000).filter(|_| z.sample(&mut r, n) < 1000).count();
        assert!((59_000..61_000).contains(&first), "{first}");
    }

    #[test]
    fn rng_below_is_in_range() {
        let mut r = Rng::new(7);
        for _ in 0..1000 {
            assert!(r.below(13) < 13);
        }
    }
}
