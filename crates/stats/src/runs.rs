//! The statistics of repeated runs: mean, a 95% confidence interval of the mean (Student's t),
//! and Welch's t-test for whether two sets of runs differ.

/// Two-sided 95% critical values of Student's t (the 0.975 quantile) for 1 to 30 degrees of
/// freedom, then 40, 60, 120 and infinity.
const T975: [(f64, f64); 34] = [
    (1.0, 12.706),
    (2.0, 4.303),
    (3.0, 3.182),
    (4.0, 2.776),
    (5.0, 2.571),
    (6.0, 2.447),
    (7.0, 2.365),
    (8.0, 2.306),
    (9.0, 2.262),
    (10.0, 2.228),
    (11.0, 2.201),
    (12.0, 2.179),
    (13.0, 2.160),
    (14.0, 2.145),
    (15.0, 2.131),
    (16.0, 2.120),
    (17.0, 2.110),
    (18.0, 2.101),
    (19.0, 2.093),
    (20.0, 2.086),
    (21.0, 2.080),
    (22.0, 2.074),
    (23.0, 2.069),
    (24.0, 2.064),
    (25.0, 2.060),
    (26.0, 2.056),
    (27.0, 2.052),
    (28.0, 2.048),
    (29.0, 2.045),
    (30.0, 2.042),
    (40.0, 2.021),
    (60.0, 2.000),
    (120.0, 1.980),
    (f64::INFINITY, 1.960),
];

/// t(0.975, df), interpolated in 1/df between the table's rows (Welch's df is fractional).
pub fn t975(df: f64) -> f64 {
    if df.is_nan() || df < 1.0 {
        return T975[0].1;
    }
    for w in T975.windows(2) {
        let ((d0, t0), (d1, t1)) = (w[0], w[1]);
        if df <= d1 {
            if df == d0 {
                return t0;
            }
            let (a, b, x) = (1.0 / d0, if d1.is_infinite() { 0.0 } else { 1.0 / d1 }, 1.0 / df);
            return t0 + (t1 - t0) * (a - x) / (a - b);
        }
    }
    1.960
}

pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance (n − 1 in the denominator).
pub fn variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Half-width of the 95% confidence interval of the mean: t(0.975, n−1)·s/√n; `None` for fewer
/// than two runs.
pub fn ci95(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let n = xs.len() as f64;
    Some(t975(n - 1.0) * variance(xs).sqrt() / n.sqrt())
}

/// Welch's unequal-variance t-test of two sets of runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    pub t: f64,
    pub df: f64,
    /// The means differ at the 95% level (two-sided).
    pub significant: bool,
}

/// `None` unless both sides have at least two runs.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (variance(a) / na, variance(b) / nb);
    let diff = mean(b) - mean(a);
    let se2 = va + vb;
    if se2 == 0.0 {
        // No spread on either side: any difference at all is certain.
        return Some(Welch {
            t: if diff == 0.0 { 0.0 } else { f64::INFINITY },
            df: na + nb - 2.0,
            significant: diff != 0.0,
        });
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    Some(Welch { t, df, significant: t.abs() > t975(df) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_table() {
        assert_eq!(t975(1.0), 12.706);
        assert_eq!(t975(30.0), 2.042);
        assert!((t975(1e9) - 1.96).abs() < 1e-3);
        // Between rows: monotone and between the neighbours.
        let t = t975(2.5);
        assert!(t < 4.303 && t > 3.182, "{t}");
        let t = t975(50.0);
        assert!(t < 2.021 && t > 2.000, "{t}");
    }

    #[test]
    fn confidence_interval() {
        // mean 10, s = 1.5811 (values 8..12), n = 5: 2.776 · 1.5811 / √5 = 1.963.
        let ci = ci95(&[8.0, 9.0, 10.0, 11.0, 12.0]).unwrap();
        assert!((ci - 1.9630).abs() < 1e-3, "{ci}");
        assert_eq!(ci95(&[5.0]), None);
    }

    #[test]
    fn welch_test() {
        // Clearly apart.
        let w = welch(&[100.0, 101.0, 99.0, 100.5], &[120.0, 119.0, 121.0, 120.5]).unwrap();
        assert!(w.significant && w.t > 20.0, "{w:?}");
        // Overlapping noise.
        let w = welch(&[100.0, 110.0, 90.0], &[102.0, 95.0, 108.0]).unwrap();
        assert!(!w.significant, "{w:?}");
        // A textbook case: equal variances, df = n1 + n2 − 2 = 8.
        let w = welch(&[1.0, 2.0, 3.0, 4.0, 5.0], &[3.0, 4.0, 5.0, 6.0, 7.0]).unwrap();
        assert!((w.df - 8.0).abs() < 1e-9 && (w.t - 2.0).abs() < 1e-9 && !w.significant, "{w:?}");
        assert_eq!(welch(&[1.0], &[2.0, 3.0]), None);
    }
}
