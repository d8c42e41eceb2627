//! Axes: linear or logarithmic scales, where the ticks go and how they read.
//!
//! Charts are drawn in a transformed space (log10 of the value on a log axis), so every scale
//! is a plain linear range for the drawing library, and the ticks are placed here: at "nice"
//! values (1, 2, 5 × 10^k), at powers of two for sizes, or at the caller's own values.

/// How values are spaced along an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Equal ratios take equal lengths; only values above zero can be shown.
    Log,
}

/// How tick labels are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Three significant figures with k, M, G (powers of 1000): IOPS, latencies, rates.
    Number,
    /// Sizes as fio writes them (powers of 1024): 512, 4k, 64k, 1m, 2g.
    Bytes,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The axis title, with its unit: "bandwidth (MiB/s)".
    pub label: String,
    pub scale: Scale,
    pub unit: Unit,
    /// Ticks at these values with these labels (a sweep's values, category names); automatic
    /// ticks otherwise.
    pub ticks: Option<Vec<(f64, String)>>,
    /// A linear axis starts at zero when every value is positive (throughput reads better so).
    pub from_zero: bool,
}

impl Axis {
    pub fn new(label: impl Into<String>, scale: Scale, unit: Unit) -> Axis {
        Axis { label: label.into(), scale, unit, ticks: None, from_zero: true }
    }

    /// Categories at x = 0, 1, 2, ...
    pub fn categories(label: impl Into<String>, names: &[String]) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            unit: Unit::Number,
            ticks: Some(names.iter().enumerate().map(|(i, n)| (i as f64, n.clone())).collect()),
            from_zero: false,
        }
    }

    pub fn with_ticks(mut self, ticks: Vec<(f64, String)>) -> Axis {
        self.ticks = Some(ticks);
        self
    }

    /// The drawing coordinate of a value.
    pub fn tx(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log => v.max(f64::MIN_POSITIVE).log10(),
        }
    }

    /// The value at a drawing coordinate.
    pub fn untx(&self, t: f64) -> f64 {
        match self.scale {
            Scale::Linear => t,
            Scale::Log => 10f64.powf(t),
        }
    }

    pub fn format(&self, v: f64) -> String {
        match self.unit {
            Unit::Number => number(v),
            Unit::Bytes => bytes(v),
        }
    }

    /// The drawn range (in drawing coordinates) holding every value, with a margin.
    pub fn range(&self, values: &[f64]) -> (f64, f64) {
        let vals: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && (self.scale == Scale::Linear || *v > 0.0))
            .chain(self.ticks.iter().flatten().map(|t| t.0))
            .collect();
        if vals.is_empty() {
            return match self.scale {
                Scale::Linear => (0.0, 1.0),
                Scale::Log => (0.0, 1.0),
            };
        }
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        match self.scale {
            Scale::Linear => {
                let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
                let categorical = self.ticks.is_some() && !self.from_zero;
                let pad = if categorical { 0.5 } else { span * 0.06 };
                let lo = if self.from_zero && lo >= 0.0 { 0.0 } else { lo - pad };
                let hi = if categorical { hi + 0.5 } else { hi + pad };
                (lo, if hi > lo { hi } else { lo + 1.0 })
            }
            Scale::Log => {
                let (a, b) = (lo.log10(), hi.log10());
                let pad = ((b - a) * 0.06).max(0.08);
                (a - pad, b + pad)
            }
        }
    }

    /// Tick positions (drawing coordinates) and labels within the drawn range.
    pub fn ticks_in(&self, (lo, hi): (f64, f64)) -> Vec<(f64, String)> {
        if let Some(t) = &self.ticks {
            let mut t: Vec<(f64, String)> = t.iter().map(|(v, s)| (self.tx(*v), s.clone())).collect();
            // Too many labels overlap: keep an evenly spaced subset, always the ends.
            if t.len() > 14 {
                let step = t.len().div_ceil(12);
                let last = t.len() - 1;
                t = t.into_iter().enumerate().filter(|(i, _)| i % step == 0 || *i == last).map(|(_, x)| x).collect();
            }
            return t;
        }
        let values = match (self.scale, self.unit) {
            (Scale::Linear, _) => linear_ticks(lo, hi),
            (Scale::Log, Unit::Bytes) => pow2_ticks(self.untx(lo), self.untx(hi)),
            (Scale::Log, Unit::Number) => log_ticks(self.untx(lo), self.untx(hi)),
        };
        values.into_iter().map(|v| (self.tx(v), self.format(v))).filter(|(t, _)| *t >= lo && *t <= hi).collect()
    }
}

