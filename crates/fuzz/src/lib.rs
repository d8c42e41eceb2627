//! The one mutation fuzzer that drives every crate's fuzz targets (job files, option values,
//! command lines, iologs, verify blocks, multi-host frames and messages): a deterministic
//! generator, a mutator that flips, cuts, repeats and splices bytes and inserts tokens of the
//! input's grammar, and a time-bounded loop. It runs inside ordinary tests, so no nightly
//! toolchain or cargo-fuzz is needed; a panic names the input that caused it.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

/// Deterministic xorshift64 generator: the same seed gives the same inputs, so a failure
/// reproduces.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Mutates `input` one to four times: bit flips, deletions, dictionary insertions, repeated
/// chunks, splices with another corpus entry, random bytes. Inputs stay under 4 KiB.
pub fn mutate(rng: &mut Rng, input: &[u8], corpus: &[Vec<u8>], dict: &[&[u8]]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let pos = rng.below(v.len() + 1);
        match rng.below(6) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let end = (pos + rng.below(16)).min(v.len());
                v.drain(pos.min(end)..end);
            }
            2 if !dict.is_empty() => {
                let tok = dict[rng.below(dict.len())];
                v.splice(pos..pos, tok.iter().copied());
            }
            3 if !v.is_empty() => {
                let start = rng.below(v.len());
                let end = (start + rng.below(16)).min(v.len());
                let chunk = v[start..end].to_vec();
                v.splice(pos..pos, chunk);
            }
            4 if !corpus.is_empty() => {
                let other = &corpus[rng.below(corpus.len())];
                let cut = rng.below(other.len() + 1);
                v.truncate(pos);
                v.extend_from_slice(&other[cut..]);
            }
            _ => v.insert(pos.min(v.len()), rng.next_u64() as u8),
        }
    }
    v.truncate(4096);
    v
}

/// Runs `target` on the corpus, then on mutations of it (and of what it grows into) for `secs`
/// seconds and at least `min_runs` inputs; returns how many inputs ran. A panic propagates
/// with the input printed, so that a failure can be reproduced.
pub fn run(target: fn(&[u8]), corpus: &[Vec<u8>], dict: &[&[u8]], secs: f64, seed: u64) -> u64 {
    let mut rng = Rng::new(seed);
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let mut pool: Vec<Vec<u8>> = corpus.to_vec();
    if pool.is_empty() {
        pool.push(Vec::new());
    }
    for c in corpus {
        target(c);
    }
    let mut n = 0u64;
    while n < 300 || Instant::now() < deadline {
        let base = pool[rng.below(pool.len())].clone();
        // One input in eight is random bytes, not a mutation: decoders must survive noise too.
        let input = if rng.below(8) == 0 {
            (0..rng.below(700)).map(|_| rng.next_u64() as u8).collect()
        } else {
            mutate(&mut rng, &base, &pool, dict)
        };
        if std::panic::catch_unwind(|| target(&input)).is_err() {
            panic!("fuzz input made a target panic: {:?}", String::from_utf8_lossy(&input));
        }
        if pool.len() < 512 && rng.below(8) == 0 {
            pool.push(input);
        }
        n += 1;
    }
    n
}

/// The fuzzing time per target: `FIOX_FUZZ_SECS` (CI may raise it), 2 seconds by default.
pub fn secs() -> f64 {
    std::env::var("FIOX_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_deterministic_bounded_and_varied() {
        let corpus = vec![b"[global]\nbs=4k\n".to_vec()];
        let dict: &[&[u8]] = &[b"size=", b"["];
        let a: Vec<Vec<u8>> = {
            let mut r = Rng::new(7);
            (0..200).map(|_| mutate(&mut r, &corpus[0], &corpus, dict)).collect()
        };
        let mut r = Rng::new(7);
        let b: Vec<Vec<u8>> = (0..200).map(|_| mutate(&mut r, &corpus[0], &corpus, dict)).collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|m| m.len() <= 4096));
        let distinct: std::collections::HashSet<&Vec<u8>> = a.iter().collect();
        assert!(distinct.len() > 100, "{} distinct of 200", distinct.len());
    }

    #[test]
    #[should_panic(expected = "fuzz input made a target panic")]
    fn a_panicking_target_is_reported() {
        fn bad(d: &[u8]) {
            assert!(!d.contains(&b'x'), "found x");
        }
        run(bad, &[b"abc".to_vec()], &[b"x"], 5.0, 1);
    }
}
