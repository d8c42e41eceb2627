//! Planted-corruption detection harness (acceptance items 7 and 17 of the verify plan).
//!
//! Pure: images live in memory. For every kind, images of a few blocks are written with
//! `Layout::fill` (each block with its own stamp and rand_seed), one mutation is planted per
//! trial at a random place (deterministic RNG), and every interval of every block is checked
//! with `check_interval` at the block's io_offset, as a separate read job would.
//!
//! Two independent predictions are compared with what the crate reports, interval by interval:
//! - the harness (`planted_corruption_detection`) predicts from *generation membership*: an
//!   interval fails when a protected segment (header; checksum field + the data it covers) is
//!   no longer byte-equal to the same segment of a generation written at that offset;
//! - the property test (`property_outcome_matches_oracle`) predicts by *decoding*: header
//!   fields against the interval's offset and length, the header CRC, and per-kind rules.
//!
//! What the format cannot see, asserted as passes (the runner's generation map, which compares
//! each header's stamp with the generation it last wrote there, is what catches these):
//! - a stale block: an older generation of the same block at the same offset (valid headers);
//! - a block torn exactly on an interval boundary (verify_interval < bs): every interval is
//!   then a whole, valid interval of one generation or the other.
//!
//! Run with `cargo test --release -p fiox-verify --test corruption -- --nocapture` for the table
//! (docs/fio-observed/verify-detection.md holds a measured copy).

use fiox_verify::{sums, Failure, Kind, Layout, Pattern, Stamp, HEADER_LEN, MAGIC};
use std::fmt::Write as _;
use std::ops::Range;
use std::time::Instant;

/// Mutations per (kind, class) in the harness.
const TRIALS: usize = 1000;
/// Cases of the property test.
const CASES: usize = 6000;
/// File offset of the first block: not 0, so `%o` and header offsets are never all zeros.
const BASE: u64 = 1 << 20;
const SECTOR: usize = 512;
const HOLE_ALIGN: usize = 4096;

/// SplitMix64: deterministic, tiny, good enough to place mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        assert!(n > 0);
        (self.next() % n as u64) as usize
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())]
    }
    /// Two different indices below n (n >= 2).
    fn two(&mut self, n: usize) -> (usize, usize) {
        let a = self.below(n);
        let b = (a + 1 + self.below(n - 1)) % n;
        (a, b)
    }
}

/// How a kind detects damage, from the crate's documentation and verify.md §1.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    /// Header + a checksum that misses a change with negligible probability (<= 2^-32).
    Strong,
    /// Header + crc7 (128 values) or crc16 (65536 values): some changes collide.
    Weak,
    /// Header + fio 3.33's unfinalised sha512: only 128 data bytes are protected.
    Sha512,
    /// Header only (no pattern set here).
    Meta,
    /// Nothing.
    Null,
    /// verify=pattern (type 18): the whole interval is pattern bytes, no header.
    Pattern,
    /// Type 17: header + pattern after it.
    PatternHdr,
}

struct Variant {
    name: &'static str,
    kind: Kind,
    pattern: Option<&'static str>,
}

impl Variant {
    fn rule(&self) -> Rule {
        match self.kind {
            Kind::Crc7 | Kind::Crc16 => Rule::Weak,
            Kind::Sha512 => Rule::Sha512,
            Kind::Meta => Rule::Meta,
            Kind::Null => Rule::Null,
            Kind::Pattern => Rule::Pattern,
            Kind::PatternHdr => Rule::PatternHdr,
            _ => Rule::Strong,
        }
    }

    fn layout(&self, interval: usize, verify_offset: usize) -> Layout {
        let pattern = self.pattern.map(|t| Pattern::parse(t, &|_: &str| Ok(vec![])).expect("test pattern"));
        Layout { kind: self.kind, interval, verify_offset, pattern }
    }

    fn offset_in_pattern(&self) -> bool {
        self.pattern.is_some_and(|p| p.contains("%o"))
    }

    /// The threshold a weak kind must reach on the classes it is meant to detect.
    fn min_rate(&self) -> f64 {
        match self.kind {
            Kind::Crc7 => 0.99,
            Kind::Crc16 => 0.999,
            _ => 1.0,
        }
    }
}

