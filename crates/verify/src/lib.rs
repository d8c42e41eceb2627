//! fio 3.33's verify block format, bit for bit (pure: no I/O, no clock, no environment).
//!
//! A write of `len` bytes is cut into intervals of `verify_interval` bytes (default: the whole
//! write). Each interval of a kind with a header starts with a 40-byte header, little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 0–1 | magic 0xacca |
//! | 2–3 | verify type ([`Kind::code`]) |
//! | 4–7 | interval length |
//! | 8–15 | rand_seed of the data (0 when a pattern fills the data) |
//! | 16–23 | absolute file offset of the interval |
//! | 24–31 | time_sec, time_nsec (never checked) |
//! | 32–33 | thread (job number, 1-based) |
//! | 34–35 | numberio (low 16 bits of the job's write count) |
//! | 36–39 | crc32c of bytes 0–35, without the final inversion |
//!
//! Then the checksum field ([`Kind::field_len`] bytes), then data up to the interval's end; the
//! checksum covers that data only. With `verify_offset` the header and field are swapped with
//! the bytes at that offset in the interval before writing, and back before checking.
//! `verify=pattern` (type 18) has no header: the whole interval is the pattern; `null` writes no
//! header and checks nothing.
//!
//! The checksums are fio 3.33's, quirks included ([`sums`] has each definition): crc32c and
//! the header CRC without final inversion, crc32 MSB-first without inversion, crc64 =
//! CRC-64/REDIS, crc16 = CRC-16/ARC, crc7 = CRC-7/MMC, sha1 with its words byte-reversed,
//! sha256 a 64-byte context buffer (not SHA-256), sha512 never finalised (the 128-byte field is
//! a copy of data bytes).
//!
//! What the kinds cannot see (fio 3.33 has the same limits):
//! - `sha512` protects only the 128 data bytes its field copies: with `r` = data length % 128,
//!   data bytes `r..128` and the last `r` (the first `r` are overwritten in the field by the
//!   last `r`, so they are not protected either): a flip elsewhere passes.
//! - `crc7` has 128 values: one random corruption in 128 passes; `crc16` one in 65536.
//! - `meta` checks only the header (plus the pattern when one is set): data damage passes.
//! - `null` checks nothing; `pattern` checks no offset, so a pattern block copied elsewhere
//!   passes unless the pattern holds `%o`.
//! - No kind sees a lost write whose old contents are a valid block for the same offset
//!   (numberio and rand_seed are returned for the caller to compare).
#![forbid(unsafe_code)]

pub mod fuzz;
pub mod journal;
mod pattern;
pub mod state;
pub mod sums;

pub use pattern::{Pattern, MAX_PATTERN};

/// fio's verify types. `Pattern` = verify=pattern (fio type 18, no header, whole interval is
/// pattern); `PatternHdr` = fio type 17 (header + pattern after it; what fio uses when
/// verify_pattern is given without verify=, and what `verify=pattern_hdr` names in fio >= 3.40).
/// `Null` writes no header and checks nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Md5,
    Crc64,
    Crc32,
    Crc32c,
    Crc32cIntel,
    Crc16,
    Crc7,
    Sha256,
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Xxhash,
    Sha1,
    Meta,
    Pattern,
    PatternHdr,
    Null,
}

impl Kind {
    /// Every kind, for tests and tables.
    pub const ALL: [Kind; 19] = [
        Kind::Md5,
        Kind::Crc64,
        Kind::Crc32,
        Kind::Crc32c,
        Kind::Crc32cIntel,
        Kind::Crc16,
        Kind::Crc7,
        Kind::Sha256,
        Kind::Sha512,
        Kind::Sha3_224,
        Kind::Sha3_256,
        Kind::Sha3_384,
        Kind::Sha3_512,
        Kind::Xxhash,
        Kind::Sha1,
        Kind::Meta,
        Kind::Pattern,
        Kind::PatternHdr,
        Kind::Null,
    ];

    /// fio's `verify=` word (`pattern_hdr` is fio >= 3.40's name for type 17). `0`/`none` are
    /// not kinds: the caller handles "no verify".
    pub fn parse(word: &str) -> Option<Kind> {
        Some(match word {
            "md5" => Kind::Md5,
            "crc64" => Kind::Crc64,
            "crc32" => Kind::Crc32,
            "crc32c" => Kind::Crc32c,
            "crc32c-intel" => Kind::Crc32cIntel,
            "crc16" => Kind::Crc16,
            "crc7" => Kind::Crc7,
            "sha256" => Kind::Sha256,
            "sha512" => Kind::Sha512,
            "sha3-224" => Kind::Sha3_224,
            "sha3-256" => Kind::Sha3_256,
            "sha3-384" => Kind::Sha3_384,
            "sha3-512" => Kind::Sha3_512,
            "xxhash" => Kind::Xxhash,
            "sha1" => Kind::Sha1,
            "meta" => Kind::Meta,
            "pattern" => Kind::Pattern,
            "pattern_hdr" => Kind::PatternHdr,
            "null" => Kind::Null,
            _ => return None,
        })
    }

