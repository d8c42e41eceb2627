//! Recorded I/O as fio replays it (`read_iolog`): fio's text iologs, version 2 (`file action
//! [offset length]`) and version 3 (the same after a timestamp in microseconds), and the binary
//! traces of `blktrace` (a stream of `struct blk_io_trace` records, found by their magic). Pure
//! functions from bytes to a [`Trace`]; every malformed input is an error naming the line (or the
//! record's byte offset), never a panic (see `fuzz.rs`).

/// What one replayed entry does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Read,
    Write,
    Trim,
    Sync,
    DataSync,
}

/// One I/O of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Index into [`Trace::files`].
    pub file: usize,
    pub action: Action,
    pub offset: u64,
    pub len: u64,
    /// Time to wait after the previous I/O before this one, in nanoseconds, as the log says.
    pub delay_ns: u64,
}

/// Where a trace came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    V2,
    V3,
    Blktrace,
}

/// A file (iolog) or device (blktrace: `major:minor`) a trace does I/O on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceFile {
    pub name: String,
    /// The 1-based line that added it (0 for a blktrace device).
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub format: Format,
    pub files: Vec<TraceFile>,
    pub entries: Vec<Entry>,
}

/// What is wrong with a trace, and where: a 1-based line of a text log, or the byte offset of
/// a blktrace record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub at: Option<Where>,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    Line(usize),
    Byte(usize),
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at {
            Some(Where::Line(n)) => write!(f, "line {n}: {}", self.message),
            Some(Where::Byte(b)) => write!(f, "record at byte {b}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

fn err<T>(at: Option<Where>, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError { at, message: message.into() })
}

/// The magic of a blktrace record (`'e' 'a' 't'` and a version byte).
pub const BLK_MAGIC: u32 = 0x6561_7400;
/// The record version fiox reads (and writes when merging), as blktrace 1.x writes it.
pub const BLK_VERSION: u32 = 0x07;
/// Size of `struct blk_io_trace` without its payload.
pub const BLK_RECORD: usize = 48;

/// Whether the bytes start like a blktrace file (either byte order).
pub fn is_blktrace(data: &[u8]) -> bool {
    data.get(..4).is_some_and(|m| {
        let m = [m[0], m[1], m[2], m[3]];
        (u32::from_le_bytes(m) & 0xffff_ff00) == BLK_MAGIC || (u32::from_be_bytes(m) & 0xffff_ff00) == BLK_MAGIC
    })
}

/// Parses a whole iolog or blktrace file.
pub fn parse(data: &[u8]) -> Result<Trace, ParseError> {
    if is_blktrace(data) {
        return parse_blktrace(data);
    }
    let text = match std::str::from_utf8(data) {
        Ok(t) => t,
        Err(e) => {
            let line = data[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
            return err(Some(Where::Line(line)), "not text (and not a blktrace file either)");
        }
    };
    parse_text(text)
}

fn parse_text(text: &str) -> Result<Trace, ParseError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let first = lines.next().map(|(_, l)| l.trim()).unwrap_or("");
    let format = match first {
        "fio version 2 iolog" => Format::V2,
        "fio version 3 iolog" => Format::V3,
        l if l.starts_with("fio version ") => {
            return err(Some(Where::Line(1)), format!("'{l}': fio 3.33 and fiox read iolog versions 2 and 3 only"))
        }
        _ => {
            return err(
                Some(Where::Line(1)),
                "not an iolog: the first line must be 'fio version 2 iolog' or 'fio version 3 iolog' (nor is it a blktrace file)",
            )
        }
    };
    let mut trace = Trace { format, files: Vec::new(), entries: Vec::new() };
    // fio 3.33 keeps no time before an entry that follows one stamped 0 (measured: a log whose
    // first I/O is at 0 replays its second without waiting), so "no previous time" and "0" agree.
    let mut prev_us = 0u64;
    for (n, line) in lines {
        let at = Some(Where::Line(n));
        // fio's clones (numjobs) append their logs to one file, each with its own version
        // line: fio 3.33 replays such a log whole, skipping the later version lines (with a
        // "bad iolog3" warning).
        if line.trim() == first {
            continue;
        }
        let mut f = line.split_whitespace();
        let Some(first) = f.next() else { continue };
        let (ts, name) = if format == Format::V3 {
            let ts: u64 = first.parse().or_else(|_| err(at, format!("'{first}' is not a timestamp (microseconds)")))?;
            let name = f.next().map_or_else(|| err(at, "a file name must follow the timestamp"), Ok)?;
            (ts, name)
        } else {
            (0, first)
        };
        let Some(word) = f.next() else { return err(at, format!("no action after '{name}'")) };
        let mut num = |what: &str| -> Result<Option<u64>, ParseError> {
            match f.next() {
                None => Ok(None),
                Some(v) => v.parse().map(Some).or_else(|_| err(at, format!("'{v}' is not a valid {what}"))),
            }
        };
        let known = trace.files.iter().position(|x| x.name == name);
        let action = match word {
            "add" => {
                if known.is_none() {
                    trace.files.push(TraceFile { name: name.to_string(), line: n });
                }
                None
            }
            "open" | "close" => None,
            "read" => Some(Action::Read),
            "write" => Some(Action::Write),
            "trim" => Some(Action::Trim),
            "sync" => Some(Action::Sync),
            "datasync" => Some(Action::DataSync),
            other => {
                return err(
                    at,
                    format!(
                    "unknown action '{other}' (file actions: add, open, close; I/O: read, write, trim, sync, datasync)"
                ),
                )
            }
        };
        let delay_us = if prev_us == 0 { 0 } else { ts.saturating_sub(prev_us) };
        if format == Format::V3 {
            prev_us = ts;
        }
        let Some(action) = action else {
            if matches!(word, "open" | "close") && known.is_none() {
                return err(at, format!("'{name}' is used before a '{name} add' line"));
            }
            continue;
        };
        let Some(file) = known else { return err(at, format!("'{name}' is used before a '{name} add' line")) };
        let offset = num("offset")?;
        let len = num("length")?;
        if f.next().is_some() {
            return err(at, "too many fields");
        }
        let (offset, len) = match (action, offset, len) {
            (Action::Sync | Action::DataSync, o, l) => (o.unwrap_or(0), l.unwrap_or(0)),
            (_, Some(o), Some(l)) if l > 0 && l <= u32::MAX as u64 => (o, l),
            (_, Some(_), Some(l)) => return err(at, format!("length {l} is not between 1 and 4294967295")),
            _ => return err(at, format!("'{word}' needs an offset and a length")),
        };
        trace.entries.push(Entry { file, action, offset, len, delay_ns: delay_us.saturating_mul(1000) });
    }
    Ok(trace)
}

/// One `struct blk_io_trace` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlkRecord {
    pub magic: u32,
    pub sequence: u32,
    pub time_ns: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    pub device: u32,
    pub cpu: u32,
    pub error: u16,
    pub pdu_len: u16,
}