/// Every kind, with verify=pattern twice (with and without `%o`) and type 17 with a pattern.
fn variants() -> Vec<Variant> {
    let mut v = Vec::new();
    for kind in Kind::ALL {
        match kind {
            Kind::Pattern => {
                v.push(Variant { name: "pattern", kind, pattern: Some("0xdeadbeef") });
                v.push(Variant { name: "pattern+%o", kind, pattern: Some("\"ab\"%o0x5a") });
            }
            Kind::PatternHdr => v.push(Variant { name: "pattern_hdr", kind, pattern: Some("\"abcd\"-120xdeadface") }),
            _ => v.push(Variant { name: kind.word(), kind, pattern: None }),
        }
    }
    v
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    FlipData,
    FlipHeader,
    FlipField,
    ZeroSector,
    ZeroBlock,
    Misdirected,
    Swap,
    Torn,
    TornAtInterval,
    Hole,
    NeverWritten,
    Stale,
}

impl Class {
    const ALL: [Class; 12] = [
        Class::FlipData,
        Class::FlipHeader,
        Class::FlipField,
        Class::ZeroSector,
        Class::ZeroBlock,
        Class::Misdirected,
        Class::Swap,
        Class::Torn,
        Class::TornAtInterval,
        Class::Hole,
        Class::NeverWritten,
        Class::Stale,
    ];

    fn name(self) -> &'static str {
        match self {
            Class::FlipData => "flip data",
            Class::FlipHeader => "flip hdr",
            Class::FlipField => "flip sum",
            Class::ZeroSector => "0 sector",
            Class::ZeroBlock => "0 block",
            Class::Misdirected => "misdirect",
            Class::Swap => "swap",
            Class::Torn => "torn",
            Class::TornAtInterval => "torn@iv",
            Class::Hole => "hole",
            Class::NeverWritten => "unwritten",
            Class::Stale => "stale",
        }
    }

    /// Whether the class means something for the variant: flips need a header or field, and
    /// older generations of a pattern block hold the same bytes (a "stale" or "torn" pattern
    /// block would differ only in unchecked header time fields, i.e. not be a mutation).
    fn applies(self, v: &Variant) -> bool {
        match self {
            Class::FlipHeader => v.kind.has_header(),
            Class::FlipField => v.kind.field_len() > 0,
            Class::Torn | Class::TornAtInterval | Class::Stale => v.pattern.is_none(),
            _ => true,
        }
    }

    /// Whether the shape can hold the mutation.
    fn fits(self, s: &Shape) -> bool {
        match self {
            Class::Misdirected | Class::Swap => s.blocks >= 2,
            Class::Torn => !tear_points(s, false).is_empty(),
            Class::TornAtInterval => !tear_points(s, true).is_empty(),
            Class::Hole => s.bs * s.blocks >= HOLE_ALIGN,
            _ => true,
        }
    }

    /// Classes the format cannot see (the runner's generation map does).
    fn format_blind(self) -> bool {
        matches!(self, Class::Stale | Class::TornAtInterval)
    }
}

#[derive(Clone, Copy, Debug)]
struct Shape {
    bs: usize,
    interval: usize,
    verify_offset: usize,
    blocks: usize,
}

/// Sector boundaries inside a block where a write can tear: inside an interval
/// (`at_interval == false`) or exactly on an interval boundary.
fn tear_points(s: &Shape, at_interval: bool) -> Vec<usize> {
    (1..s.bs / SECTOR).map(|k| k * SECTOR).filter(|t| (t % s.interval == 0) == at_interval).collect()
}

/// The harness's shapes, with the share of trials each gets: the 64 KiB shape costs 16 times
/// a 4 KiB block per check, so it gets fewer trials to keep the run short.
fn shapes_for(v: &Variant) -> Vec<(Shape, usize)> {
    let h = v.kind.header_len();
    let vo = if h == 0 {
        0
    } else if v.layout(1024, 64).validate().is_ok() {
        64
    } else {
        256
    };
    let all = [
        (Shape { bs: 4096, interval: 4096, verify_offset: 0, blocks: 4 }, 3),
        (Shape { bs: 65536, interval: 4096, verify_offset: 0, blocks: 2 }, 1),
        (Shape { bs: 512, interval: 512, verify_offset: 0, blocks: 16 }, 2),
        (Shape { bs: 4096, interval: 1024, verify_offset: vo, blocks: 4 }, 2),
    ];
    all.into_iter().filter(|(s, _)| v.layout(s.interval, s.verify_offset).validate().is_ok()).collect()
}

