//! Fuzz targets for everything a peer's bytes reach before they are trusted (frames, message
//! decoding, the handshake's magic search and fio sniffing), and a small mutation fuzzer that
//! drives them for a bounded time as an ordinary test, like the other crates' fuzz modules.
//!
//! Properties: no input panics, and what a decoded message allocates is bounded by the frame
//! cap and [`crate::msg::MAX_HISTOGRAMS`], never by numbers the input claims.

use crate::{frame, handshake, msg};

/// Bytes as a stream of frames, each decoded as a message.
pub fn frames(data: &[u8]) {
    let mut r = data;
    while let Ok(Some(p)) = frame::read_frame(&mut r) {
        let _ = msg::decode(&p);
    }
}

/// Bytes as one message payload.
pub fn message(data: &[u8]) {
    if let Ok(m) = msg::decode(data) {
        // Whatever decodes encodes again and decodes to the same text.
        let again = msg::encode(&m);
        let back = msg::decode(&again).expect("an encoded message decodes");
        assert_eq!(msg::encode(&back), again);
    }
}

/// Bytes as what a peer sends first: sniffed as a TCP server would, searched for the magic
/// as a coordinator does through a shell, then read as the server's side of the handshake.
pub fn handshake(data: &[u8]) {
    let _ = handshake::sniff(data);
    let _ = handshake::fio::parse_header(data);
    let mut r = data;
    if handshake::expect_magic(&mut r, 4096).is_ok() {
        let mut out = Vec::new();
        let _ = handshake::server_hello(&mut r, &mut out);
    }
    let mut r = data;
    let mut out = Vec::new();
    let _ = handshake::coordinator(&mut r, &mut out, 0, "fuzz", "fuzz");
}

const DICT: &[&str] = &[
    "{\"type\":\"final\",\"report\":",
    "{\"type\":\"interval\",\"k\":1,\"host_mono_ns\":2,\"report\":",
    "\"clat_hist\":[[1855,1]]",
    "[[1856,1]]",
    "[[0,18446744073709551615],[1,1]]",
    "\"sum\":\"340282366920938463463374607431768211455\"",
    "\"jobs\":[",
    "null",
    "[]",
    "{}",
    "1e400",
    "-1",
    "\"\\u0000\"",
    "\x7fFIOXmh\x01",
];

/// Runs `target` on mutations of `seeds` with this crate's dictionary (the shared fuzzer,
/// `fiox-fuzz`) for `secs` seconds (at least a few hundred inputs).
pub fn drive(target: fn(&[u8]), seeds: &[Vec<u8>], secs: f64) -> usize {
    let dict: Vec<&[u8]> = DICT.iter().map(|t| t.as_bytes()).collect();
    fiox_fuzz::run(target, seeds, &dict, secs, 0x9e37_79b9_7f4a_7c15) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::Msg;
    use fiox_report::{JobReport, RunReport};
    use fiox_stats::{DirStat, ThreadStat};

    fn seeds() -> Vec<Vec<u8>> {
        let mut ts = ThreadStat { jobs: 1, ..ThreadStat::default() };
        ts.dirs[0] = DirStat::active();
        ts.dirs[0].clat.add(1234);
        ts.dirs[0].clat_hist.as_mut().unwrap().add(1234);
        let report =
            RunReport { jobs: vec![JobReport { name: "j".into(), ts, ..Default::default() }], ..Default::default() };
        [
            Msg::Final { report: Box::new(report) },
            Msg::Heartbeat { seq: 1, mono_ns: 2 },
            Msg::Hello {
                proto_min: 1,
                proto_max: 1,
                fiox_version: "x".into(),
                features: vec![],
                run_id: "r".into(),
                coordinator: "c".into(),
            },
            Msg::Prepare(Box::default()),
            // The first frame a coordinator's --join listener reads, from anyone who connects.
            Msg::Join { rank: Some(7), rank_from: "SLURM_PROCID".into() },
        ]
        .iter()
        .map(msg::encode)
        .collect()
    }

    #[test]
    fn fuzz_messages() {
        let n = drive(message, &seeds(), fiox_fuzz::secs());
        assert!(n >= 300);
    }

    #[test]
    fn fuzz_frames_and_handshake() {
        let framed: Vec<Vec<u8>> = seeds()
            .iter()
            .map(|p| {
                let mut v = handshake::MAGIC.to_vec();
                frame::write_frame(&mut v, p).unwrap();
                v
            })
            .chain(std::iter::once(handshake::fio::command(97, 10, &[0; 40])))
            .collect();
        drive(frames, &framed, fiox_fuzz::secs() / 2.0);
        drive(handshake, &framed, fiox_fuzz::secs() / 2.0);
    }

    /// Many empty histograms in one message are refused once over the budget, rather than
    /// allocated (each would cost 15 KiB for 2 bytes of text).
    #[test]
    fn histogram_allocation_is_bounded() {
        let many = vec![
                "{\"ioprio\":0,\"lat\":{\"min\":0,\"max\":0,\"samples\":0,\"sum\":\"0\",\"sumsq\":\"0\"},\"hist\":[]}";
                msg::MAX_HISTOGRAMS + 1
            ]
        .join(",");
        let ts = serde_json::to_value(ThreadStat::default()).unwrap().to_string();
        let ts = ts.replacen("\"prios\":[]", &format!("\"prios\":[{many}]"), 1);
        let text = format!("{{\"type\":\"final\",\"report\":{{\"jobs\":[{{\"ts\":{ts}}}]}}}}");
        assert!(text.len() < crate::frame::MAX_FRAME);
        let e = msg::decode(text.as_bytes()).unwrap_err();
        assert!(e.contains("too many histograms"), "{e}");
    }
}
