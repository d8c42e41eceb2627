//! fio's number formatting: `num2str`-style scaling to a number of significant figures with
//! SI or IEC prefixes, the bandwidth and size pairs of the normal output (`86.7MiB/s
//! (90.9MB/s)`), the `kb_base=1000` swap, `unit_base=1` (bits), the latency unit chosen per
//! line, and C `printf`-compatible float formatting.
//!
//! Everything here was derived from fio 3.33's observed output (the tables in the tests below
//! are real fio strings), not from its source.

use crate::model::Units;

/// What [`num2str`] appends after the scale prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A bare count (IOPS, latencies): `22.2k`.
    None,
    /// A count per second: `22.2k/s`.
    PerSec,
    /// Bytes: `173MiB`.
    Byte,
    /// Bits; the number given is in bytes and is multiplied by 8: `1386Mibit`.
    Bit,
    /// Bytes per second: `86.7MiB/s`.
    BytePerSec,
    /// Bits per second; the number given is in bytes per second: `694Mibit/s`.
    BitPerSec,
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::PerSec => "/s",
            Unit::Byte => "B",
            Unit::Bit => "bit",
            Unit::BytePerSec => "B/s",
            Unit::BitPerSec => "bit/s",
        }
    }

    fn is_bits(self) -> bool {
        matches!(self, Unit::Bit | Unit::BitPerSec)
    }
}

const SI_PREFIXES: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
const IEC_PREFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// Formats `num` the way fio's `num2str` does, with at most `maxlen` significant figures.
///
/// `base` is 1024 (IEC prefixes `Ki`, `Mi`, ...) or 1000 (SI prefixes `k`, `M`, ...). The
/// number is divided by `base` while it has more than `maxlen` digits. If it was scaled, the
/// digits left over after the integer part (minus one for the dot) become decimals, taken
/// from the remainder of the *last* division only. Two fio quirks are kept on purpose:
///
/// - the number of decimals is decided before rounding, so 10235 bytes print as `10.00KiB`
///   (five significant figures) and 102350 as `100.0KiB`;
/// - without decimals the remainder rounds half up (`1023.5KiB` → `1024KiB`), but the
///   decimals round like C's `%.*f` (half to even on exact ties: `9.25MiB` → `9.2MiB`).
pub fn num2str(num: u64, maxlen: u32, base: u64, unit: Unit) -> String {
    let prefixes = if base == 1000 { &SI_PREFIXES } else { &IEC_PREFIXES };
    // u128 so that bits (x8) and 10^maxlen cannot overflow.
    let mut n = num as u128;
    if unit.is_bits() {
        n *= 8;
    }
    let base = base as u128;
    let limit = 10u128.saturating_pow(maxlen.max(1));
    let mut idx = 0;
    let mut rem = 0u128;
    while n >= limit && idx + 1 < prefixes.len() {
        rem = n % base;
        n /= base;
        idx += 1;
    }
    let suffix = unit.suffix();
    if idx == 0 {
        return format!("{n}{suffix}");
    }
    let prefix = prefixes[idx];
    let digits = decimal_digits(n);
    let decimals = maxlen as i64 - 1 - digits as i64;
    if decimals <= 0 {
        if rem * 2 >= base {
            n += 1;
        }
        return format!("{n}{prefix}{suffix}");
    }
    let frac = format!("{:.*}", decimals as usize, rem as f64 / base as f64);
    // `frac` is "0.xx" or, when the remainder rounds up, "1.00": carry into the integer part.
    let (carry, frac_digits) = match frac.split_once('.') {
        Some((int, f)) => (int.parse::<u128>().unwrap_or(0), f.to_string()),
        None => (0, frac),
    };
    format!("{}.{}{}{}", n + carry, frac_digits, prefix, suffix)
}

fn decimal_digits(mut n: u128) -> u32 {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// The two bases of a pair, primary first: IEC then SI by default, SI first with
/// `kb_base=1000`.
fn bases(units: &Units) -> (u64, u64) {
    if units.kb_base == 1000 {
        (1000, 1024)
    } else {
        (1024, 1000)
    }
}

/// A bandwidth in both bases, primary first: `("86.7MiB/s", "90.9MB/s")`. With
/// `unit_base=1` the figures are in bits (`694Mibit/s`).
pub fn bw_pair(bytes_per_sec: u64, units: &Units) -> (String, String) {
    let unit = if units.unit_base == 1 { Unit::BitPerSec } else { Unit::BytePerSec };
    let (a, b) = bases(units);
    (num2str(bytes_per_sec, units.sig_figs, a, unit), num2str(bytes_per_sec, units.sig_figs, b, unit))
}

/// A size in both bases, primary first: `("73.7MiB", "77.3MB")`. Sizes stay in bytes even
/// with `unit_base=1`, as in fio.
pub fn size_pair(bytes: u64, units: &Units) -> (String, String) {
    let (a, b) = bases(units);
    (num2str(bytes, units.sig_figs, a, Unit::Byte), num2str(bytes, units.sig_figs, b, Unit::Byte))
}

/// A size in the primary base only (`173MiB`, or `182MB` with `kb_base=1000`), as the
/// direction line and the job header print it.
pub fn size(bytes: u64, units: &Units) -> String {
    num2str(bytes, units.sig_figs, bases(units).0, Unit::Byte)
}

/// The unit a latency figure is printed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatUnit {
    Nsec,
    Usec,
    Msec,
}