/// About six ticks at multiples of 1, 2 or 5 × 10^k.
pub fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = hi - lo;
    if span <= 0.0 || !span.is_finite() {
        return vec![lo];
    }
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| span / s <= 7.0).unwrap_or(10.0 * mag);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi + step * 1e-9 && out.len() < 50 {
        // Avoid "-0" and float dust such as 0.30000000000000004.
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { (v / step).round() * step });
        v += step;
    }
    out
}

/// 1, 2, 5 × 10^k within the range; only powers of ten when that would be too many.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let pick = |mults: &[f64]| -> Vec<f64> {
        (a..=b)
            .flat_map(|e| mults.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|v| *v >= lo * 0.999 && *v <= hi * 1.001)
            .collect()
    };
    let mut t = pick(&[1.0, 2.0, 5.0]);
    if t.len() > 10 {
        t = pick(&[1.0]);
    }
    if t.len() < 2 {
        t = pick(&[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]);
    }
    if t.len() < 2 {
        t = linear_ticks(lo, hi).into_iter().filter(|v| *v > 0.0).collect();
    }
    t
}

/// Powers of two within the range, every second or fourth one when there are many.
pub fn pow2_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log2().ceil() as i32, hi.log2().floor() as i32);
    if b < a {
        return log_ticks(lo, hi);
    }
    let n = (b - a + 1) as usize;
    let step = n.div_ceil(10).max(1) as i32;
    (a..=b).filter(|e| (e - a) % step == 0).map(|e| 2f64.powi(e)).collect()
}

/// Three significant figures with k, M, G, T: `950`, `1.2k`, `64.5k`, `2.05M`, `0.25`.
pub fn number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { v.to_string() };
    }
    let a = v.abs();
    let (div, suffix) = if a >= 1e12 {
        (1e12, "T")
    } else if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    format!("{}{suffix}", sig3(v / div))
}

/// A size as fio writes it: `512`, `4k`, `1.5m`, `2g` (powers of 1024).
pub fn bytes(v: f64) -> String {
    let units = ["", "k", "m", "g", "t", "p"];
    let mut x = v;
    let mut i = 0;
    while x.abs() >= 1024.0 && i + 1 < units.len() {
        x /= 1024.0;
        i += 1;
    }
    format!("{}{}", sig3(x), units[i])
}

/// Up to three significant figures, without trailing zeros.
pub fn sig3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { v.to_string() };
    }
    let a = v.abs();
    let digits = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        // 0.0123 → 3 significant figures.
        (2 - a.log10().floor() as i32).clamp(0, 9) as usize
    };
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(number(950.0), "950");
        assert_eq!(number(1234.0), "1.23k");
        assert_eq!(number(8000.0), "8k");
        assert_eq!(number(64_500.0), "64.5k");
        assert_eq!(number(2_050_000.0), "2.05M");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(0.0123), "0.0123");
        assert_eq!(sig3(0.0), "0");
        assert_eq!(sig3(-0.5), "-0.5");
        assert_eq!(bytes(512.0), "512");
        assert_eq!(bytes(4096.0), "4k");
        assert_eq!(bytes(1536.0 * 1024.0), "1.5m");
        assert_eq!(bytes(64.0 * 1024.0 * 1024.0), "64m");
    }

    #[test]
    fn ticks() {
        assert_eq!(linear_ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(log_ticks(1.0, 1000.0), vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]);
        assert_eq!(log_ticks(1.0, 1e6), vec![1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]);
        assert_eq!(pow2_ticks(1024.0, 65536.0), vec![1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0]);
        assert_eq!(pow2_ticks(1024.0, 64.0 * 1024.0 * 1024.0).len(), 9);
    }

    #[test]
    fn log_axis_range_and_ticks() {
        let a = Axis::new("bs", Scale::Log, Unit::Bytes);
        let r = a.range(&[1024.0, 65536.0]);
        assert!(r.0 < 3.0103 && r.1 > 4.8165);
        let t = a.ticks_in(r);
        assert_eq!(t.first().unwrap().1, "1k");
        assert_eq!(t.last().unwrap().1, "64k");
    }
}
