//! Throughput of fill and check per kind (ignored by default: timing on a shared machine says
//! little; run with `cargo test --release -p fiox-verify --test speed -- --ignored --nocapture`).

use fiox_verify::{Kind, Layout, Stamp};
use std::time::Instant;

#[test]
#[ignore]
fn speed() {
    let mut buf = vec![0u8; 65536];
    for kind in Kind::ALL {
        let layout = Layout { kind, interval: 4096, verify_offset: 0, pattern: None };
        let n = 2000;
        let t = Instant::now();
        for i in 0..n {
            layout.fill(&mut buf, i * 65536, &Stamp { rand_seed: i, ..Default::default() });
        }
        let fill = t.elapsed();
        let t = Instant::now();
        for i in 0..n {
            layout.fill(&mut buf, 0, &Stamp { rand_seed: i, ..Default::default() });
            for iv in 0..16 {
                layout.check_interval(&mut buf, 0, iv).unwrap();
            }
        }
        let both = t.elapsed();
        let mb = (n * 65536) as f64 / 1e6;
        println!(
            "{:>12}: fill {:>6.0} MB/s, fill+check {:>6.0} MB/s",
            kind.word(),
            mb / fill.as_secs_f64(),
            mb / both.as_secs_f64()
        );
    }
}
