//! Compressed logs (`log_store_compressed`, `log_compression`, `log_compression_cpus`) and
//! `--inflate-log`, in fio 3.33's format (measured in `docs/fio-observed/log-compression.md`).
//!
//! A `.fz` file is not compressed text: it is a sequence of zlib streams whose concatenated
//! output is an array of fixed-size little-endian samples:
//!
//! ```text
//! u64 time_ms | u64 value | u32 ddir + flags | u16 prio | u16 0 | u64 bs | [u64 offset]
//! ```
//!
//! Flag bit 31 of the ddir word says the sample carries the offset (40 bytes instead of 32),
//! bit 30 that `prio` is printed as a value (`log_prio`, `0x%04x`); without it, fio prints 1
//! for a priority of the real-time class and 0 otherwise. fio 3.33's decoder only reads whole
//! samples within one stream, so every stream fiox writes holds whole samples.
//!
//! The encoding and decoding are pure functions; the [`Compressor`] thread is the only part
//! that touches files. Workers append samples to a buffer and hand full buffers to it, so the
//! deflate work stays off the I/O path and memory stays bounded (a few buffers in flight and
//! one encoder per log), whatever `log_compression` is.

use std::io::{BufRead, Read, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use flate2::write::ZlibEncoder;
use flate2::Compression;

/// Bit of the ddir word: the sample ends with the I/O's offset.
pub const OFFSET_BIT: u32 = 1 << 31;
/// Bit of the ddir word: `prio` is the I/O's priority value (`log_prio=1`).
pub const PRIO_BIT: u32 = 1 << 30;
/// The real-time priority class, as the `prio` field holds it (class << 13); fio prints 1 for
/// it in a log without `log_prio`.
const RT_CLASS: u16 = 1 << 13;

/// Bytes of samples in each zlib stream when `log_compression` is not set. Larger streams
/// compress a little better; memory does not depend on it, since the encoder streams.
pub const DEFAULT_CHUNK: u64 = 1 << 20;

/// A log line's last column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prio {
    /// Whether the I/O ran at a raised (real-time class) priority: `0` or `1`.
    Flag(bool),
    /// The I/O's priority value (`log_prio`), printed as fio does: `0x%04x`.
    Value(u16),
}

/// One log entry, as a text line holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub time: u64,
    pub value: u64,
    pub ddir: u32,
    pub bs: u64,
    pub offset: Option<u64>,
    pub prio: Prio,
}

/// Bytes of one encoded sample.
pub const fn sample_size(offset: bool) -> usize {
    if offset {
        40
    } else {
        32
    }
}

/// Appends one sample in fio's binary layout.
#[inline]
pub fn encode(buf: &mut Vec<u8>, s: &Sample) {
    let (prio, flag) = match s.prio {
        Prio::Flag(true) => (RT_CLASS, 0),
        Prio::Flag(false) => (0, 0),
        Prio::Value(v) => (v, PRIO_BIT),
    };
    let ddir = s.ddir | flag | if s.offset.is_some() { OFFSET_BIT } else { 0 };
    buf.extend_from_slice(&s.time.to_le_bytes());
    buf.extend_from_slice(&s.value.to_le_bytes());
    buf.extend_from_slice(&ddir.to_le_bytes());
    buf.extend_from_slice(&prio.to_le_bytes());
    buf.extend_from_slice(&[0, 0]);
    buf.extend_from_slice(&s.bs.to_le_bytes());
    if let Some(o) = s.offset {
        buf.extend_from_slice(&o.to_le_bytes());
    }
}

/// The sample at the start of `raw` and its size, or `None` when `raw` holds less than a whole
/// sample.
pub fn decode(raw: &[u8]) -> Option<(Sample, usize)> {
    let u64_at = |at: usize| raw.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let word = u32::from_le_bytes(raw.get(16..20)?.try_into().expect("4 bytes"));
    let prio = u16::from_le_bytes(raw.get(20..22)?.try_into().expect("2 bytes"));
    let size = sample_size(word & OFFSET_BIT != 0);
    if raw.len() < size {
        return None;
    }
    let sample = Sample {
        time: u64_at(0)?,
        value: u64_at(8)?,
        ddir: word & !(OFFSET_BIT | PRIO_BIT),
        bs: u64_at(24)?,
        offset: if word & OFFSET_BIT != 0 { Some(u64_at(32)?) } else { None },
        prio: if word & PRIO_BIT != 0 { Prio::Value(prio) } else { Prio::Flag(prio >> 13 == 1) },
    };
    Some((sample, size))
}

