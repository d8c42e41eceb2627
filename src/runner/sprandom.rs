//! fio 3.42's `sprandom`: the offsets of a job that preconditions an SSD to its random-write
//! steady state by writing its physical capacity once (see [`crate::plan::sprandom`] for the
//! layout).
//!
//! The device is cut into regions written one after another. Each block written in a region
//! is picked, with the region's invalidation share as probability, to be written again in the
//! next region; the rest of a region's writes are new blocks from fio's LFSR, so that every
//! region ends up with the share of stale blocks it has at steady state. Everything here was
//! established by observation of fio 3.42 (its `write_iolog` offsets, its `--debug=sprandom`
//! trace, and the state of its generators read under gdb): see docs/fio-observed/sprandom.md.

use super::offsets::{fio_seed, MixStream};
use crate::plan::sprandom::{Layout, SHARE_SCALE};

/// fio's linear feedback shift register over `0..n`: every block exactly once, in an order
/// fixed by the seed.
///
/// The register has the fewest bits b with 2^b - 1 > n - 1 and taps from Xilinx's table of
/// maximal-length XNOR registers (application note XAPP052), except at 32 bits, where fio's
/// taps are 32, 31, 29 and 1 (its masks for b = 5 to 54 were read under gdb). Each step shifts right and, the feedback being XNOR,
/// flips the top bit when the bit shifted out is 1 and the other taps when it is 0. The
/// register starts at the low b bits of the seed, steps once more before the first value,
/// and skips values past n - 1.
#[derive(Debug, Clone)]
pub struct FioLfsr {
    state: u64,
    top: u64,
    /// The tap bits other than the top one.
    taps: u64,
    max: u64,
    /// Values still to give: `n` in all.
    left: u64,
}

/// XAPP052's taps (1-based bit numbers) for registers of 3 to 64 bits, the width first.
const TAPS: [&[u32]; 62] = [
    &[3, 2],
    &[4, 3],
    &[5, 3],
    &[6, 5],
    &[7, 6],
    &[8, 6, 5, 4],
    &[9, 5],
    &[10, 7],
    &[11, 9],
    &[12, 6, 4, 1],
    &[13, 4, 3, 1],
    &[14, 5, 3, 1],
    &[15, 14],
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 31, 29, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
    &[64, 63, 61, 60],
];

impl FioLfsr {
    /// The register over `0..n` (n ≥ 1) seeded with `seed`.
    pub fn new(n: u64, seed: u64) -> FioLfsr {
        let max = n.max(1) - 1;
        let bits = (64 - (max + 1).leading_zeros()).clamp(3, 64);
        let taps = TAPS[bits as usize - 3].iter().fold(0u64, |m, &t| m | 1 << (t - 1));
        let top = 1u64 << (bits - 1);
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let mut l = FioLfsr { state: seed & mask, top, taps: taps & !top, max, left: max + 1 };
        l.step();
        l
    }

    #[inline]
    fn step(&mut self) {
        let out = self.state & 1;
        self.state = (self.state >> 1) ^ if out == 1 { self.top } else { self.taps };
    }
}

impl Iterator for FioLfsr {
    type Item = u64;

    /// The next block, `None` once all `n` were given.
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        loop {
            self.step();
            if self.state <= self.max {
                return Some(self.state);
            }
        }
    }
}

/// Where the writes of the current region stand.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    /// New blocks from the LFSR, this many left before the next step.
    Fresh(u64),
    /// The previous region's picked blocks, written again.
    Again,
}

/// The block order of a sprandom job over one file region.
#[derive(Debug, Clone)]
pub struct Sprandom {
    lfsr: FioLfsr,
    /// fio's sprandom draws, one per write.
    draws: MixStream,
    layout: Layout,
    region: usize,
    /// What the current region still has to write, in order.
    steps: Vec<Step>,
    /// The previous region's picked blocks not written again yet, and the current region's.
    again: std::collections::VecDeque<u64>,
    picked: Vec<u64>,
    /// Blocks written so far; the job stops at the physical size.
    written: u64,
    /// The LFSR ran out: the blocks still to write again are written, then the job ends.
    draining: bool,
}

impl Sprandom {
    /// fio's job `thread_number` (1-based) with `randseed`: its LFSR is seeded from fio's
    /// seventh random stream and its draws come from the 23rd (both found under gdb).
    pub fn new(layout: Layout, randseed: u64, thread_number: u64) -> Sprandom {
        let mut s = Sprandom {
            lfsr: FioLfsr::new(layout.blocks, fio_seed(randseed, thread_number, 6)),
            draws: MixStream::fio_stream(randseed, thread_number, 22),
            layout,
            region: 0,
            steps: Vec::new(),
            again: Default::default(),
            picked: Vec::new(),
            written: 0,
            draining: false,
        };
        s.start_region();
        s
    }

