//! Drives the fuzz targets with random and mutated inputs for `FIOX_FUZZ_SECS` seconds
//! (default 2): they must never panic.

/// Runs one target for `FIOX_FUZZ_SECS` on mutations of `seeds` with `tokens` inserted (the
/// shared fuzzer, `fiox-fuzz`).
fn run(name: &str, target: fn(&[u8]), seeds: &[Vec<u8>], tokens: &[&[u8]]) {
    let n = fiox_fuzz::run(target, seeds, tokens, fiox_fuzz::secs(), 0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
    println!("fuzz {name}: {n} inputs");
    assert!(n > 0);
}

#[test]
fn fuzz_pattern() {
    let seeds: Vec<Vec<u8>> = ["0xdeadbeef", "%o", "\"abcd\"-120xdeadface", "'f'1 2", "-2147483648"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    let tokens: &[&[u8]] = &[b"0x", b"%o", b"\"", b"'", b"-", b" ", b"0", b"9", b"ff", b"%"];
    run("pattern", fiox_verify::fuzz::pattern, &seeds, tokens);
}

#[test]
fn fuzz_check() {
    // Seeds: valid blocks of several layouts, so mutations reach the deep checks.
    let mut seeds = Vec::new();
    for (k, kind) in fiox_verify::Kind::ALL.iter().enumerate() {
        for (interval, vo, pat) in [(512u16, 0u16, 0u8), (256, 200, 3), (1024, 0, 2)] {
            let mut v = vec![k as u8];
            v.extend_from_slice(&interval.to_le_bytes());
            v.extend_from_slice(&vo.to_le_bytes());
            v.extend_from_slice(&[1, 0, 0, pat]);
            let layout = fiox_verify::Layout {
                kind: *kind,
                interval: interval.into(),
                verify_offset: vo.into(),
                pattern: match pat {
                    0 => None,
                    2 => fiox_verify::Pattern::parse("%o", &|_: &str| Ok(vec![])).ok(),
                    _ => fiox_verify::Pattern::parse("\"abcd\"-120xdeadface", &|_: &str| Ok(vec![])).ok(),
                },
            };
            let mut block = vec![0u8; 2048];
            layout.fill(&mut block, 1 << 9, &fiox_verify::Stamp::default());
            v.extend_from_slice(&block);
            seeds.push(v);
        }
    }
    let tokens: &[&[u8]] = &[&[0xca, 0xac], &[0, 2, 0, 0], &[0xff; 4], &[0; 40]];
    run("check", fiox_verify::fuzz::check, &seeds, tokens);
}

#[test]
fn fuzz_state_and_journal() {
    let st = fiox_verify::state::VerifyState {
        numberio: 9,
        depth: 2,
        nofiles: 1,
        name: "j".into(),
        comps: vec![(0, 4096), (0, 0)],
        ..Default::default()
    };
    let tokens: &[&[u8]] = &[&[0xff; 8], &[0; 8], &[3, 0, 0, 0, 0, 0, 0, 0], &[1, 0, 2, 0]];
    run("state", fiox_verify::fuzz::state, &[st.encode()], tokens);
    let h = fiox_verify::journal::JournalHeader { run_tag: 3, interval: 4096, files: vec![("a".into(), 0)] };
    let mut j = h.encode();
    for kind in [fiox_verify::journal::RecKind::Pending, fiox_verify::journal::RecKind::Done] {
        fiox_verify::journal::Rec { kind, file: 0, len: 4096, offset: 8192, stamp: 77 }.encode(&mut j);
    }
    run("journal", fiox_verify::fuzz::journal, &[j], tokens);
}
