//! Where each I/O goes: sequential positions per direction, and random offsets that touch every
//! block exactly once per pass.
//!
//! fio keeps a bitmap of the blocks done (its "random map") and searches it for a free block
//! when a random pick hits a used one. fiox instead walks a keyed pseudo-random permutation of
//! the block numbers (a scrambled full-period congruential sequence over the next power of two,
//! skipping values past the end): every block once per pass by construction, O(1) per I/O and
//! no memory at all. With `norandommap`, offsets are drawn independently and may repeat, as in
//! fio.

use crate::plan::mix64;

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
}

/// The seed fio derives from `randseed` for its random stream number `index` of the job it
/// numbers `thread_number`: `randseed` multiplied by 0x9e370001 four times and then once more
/// per stream, times the thread number, plus the stream's index (observed, see [`MixStream`]).
pub fn fio_seed(randseed: u64, thread_number: u64, index: u64) -> u64 {
    const MUL: u64 = 0x9e37_0001;
    let mut s = randseed;
    for _ in 0..4 + index {
        s = s.wrapping_mul(MUL);
    }
    s.wrapping_mul(thread_number).wrapping_add(index)
}

/// fio's read/write mix stream, reproduced so that a mixed job issues the same sequence of
/// reads and writes as fio with the same `randseed`: L'Ecuyer's three-component Tausworthe
/// generator (taus88), which fio 3.33 and 3.42 both use for the direction of each I/O.
///
/// Everything here was established by observation of fio's runs: the per-I/O directions of
/// `rw=readwrite` jobs in `write_iolog` at `rwmixread` 50 and 70 and two `randseed`s, and the
/// generator's state read from a fio built with symbols, under gdb, after seeding and after
/// each I/O.
#[derive(Debug, Clone)]
pub struct MixStream([u32; 3]);

impl MixStream {
    /// The stream of the job fio numbers `thread_number` (1-based, clones counted) with
    /// `randseed`. fio derives one seed per random stream from `randseed` ([`fio_seed`]); the
    /// direction stream is the fifth.
    pub fn fio(randseed: u64, thread_number: u64) -> MixStream {
        MixStream::seeded(fio_seed(randseed, thread_number, 4) as u32)
    }

    /// fio's taus88 stream number `index` of the job (the same generator, another seed): the
    /// 23rd (index 22) is sprandom's, found by matching its state under gdb.
    pub fn fio_stream(randseed: u64, thread_number: u64, index: u64) -> MixStream {
        MixStream::seeded(fio_seed(randseed, thread_number, index) as u32)
    }

    /// Seeds the three components from a 32-bit seed through a 69069 linear congruence (each
    /// above the least value its component needs), then discards six outputs.
    fn seeded(seed: u32) -> MixStream {
        let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
        let at_least = |x: u32, m: u32| if x < m { x + m } else { x };
        let s1 = at_least(lcg(53), 1);
        let s2 = at_least(lcg(s1), 7);
        let s3 = at_least(lcg(s2), 15);
        let mut m = MixStream([s1, s2, s3]);
        for _ in 0..6 {
            m.next_u32();
        }
        m
    }

    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        let [s1, s2, s3] = &mut self.0;
        *s1 = ((*s1 & 0xffff_fffe) << 12) ^ (((*s1 << 13) ^ *s1) >> 19);
        *s2 = ((*s2 & 0xffff_fff8) << 4) ^ (((*s2 << 2) ^ *s2) >> 25);
        *s3 = ((*s3 & 0xffff_fff0) << 17) ^ (((*s3 << 3) ^ *s3) >> 11);
        *s1 ^ *s2 ^ *s3
    }

    /// Whether the next I/O reads: a draw from 1 to 100 at most `rwmixread`.
    #[inline]
    pub fn reads(&mut self, rwmixread: u32) -> bool {
        let draw = 1 + ((self.next_u32() as u64 * 100) >> 32);
        draw <= rwmixread as u64
    }
}