    /// Every write is one block of this size.
    pub fn block_size(&self) -> u64 {
        self.layout.bs
    }

    /// Lays out the current region's writes: as many as a region holds, the previous region's
    /// picked blocks among them. Without a cache size they follow the region's first new
    /// block; with one (`spr_cs`) they come last, so that a block and its rewrite are never in
    /// the device's cache together.
    fn start_region(&mut self) {
        let again = self.again.len() as u64;
        let fresh = self.layout.writes_per_region.saturating_sub(again);
        self.steps = if self.layout.deferred {
            vec![Step::Again, Step::Fresh(fresh)]
        } else {
            // fio writes the region's first new block even when the picked blocks fill it.
            vec![Step::Fresh(fresh.saturating_sub(1)), Step::Again, Step::Fresh(1)]
        };
    }

    /// The next block to write, `None` when the job is done: after the region past the last
    /// one (fio counts regions from 0 to `spr_num_regions`), once the LFSR has given every
    /// block, or at the physical size.
    pub fn next_block(&mut self) -> Option<u64> {
        if self.written >= self.layout.physical_blocks {
            return None;
        }
        let block = if self.draining { self.again.pop_front()? } else { self.next_planned()? };
        self.written += 1;
        self.pick(block);
        Some(block)
    }

    fn next_planned(&mut self) -> Option<u64> {
        loop {
            match self.steps.last_mut() {
                None => {
                    if self.region >= self.layout.invalidate.len() {
                        return None;
                    }
                    self.region += 1;
                    self.again = std::mem::take(&mut self.picked).into();
                    self.start_region();
                }
                Some(Step::Fresh(0)) => {
                    self.steps.pop();
                }
                Some(Step::Fresh(n)) => {
                    *n -= 1;
                    match self.lfsr.next() {
                        Some(b) => return Some(b),
                        None => {
                            self.draining = true;
                            return self.again.pop_front();
                        }
                    }
                }
                Some(Step::Again) => match self.again.pop_front() {
                    Some(b) => return Some(b),
                    None => {
                        self.steps.pop();
                    }
                },
            }
        }
    }

    /// Every write draws: a draw scaled to the share's units at most the region's share
    /// picks the block for the next region (observed: fio picks at equality).
    fn pick(&mut self, block: u64) {
        let draw = self.draws.next_u32() as u64;
        let share = self.layout.invalidate.get(self.region).copied().unwrap_or(0) as u64;
        if (draw * SHARE_SCALE as u64) >> 32 <= share {
            self.picked.push(block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio 3.42's first offsets (in blocks) for `random_generator=lfsr` with `norandommap`,
    /// from its `write_iolog`, by file size in blocks and `randseed`.
    #[test]
    fn the_lfsr_gives_fios_order() {
        let first = |n: u64, randseed: u64, k: usize| -> Vec<u64> {
            FioLfsr::new(n, fio_seed(randseed, 1, 6)).take(k).collect()
        };
        assert_eq!(first(1024, 0x89, 12), [708, 98, 305, 844, 166, 339, 554, 21, 773, 961, 1008, 248]);
        assert_eq!(first(1024, 1234, 6), [182, 347, 555, 581, 913, 996]);
        let all: Vec<u64> = FioLfsr::new(1000, 7).collect();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>(), "every block once");
        for n in [1, 2, 3, 7, 8, 100] {
            assert_eq!(FioLfsr::new(n, 5).count() as u64, n);
        }
    }

    #[test]
    fn regions_write_again_what_the_last_one_picked() {
        let spec = fiox_options::JobSpec {
            bs: [4096; 3],
            sprandom: fiox_options::Sprandom { on: true, regions: 100, op: 0.15, ..Default::default() },
            ..Default::default()
        };
        let layout = Layout::new(&spec, 4 << 20).unwrap();
        let mut s = Sprandom::new(layout, 0x89, 1);
        let blocks: Vec<u64> = std::iter::from_fn(|| s.next_block()).collect();
        // fio 3.42 (`--debug=sprandom`): region 0 writes 11 new blocks, region 1 its first new
        // block, then blocks 98 and 339 again, then new blocks; 1111 writes in all.
        assert_eq!(blocks[..14], [708, 98, 305, 844, 166, 339, 554, 21, 773, 961, 1008, 248, 98, 339]);
        assert_eq!(blocks.len(), 1111);
    }
}
