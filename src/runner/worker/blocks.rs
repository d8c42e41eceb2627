//! `block_error_percentiles`: the last state of every block of the job's files (fio's "block
//! lifetime" states: unwritten, trimmed, written, trim failure, write failure), counted at the
//! end of the job. One byte per block, allocated only when the option asks for it.

use fiox_engine::{Ddir, Io};

const UNWRITTEN: u8 = 0;
const TRIMMED: u8 = 1;
const WRITTEN: u8 = 2;
const TRIM_FAILURE: u8 = 3;
const WRITE_FAILURE: u8 = 4;

pub(super) struct BlockStates {
    /// Per file, the state of each block of `block` bytes.
    files: Vec<Vec<u8>>,
    block: u64,
}

impl BlockStates {
    /// Blocks of `block` bytes over files of `sizes` bytes.
    pub(super) fn new(sizes: &[u64], block: u64) -> BlockStates {
        let block = block.max(1);
        BlockStates { files: sizes.iter().map(|&s| vec![UNWRITTEN; s.div_ceil(block) as usize]).collect(), block }
    }

    /// A write or trim finished (`ok`) or failed: its blocks take the matching state.
    #[inline]
    pub(super) fn record(&mut self, io: &Io, ok: bool) {
        let state = match (io.ddir, ok) {
            (Ddir::Write, true) => WRITTEN,
            (Ddir::Write, false) => WRITE_FAILURE,
            (Ddir::Trim, true) => TRIMMED,
            (Ddir::Trim, false) => TRIM_FAILURE,
            _ => return,
        };
        let Some(blocks) = self.files.get_mut(io.file as usize) else { return };
        let first = (io.offset / self.block) as usize;
        let last = ((io.offset + io.len as u64).div_ceil(self.block) as usize).min(blocks.len());
        if first < last {
            blocks[first..last].fill(state);
        }
    }

    /// How many blocks are in each state, in fio's order.
    pub(super) fn counts(&self) -> [u64; 5] {
        let mut c = [0u64; 5];
        for b in self.files.iter().flatten() {
            c[*b as usize] += 1;
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_state_wins() {
        let mut b = BlockStates::new(&[16384], 4096);
        let io = |ddir, offset, len| Io { ddir, file: 0, offset, len, ioprio: 0 };
        b.record(&io(Ddir::Write, 0, 8192), true);
        b.record(&io(Ddir::Trim, 4096, 4096), true);
        b.record(&io(Ddir::Write, 8192, 4096), false);
        b.record(&io(Ddir::Read, 12288, 4096), false);
        assert_eq!(b.counts(), [1, 1, 1, 0, 1]);
    }
}