/// A clean image: `blocks` writes of `bs` bytes from `BASE`, each with its own stamp.
struct Image {
    layout: Layout,
    shape: Shape,
    clean: Vec<u8>,
    stamps: Vec<Stamp>,
}

impl Image {
    fn new(layout: Layout, shape: Shape, rng: &mut Rng) -> Image {
        let mut clean = vec![0u8; shape.bs * shape.blocks];
        let mut stamps = Vec::new();
        for (n, b) in clean.chunks_mut(shape.bs).enumerate() {
            let r = rng.next();
            let stamp = Stamp {
                rand_seed: rng.next(),
                time_sec: r as u32,
                time_nsec: (r >> 32) as u32 % 1_000_000_000,
                thread: 1,
                numberio: n as u16,
            };
            layout.fill(b, BASE + (n * shape.bs) as u64, &stamp);
            stamps.push(stamp);
        }
        let img = Image { layout, shape, clean, stamps };
        for n in 0..shape.blocks {
            for (i, r) in img.check_block(&img.clean, n).into_iter().enumerate() {
                assert_eq!(r, Ok(()), "clean image fails: {:?} {shape:?} block {n} interval {i}", img.layout.kind);
            }
        }
        img
    }

    fn io_offset(&self, n: usize) -> u64 {
        BASE + (n * self.shape.bs) as u64
    }

    fn block<'a>(&self, img: &'a [u8], n: usize) -> &'a [u8] {
        &img[n * self.shape.bs..(n + 1) * self.shape.bs]
    }

    /// An older generation of block n: the same offset, another seed (so other data), an
    /// earlier numberio and time.
    fn older_generation(&self, n: usize, rng: &mut Rng) -> Vec<u8> {
        let now = self.stamps[n];
        let mut seed = rng.next();
        if seed == now.rand_seed {
            seed ^= 1;
        }
        let stamp = Stamp {
            rand_seed: seed,
            time_sec: now.time_sec.wrapping_sub(1),
            numberio: now.numberio.wrapping_sub(1),
            ..now
        };
        let mut b = vec![0u8; self.shape.bs];
        self.layout.fill(&mut b, self.io_offset(n), &stamp);
        assert_ne!(b.as_slice(), self.block(&self.clean, n), "generations must differ in content");
        b
    }

    /// What the reader sees: every interval of block n of `img` checked at its io_offset.
    fn check_block(&self, img: &[u8], n: usize) -> Vec<Result<(), Failure>> {
        let mut b = self.block(img, n).to_vec();
        (0..self.layout.intervals(self.shape.bs))
            .map(|i| self.layout.check_interval(&mut b, self.io_offset(n), i).map(|_| ()))
            .collect()
    }
}

/// The interval in the order the checker reads it: header and field first (undoing the
/// verify_offset swap: on disk, the header sits at verify_offset and the data it displaced at
/// the interval's start). The swap exchanges [0, h) and [vo, vo + h), so it is its own inverse.
fn logical(kind: Kind, vo: usize, iv: &[u8]) -> Vec<u8> {
    let mut v = iv.to_vec();
    let h = kind.header_len();
    if vo != 0 && h > 0 {
        for p in 0..h {
            v.swap(p, vo + p);
        }
    }
    v
}

/// Where logical byte p of an interval lies on disk.
fn disk_pos(kind: Kind, vo: usize, p: usize) -> usize {
    let h = kind.header_len();
    if vo == 0 || h == 0 {
        p
    } else if p < h {
        vo + p
    } else if (vo..vo + h).contains(&p) {
        p - vo
    } else {
        p
    }
}

/// The data bytes fio 3.33's sha512 field protects, as data indices (crate docs, sums.rs): the
/// field is the never-finalised context buffer, i.e. the first 128 data bytes over whose start
/// the last `L % 128` were copied: data[r..128] and data[L-r..L], r = L % 128 (all of the data
/// when L < 128; zeros fill the rest of the field then).
fn sha512_protected(data_len: usize) -> Vec<Range<usize>> {
    if data_len < 128 {
        std::iter::once(0..data_len).collect()
    } else {
        let r = data_len % 128;
        vec![r..128, data_len - r..data_len]
    }
}

