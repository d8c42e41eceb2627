//! What one I/O is ([`NextIo`]) and the block sizes a job issues (`bs`, `bsrange`, `bssplit`):
//! shared by the planner (alignment and region checks, replayed traces) and the runner's
//! generators, which pick sizes from a job's [`BlockSizes`] on every I/O.

use std::num::NonZeroU64;

use fiox_engine::Ddir;
use fiox_options::JobSpec;

/// How one direction's block sizes are chosen (`bs`, `bsrange`, `bssplit`).
#[derive(Debug, Clone)]
pub enum BlockSizes {
    Fixed(u64),
    Range {
        lo: u64,
        hi: u64,
        align: u64,
    },
    /// Cumulative percentages, for a weighted pick.
    Split(Vec<(u64, f64)>),
}

impl BlockSizes {
    pub fn of(spec: &JobSpec, d: usize) -> BlockSizes {
        if !spec.bssplit[d].is_empty() {
            let mut cum = 0.0;
            let v = spec.bssplit[d]
                .iter()
                .map(|&(bs, pct)| {
                    cum += pct;
                    (bs, cum)
                })
                .collect();
            return BlockSizes::Split(v);
        }
        match spec.bsrange[d] {
            Some((lo, hi)) if hi > lo => {
                // Sizes in a range are multiples of the low end (a power of two or not: fio
                // draws 1000, 2000 and 2500 from 1000-2500), unless bs_unaligned says otherwise.
                let align = if spec.bs_unaligned { 1 } else { lo };
                BlockSizes::Range { lo, hi, align }
            }
            Some((lo, _)) => BlockSizes::Fixed(lo),
            None => BlockSizes::Fixed(spec.bs[d]),
        }
    }
    pub fn min(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { lo, .. } => *lo,
            BlockSizes::Split(v) => v.iter().map(|e| e.0).min().unwrap_or(1),
        }
    }
    pub fn max(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { hi, .. } => *hi,
            BlockSizes::Split(v) => v.iter().map(|e| e.0).max().unwrap_or(1),
        }
    }
}

/// Every block size a job can issue (for alignment checks).
pub fn block_sizes(spec: &JobSpec) -> Vec<u64> {
    let mut out = Vec::new();
    for d in 0..3 {
        match BlockSizes::of(spec, d) {
            BlockSizes::Fixed(b) => out.push(b),
            BlockSizes::Range { lo, hi, align } => out.extend([lo, hi].into_iter().filter(|_| align > 1)),
            BlockSizes::Split(v) => out.extend(v.iter().map(|e| e.0)),
        }
    }
    out
}

/// The smallest block a job issues in the directions it does (what fio aligns percentage
/// offsets to).
pub fn min_block_size(spec: &JobSpec) -> u64 {
    let dirs = [spec.rw.reads(), spec.rw.writes(), spec.rw.trims()];
    (0..3).filter(|&d| dirs[d]).map(|d| BlockSizes::of(spec, d).min()).min().unwrap_or(spec.bs[0])
}

/// The smallest and largest block of direction `d` (0 read, 1 write, 2 trim).
pub fn block_range(spec: &JobSpec, d: usize) -> (u64, u64) {
    let b = BlockSizes::of(spec, d);
    (b.min(), b.max())
}

/// The largest read block of a job (what `pre_read` reads in).
pub fn max_read_block(spec: &JobSpec) -> u64 {
    BlockSizes::of(spec, 0).max()
}

/// The largest block a job can issue, for buffer sizing and region checks.
pub fn max_block(spec: &JobSpec) -> u64 {
    (0..3).map(|d| BlockSizes::of(spec, d).max()).max().unwrap_or(spec.bs[0])
}

/// The smallest block a job can issue, for region checks.
pub fn min_block(spec: &JobSpec) -> u64 {
    (0..3).map(|d| BlockSizes::of(spec, d).min()).min().unwrap_or(spec.bs[0])
}

/// What to do next: a direction, a file (its index in the job's list), an offset and a length,
/// and whether the I/O is a read that verifies what the job wrote (`verify_backlog`, the
/// read-back: checked, and not counted toward the job's size).
///
/// Two words, so that it travels in registers. The worker draws one per I/O and hands it
/// through several calls; as a 24-byte struct with byte-sized fields it went through memory,
/// written field by field and read back as wider words, which the CPU's store-to-load
/// forwarding cannot serve (a stall of a dozen cycles per copy, several copies per I/O). Two
/// scalars, one of them never zero, make it and `Option<NextIo>` a register pair in Rust's
/// calling convention. The offset is the first word; the second packs the rest:
/// length (bits 0-31), file index (32-58), direction (59-61), check (62), and bit 63 always
/// set (the niche that `Option` uses).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct NextIo {
    pub offset: u64,
    word: NonZeroU64,
}

