//! fio 3.33's verify state files (version 3): where a write job stopped, so that a later run
//! can verify up to that point (`verify_state_save`, `verify_state_load`).
//!
//! Layout, little-endian: version (u64, 3), size of the record that follows (u64,
//! 152 + 16 x depth x files), fio-crc32c of that record (u64), then the record: completions
//! listed (u64), depth (u32), files (u32), writes issued (u64), job index (u64), whether the
//! offset generator is 64-bit (u64), its state (48 bytes), the job name (64 bytes, NUL padded),
//! and `depth x files` slots of {file number u64, offset u64}: the last completed writes,
//! newest first.

use crate::sums::fio_crc32c;

/// The record's size without its completion slots.
const FIXED: usize = 152;
const PREAMBLE: usize = 24;
pub const VERSION: u64 = 3;

/// What a verify state file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyState {
    /// Writes issued.
    pub numberio: u64,
    pub depth: u32,
    pub nofiles: u32,
    /// The job's 0-based position among all jobs (numjobs clones count).
    pub index: u64,
    /// fio's offset generator: whether it is 64-bit, and its state (fiox writes zeros: its
    /// offsets do not come from fio's generator, and fio 3.33 does not read them).
    pub use64: u64,
    pub rand: [u8; 48],
    pub name: String,
    /// The last completed writes, newest first: (file number, offset).
    pub comps: Vec<(u64, u64)>,
}

impl Default for VerifyState {
    fn default() -> VerifyState {
        VerifyState {
            numberio: 0,
            depth: 0,
            nofiles: 0,
            index: 0,
            use64: 0,
            rand: [0; 48],
            name: String::new(),
            comps: Vec::new(),
        }
    }
}

/// Why a state file cannot be used, in fio's words where fio has them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateError {
    Short,
    Version(u64),
    Size(u64),
    Corrupt,
}

impl std::fmt::Display for StateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StateError::Short => write!(f, "fio: verify state file is too short"),
            StateError::Version(v) => write!(f, "fio: unsupported ({v}) version in verify state header"),
            StateError::Size(s) => write!(f, "fio: verify state header claims {s} bytes, more than the file holds"),
            StateError::Corrupt => write!(f, "fio: verify state is corrupt"),
        }
    }
}

impl std::error::Error for StateError {}