/// The sha512 field rebuilt from `sha512_protected` (the oracle's own, not the crate's).
fn sha512_field(data: &[u8]) -> Vec<u8> {
    let l = data.len();
    let mut f = vec![0u8; 128];
    if l < 128 {
        f[..l].copy_from_slice(data);
    } else {
        let r = l % 128;
        f[..r].copy_from_slice(&data[l - r..]);
        f[r..].copy_from_slice(&data[r..128]);
    }
    f
}

/// One planted mutation: the blocks it touched, the older generation it used (torn, stale),
/// and for a flip, the logical byte it hit in its interval.
struct Mutation {
    blocks: Vec<usize>,
    old: Option<(usize, Vec<u8>)>,
    flipped: Option<usize>,
}

/// Plants one mutation of `class` into `cur` (a copy of the clean image) at a random place.
fn plant(img: &Image, cur: &mut [u8], class: Class, rng: &mut Rng) -> Mutation {
    let s = img.shape;
    let kind = img.layout.kind;
    let h = kind.header_len();
    let vo = s.verify_offset;
    let len = cur.len();
    let mut m = Mutation { blocks: Vec::new(), old: None, flipped: None };
    let flip = |cur: &mut [u8], m: &mut Mutation, range: Range<usize>, rng: &mut Rng| {
        let n = rng.below(s.blocks);
        let i = rng.below(s.bs / s.interval);
        let p = range.start + rng.below(range.len());
        let at = n * s.bs + i * s.interval + disk_pos(kind, vo, p);
        cur[at] ^= 1 << rng.below(8);
        m.blocks.push(n);
        m.flipped = Some(p);
    };
    match class {
        Class::FlipData => flip(cur, &mut m, h..s.interval, rng),
        Class::FlipHeader => flip(cur, &mut m, 0..HEADER_LEN, rng),
        Class::FlipField => flip(cur, &mut m, HEADER_LEN..h, rng),
        Class::ZeroSector => {
            let at = rng.below(len / SECTOR) * SECTOR;
            cur[at..at + SECTOR].fill(0);
            m.blocks = (at / s.bs..=(at + SECTOR - 1) / s.bs).collect();
        }
        Class::ZeroBlock | Class::NeverWritten => {
            // On an image in memory both are a block of zeros: one was zeroed after its write
            // (e.g. a discard), the other never received one.
            let n = rng.below(s.blocks);
            cur[n * s.bs..(n + 1) * s.bs].fill(0);
            m.blocks.push(n);
        }
        Class::Misdirected => {
            let (src, dst) = rng.two(s.blocks);
            cur.copy_within(src * s.bs..(src + 1) * s.bs, dst * s.bs);
            m.blocks.push(dst);
        }
        Class::Swap => {
            let (a, b) = rng.two(s.blocks);
            let (a, b) = (a.min(b), a.max(b));
            let (x, y) = cur.split_at_mut(b * s.bs);
            x[a * s.bs..(a + 1) * s.bs].swap_with_slice(&mut y[..s.bs]);
            m.blocks = vec![a, b];
        }
        Class::Torn | Class::TornAtInterval => {
            let n = rng.below(s.blocks);
            let t = rng.pick(&tear_points(&s, class == Class::TornAtInterval));
            let old = img.older_generation(n, rng);
            // The first part or the last part of the write did not reach the medium.
            let r = if rng.below(2) == 0 { 0..t } else { t..s.bs };
            cur[n * s.bs + r.start..n * s.bs + r.end].copy_from_slice(&old[r]);
            m.blocks.push(n);
            m.old = Some((n, old));
        }
        Class::Hole => {
            let units = len / HOLE_ALIGN;
            let n = 1 + rng.below(units.min(4));
            let at = rng.below(units - n + 1) * HOLE_ALIGN;
            cur[at..at + n * HOLE_ALIGN].fill(0);
            m.blocks = (at / s.bs..=(at + n * HOLE_ALIGN - 1) / s.bs).collect();
        }
        Class::Stale => {
            let n = rng.below(s.blocks);
            let old = img.older_generation(n, rng);
            cur[n * s.bs..(n + 1) * s.bs].copy_from_slice(&old);
            m.blocks.push(n);
            m.old = Some((n, old));
        }
    }
    m
}