    /// The `verify=` word for this kind.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Crc32cIntel => "crc32c-intel",
            Kind::PatternHdr => "pattern_hdr",
            k => k.name(),
        }
    }

    /// The checker name fio 3.33 prints in "NAME: verify failed at ..." (observed; all fit
    /// fio's `%.8s`; crc32c-intel prints as crc32c, pattern failures of meta and type 17 as
    /// pattern).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Md5 => "md5",
            Kind::Crc64 => "crc64",
            Kind::Crc32 => "crc32",
            Kind::Crc32c | Kind::Crc32cIntel => "crc32c",
            Kind::Crc16 => "crc16",
            Kind::Crc7 => "crc7",
            Kind::Sha256 => "sha256",
            Kind::Sha512 => "sha512",
            Kind::Sha3_224 => "sha3-224",
            Kind::Sha3_256 => "sha3-256",
            Kind::Sha3_384 => "sha3-384",
            Kind::Sha3_512 => "sha3-512",
            Kind::Xxhash => "xxhash",
            Kind::Sha1 => "sha1",
            Kind::Meta => "meta",
            Kind::Pattern | Kind::PatternHdr => "pattern",
            Kind::Null => "null",
        }
    }

    /// The type stored in the header (crc32c-intel is stored as 5, like crc32c).
    pub fn code(self) -> u16 {
        match self {
            Kind::Meta => 1,
            Kind::Md5 => 2,
            Kind::Crc64 => 3,
            Kind::Crc32 => 4,
            Kind::Crc32c | Kind::Crc32cIntel => 5,
            Kind::Crc16 => 7,
            Kind::Crc7 => 8,
            Kind::Sha256 => 9,
            Kind::Sha512 => 10,
            Kind::Sha3_224 => 11,
            Kind::Sha3_256 => 12,
            Kind::Sha3_384 => 13,
            Kind::Sha3_512 => 14,
            Kind::Xxhash => 15,
            Kind::Sha1 => 16,
            Kind::PatternHdr => 17,
            Kind::Pattern => 18,
            Kind::Null => 19,
        }
    }

    /// The kind for a header's type (5 is crc32c; 6, fio's unused crc32c-intel value, is None).
    pub fn from_code(code: u16) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.code() == code && *k != Kind::Crc32cIntel)
    }

    /// Checksum field bytes after the 40-byte header.
    pub fn field_len(self) -> usize {
        match self {
            Kind::Md5 => 16,
            Kind::Crc64 => 8,
            Kind::Crc32 | Kind::Crc32c | Kind::Crc32cIntel | Kind::Xxhash => 4,
            Kind::Crc16 => 2,
            Kind::Crc7 => 1,
            Kind::Sha256 => 64,
            Kind::Sha512 => 128,
            Kind::Sha3_224 => 28,
            Kind::Sha3_256 => 32,
            Kind::Sha3_384 => 48,
            Kind::Sha3_512 => 64,
            Kind::Sha1 => 20,
            Kind::Meta | Kind::Pattern | Kind::PatternHdr | Kind::Null => 0,
        }
    }

    /// False for `Pattern` and `Null`.
    pub fn has_header(self) -> bool {
        !matches!(self, Kind::Pattern | Kind::Null)
    }

    /// 40 + field_len, or 0 without header.
    pub fn header_len(self) -> usize {
        if self.has_header() {
            HEADER_LEN + self.field_len()
        } else {
            0
        }
    }
}

/// The header's magic (on disk `ca ac`).
pub const MAGIC: u16 = 0xacca;
/// The header's size without the checksum field.
pub const HEADER_LEN: usize = 40;
/// The largest header + field (sha512).
pub const MAX_HEADER_LEN: usize = HEADER_LEN + 128;

/// One interval's 40-byte header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub magic: u16,
    pub verify_type: u16,
    pub len: u32,
    pub rand_seed: u64,
    pub offset: u64,
    pub time_sec: u32,
    pub time_nsec: u32,
    pub thread: u16,
    pub numberio: u16,
    pub crc32: u32,
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

