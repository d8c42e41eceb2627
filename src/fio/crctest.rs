//! `--crctest[=LIST]`: how fast each checksum runs on this machine, as fio's switch prints it
//! (`md5:\t\t  603.48 MiB/sec`, fio 3.33's names and order). The verify checksums are the ones
//! the runner uses (`fiox-verify`); murmur3, jhash and fnv are the hashes fio benchmarks beside
//! them (it uses them for its own tables, not for verify), written here from their published
//! definitions.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use fiox_verify::sums::compute;
use fiox_verify::Kind;

/// fio 3.33's crctest names, in the order it prints them.
const NAMES: &[&str] = &[
    "md5", "crc64", "crc32", "crc32c", "crc16", "crc7", "sha1", "sha256", "sha512", "xxhash", "murmur3", "jhash",
    "fnv", "sha3-224", "sha3-256", "sha3-384", "sha3-512",
];

/// Each checksum runs over this buffer until [`BUDGET`] has passed.
const BUF: usize = 1 << 20;
const BUDGET: Duration = Duration::from_millis(100);

/// Runs the test for `list` (empty: every checksum) and prints one line each.
pub fn run(list: &str) -> Result<ExitCode> {
    let wanted: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if let Some(bad) = wanted.iter().find(|w| !NAMES.contains(w)) {
        bail!("--crctest: unknown checksum '{bad}' (known: {})", NAMES.join(", "));
    }
    let mut buf = vec![0u8; BUF];
    fiox_verify::fill_random(&mut buf, 0x5eed);
    let mut out = String::new();
    for name in NAMES.iter().filter(|n| wanted.is_empty() || wanted.contains(n)) {
        out.push_str(&line(name, mib_per_sec(name, &buf)));
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

/// fio's line: the name and a colon, two tabs for names shorter than 7 characters and one
/// otherwise, then the rate in a field of 8.
fn line(name: &str, rate: f64) -> String {
    let tabs = if name.len() < 7 { "\t\t" } else { "\t" };
    format!("{name}:{tabs}{rate:8.2} MiB/sec\n")
}

fn mib_per_sec(name: &str, buf: &[u8]) -> f64 {
    let mut field = [0u8; 128];
    let start = Instant::now();
    let mut bytes = 0u64;
    while start.elapsed() < BUDGET {
        match name {
            "murmur3" => {
                black_box(murmur3(black_box(buf), 0));
            }
            "jhash" => {
                black_box(jhash(black_box(buf), 0));
            }
            "fnv" => {
                black_box(fnv(black_box(buf)));
            }
            "sha512" => {
                black_box(fiox_verify::sums::sha512_digest(black_box(buf)));
            }
            _ => {
                let kind = Kind::parse(name).expect("a verify checksum");
                compute(kind, black_box(buf), &mut field[..kind.field_len()]);
                black_box(&field);
            }
        }
        bytes += buf.len() as u64;
    }
    bytes as f64 / (1 << 20) as f64 / start.elapsed().as_secs_f64()
}

/// MurmurHash3, x86 32-bit variant (Austin Appleby's public-domain definition).
fn murmur3(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h = seed;
    let blocks = data.chunks_exact(4);
    let tail = blocks.remainder();
    for b in blocks {
        let k = u32::from_le_bytes(b.try_into().expect("4 bytes")).wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h = (h ^ k).rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let mut k = 0u32;
    for (i, &b) in tail.iter().enumerate() {
        k |= (b as u32) << (8 * i);
    }
    if !tail.is_empty() {
        h ^= k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Bob Jenkins' lookup3 `hashlittle` (public domain), the hash Linux calls jhash.
fn jhash(data: &[u8], initval: u32) -> u32 {
    let init = 0xdead_beefu32.wrapping_add(data.len() as u32).wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);
    let word = |s: &[u8], i: usize| -> u32 {
        let mut w = [0u8; 4];
        let part = &s[(i * 4).min(s.len())..(i * 4 + 4).min(s.len())];
        w[..part.len()].copy_from_slice(part);
        u32::from_le_bytes(w)
    };
    let mut rest = data;
    while rest.len() > 12 {
        a = a.wrapping_add(word(rest, 0));
        b = b.wrapping_add(word(rest, 1));
        c = c.wrapping_add(word(rest, 2));
        // mix(a, b, c)
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(4);
        b = b.wrapping_add(a);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(rest, 0));
    b = b.wrapping_add(word(rest, 1));
    c = c.wrapping_add(word(rest, 2));
    // final(a, b, c)
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c.wrapping_sub(b.rotate_left(24))
}

/// FNV-1a, 64-bit (the published offset basis and prime).
fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_check_values() {
        // MurmurHash3_x86_32 and FNV-1a 64 test vectors, lookup3's own self-test value.
        assert_eq!(murmur3(b"", 0), 0);
        assert_eq!(murmur3(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3(b"test", 0), 0xba6b_d213);
        assert_eq!(fnv(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(jhash(b"", 0), 0xdead_beef);
        assert_eq!(jhash(b"Four score and seven years ago", 0), 0x1777_0551);
    }

    #[test]
    fn lines_are_fios() {
        assert_eq!(line("md5", 603.475), "md5:\t\t  603.48 MiB/sec\n");
        assert_eq!(line("murmur3", 3638.33), "murmur3:\t 3638.33 MiB/sec\n");
        assert_eq!(line("sha3-224", 103.96), "sha3-224:\t  103.96 MiB/sec\n");
    }
}
