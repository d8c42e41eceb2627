//! fiox's laboratory: `sweep` (run a job over axes of option values, with repeats, resume and
//! knee finding), `plot` (charts from existing fio/fiox reports and logs) and `compare`
//! (results side by side, with ratios and significance). They share one reader of fio's JSON
//! ([`results`]), one table builder ([`summary`]), the chart choices ([`charts`], drawn by
//! `fiox-charts`) and the page (`serve::html`, shared with the live page).
//!
//! Architecture Invariant: nothing here does benchmark I/O itself; a sweep's points are runs of
//! the fiox binary, and everything else reads reports.

pub mod axis;
pub mod base;
pub mod charts;
pub mod cli;
pub mod compare;
pub mod knee;
pub mod logs;
pub mod outputs;
pub mod plot;
pub mod points;
pub mod quick;
pub mod repeat;
pub mod results;
pub mod runner;
pub mod summary;
pub mod sweep;

/// What the lab reads comes from users' files and command lines: none of its parsers may panic,
/// whatever the input (mutations of valid inputs, for `FIOX_FUZZ_SECS` seconds each).
#[cfg(test)]
mod fuzz_tests {
    use std::path::Path;

    fn secs() -> f64 {
        std::env::var("FIOX_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0)
    }

    fn corpus(items: &[&str]) -> Vec<Vec<u8>> {
        items.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn fuzz_knee_target() {
        fn target(data: &[u8]) {
            let _ = super::knee::Target::parse(&String::from_utf8_lossy(data));
        }
        let c = corpus(&["p99<=2ms", "mean<=500us", "p99.9<=1s", "p50<=100"]);
        assert!(fiox_options::fuzz::run(target, &c, secs(), 0x4ee) > 0);
    }

    #[test]
    fn fuzz_log_reader() {
        fn target(data: &[u8]) {
            let text = String::from_utf8_lossy(data);
            for kind in [super::logs::LogKind::Bw, super::logs::LogKind::Clat] {
                let _ = super::logs::parse(&text, kind, "t", Path::new("t_bw.1.log"));
            }
        }
        let c = corpus(&["500, 42120, 0, 0, 0\n1000, 41000, 1, 4096, 0\n", "1, 313054, 0, 4096, 503808, 0\n"]);
        assert!(fiox_options::fuzz::run(target, &c, secs(), 0x109) > 0);
    }

    #[test]
    fn fuzz_report_reader() {
        fn target(data: &[u8]) {
            let _ = super::results::parse(&String::from_utf8_lossy(data), Path::new("r.json"));
        }
        let reference = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/fio-3.33-example.json"),
        )
        .unwrap_or_default();
        let mut c = corpus(&[r#"{"jobs":[{"jobname":"t","read":{"iops":1.0}}]}"#, "{}", "[]"]);
        if !reference.is_empty() {
            c.push(reference.into_bytes());
        }
        assert!(fiox_options::fuzz::run(target, &c, secs(), 0x3e5) > 0);
    }
}