impl Header {
    /// Reads the first 40 bytes; None if shorter.
    pub fn decode(b: &[u8]) -> Option<Header> {
        if b.len() < HEADER_LEN {
            return None;
        }
        Some(Header {
            magic: u16_at(b, 0),
            verify_type: u16_at(b, 2),
            len: u32_at(b, 4),
            rand_seed: u64_at(b, 8),
            offset: u64_at(b, 16),
            time_sec: u32_at(b, 24),
            time_nsec: u32_at(b, 28),
            thread: u16_at(b, 32),
            numberio: u16_at(b, 34),
            crc32: u32_at(b, 36),
        })
    }

    /// Writes 40 bytes, computing crc32 (fio-crc32c of bytes 0..36) itself (`self.crc32` is
    /// ignored). Panics if `out` is shorter than 40 bytes.
    pub fn encode(&self, out: &mut [u8]) {
        let out = &mut out[..HEADER_LEN];
        out[0..2].copy_from_slice(&self.magic.to_le_bytes());
        out[2..4].copy_from_slice(&self.verify_type.to_le_bytes());
        out[4..8].copy_from_slice(&self.len.to_le_bytes());
        out[8..16].copy_from_slice(&self.rand_seed.to_le_bytes());
        out[16..24].copy_from_slice(&self.offset.to_le_bytes());
        out[24..28].copy_from_slice(&self.time_sec.to_le_bytes());
        out[28..32].copy_from_slice(&self.time_nsec.to_le_bytes());
        out[32..34].copy_from_slice(&self.thread.to_le_bytes());
        out[34..36].copy_from_slice(&self.numberio.to_le_bytes());
        let crc = sums::fio_crc32c(&out[..36]);
        out[36..40].copy_from_slice(&crc.to_le_bytes());
    }

    /// Whether bytes 36..40 hold the crc of bytes 0..36 (false if shorter than 40).
    pub fn crc_ok(b: &[u8]) -> bool {
        b.len() >= HEADER_LEN && sums::fio_crc32c(&b[..36]) == u32_at(b, 36)
    }
}

/// What each write's header carries besides what the layout fixes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stamp {
    pub rand_seed: u64,
    pub time_sec: u32,
    pub time_nsec: u32,
    pub thread: u16,
    pub numberio: u16,
}

/// Fills `buf` with pseudo-random bytes from `seed`, 8 at a time (SplitMix64: fast, every
/// seed gives a different stream, and no state beyond a u64). Not fio's generator: fio never
/// regenerates data to compare (except for `verify_dump`'s "expected" file).
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        c.copy_from_slice(&next().to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&next().to_le_bytes()[..n]);
}

/// How a job lays out and checks its blocks.
#[derive(Clone, Debug)]
pub struct Layout {
    pub kind: Kind,
    pub interval: usize,
    pub verify_offset: usize,
    pub pattern: Option<Pattern>,
}

impl Layout {
    /// What fio 3.33 requires of the options, and what this crate adds: the interval must hold
    /// more than the header and field ("Blocksize too small"), verify_offset (when not 0) must
    /// be at least 40 and leave room for the header and field in the interval, and must not
    /// overlap them (fio 3.33 accepts an overlapping verify_offset, e.g. 64 with sha256, but then
    /// writes blocks it fails to verify itself: observed).
    pub fn validate(&self) -> Result<(), String> {
        let h = self.kind.header_len();
        if self.interval == 0 {
            return Err("verify_interval: must be positive".into());
        }
        if h > 0 && self.interval <= h {
            return Err(format!(
                "verify: Blocksize too small: verify interval {} must be larger than the {} header and checksum bytes of verify={}",
                self.interval,
                h,
                self.kind.word()
            ));
        }
        if self.verify_offset != 0 && h > 0 {
            if self.verify_offset < HEADER_LEN {
                return Err(format!(
                    "verify_offset: min value out of range: {} ({HEADER_LEN} min)",
                    self.verify_offset
                ));
            }
            if self.verify_offset + h > self.interval {
                return Err(format!(
                    "verify_offset {} leaves no room for the {h} header bytes in a {}-byte interval",
                    self.verify_offset, self.interval
                ));
            }
            if self.verify_offset < h {
                return Err(format!(
                    "verify_offset {} overlaps the {h} header and checksum bytes of verify={} (fio 3.33 writes blocks it cannot verify then)",
                    self.verify_offset,
                    self.kind.word()
                ));
            }
        }
        Ok(())
    }

