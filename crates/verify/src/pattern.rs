//! `verify_pattern`: fio 3.33's pattern grammar, as observed with `/usr/bin/fio` (see
//! docs/fio-observed/verify-format.md), and the fill/compare of buffers with it.
//!
//! Grammar: a concatenation, without separators, of
//! - `0x`/`0X` then hex digits: bytes, most significant first; an odd count gets a leading zero
//!   nibble (`0x123` is `01 23`); leading zeros are kept (`0x0001` is two bytes);
//! - a decimal integer in the range of a 32-bit signed int, parsed like `strtol` (leading blanks
//!   and a sign allowed, so `1 2` is two ints but `0x01 0x02` is an error): little-endian, as
//!   many bytes as the value needs (`12` is one byte, `256` two, `65536` three), negative values
//!   four bytes (two's complement);
//! - `"string"`: the bytes up to the next `"` (no escapes);
//! - `'file'`: the bytes of that file, cut at the size limit;
//! - `%o`: 8 bytes, the little-endian offset of the I/O unit, pasted at each I/O.
//!
//! The result is at most 512 bytes (fio's `MAX_PATTERN_SIZE`): a longer string, hex run or
//! number is refused, a file is silently cut, as fio does. An empty result is refused (fio
//! 3.33 dies on an assertion there).

/// fio's `MAX_PATTERN_SIZE`.
pub const MAX_PATTERN: usize = 512;

/// A parsed `verify_pattern`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// The pattern bytes, `%o` slots zero.
    bytes: Vec<u8>,
    /// Where `%o` goes in `bytes`.
    offsets: Vec<usize>,
    /// `bytes` repeated to the largest multiple of its length that fits in `MAX_PATTERN`
    /// (at least once): fills and compares then work on long runs even for a 1-byte pattern.
    rep: Vec<u8>,
    /// fio 3.42's `verify_pattern_interval`: the pattern starts again every this many bytes
    /// of a block, with `%o` the offset of that point (0: once, at the block's start).
    interval: usize,
}

/// A `0x` prefix ends any number before it: fio reads `-120xdeadface` as -12 then 0xdeadface
/// and `0x010x02` as 0x01 then 0x02 (observed).
fn starts_hex(s: &[u8]) -> bool {
    s.len() >= 2 && s[0] == b'0' && (s[1] == b'x' || s[1] == b'X')
}

/// Space on the stack for one repetition run with `%o` pasted (no allocation per I/O).
pub(crate) type Run = [u8; MAX_PATTERN];

