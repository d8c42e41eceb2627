//! The first bytes of a session: each side sends [`MAGIC`], then the coordinator a `Hello` and
//! the server a `Welcome` or a `Reject`. The protocol version is negotiated from both sides'
//! ranges; a mismatch names both (fio 3.33 used to quit without saying why, axboe/fio #620).
//!
//! On transports through a shell (ssh, `--rsh`) the server's output may start with a login
//! banner, so the coordinator skips up to [`NOISE_LIMIT`] bytes before the magic. On a TCP
//! port, a fio client's first 24 bytes (its PROBE command) are recognised and answered in fio's
//! own framing, with a TEXT saying what this is, then QUIT, so `fio --client` prints a clear
//! line instead of hanging or crashing.

use std::io::{self, Read, Write};

use crate::msg::{self, Msg};

/// Sent first by both sides; chosen to appear in no shell banner and to differ from fio's
/// header (whose first two bytes are its protocol version, 97 for fio 3.33).
pub const MAGIC: &[u8; 8] = b"\x7fFIOXmh\x01";

/// Protocol versions this build speaks.
pub const PROTO_MIN: u32 = 1;
pub const PROTO_MAX: u32 = 1;

/// How much output a remote shell may print before the magic.
pub const NOISE_LIMIT: usize = 64 << 10;

/// The versions this process speaks: [`PROTO_MIN`]..=[`PROTO_MAX`], or what the test hook
/// `FIOX_TEST_PROTO` says (`N` or `A..B`), so tests can play a server of another version.
pub fn proto_range() -> (u32, u32) {
    let Ok(v) = std::env::var("FIOX_TEST_PROTO") else { return (PROTO_MIN, PROTO_MAX) };
    let parse = |s: &str| s.trim().parse::<u32>().ok();
    match v.split_once("..") {
        Some((a, b)) => match (parse(a), parse(b)) {
            (Some(a), Some(b)) if a <= b => (a, b),
            _ => (PROTO_MIN, PROTO_MAX),
        },
        None => parse(&v).map_or((PROTO_MIN, PROTO_MAX), |n| (n, n)),
    }
}

/// The highest version both ranges hold, or a message naming both sides.
pub fn negotiate(
    ours: (u32, u32),
    theirs: (u32, u32),
    our_version: &str,
    their_version: &str,
    we_are: &str,
) -> Result<u32, String> {
    let lo = ours.0.max(theirs.0);
    let hi = ours.1.min(theirs.1);
    if lo <= hi {
        return Ok(hi);
    }
    let they = if we_are == "server" { "coordinator" } else { "server" };
    Err(format!(
        "protocol mismatch: {we_are} speaks {}..={} (fiox {our_version}), {they} speaks {}..={} (fiox {their_version}); run the same fiox release on both",
        ours.0, ours.1, theirs.0, theirs.1
    ))
}

/// Writes the magic and a first message.
pub fn send_first(w: &mut dyn Write, m: &Msg) -> io::Result<()> {
    w.write_all(MAGIC)?;
    msg::send(w, m)
}

/// What the first bytes of a TCP connection show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniff {
    /// Not enough bytes yet to tell.
    NeedMore,
    Fiox,
    /// A fio client's command header (its protocol version).
    Fio {
        version: u16,
    },
    /// A TLS ClientHello.
    Tls,
    Other,
}

/// Classifies a connection from the bytes it sent first (peeked, not consumed).
pub fn sniff(first: &[u8]) -> Sniff {
    if first.len() >= 2 && first[0] == 0x16 && first[1] == 0x03 {
        return Sniff::Tls;
    }
    let n = first.len().min(MAGIC.len());
    if first[..n] == MAGIC[..n] {
        return if n == MAGIC.len() { Sniff::Fiox } else { Sniff::NeedMore };
    }
    if first.len() < fio::HEADER {
        return Sniff::NeedMore;
    }
    match fio::parse_header(first) {
        Some(h) => Sniff::Fio { version: h.version },
        None => Sniff::Other,
    }
}

/// Reads until the magic, skipping at most `noise_limit` bytes of other output (0 on sockets,
/// [`NOISE_LIMIT`] through a shell). The error says what came instead: nothing (peer closed),
/// a fio server's frames, or the first line of the noise.
pub fn expect_magic(r: &mut dyn Read, noise_limit: usize) -> io::Result<()> {
    let mut seen: Vec<u8> = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        if seen.len() >= MAGIC.len() && seen[seen.len() - MAGIC.len()..] == MAGIC[..] {
            return Ok(());
        }
        if seen.len() > noise_limit + MAGIC.len() {
            return Err(io::Error::new(io::ErrorKind::InvalidData, not_fiox(&seen)));
        }
        match r.read(&mut byte) {
            Ok(0) => {
                let why = if seen.is_empty() {
                    "the peer closed the connection before the handshake (a fio server, another service, or a fiox server that refused this transport?)".to_string()
                } else {
                    not_fiox(&seen)
                };
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, why));
            }
            Ok(_) => seen.push(byte[0]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        // On a socket (no noise allowed) a wrong first byte is enough to tell.
        if noise_limit == 0 && seen.len() <= MAGIC.len() && seen[..] != MAGIC[..seen.len()] {
            // Read a fio header's worth, if there is one, to name it.
            let mut rest = vec![0u8; fio::HEADER.saturating_sub(seen.len())];
            if r.read_exact(&mut rest).is_ok() {
                seen.extend_from_slice(&rest);
            }
            return Err(io::Error::new(io::ErrorKind::InvalidData, not_fiox(&seen)));
        }
    }
}