    /// Number of whole intervals in a block of `len` bytes.
    pub fn intervals(&self, len: usize) -> usize {
        len.checked_div(self.interval).unwrap_or(0)
    }

    /// Whether the verify_offset swap applies: set, not overlapping, inside the interval.
    fn swap_at(&self, h: usize) -> Option<usize> {
        let vo = self.verify_offset;
        (vo != 0 && h > 0 && vo >= h && vo + h <= self.interval).then_some(vo)
    }

    fn swap(iv: &mut [u8], vo: usize, h: usize) {
        let (a, b) = iv.split_at_mut(vo);
        a[..h].swap_with_slice(&mut b[..h]);
    }

    /// Makes `buf` (one write of buf.len() bytes at file offset `io_offset`) a complete verify
    /// block: data (the pattern if any, else pseudo-random bytes from `stamp.rand_seed`), then
    /// per interval the header (offset = io_offset + i*interval, len = interval) and checksum
    /// field, then the verify_offset swap. Intervals too small for the header are left as data;
    /// a tail shorter than an interval is data only (fio makes the interval divide the block).
    pub fn fill(&self, buf: &mut [u8], io_offset: u64, stamp: &Stamp) {
        match &self.pattern {
            Some(p) => p.fill(buf, io_offset),
            None => fill_random(buf, stamp.rand_seed),
        }
        let kind = self.kind;
        let h = kind.header_len();
        if h == 0 || self.interval <= h {
            return;
        }
        let swap = self.swap_at(h);
        for (i, iv) in buf.chunks_exact_mut(self.interval).enumerate() {
            let hdr = Header {
                magic: MAGIC,
                verify_type: kind.code(),
                len: self.interval as u32,
                // fio leaves the seed 0 when a pattern, not the seed, made the data.
                rand_seed: if self.pattern.is_some() { 0 } else { stamp.rand_seed },
                offset: io_offset.wrapping_add((i * self.interval) as u64),
                time_sec: stamp.time_sec,
                time_nsec: stamp.time_nsec,
                thread: stamp.thread,
                numberio: stamp.numberio,
                crc32: 0,
            };
            hdr.encode(iv);
            let (head, data) = iv.split_at_mut(h);
            sums::compute(kind, data, &mut head[HEADER_LEN..]);
            if let Some(vo) = swap {
                Self::swap(iv, vo, h);
            }
        }
    }

    /// Checks interval `i` of block `buf` read at `io_offset` (swaps the verify_offset bytes back
    /// in place first). Checks as fio's separate read job does: magic, len, offset, header crc,
    /// then checksum / pattern. Ok(Some(header)) for kinds with a header (the caller compares
    /// generation stamps itself), Ok(None) otherwise.
    pub fn check_interval(&self, buf: &mut [u8], io_offset: u64, i: usize) -> Result<Option<Header>, Failure> {
        let kind = self.kind;
        let start = i.saturating_mul(self.interval);
        let ivoff = io_offset.wrapping_add(start as u64);
        let fail = |what| Failure { interval: i, offset: ivoff, len: self.interval as u32, what };
        if kind == Kind::Null {
            return Ok(None);
        }
        let h = kind.header_len();
        let end = match start.checked_add(self.interval) {
            Some(e) if e <= buf.len() && self.interval > h => e,
            _ => return Err(fail(What::TooSmall)),
        };
        let iv = &mut buf[start..end];
        if h == 0 {
            return match self.check_pattern(iv, io_offset, start, 0) {
                Some(what) => Err(fail(what)),
                None => Ok(None),
            };
        }
        if let Some(vo) = self.swap_at(h) {
            Self::swap(iv, vo, h);
        }
        let hdr = Header::decode(iv).expect("interval longer than the header");
        if hdr.magic != MAGIC {
            return Err(fail(What::BadMagic(hdr.magic)));
        }
        if hdr.len as usize != self.interval {
            return Err(fail(What::BadLength { found: hdr.len, wanted: self.interval as u32 }));
        }
        if hdr.offset != ivoff {
            return Err(fail(What::BadOffset { found: hdr.offset, wanted: ivoff }));
        }
        let calculated = sums::fio_crc32c(&iv[..36]);
        if calculated != hdr.crc32 {
            return Err(fail(What::BadCrc { found: hdr.crc32, calculated }));
        }
        let mismatch = |what| {
            if hdr.verify_type != kind.code() {
                What::TypeMismatch { media: hdr.verify_type, given: kind.code() }
            } else {
                what
            }
        };
        match kind {
            Kind::Meta | Kind::PatternHdr => {
                if let Some(what) = self.check_pattern(iv, io_offset, start, h) {
                    return Err(fail(mismatch(what)));
                }
            }
            _ => {
                let (head, data) = iv.split_at(h);
                let stored = &head[HEADER_LEN..];
                let mut sum = [0u8; 128];
                let sum = &mut sum[..kind.field_len()];
                sums::compute(kind, data, sum);
                if stored != sum {
                    return Err(fail(mismatch(What::Checksum { expected: stored.to_vec(), received: sum.to_vec() })));
                }
            }
        }
        Ok(Some(hdr))
    }

