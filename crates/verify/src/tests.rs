//! Detection unit tests: planted damage gives the right `What` at the right interval.

use super::*;

fn pat(t: &str) -> Option<Pattern> {
    Some(Pattern::parse(t, &|_: &str| Ok(vec![])).unwrap())
}

fn layout(kind: Kind, interval: usize, verify_offset: usize) -> Layout {
    Layout { kind, interval, verify_offset, pattern: None }
}

/// Fills `blocks` blocks of `bs` from offset `base`, each with its own stamp.
fn file(l: &Layout, bs: usize, blocks: usize, base: u64) -> Vec<u8> {
    let mut f = vec![0u8; bs * blocks];
    for (n, b) in f.chunks_mut(bs).enumerate() {
        let stamp = Stamp { rand_seed: 1000 + n as u64, numberio: n as u16, thread: 1, ..Default::default() };
        l.fill(b, base + (n * bs) as u64, &stamp);
    }
    f
}

/// The first failure over the whole file, checked block by block.
fn first_failure(l: &Layout, f: &[u8], bs: usize, base: u64) -> Option<Failure> {
    for (n, b) in f.chunks(bs).enumerate() {
        let mut b = b.to_vec();
        for i in 0..l.intervals(bs) {
            if let Err(e) = l.check_interval(&mut b, base + (n * bs) as u64, i) {
                return Some(e);
            }
        }
    }
    None
}

/// The kinds with a checksum field (all but meta, the patterns and null).
fn checksums() -> impl Iterator<Item = Kind> {
    Kind::ALL.into_iter().filter(|k| k.field_len() > 0)
}

#[test]
fn kinds_round_trip() {
    for k in Kind::ALL {
        assert_eq!(Kind::parse(k.word()), Some(k));
        assert!(k.name().len() <= 8);
        if k != Kind::Crc32cIntel {
            assert_eq!(Kind::from_code(k.code()), Some(k));
        }
    }
    assert_eq!(Kind::from_code(5), Some(Kind::Crc32c));
    assert_eq!(Kind::from_code(0), None);
    assert_eq!(Kind::from_code(6), None);
    assert_eq!(Kind::parse("none"), None);
    assert_eq!(Kind::Sha512.header_len(), 168);
    assert_eq!(Kind::Pattern.header_len(), 0);
}

#[test]
fn header_encode_decode() {
    let h = Header {
        magic: MAGIC,
        verify_type: 2,
        len: 4096,
        rand_seed: 5,
        offset: 8192,
        time_sec: 1,
        time_nsec: 2,
        thread: 3,
        numberio: 4,
        crc32: 0,
    };
    let mut b = [0u8; 40];
    h.encode(&mut b);
    assert_eq!(&b[..2], &[0xca, 0xac]);
    assert!(Header::crc_ok(&b));
    let d = Header::decode(&b).unwrap();
    assert_eq!(d, Header { crc32: d.crc32, ..h });
    assert_eq!(Header::decode(&b[..39]), None);
    assert!(!Header::crc_ok(&b[..39]));
}

#[test]
fn fill_then_check_every_kind() {
    for kind in Kind::ALL {
        for (bs, interval, vo) in [(4096, 4096, 0), (4096, 512, 0), (4096, 512, 256), (65536, 65536, 1000)] {
            let mut l = layout(kind, interval, vo);
            if matches!(kind, Kind::Pattern | Kind::PatternHdr) {
                l.pattern = pat("\"ab\"%o-3");
            }
            if l.validate().is_err() {
                continue;
            }
            let f = file(&l, bs, 3, 8192);
            assert_eq!(first_failure(&l, &f, bs, 8192), None, "{kind:?} {interval} {vo}");
        }
    }
}

#[test]
fn data_flip_is_caught_by_every_checksum() {
    for kind in checksums() {
        let l = layout(kind, 512, 0);
        let mut f = file(&l, 4096, 2, 0);
        // Interval 3 of block 1; the last byte is inside even sha512's copied tail.
        f[4096 + 3 * 512 + 511] ^= 0x20;
        let e = first_failure(&l, &f, 4096, 0).unwrap();
        assert_eq!((e.interval, e.offset, e.len), (3, 4096 + 1536, 512), "{kind:?}");
        let What::Checksum { expected, received } = e.what else { panic!("{kind:?}: {e:?}") };
        assert_eq!(expected.len(), kind.field_len());
        assert_ne!(expected, received);
    }
}