/// fio places popularity rank r at `base + (r · GOLDEN mod 2^64) mod n` (observed: the hottest
/// Zipf blocks lie this constant apart modulo n, for powers of two and other n alike, see
/// docs/fio-observed/distributions.md). The constant is 2^64 divided by the golden ratio, made
/// odd, the usual multiplier of multiplicative hashing.
const GOLDEN: u64 = 0x61c8_8646_80b5_83eb;

/// Non-uniform offset distributions (`random_distribution`), as block indices in `0..n`.
///
/// Zipf, Pareto and normal draw a popularity rank and scatter the ranks over the range the way
/// fio does (see [`GOLDEN`]), so the same number of distinct blocks is touched with the same
/// hit shares. Every draw is O(1), with no table, whatever n.
#[derive(Debug, Clone)]
pub enum Dist {
    /// Gray et al.'s approximate Zipf generator ("Quickly generating billion-record synthetic
    /// databases", 1994), which is what fio 3.33's draws follow: compared with the exact law,
    /// ranks 2 to 9 get about a tenth more of the accesses and the tail a little less.
    Zipf { n: f64, zetan: f64, zeta2: f64, alpha: f64, eta: f64, base: Base },
    /// Rank `n · u^exponent`, where the exponent is ln h / ln(1 - h).
    Pareto { exponent: f64, base: Base },
    /// The rank's fraction of the range is the mean of twelve uniform draws plus a uniform
    /// draw `width` wide, around `center`.
    Normal { width: f64, center: f64 },
    /// Cumulative access share (0..1) and the zone's `[start, len)` in blocks.
    Zones(Vec<(f64, u64, u64)>),
}

/// Where rank 0 lands.
#[derive(Debug, Clone, Copy)]
pub enum Base {
    /// A fraction of the range (the center the user gave).
    Center(f64),
    /// A block chosen by the job's seed, as fio does when no center is given.
    Seeded(u64),
}

impl Base {
    fn new(center: Option<f64>, seed: u64) -> Base {
        center.map_or(Base::Seeded(mix64(seed ^ 0x7a1f_d157)), Base::Center)
    }

    #[inline]
    fn block(self, n: u64) -> u64 {
        match self {
            Base::Center(c) => ((c * n as f64) as u64) % n,
            Base::Seeded(v) => v % n,
        }
    }
}

/// Rank `r` of `0..n` scattered over the range from `base`.
#[inline]
fn scatter(r: u64, base: u64, n: u64) -> u64 {
    ((r.wrapping_mul(GOLDEN) % n) + base) % n
}