/// blktrace categories (the upper 16 bits of `action`) and the one action fio replays.
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_DISCARD: u32 = 1 << 7;
const TC_NOTIFY: u32 = 1 << 10;
const TA_QUEUE: u32 = 1;

impl BlkRecord {
    fn read(b: &[u8], big: bool) -> BlkRecord {
        let u32_at = |o: usize| {
            let a = [b[o], b[o + 1], b[o + 2], b[o + 3]];
            if big {
                u32::from_be_bytes(a)
            } else {
                u32::from_le_bytes(a)
            }
        };
        let u64_at = |o: usize| {
            let (lo, hi) = (u32_at(o) as u64, u32_at(o + 4) as u64);
            if big {
                lo << 32 | hi
            } else {
                hi << 32 | lo
            }
        };
        let u16_at =
            |o: usize| if big { u16::from_be_bytes([b[o], b[o + 1]]) } else { u16::from_le_bytes([b[o], b[o + 1]]) };
        BlkRecord {
            magic: u32_at(0),
            sequence: u32_at(4),
            time_ns: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            cpu: u32_at(40),
            error: u16_at(44),
            pdu_len: u16_at(46),
        }
    }

    /// The record in little-endian layout (what fiox writes).
    pub fn to_bytes(&self) -> [u8; BLK_RECORD] {
        let mut b = [0u8; BLK_RECORD];
        b[0..4].copy_from_slice(&self.magic.to_le_bytes());
        b[4..8].copy_from_slice(&self.sequence.to_le_bytes());
        b[8..16].copy_from_slice(&self.time_ns.to_le_bytes());
        b[16..24].copy_from_slice(&self.sector.to_le_bytes());
        b[24..28].copy_from_slice(&self.bytes.to_le_bytes());
        b[28..32].copy_from_slice(&self.action.to_le_bytes());
        b[32..36].copy_from_slice(&self.pid.to_le_bytes());
        b[36..40].copy_from_slice(&self.device.to_le_bytes());
        b[40..44].copy_from_slice(&self.cpu.to_le_bytes());
        b[44..46].copy_from_slice(&self.error.to_le_bytes());
        b[46..48].copy_from_slice(&self.pdu_len.to_le_bytes());
        b
    }