impl Pattern {
    /// Parses fio's `verify_pattern` text. `read_file` supplies the bytes of a `'file'` part.
    pub fn parse(text: &str, read_file: &dyn Fn(&str) -> std::io::Result<Vec<u8>>) -> Result<Pattern, String> {
        let err = |why: &str| format!("failed parsing verify_pattern={text}: {why}");
        let mut bytes: Vec<u8> = Vec::new();
        let mut offsets = Vec::new();
        let s = text.as_bytes();
        let mut i = 0;
        while i < s.len() {
            let room = MAX_PATTERN - bytes.len();
            let rest = &s[i..];
            if starts_hex(rest) {
                let digits =
                    (2..rest.len()).take_while(|&k| rest[k].is_ascii_hexdigit() && !starts_hex(&rest[k..])).count();
                if digits == 0 {
                    return Err(err("0x without hex digits"));
                }
                let n = digits.div_ceil(2);
                if n > room {
                    return Err(err("longer than 512 bytes"));
                }
                let hex = &rest[2..2 + digits];
                let val = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
                let mut k = 0;
                if digits % 2 == 1 {
                    bytes.push(val(hex[0]));
                    k = 1;
                }
                while k < digits {
                    bytes.push(val(hex[k]) << 4 | val(hex[k + 1]));
                    k += 2;
                }
                i += 2 + digits;
            } else if rest[0] == b'"' || rest[0] == b'\'' {
                let q = rest[0];
                let Some(end) = rest[1..].iter().position(|&c| c == q) else {
                    return Err(err("unterminated quote"));
                };
                let inner = &text[i + 1..i + 1 + end];
                if q == b'"' {
                    if inner.len() > room {
                        return Err(err("longer than 512 bytes"));
                    }
                    bytes.extend_from_slice(inner.as_bytes());
                } else {
                    let data = read_file(inner).map_err(|e| err(&format!("{inner}: {e}")))?;
                    if !data.is_empty() && room == 0 {
                        return Err(err("longer than 512 bytes"));
                    }
                    bytes.extend_from_slice(&data[..data.len().min(room)]);
                }
                i += end + 2;
            } else if rest[0] == b'%' {
                if rest.get(1) != Some(&b'o') {
                    return Err(err("unknown % format (only %o)"));
                }
                if room < 8 {
                    return Err(err("longer than 512 bytes"));
                }
                offsets.push(bytes.len());
                bytes.extend_from_slice(&[0; 8]);
                i += 2;
            } else {
                // strtol: blanks, a sign, decimal digits.
                let mut j = 0;
                while j < rest.len() && matches!(rest[j], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
                    j += 1;
                }
                let neg = rest.get(j) == Some(&b'-');
                if matches!(rest.get(j), Some(b'-' | b'+')) {
                    j += 1;
                }
                let d0 = j;
                let mut v: i64 = 0;
                while j < rest.len() && rest[j].is_ascii_digit() && !starts_hex(&rest[j..]) {
                    v = v.saturating_mul(10).saturating_add(i64::from(rest[j] - b'0'));
                    j += 1;
                }
                if j == d0 {
                    return Err(err("expected 0x.., a number, \"string\", 'file' or %o"));
                }
                if neg {
                    v = -v;
                }
                if v < i64::from(i32::MIN) || v > i64::from(i32::MAX) {
                    return Err(err("number out of the 32-bit range"));
                }
                let u = v as i32 as u32;
                let n = (4 - (u.leading_zeros() / 8) as usize).max(1);
                if n > room {
                    return Err(err("longer than 512 bytes"));
                }
                bytes.extend_from_slice(&u.to_le_bytes()[..n]);
                i += j;
            }
        }
        if bytes.is_empty() {
            return Err(err("empty pattern"));
        }
        let times = (MAX_PATTERN / bytes.len()).max(1);
        let rep = bytes.repeat(times);
        Ok(Pattern { bytes, offsets, rep, interval: 0 })
    }

    /// The same pattern started again every `interval` bytes of a block (0: only at its start).
    pub fn with_interval(mut self, interval: u64) -> Pattern {
        self.interval = usize::try_from(interval).unwrap_or(usize::MAX);
        self
    }

    /// `verify_pattern_interval` (0: none).
    pub fn interval(&self) -> u64 {
        self.interval as u64
    }

    /// The pattern bytes (`%o` slots as zeros).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether the pattern holds `%o` (its bytes then depend on the I/O offset).
    pub fn has_offset(&self) -> bool {
        !self.offsets.is_empty()
    }

