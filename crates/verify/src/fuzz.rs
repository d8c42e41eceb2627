//! Fuzz targets: each must return without panicking on any input.

use crate::{Kind, Layout, Pattern};

/// Parses `data` (lossily as UTF-8) as a verify_pattern; `'file'` parts read as the file name's
/// own bytes. Also fills and compares with the result.
pub fn pattern(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(p) = Pattern::parse(&text, &|name: &str| Ok(name.as_bytes().to_vec())) {
        assert!(!p.bytes().is_empty() && p.bytes().len() <= crate::MAX_PATTERN);
        let mut buf = vec![0u8; data.len() % 700 + 1];
        p.fill(&mut buf, data.len() as u64);
        assert_eq!(p.compare(&buf, data.len() as u64, 0), None);
    }
}

/// Takes kind, interval, verify_offset, io offset and block index from the first 8 bytes, a
/// pattern choice from the 9th, then checks every interval of the rest (plus one past the end).
pub fn check(data: &[u8]) {
    if data.len() < 9 {
        return;
    }
    let kind = Kind::ALL[data[0] as usize % Kind::ALL.len()];
    let interval = usize::from(u16::from_le_bytes([data[1], data[2]])) % 1200;
    let verify_offset = usize::from(u16::from_le_bytes([data[3], data[4]])) % 1200;
    let io_offset = u64::from(u32::from_le_bytes([data[5], data[6], data[7], 0])) << 9;
    let pattern = match data[8] % 4 {
        0 => None,
        1 => Pattern::parse("0xdeadbeef", &|_: &str| Ok(vec![])).ok(),
        2 => Pattern::parse("%o", &|_: &str| Ok(vec![])).ok(),
        _ => Pattern::parse("\"abcd\"-120xdeadface", &|_: &str| Ok(vec![])).ok(),
    };
    let layout = Layout { kind, interval, verify_offset, pattern };
    let _ = layout.validate();
    let mut buf = data[9..].to_vec();
    let n = layout.intervals(buf.len());
    for i in 0..=n {
        let _ = layout.check_interval(&mut buf, io_offset, i);
    }
    let _ = layout.check_interval(&mut buf, io_offset, usize::MAX);
    // A fill then a check of the same layout must pass whenever the layout is valid.
    if layout.validate().is_ok() && n > 0 {
        let stamp = crate::Stamp { rand_seed: u64::from(data[0]), ..Default::default() };
        layout.fill(&mut buf, io_offset, &stamp);
        for i in 0..n {
            if let Err(f) = layout.check_interval(&mut buf, io_offset, i) {
                panic!("fill then check failed: {f:?}");
            }
        }
    }
}

/// Loads `data` as a verify state file; a file that loads must encode to the same record.
pub fn state(data: &[u8]) {
    if let Ok(s) = crate::state::VerifyState::decode(data) {
        let again = crate::state::VerifyState::decode(&s.encode()).expect("an encoded state loads");
        assert_eq!(again, s);
        let _ = s.covers(u64::from(data.len() as u32), 0, 0);
    }
}

/// Loads `data` as a verify journal.
pub fn journal(data: &[u8]) {
    if let Ok((h, recs)) = crate::journal::decode(data) {
        assert!(recs.len() <= data.len() / crate::journal::RECORD_LEN);
        assert!(h.files.len() <= data.len());
    }
}