    /// A queue event of `bytes` at `sector` (for tests and trace generators).
    pub fn queue(time_ns: u64, device: u32, sector: u64, bytes: u32, write: bool) -> BlkRecord {
        let cat = if write { TC_WRITE } else { 1 };
        BlkRecord {
            magic: BLK_MAGIC | BLK_VERSION,
            sequence: 0,
            time_ns,
            sector,
            bytes,
            action: (cat << 16) | TA_QUEUE,
            pid: 1,
            device,
            cpu: 0,
            error: 0,
            pdu_len: 0,
        }
    }
}

/// Splits a blktrace file into its records and payloads.
pub fn blk_records(data: &[u8]) -> Result<Vec<(BlkRecord, &[u8])>, ParseError> {
    let big = data.get(..4).is_some_and(|m| (u32::from_le_bytes([m[0], m[1], m[2], m[3]]) & 0xffff_ff00) != BLK_MAGIC);
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let at = Some(Where::Byte(pos));
        let Some(b) = data.get(pos..pos + BLK_RECORD) else {
            return err(at, format!("the file ends inside a record ({} of {BLK_RECORD} bytes)", data.len() - pos));
        };
        let r = BlkRecord::read(b, big);
        if r.magic & 0xffff_ff00 != BLK_MAGIC {
            return err(at, format!("bad magic {:#010x} (expected {:#010x})", r.magic, BLK_MAGIC | BLK_VERSION));
        }
        if r.magic & 0xff != BLK_VERSION {
            return err(
                at,
                format!("blktrace record version {:#04x}; fiox reads version {BLK_VERSION:#04x}", r.magic & 0xff),
            );
        }
        let end = pos + BLK_RECORD + r.pdu_len as usize;
        let Some(pdu) = data.get(pos + BLK_RECORD..end) else {
            return err(at, format!("the file ends inside the record's {}-byte payload", r.pdu_len));
        };
        out.push((r, pdu));
        pos = end;
    }
    Ok(out)
}

fn parse_blktrace(data: &[u8]) -> Result<Trace, ParseError> {
    let mut trace = Trace { format: Format::Blktrace, files: Vec::new(), entries: Vec::new() };
    let mut prev: Option<u64> = None;
    for (r, _) in blk_records(data)? {
        let (cat, act) = (r.action >> 16, r.action & 0xffff);
        // Only queue events are I/O the application asked for; the rest (merges, dispatches,
        // completions) describe what the kernel did with them, and notifications carry names.
        if act != TA_QUEUE || cat & TC_NOTIFY != 0 {
            continue;
        }
        let action = if cat & TC_DISCARD != 0 {
            Action::Trim
        } else if cat & TC_FLUSH != 0 && r.bytes == 0 {
            Action::Sync
        } else if cat & TC_WRITE != 0 {
            Action::Write
        } else {
            Action::Read
        };
        if r.bytes == 0 && action != Action::Sync {
            continue;
        }
        let name = format!("{}:{}", r.device >> 20, r.device & 0xf_ffff);
        let file = match trace.files.iter().position(|f| f.name == name) {
            Some(i) => i,
            None => {
                trace.files.push(TraceFile { name, line: 0 });
                trace.files.len() - 1
            }
        };
        let delay_ns = prev.map_or(0, |p| r.time_ns.saturating_sub(p));
        prev = Some(r.time_ns);
        trace.entries.push(Entry { file, action, offset: r.sector.saturating_mul(512), len: r.bytes as u64, delay_ns });
    }
    Ok(trace)
}