/// The harness's prediction for one interval (logical views): fails when a segment the kind
/// checks is no longer byte-equal to that segment of one generation written at this offset.
fn fails_by_membership(rule: Rule, kind: Kind, clean: &[u8], old: Option<&[u8]>, cur: &[u8]) -> bool {
    let h = kind.header_len();
    let same = |a: &[u8], ranges: &[Range<usize>]| ranges.iter().all(|r| cur[r.clone()] == a[r.clone()]);
    let intact = |ranges: &[Range<usize>]| same(clean, ranges) || old.is_some_and(|o| same(o, ranges));
    let header = std::slice::from_ref(&(0..HEADER_LEN));
    match rule {
        Rule::Null => false,
        Rule::Pattern => cur != clean,
        Rule::Meta => !intact(header),
        Rule::PatternHdr => !intact(header) || cur[h..] != clean[h..],
        Rule::Strong | Rule::Weak => !intact(header) || !intact(std::slice::from_ref(&(HEADER_LEN..cur.len()))),
        Rule::Sha512 => {
            // The field and the data bytes it copies.
            let covered: Vec<Range<usize>> = std::iter::once(HEADER_LEN..h)
                .chain(sha512_protected(cur.len() - h).into_iter().map(|r| r.start + h..r.end + h))
                .collect();
            !intact(header) || !intact(&covered)
        }
    }
}

/// A weak checksum's miss is acceptable only as a collision: header valid for the interval
/// and the stored field equal to the sum recomputed over the damaged data.
fn collides(kind: Kind, cur: &[u8], ivoff: u64) -> bool {
    let h = kind.header_len();
    let mut sum = vec![0u8; kind.field_len()];
    sums::compute(kind, &cur[h..], &mut sum);
    header_valid(cur, ivoff) && cur[HEADER_LEN..h] == sum[..]
}

/// The header as the format defines it (verify.md §1.2), decoded here without the crate.
fn header_valid(iv: &[u8], ivoff: u64) -> bool {
    let u16le = |i: usize| u16::from_le_bytes([iv[i], iv[i + 1]]);
    let u32le = |i: usize| u32::from_le_bytes(iv[i..i + 4].try_into().unwrap());
    let u64le = |i: usize| u64::from_le_bytes(iv[i..i + 8].try_into().unwrap());
    u16le(0) == MAGIC && u32le(4) as usize == iv.len() && u64le(16) == ivoff && sums::fio_crc32c(&iv[..36]) == u32le(36)
}

/// What a trial saw: whether anything failed and the offset of the first failing interval.
struct Seen {
    detected: bool,
    first: Option<u64>,
}

/// Checks every block and compares every interval's outcome with
/// the membership prediction. Panics with the place on any disagreement.
fn run_trial(v: &Variant, img: &Image, cur: &[u8], m: &Mutation, ctx: &dyn Fn() -> String) -> Seen {
    let s = img.shape;
    let kind = v.kind;
    let mut seen = Seen { detected: false, first: None };
    let mut first_damaged: Option<u64> = None;
    for n in 0..s.blocks {
        let got = img.check_block(cur, n);
        for (i, r) in got.into_iter().enumerate() {
            let at = i * s.interval;
            let ivoff = img.io_offset(n) + (i * s.interval) as u64;
            let view = |b: &[u8]| logical(kind, s.verify_offset, &b[at..at + s.interval]);
            let (lc, lx) = (view(img.block(&img.clean, n)), view(img.block(cur, n)));
            let lo = m.old.as_ref().filter(|(b, _)| *b == n).map(|(_, o)| view(o));
            let predicted = fails_by_membership(v.rule(), kind, &lc, lo.as_deref(), &lx);
            if predicted && first_damaged.is_none() {
                first_damaged = Some(ivoff);
            }
            match r {
                Err(f) => {
                    assert!(predicted, "{}: block {n} interval {i} failed, unexpected: {f:?}", ctx());
                    assert_eq!(
                        (f.offset, f.interval, f.len as usize),
                        (ivoff, i, s.interval),
                        "{}: failure names the wrong interval",
                        ctx()
                    );
                    seen.detected = true;
                    seen.first = Some(seen.first.map_or(ivoff, |x| x.min(ivoff)));
                }
                Ok(()) if predicted => assert!(
                    v.rule() == Rule::Weak && collides(kind, &lx, ivoff),
                    "{}: block {n} interval {i} (offset {ivoff}) damaged but passes",
                    ctx()
                ),
                Ok(()) => {}
            }
        }
    }
    // The reader's first failure names the first damaged interval (a weak checksum may let
    // a colliding one through, then a later one is named).
    if v.rule() == Rule::Weak {
        assert!(seen.first.is_none() || seen.first >= first_damaged, "{}", ctx());
    } else {
        assert_eq!(seen.first, first_damaged, "{}: first failure", ctx());
    }
    seen
}