impl LatUnit {
    /// The label fio prints: `nsec`, `usec` or `msec`.
    pub fn name(self) -> &'static str {
        match self {
            LatUnit::Nsec => "nsec",
            LatUnit::Usec => "usec",
            LatUnit::Msec => "msec",
        }
    }

    /// Nanoseconds per unit.
    pub fn divisor(self) -> u64 {
        match self {
            LatUnit::Nsec => 1,
            LatUnit::Usec => 1_000,
            LatUnit::Msec => 1_000_000,
        }
    }
}

/// The unit of a `slat`/`clat`/`lat` line, chosen per line from its own figures (in ns):
/// microseconds only when the minimum, the maximum and the spread are all large, so lines
/// with a small minimum stay in nanoseconds (`min=661, max=5882.5k`).
pub fn stat_lat_unit(min: u64, max: u64, stddev: f64) -> LatUnit {
    if min > 2_000_000 && max > 99_999_999 && stddev > 1_000_000.0 {
        LatUnit::Msec
    } else if min > 2_000 && max > 99_999 && stddev > 1_000.0 {
        LatUnit::Usec
    } else {
        LatUnit::Nsec
    }
}

/// The unit of a percentile block, chosen from the smallest and largest percentile value (in
/// ns), not from the latency minimum: a block whose percentiles are all large is printed in
/// usec even when the fastest I/O took nanoseconds.
pub fn percentile_unit(minv: u64, maxv: u64) -> LatUnit {
    if minv > 2_000_000 && maxv > 99_999_999 {
        LatUnit::Msec
    } else if minv > 2_000 && maxv > 99_999 {
        LatUnit::Usec
    } else {
        LatUnit::Nsec
    }
}

/// C's `%W.Pf`: right-aligned to `width`, `prec` decimals, rounding like glibc (exact decimal
/// expansion, ties to even), and `nan`/`inf` spelt as C spells them.
pub fn cfmt(x: f64, width: usize, prec: usize) -> String {
    if x.is_nan() {
        let s = if x.is_sign_negative() { "-nan" } else { "nan" };
        format!("{s:>width$}")
    } else if x.is_infinite() {
        let s = if x < 0.0 { "-inf" } else { "inf" };
        format!("{s:>width$}")
    } else {
        format!("{x:>width$.prec$}")
    }
}

/// C's `%f`: six decimals.
pub fn cf(x: f64) -> String {
    cfmt(x, 0, 6)
}

