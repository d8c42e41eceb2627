//! Drives the fuzz targets with random and mutated inputs for `FIOX_FUZZ_SECS` seconds
//! (default 2): they must never panic.

use std::time::{Duration, Instant};

/// xorshift64*: a tiny deterministic generator, enough to make inputs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn secs() -> Duration {
    let s = std::env::var("FIOX_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0);
    Duration::from_secs_f64(s)
}

/// Mutates a seed input: byte flips, inserts of grammar tokens, truncation.
fn mutate(rng: &mut Rng, seed: &[u8], tokens: &[&[u8]]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..=rng.below(6) {
        match rng.below(4) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = rng.next() as u8;
            }
            1 => {
                let t = tokens[rng.below(tokens.len())];
                let i = rng.below(v.len() + 1);
                v.splice(i..i, t.iter().copied());
            }
            2 if !v.is_empty() => v.truncate(rng.below(v.len())),
            _ => v.push(rng.next() as u8),
        }
    }
    v
}

fn run(name: &str, target: fn(&[u8]), seeds: &[Vec<u8>], tokens: &[&[u8]]) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
    let end = Instant::now() + secs();
    let mut n = 0u64;
    while Instant::now() < end {
        for _ in 0..256 {
            let input = if rng.below(4) == 0 {
                (0..rng.below(700)).map(|_| rng.next() as u8).collect()
            } else {
                let seed = &seeds[rng.below(seeds.len())];
                mutate(&mut rng, seed, tokens)
            };
            target(&input);
            n += 1;
        }
    }
    println!("fuzz {name}: {n} inputs");
    assert!(n > 0);
}

#[test]
fn fuzz_pattern() {
    let seeds: Vec<Vec<u8>> = ["0xdeadbeef", "%o", "\"abcd\"-120xdeadface", "'f'1 2", "-2147483648"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    let tokens: &[&[u8]] = &[b"0x", b"%o", b"\"", b"'", b"-", b" ", b"0", b"9", b"ff", b"%"];
    run("pattern", fiox_verify::fuzz::pattern, &seeds, tokens);
}

#[test]
fn fuzz_check() {
    // Seeds: valid blocks of several layouts, so mutations reach the deep checks.
    let mut seeds = Vec::new();
    for (k, kind) in fiox_verify::Kind::ALL.iter().enumerate() {
        for (interval, vo, pat) in [(512u16, 0u16, 0u8), (256, 200, 3), (1024, 0, 2)] {
            let mut v = vec![k as u8];
            v.extend_from_slice(&interval.to_le_bytes());
            v.extend_from_slice(&vo.to_le_bytes());
            v.extend_from_slice(&[1, 0, 0, pat]);
            let layout = fiox_verify::Layout {
                kind: *kind,
                interval: interval.into(),
                verify_offset: vo.into(),
                pattern: match pat {
                    0 => None,
                    2 => fiox_verify::Pattern::parse("%o", &|_: &str| Ok(vec![])).ok(),
                    _ => fiox_verify::Pattern::parse("\"abcd\"-120xdeadface", &|_: &str| Ok(vec![])).ok(),
                },
            };
            let mut block = vec![0u8; 2048];
            layout.fill(&mut block, 1 << 9, &fiox_verify::Stamp::default());
            v.extend_from_slice(&block);
            seeds.push(v);
        }
    }
    let tokens: &[&[u8]] = &[&[0xca, 0xac], &[0, 2, 0, 0], &[0xff; 4], &[0; 40]];
    run("check", fiox_verify::fuzz::check, &seeds, tokens);
}

#[test]
fn fuzz_state_and_journal() {
    let st = fiox_verify::state::VerifyState {
        numberio: 9,
        depth: 2,
        nofiles: 1,
        name: "j".into(),
        comps: vec![(0, 4096), (0, 0)],
        ..Default::default()
    };
    let tokens: &[&[u8]] = &[&[0xff; 8], &[0; 8], &[3, 0, 0, 0, 0, 0, 0, 0], &[1, 0, 2, 0]];
    run("state", fiox_verify::fuzz::state, &[st.encode()], tokens);
    let h = fiox_verify::journal::JournalHeader { run_tag: 3, interval: 4096, files: vec![("a".into(), 0)] };
    let mut j = h.encode();
    for kind in [fiox_verify::journal::RecKind::Pending, fiox_verify::journal::RecKind::Done] {
        fiox_verify::journal::Rec { kind, file: 0, len: 4096, offset: 8192, stamp: 77 }.encode(&mut j);
    }
    run("journal", fiox_verify::fuzz::journal, &[j], tokens);
}