fn not_fiox(seen: &[u8]) -> String {
    if let Some(h) = fio::parse_header(seen) {
        return format!(
            "this is a fio server (fio protocol version {}), not a fiox server; fiox does not speak fio's unauthenticated protocol",
            h.version
        );
    }
    let text = String::from_utf8_lossy(&seen[..seen.len().min(80)]);
    let line = text.lines().next().unwrap_or("").trim();
    format!("no fiox server answered ({} bytes of other output, starting '{}')", seen.len(), line.escape_default())
}

/// fio 3.33's command framing, just enough to recognise a fio client or server and to tell a fio
/// client in its own terms that this is not a fio server. Layout (fio's server.h, documented in
/// the design notes): a 24-byte little-endian header `u16 version, u16 opcode, u32 flags,
/// u64 tag, u32 pdu_len, u16 cmd_crc16, u16 pdu_crc16`, the CRCs CRC-16/ARC over header bytes
/// 0..20 and over the payload.
pub mod fio {
    /// Header length.
    pub const HEADER: usize = 24;
    pub const OP_QUIT: u16 = 1;
    pub const OP_TEXT: u16 = 5;
    pub const OP_PROBE: u16 = 10;
    pub const OP_STOP: u16 = 12;
    /// fio's log level for errors in TEXT payloads.
    const LOG_ERR: u32 = 2;
    /// The largest opcode fio 3.33 knows.
    const OP_MAX: u16 = 22;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Header {
        pub version: u16,
        pub opcode: u16,
        pub pdu_len: u32,
    }

    /// CRC-16/ARC: polynomial 0x8005 reflected, initial value 0, no final XOR.
    pub fn crc16(data: &[u8]) -> u16 {
        let mut crc = 0u16;
        for &b in data {
            crc ^= b as u16;
            for _ in 0..8 {
                crc = if crc & 1 != 0 { (crc >> 1) ^ 0xA001 } else { crc >> 1 };
            }
        }
        crc
    }

    /// A fio command header, if `b` starts with one (a known opcode and a header CRC that
    /// checks out).
    pub fn parse_header(b: &[u8]) -> Option<Header> {
        let h = b.get(..HEADER)?;
        let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
        let version = u16_at(0);
        let opcode = u16_at(2);
        let pdu_len = u32::from_le_bytes([h[16], h[17], h[18], h[19]]);
        ((1..=OP_MAX).contains(&opcode) && crc16(&h[..20]) == u16_at(20)).then_some(Header { version, opcode, pdu_len })
    }

    /// One fio command: header and payload.
    pub fn command(version: u16, opcode: u16, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER + payload.len());
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&opcode.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        let crc = crc16(&out[..20]);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&crc16(payload).to_le_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// What a fiox server answers a fio client, in the client's own protocol version so that
    /// any fio release shows it: a TEXT line (`u32 level, u32 len, u64 sec, u64 usec, text`),
    /// then QUIT.
    pub fn refusal(version: u16, text: &str) -> Vec<u8> {
        let mut body = Vec::new();
        let line = format!("{text}\n");
        body.extend_from_slice(&LOG_ERR.to_le_bytes());
        body.extend_from_slice(&(line.len() as u32 + 1).to_le_bytes());
        body.extend_from_slice(&0u64.to_le_bytes());
        body.extend_from_slice(&0u64.to_le_bytes());
        body.extend_from_slice(line.as_bytes());
        body.push(0);
        let mut out = command(version, OP_TEXT, &body);
        // STOP with an error (EPROTO) makes the fio client exit non-zero, then QUIT ends it.
        let mut stop = 71u32.to_le_bytes().to_vec();
        stop.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&command(version, OP_STOP, &stop));
        out.extend_from_slice(&command(version, OP_QUIT, &[]));
        out
    }
}

/// The coordinator's side: magic and Hello out, magic and Welcome in. Returns the Welcome's
/// version and host facts; a Reject or a version mismatch is an error naming the reason.
pub fn coordinator(
    r: &mut dyn Read,
    w: &mut dyn Write,
    noise_limit: usize,
    run_id: &str,
    coordinator: &str,
) -> io::Result<(u32, String, msg::HostFacts)> {
    let (lo, hi) = proto_range();
    let ours = env!("CARGO_PKG_VERSION");
    send_first(
        w,
        &Msg::Hello {
            proto_min: lo,
            proto_max: hi,
            fiox_version: ours.into(),
            features: Vec::new(),
            run_id: run_id.into(),
            coordinator: coordinator.into(),
        },
    )?;
    expect_magic(r, noise_limit)?;
    let bad = |s: String| io::Error::new(io::ErrorKind::InvalidData, s);
    match msg::recv(r)? {
        Some(Msg::Welcome { proto, fiox_version, host, .. }) => {
            // The server chose; it must lie in our range (a confused peer otherwise).
            if proto < lo || proto > hi {
                return Err(bad(format!("server chose protocol {proto}, outside this coordinator's {lo}..={hi}")));
            }
            Ok((proto, fiox_version, host))
        }
        Some(Msg::Reject { reason, .. }) => Err(io::Error::new(io::ErrorKind::ConnectionRefused, reason)),
        Some(other) => Err(bad(format!("expected welcome, got {}", other.name()))),
        None => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "server closed the connection during the handshake")),
    }
}