/// The class-level rules of acceptance item 7, asserted per trial on top of the interval rule.
fn assert_class_rule(v: &Variant, class: Class, img: &Image, m: &Mutation, seen: &Seen, ctx: &dyn Fn() -> String) {
    let det = seen.detected;
    if class.format_blind() {
        assert!(!det, "{}: format-blind mutation detected", ctx());
        return;
    }
    match (v.rule(), class) {
        (Rule::Strong | Rule::PatternHdr, _) => assert!(det, "{}: missed", ctx()),
        (Rule::Null, _) => assert!(!det, "{}: null detected something", ctx()),
        // The harness's tears are sector-aligned and its headers lie inside one sector, so a
        // torn interval keeps a whole, valid header of one generation: data damage only.
        (Rule::Meta, Class::FlipData | Class::Torn) => assert!(!det, "{}: meta saw data damage", ctx()),
        // Seen only when the sector holds a header: the interval rule decides which.
        (Rule::Meta, Class::ZeroSector) => {}
        (Rule::Meta, _) => assert!(det, "{}: meta missed header damage", ctx()),
        (Rule::Pattern, Class::Misdirected | Class::Swap) => {
            assert_eq!(det, v.offset_in_pattern(), "{}: a moved pattern block is seen only with %o", ctx())
        }
        (Rule::Pattern, _) => assert!(det, "{}: pattern bytes changed unseen", ctx()),
        (Rule::Sha512, Class::FlipData) => {
            let d = m.flipped.expect("flip position") - v.kind.header_len();
            let data_len = img.shape.interval - v.kind.header_len();
            let protected = sha512_protected(data_len).iter().any(|r| r.contains(&d));
            assert_eq!(det, protected, "{}: sha512 data byte {d} of {data_len}", ctx());
        }
        // Seen when the damage reaches the header, the field or the protected bytes: the
        // interval rule decides which.
        (Rule::Sha512, Class::ZeroSector | Class::Torn) => {}
        (Rule::Sha512, _) => assert!(det, "{}: sha512 missed header damage", ctx()),
        // Single-bit errors never collide in a CRC; the other classes hit a header.
        (Rule::Weak, Class::ZeroSector | Class::Torn) => {}
        (Rule::Weak, _) => assert!(det, "{}: missed", ctx()),
    }
}

/// One cell of the table: (trials, detected, confirmed collisions), None if not applicable.
type Cell = Option<(usize, usize, usize)>;

/// Splits `total` trials over the shapes by weight, exactly.
fn split(total: usize, shapes: &[(Shape, usize)]) -> Vec<(Shape, usize)> {
    let w: usize = shapes.iter().map(|(_, w)| w).sum();
    let mut out: Vec<(Shape, usize)> = shapes.iter().map(|&(s, x)| (s, total * x / w)).collect();
    let rest = total - out.iter().map(|(_, n)| n).sum::<usize>();
    for o in out.iter_mut().take(rest) {
        o.1 += 1;
    }
    out
}