#[test]
fn field_flip_is_caught() {
    for kind in checksums() {
        let l = layout(kind, 4096, 0);
        let mut f = file(&l, 4096, 1, 0);
        f[HEADER_LEN] ^= 1;
        let e = first_failure(&l, &f, 4096, 0).unwrap();
        assert!(matches!(e.what, What::Checksum { .. }), "{kind:?}: {e:?}");
    }
}

#[test]
fn header_damage() {
    let l = layout(Kind::Crc32c, 512, 64);
    let base = 1 << 20;
    let clean = file(&l, 4096, 2, base);
    let at = |iv: usize, byte: usize| 4096 + iv * 512 + 64 + byte; // header sits at verify_offset
    let cases: [(usize, What); 4] = [
        (at(2, 0), What::BadMagic(0xacca ^ 1)),
        (at(2, 4), What::BadLength { found: 512 ^ 1, wanted: 512 }),
        (at(2, 16), What::BadOffset { found: (base + 4096 + 1024) ^ 1, wanted: base + 4096 + 1024 }),
        (at(2, 36), What::BadCrc { found: 0, calculated: 0 }),
    ];
    for (pos, want) in cases {
        let mut f = clean.clone();
        f[pos] ^= 1;
        let e = first_failure(&l, &f, 4096, base).unwrap();
        assert_eq!((e.interval, e.offset), (2, base + 4096 + 1024));
        match (e.what, want) {
            (What::BadCrc { found, calculated }, What::BadCrc { .. }) => assert_eq!(found ^ 1, calculated),
            (got, want) => assert_eq!(got, want),
        }
    }
    // Fields the checks leave alone (seed, time, thread, numberio) still break the header crc.
    for byte in [8, 24, 28, 32, 34] {
        let mut f = clean.clone();
        f[at(0, byte)] ^= 0x40;
        assert!(matches!(first_failure(&l, &f, 4096, base).unwrap().what, What::BadCrc { .. }));
    }
}

#[test]
fn zeroed_sector_and_misplaced_block() {
    for kind in checksums().chain([Kind::Meta, Kind::PatternHdr]) {
        let mut l = layout(kind, 4096, 0);
        if kind == Kind::PatternHdr {
            l.pattern = pat("0xdeadbeef");
        }
        let clean = file(&l, 4096, 4, 0);
        let mut f = clean.clone();
        f[8192..8704].fill(0);
        let e = first_failure(&l, &f, 4096, 0).unwrap();
        assert_eq!((e.offset, e.what), (8192, What::BadMagic(0)), "{kind:?}");
        let mut f = clean.clone();
        f.copy_within(4096..8192, 12288);
        let e = first_failure(&l, &f, 4096, 0).unwrap();
        assert_eq!((e.offset, e.what), (12288, What::BadOffset { found: 4096, wanted: 12288 }), "{kind:?}");
    }
}

#[test]
fn patterns_catch_damage() {
    // Type 18 without header: a flip gives the byte, wanted byte and position.
    let mut l = layout(Kind::Pattern, 1024, 0);
    l.pattern = pat("0xdeadbeef");
    let mut f = file(&l, 4096, 1, 0);
    f[2048 + 5] ^= 0x11;
    let e = first_failure(&l, &f, 4096, 0).unwrap();
    assert_eq!((e.interval, e.offset), (2, 2048));
    assert_eq!(e.what, What::Pattern { got: 0xad ^ 0x11, wanted: 0xad, bad_bits: 2, at: 5 });
    // A pattern without %o cannot tell a block from its copy; with %o it can.
    f = file(&l, 4096, 2, 0);
    f.copy_within(0..4096, 4096);
    assert_eq!(first_failure(&l, &f, 4096, 0), None);
    l.pattern = pat("%o");
    f = file(&l, 4096, 2, 0);
    f.copy_within(0..4096, 4096);
    let e = first_failure(&l, &f, 4096, 0).unwrap();
    assert_eq!(e.what, What::Pattern { got: 0, wanted: 0x10, bad_bits: 1, at: 1 });
    // Type 17 and meta check the pattern after the header.
    for kind in [Kind::PatternHdr, Kind::Meta] {
        let mut l = layout(kind, 512, 0);
        l.pattern = pat("\"abcd\"-120xdeadface");
        let mut f = file(&l, 4096, 1, 0);
        f[512 + 100] ^= 0x01;
        let e = first_failure(&l, &f, 4096, 0).unwrap();
        assert!(matches!(e.what, What::Pattern { at: 100, bad_bits: 1, .. }), "{e:?}");
    }
}