/// The server's side after the magic: reads the Hello and either agrees on a version or
/// sends a Reject naming both ranges. `Ok((proto, hello))` leaves the Welcome (or a busy
/// Reject) to the caller.
pub fn server_hello(r: &mut dyn Read, w: &mut dyn Write) -> io::Result<(u32, Msg)> {
    let (lo, hi) = proto_range();
    let ours = env!("CARGO_PKG_VERSION");
    let hello = msg::recv(r)?
        .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "coordinator closed before its hello"))?;
    let Msg::Hello { proto_min, proto_max, ref fiox_version, .. } = hello else {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("expected hello, got {}", hello.name())));
    };
    match negotiate((lo, hi), (proto_min, proto_max), ours, fiox_version, "server") {
        Ok(p) => Ok((p, hello)),
        Err(reason) => {
            let _ = send_first(
                w,
                &Msg::Reject { reason: reason.clone(), proto_min: lo, proto_max: hi, fiox_version: ours.into() },
            );
            Err(io::Error::new(io::ErrorKind::InvalidData, reason))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_arc_check_value() {
        assert_eq!(fio::crc16(b"123456789"), 0xBB3D);
    }

    #[test]
    fn negotiation_names_both_sides() {
        assert_eq!(negotiate((1, 3), (2, 5), "a", "b", "server"), Ok(3));
        let e = negotiate((2, 2), (1, 1), "0.2", "0.1", "server").unwrap_err();
        assert!(
            e.contains("server speaks 2..=2 (fiox 0.2)") && e.contains("coordinator speaks 1..=1 (fiox 0.1)"),
            "{e}"
        );
    }

    #[test]
    fn sniffing() {
        assert_eq!(sniff(b"\x7fFIO"), Sniff::NeedMore);
        assert_eq!(sniff(MAGIC), Sniff::Fiox);
        assert_eq!(sniff(&[0x16, 0x03, 0x01]), Sniff::Tls);
        let probe = fio::command(97, fio::OP_PROBE, &[0; 136]);
        assert_eq!(sniff(&probe[..24]), Sniff::Fio { version: 97 });
        assert_eq!(sniff(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"), Sniff::Other);
        let refusal = fio::refusal(97, "no");
        let h = fio::parse_header(&refusal).unwrap();
        assert_eq!((h.version, h.opcode), (97, fio::OP_TEXT));
        let stop = &refusal[24 + h.pdu_len as usize..];
        assert_eq!(fio::parse_header(stop).unwrap().opcode, fio::OP_STOP);
        assert_eq!(fio::parse_header(&stop[32..]).unwrap().opcode, fio::OP_QUIT);
    }

    #[test]
    fn noise_before_the_magic() {
        let mut stream = b"Welcome to host1\nLast login: never\n".to_vec();
        stream.extend_from_slice(MAGIC);
        stream.extend_from_slice(b"rest");
        let mut r: &[u8] = &stream;
        expect_magic(&mut r, NOISE_LIMIT).unwrap();
        assert_eq!(r, b"rest");
        let mut r: &[u8] = b"hello";
        assert!(expect_magic(&mut r, 0).unwrap_err().to_string().contains("no fiox server answered"));
        let fio_frame = fio::command(97, fio::OP_TEXT, b"x");
        let mut r: &[u8] = &fio_frame;
        assert!(expect_magic(&mut r, 0).unwrap_err().to_string().contains("fio server (fio protocol version 97)"));
        let noise = vec![b'x'; NOISE_LIMIT + 100];
        let mut r: &[u8] = &noise;
        assert!(expect_magic(&mut r, NOISE_LIMIT).is_err());
        let mut r: &[u8] = b"";
        assert!(expect_magic(&mut r, 0).unwrap_err().to_string().contains("closed"));
    }

    #[test]
    fn handshake_over_a_pipe() {
        let mut to_server = Vec::new();
        let mut to_coord = Vec::new();
        send_first(
            &mut to_coord,
            &Msg::Welcome { proto: 1, fiox_version: "x".into(), host: Default::default(), features: vec![] },
        )
        .unwrap();
        let mut r: &[u8] = &to_coord;
        let (p, _, _) = coordinator(&mut r, &mut to_server, 0, "run", "me").unwrap();
        assert_eq!(p, 1);
        let mut r: &[u8] = &to_server;
        expect_magic(&mut r, 0).unwrap();
        let mut out = Vec::new();
        let (p, hello) = server_hello(&mut r, &mut out).unwrap();
        assert_eq!((p, hello.name()), (1, "hello"));
    }
}