/// Why a compressed log could not be read.
#[derive(Debug)]
pub enum InflateError {
    /// The file is not a sequence of zlib streams (at this byte of the file).
    Corrupt {
        at: u64,
        reason: String,
    },
    Io(std::io::Error),
}

impl std::fmt::Display for InflateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InflateError::Corrupt { at, reason } => {
                write!(f, "not a compressed fio log (bad zlib data in the stream starting at byte {at}: {reason})")
            }
            InflateError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Counts the bytes a reader hands out, so that an error can say where the bad stream began.
struct Counted<R> {
    inner: R,
    pos: u64,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.pos += n as u64;
        self.inner.consume(n);
    }
}

/// Decodes a compressed log (every zlib stream in turn, their output read as one array of
/// samples) and hands each sample to `each`, in order. A file cut short (a run killed while
/// writing) yields the whole samples it holds, as fio's decoder does; a partial last sample is
/// dropped. Memory stays bounded whatever the file's size.
pub fn inflate<R: BufRead>(
    input: R,
    mut each: impl FnMut(&Sample) -> std::io::Result<()>,
) -> Result<u64, InflateError> {
    let mut input = Counted { inner: input, pos: 0 };
    let mut pending: Vec<u8> = Vec::with_capacity(64 << 10);
    let mut chunk = vec![0u8; 64 << 10];
    let mut count = 0u64;
    loop {
        if input.fill_buf().map_err(InflateError::Io)?.is_empty() {
            break;
        }
        let start = input.pos;
        // The bufread decoder reads no further than its stream's end, so the next stream
        // starts where `into_inner` hands the reader back.
        let mut dec = flate2::bufread::ZlibDecoder::new(input);
        loop {
            let n = match dec.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                // A stream cut short: what was decoded stands.
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(InflateError::Corrupt { at: start, reason: e.to_string() }),
            };
            pending.extend_from_slice(&chunk[..n]);
            let mut at = 0;
            while let Some((s, size)) = decode(&pending[at..]) {
                each(&s).map_err(InflateError::Io)?;
                count += 1;
                at += size;
            }
            pending.drain(..at);
        }
        input = dec.into_inner();
        if input.pos == start {
            // Nothing was consumed: not a zlib stream at all.
            return Err(InflateError::Corrupt { at: start, reason: "no zlib stream here".into() });
        }
    }
    Ok(count)
}

/// A buffer of encoded samples for one log, on its way to the compressor thread.
struct Chunk {
    log: usize,
    raw: Vec<u8>,
    /// The last one: the log's stream is ended and its file closed.
    end: bool,
}

/// One compressed log file, owned by the compressor thread.
struct ZFile {
    name: String,
    file: Option<std::fs::File>,
    enc: Option<ZlibEncoder<Vec<u8>>>,
    /// Bytes of samples in each stream: a whole number of samples.
    chunk: usize,
    /// Bytes of samples in the open stream.
    in_stream: usize,
    /// Bytes in the file that are known written.
    written: u64,
    failed: Option<String>,
}

