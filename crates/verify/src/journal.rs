//! fiox's verify journal (`verify_journal=FILE`): what a writing job did, written as it goes,
//! so that a later run can verify every acknowledged write even when the writer was killed.
//!
//! A header, then fixed 24-byte records in the order the writer made them. Each write gets a
//! `Pending` record before it reaches the device and a `Done` record after it completed (or
//! `Failed`). After a crash, a write with `Pending` but no `Done` was in flight: its blocks may
//! hold the old contents or the new ones. A record cut short by the crash ends the journal.
//!
//! Header, little-endian: magic `FIOXVJ01`, version (u32, 1), the writer's run tag (u32),
//! verify interval (u64), number of files (u32), then per file its region start (u64), the
//! length of its path (u32) and the path's bytes. Record: kind (u8: 1 pending, 2 done,
//! 3 failed), 0 (u8), file (u16), length (u32), offset (u64), stamp (u64).

pub const MAGIC: &[u8; 8] = b"FIOXVJ01";
pub const VERSION: u32 = 1;
pub const RECORD_LEN: usize = 24;
/// Longest path a journal may name (the loader refuses more, so it never allocates beyond it).
const MAX_PATH: usize = 4096;

/// What the journal's writer worked on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JournalHeader {
    /// The writing run's tag: the high bits of its generation ids.
    pub run_tag: u32,
    pub interval: u64,
    /// Each file's path and region start.
    pub files: Vec<(String, u64)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecKind {
    Pending = 1,
    Done = 2,
    Failed = 3,
}

/// One record: a write of `len` bytes at `offset` of file number `file`, with `stamp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rec {
    pub kind: RecKind,
    pub file: u16,
    pub len: u32,
    pub offset: u64,
    pub stamp: u64,
}

impl JournalHeader {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&self.run_tag.to_le_bytes());
        out.extend_from_slice(&self.interval.to_le_bytes());
        out.extend_from_slice(&(self.files.len() as u32).to_le_bytes());
        for (path, base) in &self.files {
            out.extend_from_slice(&base.to_le_bytes());
            out.extend_from_slice(&(path.len() as u32).to_le_bytes());
            out.extend_from_slice(path.as_bytes());
        }
        out
    }
}

impl Rec {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.kind as u8);
        out.push(0);
        out.extend_from_slice(&self.file.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.stamp.to_le_bytes());
    }

    fn decode(b: &[u8]) -> Option<Rec> {
        let kind = match b[0] {
            1 => RecKind::Pending,
            2 => RecKind::Done,
            3 => RecKind::Failed,
            _ => return None,
        };
        Some(Rec {
            kind,
            file: u16::from_le_bytes([b[2], b[3]]),
            len: u32::from_le_bytes(b[4..8].try_into().ok()?),
            offset: u64::from_le_bytes(b[8..16].try_into().ok()?),
            stamp: u64::from_le_bytes(b[16..24].try_into().ok()?),
        })
    }
}

/// Reads a little-endian number at `*at`, moving past it.
fn take<const N: usize>(b: &[u8], at: &mut usize) -> Result<[u8; N], String> {
    let end = at.checked_add(N).filter(|&e| e <= b.len()).ok_or("the journal's header is cut short")?;
    let v = b[*at..end].try_into().expect("N bytes");
    *at = end;
    Ok(v)
}

/// Reads a journal: its header and its records up to the first incomplete or unknown one
/// (where a crash cut it). Never allocates more than the input holds.
pub fn decode(b: &[u8]) -> Result<(JournalHeader, Vec<Rec>), String> {
    if b.len() < 8 || &b[..8] != MAGIC {
        return Err("not a fiox verify journal (bad magic)".into());
    }
    let mut at = 8;
    let version = u32::from_le_bytes(take(b, &mut at)?);
    if version != VERSION {
        return Err(format!("unsupported verify journal version {version}"));
    }
    let run_tag = u32::from_le_bytes(take(b, &mut at)?);
    let interval = u64::from_le_bytes(take(b, &mut at)?);
    if interval == 0 {
        return Err("the journal's verify interval is 0".into());
    }
    let n = u32::from_le_bytes(take(b, &mut at)?) as usize;
    let mut files = Vec::with_capacity(n.min(b.len() / 12));
    for _ in 0..n {
        let base = u64::from_le_bytes(take(b, &mut at)?);
        let len = u32::from_le_bytes(take(b, &mut at)?) as usize;
        if len > MAX_PATH || at + len > b.len() {
            return Err("the journal's header is cut short".into());
        }
        files.push((String::from_utf8_lossy(&b[at..at + len]).into_owned(), base));
        at += len;
    }
    let recs = b[at..].chunks_exact(RECORD_LEN).map_while(Rec::decode).collect();
    Ok((JournalHeader { run_tag, interval, files }, recs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_a_cut_last_record() {
        let h = JournalHeader { run_tag: 7, interval: 4096, files: vec![("a.dat".into(), 0), ("b".into(), 8192)] };
        let mut bytes = h.encode();
        let r1 = Rec { kind: RecKind::Pending, file: 1, len: 4096, offset: 8192, stamp: 42 };
        let r2 = Rec { kind: RecKind::Done, ..r1 };
        r1.encode(&mut bytes);
        r2.encode(&mut bytes);
        assert_eq!(decode(&bytes).unwrap(), (h.clone(), vec![r1, r2]));
        // A crash while appending leaves part of a record: it is not one.
        bytes.extend_from_slice(&[1, 0, 0]);
        assert_eq!(decode(&bytes).unwrap().1.len(), 2);
    }

    #[test]
    fn bad_journals_are_refused_without_panicking() {
        assert!(decode(b"").is_err());
        assert!(decode(b"FIOXVJ01").is_err());
        let mut b = JournalHeader { run_tag: 1, interval: 512, files: vec![("x".into(), 0)] }.encode();
        b[24..28].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&b).is_err(), "a huge file count on a short input");
        for cut in 0..b.len() {
            let _ = decode(&b[..cut]);
        }
    }
}
