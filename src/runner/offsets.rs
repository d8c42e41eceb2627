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
    fn rng_below_is_in_range() {
        let mut r = Rng::new(7);
        for _ in 0..1000 {
            assert!(r.below(13) < 13);
        }
    }
}