/// The C library's text for an errno (`Input/output error`; `Success` for 0), as fio prints
/// it, without Rust's `(os error N)` suffix.
pub fn strerror(errno: i32) -> String {
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(kb_base: u64, unit_base: u64, sig_figs: u32) -> Units {
        Units { kb_base, unit_base, sig_figs }
    }

    /// Byte sizes as fio 3.33 prints them in the job header (`bs=(R) ...`) with the default
    /// four significant figures, observed with `--bs=N`.
    #[test]
    fn sizes_iec_four_figures() {
        let cases: &[(u64, &str)] = &[
            (0, "0B"),
            (512, "512B"),
            (1000, "1000B"),
            (1023, "1023B"),
            (1024, "1024B"),
            (1536, "1536B"),
            (4096, "4096B"),
            (4100, "4100B"),
            (8192, "8192B"),
            (9999, "9999B"),
            (10000, "9.77KiB"),
            (10230, "9.99KiB"),
            (10234, "9.99KiB"),
            (10235, "10.00KiB"),
            (10239, "10.00KiB"),
            (10240, "10.0KiB"),
            (10241, "10.0KiB"),
            (10700, "10.4KiB"),
            (10752, "10.5KiB"),
            (16384, "16.0KiB"),
            (65536, "64.0KiB"),
            (66560, "65.0KiB"),
            (99999, "97.7KiB"),
            (102300, "99.9KiB"),
            (102350, "100.0KiB"),
            (102390, "100.0KiB"),
            (102399, "100.0KiB"),
            (102400, "100KiB"),
            (204800, "200KiB"),
            (1024000, "1000KiB"),
            (1047040, "1023KiB"),
            (1047552, "1023KiB"),
            (1048064, "1024KiB"),
            (1048575, "1024KiB"),
            (1048576, "1024KiB"),
            (3145728, "3072KiB"),
            (10240000, "9.77MiB"),
            (10484736, "10.00MiB"),
            (10485759, "10.00MiB"),
            (10485760, "10.0MiB"),
            (104857599, "100.0MiB"),
            (1073741823, "1024MiB"),
            (1073741824, "1024MiB"),
            // From the reference run: the read and write totals of the libaio job.
            (181878784, "173MiB"),
            (77320192, "73.7MiB"),
            (2248478720, "2144MiB"),
        ];
        for &(n, want) in cases {
            assert_eq!(num2str(n, 4, 1024, Unit::Byte), want, "num2str({n})");
        }
    }

    /// SI sizes as printed with `--kb_base=1000` and as the second figure of a pair.
    #[test]
    fn sizes_si_four_figures() {
        let cases: &[(u64, &str)] = &[
            (1005, "1005B"),
            (9995, "9995B"),
            (10005, "10.0kB"),
            // Ties of the decimals are C's %.1f of the remainder: 0.05 is a little above
            // 0.05 in binary and rounds up, 0.15, 0.35 and 0.95 are below and round down,
            // 0.25 is exact and rounds to even.
            (10050, "10.1kB"),
            (10150, "10.1kB"),
            (10250, "10.2kB"),
            (10350, "10.3kB"),
            (12288, "12.3kB"),
            (12345, "12.3kB"),
            (99949, "99.9kB"),
            (99950, "99.9kB"),
            (998500, "999kB"),
            (999499, "999kB"),
            (999500, "1000kB"),
            (1000000, "1000kB"),
            (1500000, "1500kB"),
            (9999500, "10000kB"),
            (15000000, "15.0MB"),
            (150000000, "150MB"),
            (1234567890, "1235MB"),
            (1048576, "1049kB"),
            (181878784, "182MB"),
            (77320192, "77.3MB"),
            (2248478720, "2248MB"),
        ];
        for &(n, want) in cases {
            assert_eq!(num2str(n, 4, 1000, Unit::Byte), want, "num2str({n})");
        }
    }

    /// Other significant-figure settings (`--significant_figures=N`).
    #[test]
    fn significant_figures() {
        let cases: &[(u64, u32, u64, Unit, &str)] = &[
            (12345, 6, 1024, Unit::Byte, "12345B"),
            (12345, 2, 1024, Unit::Byte, "12KiB"),
            (12800, 2, 1024, Unit::Byte, "13KiB"),
            (13824, 2, 1024, Unit::Byte, "14KiB"),
            (10480905, 6, 1024, Unit::Byte, "10235KiB"),
            (10480905, 6, 1000, Unit::Byte, "10481kB"),
            (10480905000, 6, 1024, Unit::BytePerSec, "9995.4MiB/s"),
            (10480905000, 6, 1000, Unit::BytePerSec, "10481MB/s"),
            (849000, 6, 1000, Unit::None, "849000"),
            (1000000, 2, 1000, Unit::None, "1M"),
            (10485760, 2, 1024, Unit::Byte, "10MiB"),
            // 9699843 bytes are 9.2505 MiB, but only the last remainder (exactly 0.25)
            // counts, and it rounds to even: fio prints 9.2.
            (9699843, 3, 1024, Unit::Byte, "9.2MiB"),
            (9702400, 3, 1024, Unit::Byte, "9.3MiB"),
            (3205500, 3, 1000, Unit::None, "3.2M"),
            (4096, 1, 1024, Unit::Byte, "4KiB"),
        ];
        for &(n, figs, base, unit, want) in cases {
            assert_eq!(num2str(n, figs, base, unit), want, "num2str({n}, {figs}, {base})");
        }
    }

    /// IOPS (`N2S_NONE`, SI) and latency minima/maxima (six figures).
    #[test]
    fn counts() {
        let cases: &[(u64, u32, &str)] = &[
            (22190, 4, "22.2k"),
            (9433, 4, "9433"),
            (274335, 4, "274k"),
            (1632000, 4, "1632k"),
            (256000, 4, "256k"),
            (11010, 4, "11.0k"),
            (15534, 4, "15.5k"),
            (16008, 4, "16.0k"),
            (5537000, 4, "5537k"),
            (1000, 4, "1000"),
            (0, 4, "0"),
            (5882538, 6, "5882.5k"),
            (5882598, 6, "5882.6k"),
            (146889123, 6, "146889k"),
            (999999, 6, "999999"),
            (138609, 6, "138609"),
        ];
        for &(n, figs, want) in cases {
            assert_eq!(num2str(n, figs, 1000, Unit::None), want, "num2str({n}, {figs})");
        }
    }

    /// Bandwidth pairs of the direction and group lines, including the `kb_base=1000` swap
    /// and `unit_base=1` (bits), as fio 3.33 printed them.
    #[test]
    fn bandwidth_pairs() {
        let def = Units::default();
        let si = units(1000, 0, 4);
        let bits = units(1024, 1, 4);
        let si_bits = units(1000, 1, 4);
        let cases: &[(u64, &Units, &str, &str)] = &[
            (90893945, &def, "86.7MiB/s", "90.9MB/s"),
            (38640775, &def, "36.9MiB/s", "38.6MB/s"),
            (1123677521, &def, "1072MiB/s", "1124MB/s"),
            (1048576000, &def, "1000MiB/s", "1049MB/s"),
            (4096000, &def, "4000KiB/s", "4096kB/s"),
            (10475524, &def, "9.99MiB/s", "10.5MB/s"),
            (948998400, &si, "949MB/s", "905MiB/s"),
            (948998400, &bits, "7240Mibit/s", "7592Mbit/s"),
            (10475524, &bits, "79.9Mibit/s", "83.8Mbit/s"),
            (1582133333, &si_bits, "12.7Gbit/s", "11.8Gibit/s"),
            (10475524, &si, "10.5MB/s", "9.99MiB/s"),
        ];
        for &(n, u, a, b) in cases {
            assert_eq!(bw_pair(n, u), (a.to_string(), b.to_string()), "bw_pair({n}, {u:?})");
        }
    }

    #[test]
    fn size_pairs() {
        let def = Units::default();
        let si = units(1000, 0, 4);
        let bits = units(1024, 1, 4);
        assert_eq!(size_pair(181878784, &def), ("173MiB".into(), "182MB".into()));
        assert_eq!(size_pair(77320192, &def), ("73.7MiB".into(), "77.3MB".into()));
        assert_eq!(size_pair(1048576, &def), ("1024KiB".into(), "1049kB".into()));
        assert_eq!(size_pair(4744192, &si), ("4744kB".into(), "4633KiB".into()));
        // Sizes stay in bytes with unit_base=1.
        assert_eq!(size_pair(4745224, &bits), ("4634KiB".into(), "4745kB".into()));
        assert_eq!(size(10485760, &si), "10.5MB");
    }

    #[test]
    fn latency_units() {
        // The reference run: libaio lines in usec, psync lines in nsec (small minimum).
        assert_eq!(stat_lat_unit(4027, 4015553, 34320.0), LatUnit::Usec);
        assert_eq!(stat_lat_unit(661, 5882538, 73600.0), LatUnit::Nsec);
        // HOWTO example: slat min=500 ns stays in nsec despite max=145.5 us.
        assert_eq!(stat_lat_unit(500, 145500, 4781.5), LatUnit::Nsec);
        // A small maximum keeps nsec.
        assert_eq!(stat_lat_unit(3947, 69009, 8874.9), LatUnit::Nsec);
        assert_eq!(stat_lat_unit(264324, 712420, 103829.4), LatUnit::Usec);
        assert_eq!(stat_lat_unit(3_000_000, 150_000_000, 2_000_000.0), LatUnit::Msec);
        assert_eq!(stat_lat_unit(3_000_000, 150_000_000, 900_000.0), LatUnit::Usec);
        assert_eq!(percentile_unit(110080, 6062080), LatUnit::Usec);
        assert_eq!(percentile_unit(764, 3948544), LatUnit::Nsec);
        assert_eq!(percentile_unit(30720, 138240), LatUnit::Usec);
        assert_eq!(percentile_unit(2_500_000, 120_000_000), LatUnit::Msec);
        assert_eq!(LatUnit::Usec.name(), "usec");
        assert_eq!(LatUnit::Msec.divisor(), 1_000_000);
    }

    #[test]
    fn c_floats() {
        assert_eq!(cf(22190.904548), "22190.904548");
        assert_eq!(cf(0.0), "0.000000");
        assert_eq!(cf(f64::NAN), "nan");
        assert_eq!(cf(f64::INFINITY), "inf");
        assert_eq!(cfmt(7.84, 5, 2), " 7.84");
        assert_eq!(cfmt(0.0, 5, 2), " 0.00");
        assert_eq!(cfmt(232.925, 5, 2), "232.93");
        assert_eq!(cfmt(100.0, 3, 1), "100.0");
        assert_eq!(cfmt(0.125, 0, 2), "0.12");
        assert_eq!(cfmt(2.5, 0, 0), "2");
    }
}