    /// One repetition run (a whole number of patterns) with `%o` = `io_offset`.
    pub(crate) fn run<'a>(&self, io_offset: u64, out: &'a mut Run) -> &'a [u8] {
        let run = &mut out[..self.rep.len()];
        run.copy_from_slice(&self.rep);
        let plen = self.bytes.len();
        let le = io_offset.to_le_bytes();
        for base in (0..run.len()).step_by(plen) {
            for &o in &self.offsets {
                run[base + o..base + o + 8].copy_from_slice(&le);
            }
        }
        run
    }

    /// Fills `buf` with the pattern from its start, `%o` being `io_offset`; under an interval,
    /// each interval's piece from the pattern's start, `%o` being the piece's offset.
    pub fn fill(&self, buf: &mut [u8], io_offset: u64) {
        if self.interval == 0 {
            return self.fill_from(buf, io_offset);
        }
        for (k, piece) in buf.chunks_mut(self.interval).enumerate() {
            self.fill_from(piece, io_offset.wrapping_add((k * self.interval) as u64));
        }
    }

    fn fill_from(&self, buf: &mut [u8], io_offset: u64) {
        let mut tmp = [0; MAX_PATTERN];
        let run = self.run(io_offset, &mut tmp);
        for chunk in buf.chunks_mut(run.len()) {
            chunk.copy_from_slice(&run[..chunk.len()]);
        }
    }

    /// Compares `data`, which starts at byte `phase` of the block, with the pattern as
    /// [`Pattern::fill`] lays it. Returns the first differing index and the wanted byte.
    pub(crate) fn compare(&self, data: &[u8], io_offset: u64, phase: usize) -> Option<(usize, u8)> {
        if self.interval == 0 {
            return self.compare_from(data, io_offset, phase);
        }
        let mut pos = 0;
        while pos < data.len() {
            let at = phase.wrapping_add(pos);
            let (k, within) = (at / self.interval, at % self.interval);
            let n = (self.interval - within).min(data.len() - pos);
            let piece_offset = io_offset.wrapping_add((k * self.interval) as u64);
            if let Some((i, want)) = self.compare_from(&data[pos..pos + n], piece_offset, within) {
                return Some((pos + i, want));
            }
            pos += n;
        }
        None
    }

    fn compare_from(&self, data: &[u8], io_offset: u64, phase: usize) -> Option<(usize, u8)> {
        let mut tmp = [0; MAX_PATTERN];
        let run = self.run(io_offset, &mut tmp);
        let start = phase % self.bytes.len();
        let mut pos = 0;
        let mut cur = start;
        while pos < data.len() {
            let n = (run.len() - cur).min(data.len() - pos);
            let want = &run[cur..cur + n];
            let got = &data[pos..pos + n];
            if got != want {
                let k = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
                return Some((pos + k, want[k]));
            }
            pos += n;
            cur = 0;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(t: &str) -> Result<Vec<u8>, String> {
        Pattern::parse(t, &|name: &str| {
            if name == "pf" {
                Ok(b"XYZ".to_vec())
            } else if name == "big" {
                Ok(vec![7; 600])
            } else {
                Err(std::io::Error::from(std::io::ErrorKind::NotFound))
            }
        })
        .map(|p| p.bytes().to_vec())
    }

    #[test]
    fn grammar_as_fio_3_33() {
        // Each case was run through fio 3.33 with verify=pattern (docs/fio-observed).
        assert_eq!(p("0xdeadbeef").unwrap(), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(p("0x123").unwrap(), [0x01, 0x23]);
        assert_eq!(p("0x12345").unwrap(), [0x01, 0x23, 0x45]);
        assert_eq!(p("0XAB").unwrap(), [0xab]);
        assert_eq!(p("0x0").unwrap(), [0]);
        assert_eq!(p("0x00000000000000000001").unwrap().len(), 10);
        assert_eq!(p("\"abcd\"-120xdeadface").unwrap(), b"abcd\xf4\xff\xff\xff\xde\xad\xfa\xce");
        assert_eq!(p("12").unwrap(), [12]);
        assert_eq!(p("255").unwrap(), [255]);
        assert_eq!(p("256").unwrap(), [0, 1]);
        assert_eq!(p("65536").unwrap(), [0, 0, 1]);
        assert_eq!(p("16777216").unwrap(), [0, 0, 0, 1]);
        assert_eq!(p("2147483647").unwrap(), [0xff, 0xff, 0xff, 0x7f]);
        assert_eq!(p("-1\"z\"").unwrap(), b"\xff\xff\xff\xffz");
        assert_eq!(p("100x01").unwrap(), [10, 1]);
        assert_eq!(p("00x01").unwrap(), [0, 1]);
        assert_eq!(p("0x010x02").unwrap(), [1, 2]);
        assert_eq!(p("\"a\"00x01").unwrap(), b"a\0\x01");
        assert_eq!(p("-2147483648").unwrap(), [0, 0, 0, 0x80]);
        assert_eq!(p("-0\"z\"").unwrap(), b"\0z");
        assert_eq!(p("010").unwrap(), [10]);
        assert_eq!(p("+5").unwrap(), [5]);
        assert_eq!(p("1 2").unwrap(), [1, 2]);
        assert_eq!(p("1  2").unwrap(), [1, 2]);
        assert_eq!(p("0x01 2").unwrap(), [1, 2]);
        assert_eq!(p("%o 1").unwrap(), [0, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(p("\"a\"%o\"b\"").unwrap(), b"a\0\0\0\0\0\0\0\0b");
        assert_eq!(p("'pf'%o").unwrap().len(), 11);
        assert_eq!(p("'pf''pf'").unwrap(), b"XYZXYZ");
        assert_eq!(p("'big'").unwrap().len(), 512);
        assert_eq!(p(&format!("\"{}\"", "a".repeat(512))).unwrap().len(), 512);
        for bad in [
            "4294967296",
            "2147483648",
            "-2147483649",
            "99999999999999999999",
            "abc",
            "0x",
            "\"unterminated",
            "\"a\" \"b\"",
            "\"a\",0x01",
            "0x01 0x02",
            "0x01, 2",
            "0xab cd",
            " 0x01",
            "1,2",
            "1 %o",
            "%O",
            "%",
            "-",
            "\"",
            "'",
            "0xg",
            "0x0x01",
            "1x",
            "10x",
            "-0x01",
            "\"a\\\"b\"",
            "'nofile'",
            "'big'0x01",
            "",
            "\"\"",
        ] {
            assert!(p(bad).is_err(), "{bad:?} parsed");
        }
        assert!(p(&format!("\"{}\"", "a".repeat(513))).is_err());
        assert!(p(&format!("0x{}", "ab".repeat(513))).is_err());
    }

    #[test]
    fn an_interval_starts_the_pattern_again_with_its_offset() {
        // As fio 3.42 wrote it: verify_pattern="ab"%o verify_pattern_interval=3000, bs=16k,
        // the second block (offset 16384) restarts at its byte 3000 with %o = 19384.
        let pat = Pattern::parse("\"ab\"%o", &|_: &str| Ok(vec![])).unwrap().with_interval(3000);
        let mut buf = vec![0u8; 16384];
        pat.fill(&mut buf, 16384);
        assert_eq!(&buf[..10], b"ab\x00\x40\0\0\0\0\0\0");
        // 3000 = 300 whole patterns: the piece before it ends on a whole pattern.
        assert_eq!(&buf[3000..3010], &[b'a', b'b', 0xb8, 0x4b, 0, 0, 0, 0, 0, 0]);
        assert_eq!(pat.compare(&buf[100..], 16384, 100), None);
        let mut bad = buf.clone();
        bad[3002] ^= 1;
        assert_eq!(pat.compare(&bad[2000..], 16384, 2000), Some((1002, 0xb8)));
    }

    #[test]
    fn fill_and_compare() {
        let pat = Pattern::parse("\"ab\"%o", &|_: &str| Ok(vec![])).unwrap();
        let mut buf = [0u8; 25];
        pat.fill(&mut buf, 0x0102);
        assert_eq!(&buf[..12], b"ab\x02\x01\0\0\0\0\0\0ab");
        assert_eq!(pat.compare(&buf[3..], 0x0102, 3), None);
        assert_eq!(pat.compare(&buf[3..], 0x0103, 3), Some((9, 3)));
        buf[20] ^= 1;
        assert_eq!(pat.compare(&buf[3..], 0x0102, 3), Some((17, buf[20] ^ 1)));
    }
}