impl ZFile {
    /// Compresses `raw` (whole samples) into the log's streams, a new stream every `chunk`
    /// bytes of samples, and writes out what the encoder produced: with a sync flush, so the
    /// file holds every sample received, or, at the end, closing the stream.
    fn take(&mut self, raw: &[u8], end: bool) {
        if self.failed.is_some() {
            return;
        }
        let mut out = Vec::new();
        let mut rest = raw;
        while !rest.is_empty() {
            // Level 1, not fio's 6: at level 6 one thread could not keep up with a null job's
            // logs at millions of IOPS, and the files stay far smaller than the text.
            let enc = self.enc.get_or_insert_with(|| ZlibEncoder::new(Vec::new(), Compression::fast()));
            let n = rest.len().min(self.chunk - self.in_stream);
            // Writing to a Vec cannot fail.
            enc.write_all(&rest[..n]).expect("compressing into memory");
            out.append(enc.get_mut());
            self.in_stream += n;
            rest = &rest[n..];
            if self.in_stream == self.chunk {
                let enc = self.enc.take().expect("the stream was just written");
                out.extend(enc.finish().expect("compressing into memory"));
                self.in_stream = 0;
            }
        }
        if let Some(enc) = &mut self.enc {
            if end {
                let enc = self.enc.take().expect("checked");
                out.extend(enc.finish().expect("compressing into memory"));
                self.in_stream = 0;
            } else {
                enc.flush().expect("compressing into memory");
                out.append(enc.get_mut());
            }
        }
        if out.is_empty() && self.file.is_some() {
            return;
        }
        let r = match &mut self.file {
            Some(f) => f.write_all(&out),
            None => std::fs::File::create(&self.name).and_then(|mut f| {
                let r = f.write_all(&out);
                self.file = Some(f);
                r
            }),
        };
        match r {
            Ok(()) => self.written += out.len() as u64,
            Err(e) => {
                // A file cut back to its last whole write still decodes (up to there).
                if let Some(f) = &self.file {
                    let _ = f.set_len(self.written);
                }
                self.failed = Some(format!("cannot write log file '{}': {e}", self.name));
            }
        }
    }
}

/// The thread that compresses and writes one job's compressed logs.
pub struct Compressor {
    tx: Option<SyncSender<Chunk>>,
    thread: Option<std::thread::JoinHandle<Vec<String>>>,
}

/// A log's door to its compressor.
pub struct ZOut {
    log: usize,
    tx: SyncSender<Chunk>,
}

impl ZOut {
    /// Hands a buffer of whole samples over; blocks while the compressor is behind by a few
    /// buffers, which keeps memory bounded.
    pub fn send(&self, raw: Vec<u8>, end: bool) {
        // The thread only goes away after the sender is dropped, or by a panic whose message
        // is already on stderr.
        let _ = self.tx.send(Chunk { log: self.log, raw, end });
    }
}

impl Compressor {
    /// Starts the thread for the logs named, each with its sample size; `chunk` is
    /// `log_compression` (bytes of samples per zlib stream), `cpus` `log_compression_cpus`.
    pub fn start(logs: &[(String, usize)], chunk: u64, cpus: Vec<usize>) -> (Compressor, Vec<ZOut>) {
        // Four buffers in flight per log at most before the worker waits.
        let (tx, rx) = sync_channel::<Chunk>(4 * logs.len().max(1));
        let files: Vec<ZFile> = logs
            .iter()
            .map(|(name, size)| ZFile {
                name: name.clone(),
                file: None,
                enc: None,
                // Whole samples per stream: fio's decoder reads samples stream by stream.
                chunk: (chunk as usize / size).max(1) * size,
                in_stream: 0,
                written: 0,
                failed: None,
            })
            .collect();
        let outs = (0..logs.len()).map(|log| ZOut { log, tx: tx.clone() }).collect();
        let thread = std::thread::Builder::new()
            .name("fiox-logz".into())
            .spawn(move || run(rx, files, cpus))
            .expect("spawning the log compression thread");
        (Compressor { tx: Some(tx), thread: Some(thread) }, outs)
    }

    /// Waits for every buffer sent to be written (the logs' senders must have sent their last
    /// one and been dropped); the messages of logs that could not be written.
    pub fn finish(&mut self) -> Vec<String> {
        self.tx = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(failed)) => failed,
            Some(Err(_)) => vec!["the log compression thread failed".into()],
            None => Vec::new(),
        }
    }
}