#[test]
fn limits() {
    // meta without pattern and null see no data damage; sha512 sees only its copied bytes.
    for kind in [Kind::Meta, Kind::Null, Kind::Sha512] {
        let l = layout(kind, 4096, 0);
        let mut f = file(&l, 4096, 1, 0);
        f[2000] ^= 1;
        assert_eq!(first_failure(&l, &f, 4096, 0), None, "{kind:?}");
    }
    // crc7 has 128 values: some single-byte changes collide (here the search finds one fast).
    let l = layout(Kind::Crc7, 4096, 0);
    let f = file(&l, 4096, 1, 0);
    let collides = (1..=255u8).any(|x| {
        (41..300).any(|p| {
            let mut g = f.clone();
            g[p] ^= x;
            g[p + 1] ^= x.rotate_left(3);
            first_failure(&l, &g, 4096, 0).is_none()
        })
    });
    assert!(collides);
}

#[test]
fn type_mismatch() {
    let w = layout(Kind::Crc32c, 4096, 0);
    let f = file(&w, 4096, 1, 0);
    let r = layout(Kind::Md5, 4096, 0);
    let e = first_failure(&r, &f, 4096, 0).unwrap();
    assert_eq!(e.what, What::TypeMismatch { media: 5, given: 2 });
    // crc32c-intel reads crc32c blocks (both stored as 5); meta reads anything with a header.
    assert_eq!(first_failure(&layout(Kind::Crc32cIntel, 4096, 0), &f, 4096, 0), None);
    assert_eq!(first_failure(&layout(Kind::Meta, 4096, 0), &f, 4096, 0), None);
}

#[test]
fn too_small_and_out_of_range() {
    let l = layout(Kind::Sha256, 104, 0);
    assert!(l.validate().is_err());
    let mut b = vec![0u8; 1024];
    assert_eq!(l.check_interval(&mut b, 0, 0).unwrap_err().what, What::TooSmall);
    let l = layout(Kind::Md5, 512, 0);
    assert_eq!(l.check_interval(&mut b, 0, 2).unwrap_err().what, What::TooSmall);
    assert_eq!(l.check_interval(&mut b, 0, usize::MAX).unwrap_err().what, What::TooSmall);
    assert!(layout(Kind::Md5, 512, 32).validate().is_err());
    assert!(layout(Kind::Md5, 512, 500).validate().is_err());
    assert!(layout(Kind::Sha256, 512, 64).validate().is_err());
    assert!(layout(Kind::Md5, 0, 0).validate().is_err());
    layout(Kind::Md5, 512, 456).validate().unwrap();
}

#[test]
fn messages() {
    let f = Failure { interval: 0, offset: 20480, len: 4096, what: What::BadMagic(0) };
    assert_eq!(
        f.fio_message(Kind::Md5, "f1", 20480, 4096, 8),
        "verify: bad magic header 0, wanted acca at file f1 offset 20480, length 4096 (requested block: offset=20480, length=4096)\n"
    );
    let f = Failure {
        interval: 0,
        offset: 0,
        len: 4096,
        what: What::Checksum { expected: vec![0xab, 1], received: vec![0, 0xff] },
    };
    assert_eq!(
        f.fio_message(Kind::Crc16, "x", 0, 4096, 0x88),
        "crc16: verify failed at file x offset 0, length 4096 (requested block: offset=0, length=4096, flags=88)\n       Expected CRC: ab01\n       Received CRC: 00ff\n"
    );
}

#[test]
fn random_fill_differs_per_seed() {
    let mut a = [0u8; 37];
    let mut b = [0u8; 37];
    fill_random(&mut a, 1);
    fill_random(&mut b, 2);
    assert_ne!(a, b);
    let mut c = [0u8; 37];
    fill_random(&mut c, 1);
    assert_eq!(a, c);
}

#[test]
fn sha512_protects_exactly_its_128_copied_bytes() {
    // 4 KiB interval: data length L = 4096 - 168 = 3928, r = L % 128 = 88. The field holds
    // data[L-r..L] then data[r..128]; data[0..r] was overwritten in the field, so it is not
    // protected although it lies in the "first 128" bytes.
    let l = layout(Kind::Sha512, 4096, 0);
    let clean = file(&l, 4096, 1, 0);
    let data = Kind::Sha512.header_len();
    for (d, caught) in
        [(0, false), (87, false), (88, true), (127, true), (128, false), (3839, false), (3840, true), (3927, true)]
    {
        let mut f = clean.clone();
        f[data + d] ^= 0x80;
        assert_eq!(first_failure(&l, &f, 4096, 0).is_some(), caught, "data byte {d}");
    }
}