#[test]
fn planted_corruption_detection() {
    let t0 = Instant::now();
    let mut rng = Rng(0x00c0_ffee_7e57_0007);
    // Per variant: per class, (trials, detected, confirmed collisions).
    let mut table: Vec<(&'static str, Vec<Cell>)> = Vec::new();
    let vars = variants();
    let trials_per_class = trials_wanted();
    let mut low = Vec::new();
    for v in &vars {
        let shapes = shapes_for(v);
        assert!(shapes.len() >= 3, "{}: too few shapes", v.name);
        let mut row = Vec::new();
        for class in Class::ALL {
            let fits: Vec<(Shape, usize)> = shapes.iter().copied().filter(|(s, _)| class.fits(s)).collect();
            if !class.applies(v) || fits.is_empty() {
                row.push(None);
                continue;
            }
            let (mut trials, mut detected, mut collisions) = (0, 0, 0);
            // Where a weak checksum can collide, its true rate (crc7: 127/128 = 99.22 %) is close
            // to the bound (99 %): 16 times the trials keep the measured rate within about
            // three standard deviations of the truth, above the bound.
            let wanted = if v.rule() == Rule::Weak && matches!(class, Class::ZeroSector | Class::Torn) {
                16 * trials_per_class
            } else {
                trials_per_class
            };
            for (shape, n) in split(wanted, &fits) {
                let mut img = Image::new(v.layout(shape.interval, shape.verify_offset), shape, &mut rng);
                let mut cur = img.clean.clone();
                for t in 0..n {
                    if t > 0 && t % 100 == 0 {
                        // New seeds and stamps now and then, so blocks vary too.
                        img = Image::new(v.layout(shape.interval, shape.verify_offset), shape, &mut rng);
                        cur.copy_from_slice(&img.clean);
                    }
                    let m = plant(&img, &mut cur, class, &mut rng);
                    let ctx = || format!("{} {:?} {shape:?} trial {t}", v.name, class);
                    let seen = run_trial(v, &img, &cur, &m, &ctx);
                    assert_class_rule(v, class, &img, &m, &seen, &ctx);
                    trials += 1;
                    detected += usize::from(seen.detected);
                    if !seen.detected && !class.format_blind() && v.rule() == Rule::Weak {
                        collisions += 1;
                    }
                    for &b in &m.blocks {
                        let r = b * shape.bs..(b + 1) * shape.bs;
                        cur[r.clone()].copy_from_slice(&img.clean[r]);
                    }
                    debug_assert!(cur == img.clean);
                }
            }
            assert_eq!(trials, wanted);
            if v.rule() == Rule::Weak && !class.format_blind() {
                let rate = detected as f64 / trials as f64;
                if rate < v.min_rate() {
                    low.push(format!("{} {:?}: {rate} < {}", v.name, class, v.min_rate()));
                }
            }
            row.push(Some((trials, detected, collisions)));
        }
        table.push((v.name, row));
    }
    print_table(&table, t0.elapsed().as_secs_f64());
    assert!(low.is_empty(), "weak checksums below their rate: {low:?}");
}

/// `FIOX_CORRUPTION_TRIALS` raises the trials per (kind, class) (never below 1000).
fn trials_wanted() -> usize {
    std::env::var("FIOX_CORRUPTION_TRIALS").ok().and_then(|s| s.parse().ok()).unwrap_or(TRIALS).max(TRIALS)
}

fn print_table(table: &[(&str, Vec<Cell>)], secs: f64) {
    let mut out = String::new();
    out.push_str("| kind |");
    for c in Class::ALL {
        let _ = write!(out, " {} |", c.name());
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(Class::ALL.len()));
    out.push('\n');
    let mut notes = Vec::new();
    for (name, row) in table {
        let _ = write!(out, "| {name} |");
        for (c, cell) in Class::ALL.iter().zip(row) {
            match cell {
                None => out.push_str(" - |"),
                Some((t, d, coll)) => {
                    let _ = write!(out, " {d}/{t} |");
                    if *d != 0 && d != t {
                        notes.push(format!(
                            "{name} {}: {d}/{t} = {:.2} % detected{}",
                            c.name(),
                            100.0 * *d as f64 / *t as f64,
                            if *coll > 0 {
                                format!(", {coll} misses, each a confirmed checksum collision")
                            } else {
                                String::new()
                            }
                        ));
                    }
                }
            }
        }
        out.push('\n');
    }
    println!("{out}");
    for n in notes {
        println!("- {n}");
    }
    println!("\n({secs:.1} s)");
}

/// A random shape for the property test: bs from {512, 4k, 64k}, an interval dividing bs that
/// holds the header, a verify_offset that `Layout::validate` accepts, or 0.
fn random_shape(v: &Variant, rng: &mut Rng) -> Option<Shape> {
    let bs = rng.pick(&[512, 4096, 65536]);
    let intervals: Vec<usize> =
        (6..=16).map(|p| 1usize << p).filter(|&iv| iv <= bs && v.layout(iv, 0).validate().is_ok()).collect();
    if intervals.is_empty() {
        return None;
    }
    let interval = rng.pick(&intervals);
    let h = v.kind.header_len();
    let mut vo = 0;
    if h > 0 && rng.below(2) == 0 {
        let lo = h.max(HEADER_LEN);
        if lo + h <= interval {
            vo = lo + rng.below(interval - h - lo + 1);
        }
    }
    let blocks = if bs == 65536 { 2 } else { 2 + rng.below(5) };
    let s = Shape { bs, interval, verify_offset: vo, blocks };
    v.layout(interval, vo).validate().expect("shape valid");
    Some(s)
}

/// The property test's own prediction for one interval, by decoding (independent of the
/// harness's membership rule and of the crate's checker).
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Pass,
    Fail,
    /// A weak checksum: fails unless the damage collides.
    FailUnlessCollision,
}