fn run(rx: Receiver<Chunk>, mut files: Vec<ZFile>, cpus: Vec<usize>) -> Vec<String> {
    let mut failed = Vec::new();
    if !cpus.is_empty() {
        if let Err(e) = fiox_engine::sys::set_affinity(&cpus) {
            failed.push(format!("log_compression_cpus: cannot run the log compression thread on those CPUs: {e}"));
        }
    }
    while let Ok(c) = rx.recv() {
        files[c.log].take(&c.raw, c.end);
    }
    failed.extend(files.iter_mut().filter_map(|f| f.failed.take()));
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(i: u64, offset: bool, prio: Prio) -> Sample {
        Sample {
            time: i / 3,
            value: i * 7919 % 1000,
            ddir: (i % 3) as u32,
            bs: 4096,
            offset: offset.then_some(i * 4096),
            prio,
        }
    }

    /// The layout measured from fio 3.33: a 32-byte sample, 40 with the offset.
    #[test]
    fn layout() {
        let mut b = Vec::new();
        encode(&mut b, &Sample { time: 1, value: 2, ddir: 1, bs: 4096, offset: None, prio: Prio::Flag(true) });
        assert_eq!(
            b,
            [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0x20, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0]
        );
        b.clear();
        encode(&mut b, &Sample { time: 0, value: 0, ddir: 0, bs: 0, offset: Some(5), prio: Prio::Value(0x4004) });
        assert_eq!(b.len(), 40);
        assert_eq!(&b[16..22], &[0, 0, 0, 0xc0, 0x04, 0x40]);
        assert_eq!(&b[32..], &5u64.to_le_bytes());
    }

    #[test]
    fn streams_round_trip() {
        for (offset, prio) in [(false, Prio::Flag(false)), (true, Prio::Flag(true)), (true, Prio::Value(0x2003))] {
            let size = sample_size(offset);
            let (mut comp, outs) = {
                let dir = std::env::temp_dir().join(format!("fiox-logz-{}-{offset}", std::process::id()));
                std::fs::create_dir_all(&dir).unwrap();
                let name = dir.join("x.log.fz").to_string_lossy().into_owned();
                let r = Compressor::start(&[(name.clone(), size)], 1024, Vec::new());
                (r, name)
            };
            let want: Vec<Sample> = (0..5000).map(|i| sample(i, offset, prio)).collect();
            let mut buf = Vec::new();
            for (i, s) in want.iter().enumerate() {
                encode(&mut buf, s);
                if i % 777 == 0 {
                    comp.1[0].send(std::mem::take(&mut buf), false);
                }
            }
            comp.1[0].send(buf, true);
            drop(comp.1);
            assert!(comp.0.finish().is_empty());
            let bytes = std::fs::read(&outs).unwrap();
            let mut got = Vec::new();
            inflate(&bytes[..], |s| {
                got.push(*s);
                Ok(())
            })
            .unwrap();
            assert_eq!(got, want);
            // Every stream holds at most 1024 bytes of whole samples.
            let mut rest = &bytes[..];
            while !rest.is_empty() {
                let mut d = flate2::bufread::ZlibDecoder::new(rest);
                let mut out = Vec::new();
                d.read_to_end(&mut out).unwrap();
                assert!(out.len() <= 1024 && out.len() % size == 0, "{}", out.len());
                rest = d.into_inner();
            }
            std::fs::remove_file(&outs).unwrap();
        }
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let ok = |b: &[u8]| inflate(b, |_| Ok(())).map_err(|e| e.to_string());
        assert_eq!(ok(b"").unwrap(), 0);
        assert!(ok(b"this is not zlib at all").unwrap_err().contains("not a compressed fio log"));
        let mut raw = Vec::new();
        for i in 0..100 {
            encode(&mut raw, &sample(i, false, Prio::Flag(false)));
        }
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(&raw).unwrap();
        let z = z.finish().unwrap();
        // Cut short: the whole samples before the cut.
        let n = ok(&z[..z.len() - 20]).unwrap();
        assert!(n < 100);
        // Garbage after a good stream.
        let mut bad = z.clone();
        bad.extend_from_slice(b"\x00\x01garbage");
        assert!(ok(&bad).is_err());
    }

    /// Arbitrary bytes never panic the decoder.
    #[test]
    fn decode_any_bytes() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..200 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let _ = decode(&bytes);
            let _ = inflate(&bytes[..], |_| Ok(()));
            let mut z = vec![0x78, 0x9c];
            z.extend_from_slice(&bytes);
            let _ = inflate(&z[..], |_| Ok(()));
        }
    }
}