const FILE_SHIFT: u32 = 32;
const DDIR_SHIFT: u32 = 59;
const CHECK_BIT: u64 = 1 << 62;
const SET_BIT: u64 = 1 << 63;

impl NextIo {
    /// Files a job may have: the file index has 27 bits (the planner refuses more files).
    pub const MAX_FILES: usize = 1 << (DDIR_SHIFT - FILE_SHIFT);

    #[inline(always)]
    pub fn new(ddir: Ddir, file: usize, offset: u64, len: u32) -> NextIo {
        debug_assert!(file < Self::MAX_FILES);
        let file = (file as u64 & (Self::MAX_FILES as u64 - 1)) << FILE_SHIFT;
        let word = SET_BIT | (ddir as u64) << DDIR_SHIFT | file | len as u64;
        NextIo { offset, word: NonZeroU64::new(word).unwrap_or(NonZeroU64::MAX) }
    }

    /// The same I/O as a verifying one (see [`NextIo::check`]).
    #[inline(always)]
    pub fn checked(self) -> NextIo {
        NextIo { offset: self.offset, word: self.word | CHECK_BIT }
    }

    #[inline(always)]
    pub fn ddir(self) -> Ddir {
        match (self.word.get() >> DDIR_SHIFT) & 7 {
            0 => Ddir::Read,
            1 => Ddir::Write,
            2 => Ddir::Trim,
            3 => Ddir::Sync,
            4 => Ddir::DataSync,
            _ => Ddir::SyncRange,
        }
    }

    #[inline(always)]
    pub fn file(self) -> usize {
        ((self.word.get() >> FILE_SHIFT) & (Self::MAX_FILES as u64 - 1)) as usize
    }

    #[inline(always)]
    pub fn len(self) -> u32 {
        self.word.get() as u32
    }

    /// A read that verifies what the job wrote: checked, and not counted toward the job's size.
    #[inline(always)]
    pub fn check(self) -> bool {
        self.word.get() & CHECK_BIT != 0
    }

    #[inline(always)]
    pub fn with_len(self, len: u32) -> NextIo {
        let word = (self.word.get() & !(u32::MAX as u64)) | len as u64;
        NextIo { offset: self.offset, word: NonZeroU64::new(word).unwrap_or(self.word) }
    }

    #[inline(always)]
    pub fn with_ddir(self, ddir: Ddir) -> NextIo {
        let word = (self.word.get() & !(7 << DDIR_SHIFT)) | (ddir as u64) << DDIR_SHIFT;
        NextIo { offset: self.offset, word: NonZeroU64::new(word).unwrap_or(self.word) }
    }
}

impl std::fmt::Debug for NextIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NextIo")
            .field("ddir", &self.ddir())
            .field("file", &self.file())
            .field("offset", &self.offset)
            .field("len", &self.len())
            .field("check", &self.check())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drawn_io_keeps_every_field_through_its_packing() {
        let dirs = [Ddir::Read, Ddir::Write, Ddir::Trim, Ddir::Sync, Ddir::DataSync, Ddir::SyncRange];
        for (i, &d) in dirs.iter().enumerate() {
            for (file, len) in [(0, 0), (1, 4096), (NextIo::MAX_FILES - 1, u32::MAX), (12_345, 1 << 31)] {
                let offset = u64::MAX - i as u64;
                let io = NextIo::new(d, file, offset, len);
                assert_eq!((io.ddir(), io.file(), io.offset, io.len(), io.check()), (d, file, offset, len, false));
                let c = io.checked();
                assert_eq!((c.ddir(), c.file(), c.offset, c.len(), c.check()), (d, file, offset, len, true));
                // Changing one field leaves the others alone.
                let w = c.with_len(7).with_ddir(Ddir::Write);
                assert_eq!((w.ddir(), w.file(), w.offset, w.len(), w.check()), (Ddir::Write, file, offset, 7, true));
            }
        }
        // Two words, and `None` costs nothing: what keeps it in registers.
        assert_eq!(std::mem::size_of::<Option<NextIo>>(), 16);
    }
}