/// Merges blktrace files into one (`merge_blktrace_file`): each trace's times are scaled by its
/// scalar (percent: 50 makes it twice as fast) and the trace is repeated its number of
/// iterations back to back; the records of all of them are then put in time order. Returns the
/// merged file's bytes (little-endian records).
pub fn merge_blktrace(inputs: &[&[u8]], scalars: &[f64], iters: &[f64]) -> Result<Vec<u8>, (usize, ParseError)> {
    let mut all: Vec<(u64, usize, BlkRecord, Vec<u8>)> = Vec::new();
    for (i, data) in inputs.iter().enumerate() {
        let recs = blk_records(data).map_err(|e| (i, e))?;
        let scale = scalars.get(i).copied().unwrap_or(100.0) / 100.0;
        let times = iters.get(i).copied().unwrap_or(1.0).round().max(1.0) as u64;
        let start = recs.iter().map(|r| r.0.time_ns).min().unwrap_or(0);
        let span = recs.iter().map(|r| r.0.time_ns - start).max().unwrap_or(0);
        let span = ((span as f64 * scale) as u64).saturating_add(1);
        for it in 0..times {
            for (r, pdu) in &recs {
                let t = (((r.time_ns - start) as f64 * scale) as u64).saturating_add(it.saturating_mul(span));
                all.push((t, i, *r, pdu.to_vec()));
            }
        }
    }
    all.sort_by_key(|e| (e.0, e.1));
    let mut out = Vec::new();
    for (seq, (t, _, mut r, pdu)) in all.into_iter().enumerate() {
        r.time_ns = t;
        r.sequence = seq as u32;
        r.magic = BLK_MAGIC | BLK_VERSION;
        out.extend_from_slice(&r.to_bytes());
        out.extend_from_slice(&pdu);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_3_with_delays() {
        let t = parse(b"fio version 3 iolog\n10 f add\n20 f open\n30 f read 0 4096\n130 f write 8192 512\n140 f sync\n150 f close\n").unwrap();
        assert_eq!(t.format, Format::V3);
        assert_eq!(t.files, vec![TraceFile { name: "f".into(), line: 2 }]);
        let e: Vec<(Action, u64, u64, u64)> =
            t.entries.iter().map(|e| (e.action, e.offset, e.len, e.delay_ns)).collect();
        assert_eq!(
            e,
            [(Action::Read, 0, 4096, 10_000), (Action::Write, 8192, 512, 100_000), (Action::Sync, 0, 0, 10_000)]
        );
    }

    #[test]
    fn an_entry_after_time_zero_has_no_delay() {
        let t = parse(b"fio version 3 iolog\n0 f add\n0 f read 0 1\n500 f read 1 1\n900 f read 2 1\n").unwrap();
        assert_eq!(t.entries.iter().map(|e| e.delay_ns).collect::<Vec<_>>(), [0, 0, 400_000]);
    }

    #[test]
    fn clones_logs_appended_to_one_file_replay_whole() {
        let t = parse(
            b"fio version 3 iolog\n5 a add\n9 a open\n10 a write 0 4096\n20 a close\n\
              fio version 3 iolog\n4 b add\n8 b open\n9 b write 4096 4096\n12 b close\n",
        )
        .unwrap();
        assert_eq!(t.files.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        let e: Vec<(usize, u64)> = t.entries.iter().map(|e| (e.file, e.offset)).collect();
        assert_eq!(e, [(0, 0), (1, 4096)]);
    }

    #[test]
    fn version_2_and_errors_name_the_line() {
        let t = parse(b"fio version 2 iolog\n/a add\n/a open\n/a trim 4096 4096\n/a datasync 0 0\n").unwrap();
        assert_eq!(t.entries.len(), 2);
        let e = |s: &[u8]| parse(s).unwrap_err().to_string();
        assert_eq!(e(b"fio version 2 iolog\n/a add\n/a frob 0 1\n").split(':').next(), Some("line 3"));
        assert!(e(b"fio version 2 iolog\n/a add\n/a read zz 1\n").contains("'zz' is not a valid offset"));
        assert!(e(b"fio version 2 iolog\n/a read 0 1\n").contains("before a '/a add' line"));
        assert!(e(b"hello\n").starts_with("line 1: not an iolog"));
        assert!(e(b"fio version 1 iolog\n").contains("versions 2 and 3"));
        assert!(e(b"fio version 2 iolog\n/a add\n/a read 0 0\n").contains("length 0"));
    }

    #[test]
    fn blktrace_queue_events_round_trip_through_a_merge() {
        let dev = (7 << 20) | 3;
        let mut a = Vec::new();
        a.extend_from_slice(&BlkRecord::queue(1000, dev, 8, 4096, false).to_bytes());
        a.extend_from_slice(&BlkRecord::queue(5000, dev, 16, 8192, true).to_bytes());
        let t = parse(&a).unwrap();
        assert_eq!(t.files[0].name, "7:3");
        let e: Vec<(Action, u64, u64, u64)> =
            t.entries.iter().map(|e| (e.action, e.offset, e.len, e.delay_ns)).collect();
        assert_eq!(e, [(Action::Read, 4096, 4096, 0), (Action::Write, 8192, 8192, 4000)]);
        let m = merge_blktrace(&[&a, &a], &[100.0, 50.0], &[1.0, 2.0]).unwrap();
        let t = parse(&m).unwrap();
        assert_eq!(t.entries.len(), 6);
        assert!(parse(&a[..50]).unwrap_err().to_string().contains("ends inside a record"));
    }
}