/// fio's file name: `<prefix>-<job name, '/' as '.'>-<index>-verify.state`; the prefix is
/// `local`, under `--aux-path` when given.
pub fn file_name(aux_path: Option<&str>, job: &str, index: usize) -> String {
    let name = job.replace('/', ".");
    match aux_path {
        Some(dir) => format!("{}/local-{name}-{index}-verify.state", dir.trim_end_matches('/')),
        None => format!("local-{name}-{index}-verify.state"),
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

impl VerifyState {
    /// The file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let slots = (self.depth as usize).saturating_mul(self.nofiles as usize);
        let mut rec = Vec::with_capacity(FIXED + 16 * slots);
        rec.extend_from_slice(&(self.comps.len().min(slots) as u64).to_le_bytes());
        rec.extend_from_slice(&self.depth.to_le_bytes());
        rec.extend_from_slice(&self.nofiles.to_le_bytes());
        rec.extend_from_slice(&self.numberio.to_le_bytes());
        rec.extend_from_slice(&self.index.to_le_bytes());
        rec.extend_from_slice(&self.use64.to_le_bytes());
        rec.extend_from_slice(&self.rand);
        let mut name = [0u8; 64];
        // fio keeps the name NUL-terminated in 64 bytes.
        let n = self.name.len().min(63);
        name[..n].copy_from_slice(&self.name.as_bytes()[..n]);
        rec.extend_from_slice(&name);
        for k in 0..slots {
            let (f, o) = self.comps.get(k).copied().unwrap_or((0, 0));
            rec.extend_from_slice(&f.to_le_bytes());
            rec.extend_from_slice(&o.to_le_bytes());
        }
        let mut out = Vec::with_capacity(PREAMBLE + rec.len());
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(rec.len() as u64).to_le_bytes());
        out.extend_from_slice(&u64::from(fio_crc32c(&rec)).to_le_bytes());
        out.extend_from_slice(&rec);
        out
    }

    /// Reads a state file's bytes. Never allocates more than the input holds.
    pub fn decode(b: &[u8]) -> Result<VerifyState, StateError> {
        if b.len() < PREAMBLE {
            return Err(StateError::Short);
        }
        let version = u64_at(b, 0);
        if version != VERSION {
            return Err(StateError::Version(version));
        }
        let size = u64_at(b, 8);
        let rec_len = usize::try_from(size).ok().filter(|&s| s <= b.len() - PREAMBLE).ok_or(StateError::Size(size))?;
        if rec_len < FIXED {
            return Err(StateError::Corrupt);
        }
        let rec = &b[PREAMBLE..PREAMBLE + rec_len];
        if u64_at(b, 16) != u64::from(fio_crc32c(rec)) {
            return Err(StateError::Corrupt);
        }
        let no_comps = u64_at(rec, 0);
        let (depth, nofiles) = (u32_at(rec, 8), u32_at(rec, 12));
        let slots = (rec_len - FIXED) / 16;
        if (depth as u64).saturating_mul(nofiles as u64) != slots as u64 || no_comps > slots as u64 {
            return Err(StateError::Corrupt);
        }
        let name_bytes = &rec[88..152];
        let end = name_bytes.iter().position(|&c| c == 0).unwrap_or(64);
        let comps =
            (0..no_comps as usize).map(|k| (u64_at(rec, FIXED + 16 * k), u64_at(rec, FIXED + 16 * k + 8))).collect();
        Ok(VerifyState {
            numberio: u64_at(rec, 16),
            depth,
            nofiles,
            index: u64_at(rec, 24),
            use64: u64_at(rec, 32),
            rand: rec[40..88].try_into().expect("48 bytes"),
            name: String::from_utf8_lossy(&name_bytes[..end]).into_owned(),
            comps,
        })
    }

    /// fio's rule for verifying up to a saved point: after `reads` blocks were read back, is
    /// the block at (`file`, `offset`) still to be verified? Writes beyond the last `depth`
    /// were all complete; inside that window only those listed as completed are.
    pub fn covers(&self, reads: u64, file: u64, offset: u64) -> bool {
        let (n, d) = (self.numberio, self.depth as u64);
        if reads >= n {
            return false;
        }
        if n > d && (reads < d || n - reads > d) {
            return true;
        }
        self.comps.contains(&(file, offset))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file fio 3.33 wrote: `fio --name=st --filename=sq --size=1m --bs=4k --rw=write
    /// --verify=crc32c --iodepth=4 --ioengine=libaio`.
    const FIO_STATE: &str = "0300000000000000d800000000000000db21274a00000000";

    #[test]
    fn round_trip_and_fio_preamble() {
        let s = VerifyState {
            numberio: 256,
            depth: 4,
            nofiles: 1,
            name: "st".into(),
            comps: vec![(0, 0xff000), (0, 0xfe000), (0, 0xfd000), (0, 0xfc000)],
            ..VerifyState::default()
        };
        let bytes = s.encode();
        assert_eq!(bytes.len(), 240);
        let hex: String = bytes[..24].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, FIO_STATE, "same bytes, same CRC as fio's file");
        assert_eq!(VerifyState::decode(&bytes).unwrap(), s);
    }

    #[test]
    fn bad_files_are_refused_without_allocating() {
        let s = VerifyState { numberio: 1, depth: 1, nofiles: 1, name: "j".into(), ..VerifyState::default() };
        let mut b = s.encode();
        assert_eq!(VerifyState::decode(&b[..10]), Err(StateError::Short));
        b[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(VerifyState::decode(&b), Err(StateError::Size(u64::MAX)));
        let mut b = s.encode();
        b[0] = 4;
        assert_eq!(VerifyState::decode(&b), Err(StateError::Version(4)));
        let mut b = s.encode();
        b[40] ^= 1;
        assert_eq!(VerifyState::decode(&b), Err(StateError::Corrupt));
    }

    #[test]
    fn covers_follows_the_completion_window() {
        let s = VerifyState { numberio: 10, depth: 2, nofiles: 1, comps: vec![(0, 9), (0, 7)], ..Default::default() };
        assert!(s.covers(0, 0, 0));
        assert!(s.covers(7, 0, 7000));
        // The last two: only the completed ones.
        assert!(s.covers(8, 0, 9));
        assert!(!s.covers(8, 0, 8));
        assert!(!s.covers(10, 0, 9));
        assert!(!s.covers(u64::MAX, 0, 9), "past the end, without overflow (found by the fuzzer)");
    }
}
