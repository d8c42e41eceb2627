//! What one I/O is ([`NextIo`]) and the block sizes a job issues (`bs`, `bsrange`, `bssplit`):
//! shared by the planner (alignment and region checks, replayed traces) and the runner's
//! generators, which pick sizes from a job's [`BlockSizes`] on every I/O.

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

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextIo {
    pub ddir: Ddir,
    pub file: usize,
    pub offset: u64,
    pub len: u32,
    /// A read that verifies what the job wrote (`verify_backlog`, the read-back): checked,
    /// and not counted toward the job's size.
    pub check: bool,
}