impl Dist {
    /// `None` for the uniform distribution (the random map handles that). `seed` places the
    /// hottest block when no center is given.
    pub fn new(d: &fiox_options::RandomDist, nblocks: u64, block: u64, seed: u64) -> Option<Dist> {
        use fiox_options::RandomDist as R;
        let n = nblocks.max(1);
        Some(match d {
            R::Random => return None,
            R::Zipf(theta, center) => {
                let (theta, nf) = (*theta, n as f64);
                let zetan = zeta(n.min(ZIPF_ZETA_CAP), theta);
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                let eta = (1.0 - (2.0 / nf).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                Dist::Zipf { n: nf, zetan, zeta2, alpha: 1.0 / (1.0 - theta), eta, base: Base::new(*center, seed) }
            }
            // Measured on fio 3.33: h = 0.2 sends 80% of the accesses to 20% of the blocks,
            // h = 0.5 is uniform and h above 0.5 puts the hot blocks at the top ranks.
            R::Pareto(h, center) => Dist::Pareto { exponent: h.ln() / (1.0 - h).ln(), base: Base::new(*center, seed) },
            // Measured on fio 3.33: the spread is that of the mean of twelve uniform draws
            // (a standard deviation of 1/12 of the range) whatever the deviation, widened by a
            // uniform draw as wide as the deviation's percentage of the range, capped at 50.
            R::Normal(dev, center) => Dist::Normal { width: dev.min(50.0) / 100.0, center: center.unwrap_or(0.5) },
            R::Zoned(z) => Dist::Zones(zones(z.iter().map(|&(p, r)| (p, (r / 100.0 * n as f64) as u64)), n)),
            R::ZonedAbs(z) => Dist::Zones(zones(z.iter().map(|&(p, bytes)| (p, bytes / block.max(1))), n)),
        })
    }

    /// A block index in `0..n`: a popularity rank scattered over the range as fio scatters
    /// them, or for zones a block in the chosen zone.
    #[inline]
    pub fn sample(&self, rng: &mut Rng, n: u64) -> u64 {
        let n = n.max(1);
        let r = self.rank(rng, n);
        match self {
            Dist::Zones(_) => r,
            Dist::Zipf { base, .. } | Dist::Pareto { base, .. } => scatter(r, base.block(n), n),
            // fio puts the middle rank of its normal draws at block n/2 · GOLDEN mod n.
            Dist::Normal { .. } => scatter(r, 0, n),
        }
    }

    /// The popularity rank in `0..n` (0 hottest for Zipf and Pareto below 0.5, the center for
    /// normal).
    #[inline]
    pub fn rank(&self, rng: &mut Rng, n: u64) -> u64 {
        let n = n.max(1);
        match self {
            Dist::Zipf { n: nf, zetan, zeta2, alpha, eta, .. } => {
                let u = rng.unit();
                let uz = u * zetan;
                if uz < 1.0 {
                    0
                } else if uz < *zeta2 {
                    1.min(n - 1)
                } else {
                    ((nf * (eta * u - eta + 1.0).powf(*alpha)) as u64).min(n - 1)
                }
            }
            Dist::Pareto { exponent, .. } => ((rng.unit().powf(*exponent) * n as f64) as u64).min(n - 1),
            Dist::Normal { width, center } => {
                let twelve: f64 = (0..12).map(|_| rng.unit()).sum();
                let x = center + (twelve / 12.0 - 0.5) + width * (rng.unit() - 0.5);
                // A center near an edge wraps the tail around rather than piling it on the edge.
                ((x.rem_euclid(1.0) * n as f64) as u64).min(n - 1)
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

/// fio normalises its Zipf draws over at most about ten million ranks (observed: over 2^28
/// blocks the hottest block's share at theta 0.8 is 1/ζ(10^7), twice 1/ζ(2^28)).
const ZIPF_ZETA_CAP: u64 = 10_000_000;

/// The partial zeta sum Σ k^-s for k in 1..=m: exact for the first ten thousand terms, then the
/// Euler–Maclaurin formula (error far below 1e-9), so a job over many blocks starts at once.
fn zeta(m: u64, s: f64) -> f64 {
    const EXACT: u64 = 10_000;
    let exact: f64 = (1..=m.min(EXACT)).map(|k| (k as f64).powf(-s)).sum();
    if m <= EXACT {
        return exact;
    }
    let (a, b) = ((EXACT + 1) as f64, m as f64);
    let f = |x: f64| x.powf(-s);
    let df = |x: f64| -s * x.powf(-s - 1.0);
    let integral = if (s - 1.0).abs() < 1e-12 { (b / a).ln() } else { (b.powf(1.0 - s) - a.powf(1.0 - s)) / (1.0 - s) };
    exact + integral + (f(a) + f(b)) / 2.0 + (df(b) - df(a)) / 12.0
}

/// A keyed permutation of `0..n`, walked in order: every value once in `n` draws.
///
/// The walk is a linear congruential sequence over the next power of two `2^k >= n`, with an
/// odd increment and a multiplier one more than a multiple of four: by the Hull–Dobell theorem
/// such a sequence visits every one of the `2^k` states once before it repeats. Each state goes
/// through a keyed bijection of `0..2^k` (a key added, then xor-shifts around an odd
/// multiplication, each invertible modulo `2^k`) that spreads the sequence's regular low bits,
/// and values past `n` are skipped (fewer than one in two). So a pass of `n` draws yields every
/// block exactly once, uniformly ordered for any practical purpose, at one multiplication on the
/// sequence's own dependency chain per draw (the earlier 4-round Feistel network had eight,
/// serially, and was a fifth of a null job's time).
#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    mask: u64,
    shift: u32,
    state: u64,
    mul: u64,
    inc: u64,
    key: u64,
    scramble: u64,
}

impl Permutation {
    pub fn new(n: u64, key: u64) -> Permutation {
        let bits = 64 - n.max(2).saturating_sub(1).leading_zeros();
        let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let mut k = key;
        let [state, mul, inc, key, scramble] = [0; 5].map(|_| {
            k = mix64(k);
            k
        });
        Permutation {
            n,
            mask,
            shift: bits.div_ceil(2),
            state: state & mask,
            mul: (mul << 2) | 1,
            inc: inc | 1,
            key: key & mask,
            scramble: scramble | 1,
        }
    }

    /// The next value of the walk; the `n` values after `new` are `0..n`, each once.
    #[inline(always)]
    pub fn next(&mut self) -> u64 {
        loop {
            self.state = self.state.wrapping_mul(self.mul).wrapping_add(self.inc) & self.mask;
            let mut x = self.state ^ self.key;
            x ^= x >> self.shift;
            x = x.wrapping_mul(self.scramble) & self.mask;
            x ^= x >> self.shift;
            if x < self.n {
                return x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_hits_every_block_once() {
        for n in [1u64, 2, 3, 4, 7, 64, 1000, 4097, (1 << 16) + 3, 1 << 18] {
            for key in [0u64, 42, u64::MAX] {
                let mut p = Permutation::new(n, key);
                let mut seen = vec![false; n as usize];
                for _ in 0..n {
                    let v = p.next() as usize;
                    assert!(!seen[v], "n={n} key={key}: {v} twice");
                    seen[v] = true;
                }
            }
        }
    }

    #[test]
    fn permutation_depends_on_key_and_is_not_identity() {
        let walk = |n: u64, key: u64| {
            let mut p = Permutation::new(n, key);
            (0..n).map(|_| p.next()).collect::<Vec<u64>>()
        };
        let (a, b, c) = (walk(100, 1), walk(100, 2), walk(100, 1));
        assert_ne!(a, b);
        assert_ne!(a, (0..100).collect::<Vec<_>>());
        assert_eq!(a, c);
    }

    #[test]
    fn permutation_order_looks_uniform() {
        // Over 2^16 blocks: each quarter of the pass spreads over the whole range (its mean near
        // the middle, every sixteenth of the range visited about equally), and consecutive
        // draws are no closer than chance would put them.
        let n = 1u64 << 16;
        let mut p = Permutation::new(n, 7);
        let v: Vec<u64> = (0..n).map(|_| p.next()).collect();
        for q in v.chunks(v.len() / 4) {
            let mean = q.iter().sum::<u64>() as f64 / q.len() as f64;
            assert!((mean / n as f64 - 0.5).abs() < 0.02, "quarter mean {mean}");
            let mut bins = [0u64; 16];
            q.iter().for_each(|&x| bins[(x * 16 / n) as usize] += 1);
            let expect = q.len() as f64 / 16.0;
            assert!(bins.iter().all(|&c| (c as f64 / expect - 1.0).abs() < 0.1), "{bins:?}");
        }
        let near = v.windows(2).filter(|w| w[0].abs_diff(w[1]) < 64).count();
        // Chance: about 2 * 64 / n of the pairs, 128 of them.
        assert!(near < 400, "{near} consecutive draws within 64 blocks");
        let odd_runs = v.windows(2).filter(|w| w[0] % 2 == w[1] % 2).count() as f64 / n as f64;
        assert!((odd_runs - 0.5).abs() < 0.05, "parity kept in {odd_runs} of the pairs");
    }

    #[test]
    fn zipf_follows_its_law() {
        // With theta 1.2 over 1000 ranks, rank 1 is drawn 2^1.2 = 2.3 times as often as rank 2.
        assert!((zeta(1000, 1.2) - (1..=1000).map(|k| (k as f64).powf(-1.2)).sum::<f64>()).abs() < 1e-9);
        let exact: f64 = (1..=50_000).map(|k| (k as f64).powf(-0.8)).sum();
        assert!((zeta(50_000, 0.8) - exact).abs() < 1e-7, "{} {exact}", zeta(50_000, 0.8));
        let d = Dist::new(&fiox_options::RandomDist::Zipf(1.2, None), 1000, 1, 3).unwrap();
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
    fn a_center_puts_the_hottest_block_there_and_ranks_follow_fios_stride() {
        use fiox_options::RandomDist as R;
        let n = 1 << 18;
        let d = Dist::new(&R::Zipf(1.2, Some(0.3)), n, 1, 0).unwrap();
        let mut r = Rng::new(1);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..50_000 {
            *counts.entry(d.sample(&mut r, n)).or_insert(0u64) += 1;
        }
        let mut c: Vec<(u64, u64)> = counts.into_iter().collect();
        c.sort_unstable_by_key(|x| std::cmp::Reverse(x.1));
        // fio 3.33, zipf:1.2:0.3 over 1 GiB of 4 KiB blocks: 78643, 177950, 15113.
        assert_eq!([c[0].0, c[1].0, c[2].0], [78643, 177950, 15113]);
    }

    #[test]
    fn pareto_normal_and_zones() {
        use fiox_options::RandomDist as R;
        let mut r = Rng::new(9);
        let n = 10_000;
        let share_of_hottest_tenth = |d: &Dist, r: &mut Rng| {
            let mut counts = std::collections::HashMap::new();
            for _ in 0..100_000 {
                *counts.entry(d.rank(r, n)).or_insert(0u64) += 1;
            }
            let mut c: Vec<u64> = counts.values().copied().collect();
            c.sort_unstable_by(|a, b| b.cmp(a));
            c.iter().take((n / 10) as usize).sum::<u64>() as f64 / 100_000.0
        };
        // fio's law: the hottest fraction f of the ranks gets f^(ln(1-h)/ln h) of the accesses:
        // 10% get 73% at h = 0.2, 10% at h = 0.5 and 90% at h = 0.9.
        for (h, lo, hi) in [(0.2, 0.70, 0.76), (0.5, 0.10, 0.18), (0.9, 0.88, 0.93)] {
            let share = share_of_hottest_tenth(&Dist::new(&R::Pareto(h, None), n, 1, 0).unwrap(), &mut r);
            assert!((lo..hi).contains(&share), "pareto {h}: {share}");
        }
        // normal: a standard deviation of n/12 at deviation 0, sqrt(1/144 + 0.2^2/12) n at 20.
        for (dev, sd) in [(0.0, 1.0 / 12.0), (20.0, (1.0f64 / 144.0 + 0.04 / 12.0).sqrt())] {
            let g = Dist::new(&R::Normal(dev, None), n, 1, 0).unwrap();
            let x: Vec<f64> = (0..100_000).map(|_| g.rank(&mut r, n) as f64 / n as f64).collect();
            let mean = x.iter().sum::<f64>() / x.len() as f64;
            let got = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / x.len() as f64).sqrt();
            assert!((mean - 0.5).abs() < 0.005 && (got / sd - 1.0).abs() < 0.03, "normal {dev}: {mean} {got}");
        }
        let z = Dist::new(&R::Zoned(vec![(60.0, 10.0), (40.0, 90.0)]), n, 1, 0).unwrap();
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

    /// The directions fio 3.33 issued for `rw=readwrite` (its `write_iolog`, first 48 I/Os).
    #[test]
    fn the_mix_stream_gives_fios_directions() {
        for (randseed, rwmixread, fios) in [
            (0x89, 50, "rrrwrrwwwrwrwrrrwwrrwwwwrwrwwwwrrwrwwrrwwrwrrwwr"),
            (0x89, 70, "rrrwrrwrrrwrwrrrrrrrwwrwrrrwwwrrrwrwwrrwrrwrrwrr"),
            (1234, 50, "rwrrwrwrwrwwrrrrrrwrrrwrwrrwwwwrwrrrrwrwrrwrrrrw"),
        ] {
            let mut m = MixStream::fio(randseed, 1);
            let ours: String = (0..fios.len()).map(|_| if m.reads(rwmixread) { 'r' } else { 'w' }).collect();
            assert_eq!(ours, fios, "randseed {randseed}, rwmixread {rwmixread}");
        }
    }
}