fn oracle(rule: Rule, kind: Kind, clean: &[u8], old: Option<&[u8]>, cur: &[u8], ivoff: u64) -> Verdict {
    let h = kind.header_len();
    let ok = match rule {
        Rule::Null => true,
        // Every byte of a type 18 interval is pattern, the same in every generation.
        Rule::Pattern => cur == clean,
        Rule::Meta => header_valid(cur, ivoff),
        Rule::PatternHdr => header_valid(cur, ivoff) && cur[h..] == clean[h..],
        Rule::Sha512 => header_valid(cur, ivoff) && cur[HEADER_LEN..h] == sha512_field(&cur[h..])[..],
        // A checksum matches its data exactly when field and data were written together, by
        // one generation at this offset (up to collisions).
        Rule::Strong | Rule::Weak => {
            header_valid(cur, ivoff)
                && (cur[HEADER_LEN..] == clean[HEADER_LEN..]
                    || old.is_some_and(|o| cur[HEADER_LEN..] == o[HEADER_LEN..]))
        }
    };
    match (ok, rule) {
        (true, _) => Verdict::Pass,
        (false, Rule::Weak) => Verdict::FailUnlessCollision,
        (false, _) => Verdict::Fail,
    }
}

#[test]
fn property_outcome_matches_oracle() {
    let mut rng = Rng(0x0017_0017_0017_0017);
    let vars = variants();
    let (mut cases, mut detected, mut collisions) = (0, 0, 0);
    let mut per_class = [0usize; Class::ALL.len()];
    let mut per_variant = vec![0usize; vars.len()];
    while cases < CASES {
        let vi = rng.below(vars.len());
        let v = &vars[vi];
        let class = rng.pick(&Class::ALL);
        let Some(shape) = random_shape(v, &mut rng) else { continue };
        if !class.applies(v) || !class.fits(&shape) {
            continue;
        }
        cases += 1;
        per_class[Class::ALL.iter().position(|&c| c == class).unwrap()] += 1;
        per_variant[vi] += 1;
        let img = Image::new(v.layout(shape.interval, shape.verify_offset), shape, &mut rng);
        let mut cur = img.clean.clone();
        let m = plant(&img, &mut cur, class, &mut rng);
        let ctx = format!("case {cases}: {} {class:?} {shape:?}", v.name);
        let mut any = false;
        // Every interval of every block, as the reader would.
        for n in 0..shape.blocks {
            for (i, r) in img.check_block(&cur, n).into_iter().enumerate() {
                let ivoff = img.io_offset(n) + (i * shape.interval) as u64;
                let at = i * shape.interval;
                let view = |b: &[u8]| logical(v.kind, shape.verify_offset, &b[at..at + shape.interval]);
                let (lc, lx) = (view(img.block(&img.clean, n)), view(img.block(&cur, n)));
                let lo = m.old.as_ref().filter(|(b, _)| *b == n).map(|(_, o)| view(o));
                let want = oracle(v.rule(), v.kind, &lc, lo.as_deref(), &lx, ivoff);
                match (r, want) {
                    (Ok(()), Verdict::Pass) => {}
                    (Ok(()), Verdict::FailUnlessCollision) if collides(v.kind, &lx, ivoff) => collisions += 1,
                    (Err(f), Verdict::Fail | Verdict::FailUnlessCollision) => {
                        assert_eq!((f.offset, f.interval), (ivoff, i), "{ctx}: wrong interval named");
                        any = true;
                    }
                    (r, want) => panic!("{ctx}: block {n} interval {i}: got {r:?}, oracle says {want:?}"),
                }
            }
        }
        detected += usize::from(any);
    }
    println!("property: {cases} cases, {detected} detected, {collisions} weak-checksum collisions confirmed");
    println!("  per class: {per_class:?}; per kind: {per_variant:?}");
    // Every class and every kind is drawn often enough to mean something.
    assert!(per_class.iter().all(|&n| n >= 100), "{per_class:?}");
    assert!(per_variant.iter().all(|&n| n >= 50), "{per_variant:?}");
}