    /// Compares interval data `iv[h..]` (interval starting at `start` in its block) with the
    /// pattern, which fio laid from the block's start: phase `(start + h) % len`.
    fn check_pattern(&self, iv: &[u8], io_offset: u64, start: usize, h: usize) -> Option<What> {
        let p = self.pattern.as_ref()?;
        let (at, wanted) = p.compare(&iv[h..], io_offset, start.wrapping_add(h))?;
        let got = iv[h + at];
        Some(What::Pattern { got, wanted, bad_bits: (got ^ wanted).count_ones(), at: h + at })
    }
}

/// A failed interval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub interval: usize,
    /// Absolute offset of the failing interval.
    pub offset: u64,
    pub len: u32,
    pub what: What,
}

/// What failed. `Checksum::expected` is the field stored in the block, `received` the value
/// computed over the data read (fio's "Expected CRC" / "Received CRC"). `Pattern::at` is the
/// byte's index in the interval. `TypeMismatch` replaces a checksum or pattern failure when the
/// header's type differs from the job's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum What {
    BadMagic(u16),
    BadLength { found: u32, wanted: u32 },
    BadOffset { found: u64, wanted: u64 },
    BadCrc { found: u32, calculated: u32 },
    Checksum { expected: Vec<u8>, received: Vec<u8> },
    Pattern { got: u8, wanted: u8, bad_bits: u32, at: usize },
    TooSmall,
    TypeMismatch { media: u16, given: u16 },
}

fn hex(b: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

impl Failure {
    /// fio 3.33's message lines for it (each ending in a newline), as printed for the read of
    /// `req_offset`/`req_len` with io_u flags `flags` on file `file` by a job verifying with
    /// `kind`. Deliberate deviations: verify=pattern prints the interval length (fio 3.33 prints
    /// a length read from pattern bytes) and no "verify type mismatch" line; "bad pattern block
    /// offset" is relative to the interval start (fio 3.33: to the data after the header);
    /// `TypeMismatch` prints no CRC lines; `TooSmall` has no fio counterpart at read time (fio
    /// refuses the job when it writes).
    pub fn fio_message(&self, kind: Kind, file: &str, req_offset: u64, req_len: u64, flags: u32) -> String {
        let at = format!("at file {file} offset {}, length {}", self.offset, self.len);
        let req = format!("(requested block: offset={req_offset}, length={req_len}");
        let failed = |name: &str| format!("{name:.8}: verify failed {at} {req}, flags={flags:x})\n");
        match &self.what {
            What::BadMagic(m) => format!("verify: bad magic header {m:x}, wanted {MAGIC:x} {at} {req})\n"),
            What::BadLength { found, wanted } => {
                format!("verify: bad header length {found}, wanted {wanted} {at} {req})\n")
            }
            // fio 3.33 prints the block's offset as "wanted" (it compares the interval's).
            What::BadOffset { found, .. } => {
                format!("verify: bad header offset {found}, wanted {req_offset} {at} {req})\n")
            }
            What::BadCrc { found, calculated } => {
                format!("verify: bad header crc {found:x}, calculated {calculated:x} {at} {req})\n")
            }
            What::Checksum { expected, received } => format!(
                "{}       Expected CRC: {}\n       Received CRC: {}\n",
                failed(kind.name()),
                hex(expected),
                hex(received)
            ),
            What::Pattern { got, wanted, bad_bits, at } => format!(
                "fio: got pattern '{got:02x}', wanted '{wanted:02x}'. Bad bits {bad_bits}\nfio: bad pattern block offset {at}\n{}",
                failed("pattern")
            ),
            What::TooSmall => format!("verify: Blocksize too small {at} {req})\n"),
            // Meta and type 17 only fail on their pattern, which fio reports as "pattern".
            What::TypeMismatch { media, given } => format!(
                "{}fio: verify type mismatch ({media} media, {given} given)\n",
                failed(if kind == Kind::Meta { "pattern" } else { kind.name() })
            ),
        }
    }
}

#[cfg(test)]
mod tests;
