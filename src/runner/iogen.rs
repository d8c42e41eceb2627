//! The next I/O of a job: its direction, file, offset and length, following `rw`, `rwmixread`,
//! the `:N` modifier, per-direction block sizes and the files' regions.

use fiox_engine::Ddir;
use fiox_options::{JobSpec, RwMode};

use super::offsets::{Permutation, Rng};

/// One file's region and position.
#[derive(Debug, Clone)]
pub struct Region {
    pub start: u64,
    pub len: u64,
    /// Next sequential offset (relative to `start`) per direction, as fio keeps one per direction.
    seq: [u64; 3],
    /// Random map: a permutation of the blocks, walked by `next`, renewed each pass.
    perm: Permutation,
    nblocks: u64,
    next: u64,
    pass: u64,
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextIo {
    pub ddir: Ddir,
    pub file: usize,
    pub offset: u64,
    pub len: u32,
}

pub struct IoGen {
    rw: RwMode,
    modifier: u64,
    rwmixread: u32,
    bs: [u64; 3],
    min_bs: u64,
    norandommap: bool,
    seed: u64,
    regions: Vec<Region>,
    file: usize,
    rng: Rng,
    /// I/Os left in the current sequential run of a `randread:N` job.
    run_left: u64,
    last: Option<NextIo>,
    /// trimwrite: the write that follows the trim just issued.
    pending_write: Option<NextIo>,
}

impl IoGen {
    pub fn new(spec: &JobSpec, regions: &[(u64, u64)], seed: u64) -> IoGen {
        let used: Vec<u64> = [spec.rw.reads(), spec.rw.writes(), spec.rw.trims()]
            .iter()
            .zip(spec.bs)
            .filter(|(on, _)| **on)
            .map(|(_, b)| b)
            .collect();
        let min_bs = used.iter().copied().min().unwrap_or(spec.bs[0]);
        let max_bs = used.iter().copied().max().unwrap_or(spec.bs[0]);
        let regions = regions
            .iter()
            .enumerate()
            .map(|(i, &(start, len))| {
                let nblocks = (len.saturating_sub(max_bs) / min_bs + 1).max(1);
                Region {
                    start,
                    len,
                    seq: [0; 3],
                    perm: Permutation::new(nblocks, seed ^ (i as u64) << 32),
                    nblocks,
                    next: 0,
                    pass: 0,
                }
            })
            .collect();
        IoGen {
            rw: spec.rw,
            modifier: spec.rw_modifier,
            rwmixread: spec.rwmixread,
            bs: spec.bs,
            min_bs,
            norandommap: spec.norandommap,
            seed,
            regions,
            file: 0,
            rng: Rng::new(seed.wrapping_mul(0x2545_f491_4f6c_dd1d)),
            run_left: 0,
            last: None,
            pending_write: None,
        }
    }

    fn pick_ddir(&mut self) -> Ddir {
        match self.rw {
            RwMode::Read | RwMode::RandRead => Ddir::Read,
            RwMode::Write | RwMode::RandWrite => Ddir::Write,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite => {
                Ddir::Trim
            }
            RwMode::ReadWrite | RwMode::RandRw => {
                if self.rng.below(100) < self.rwmixread as u64 {
                    Ddir::Read
                } else {
                    Ddir::Write
                }
            }
        }
    }

    #[inline]
    pub fn next(&mut self) -> NextIo {
        if let Some(w) = self.pending_write.take() {
            return w;
        }
        let ddir = self.pick_ddir();
        let d = ddir as usize;
        let len = self.bs[d];
        let file = self.file;
        self.file = (self.file + 1) % self.regions.len();
        let random = self.rw.is_random();
        let io = if random && self.run_left == 0 {
            if self.modifier > 0 {
                self.run_left = self.modifier - 1;
            }
            let r = &mut self.regions[file];
            let block = if self.norandommap {
                self.rng.below(r.nblocks)
            } else {
                if r.next == r.nblocks {
                    r.next = 0;
                    r.pass += 1;
                    r.perm = Permutation::new(
                        r.nblocks,
                        self.seed ^ (file as u64) << 32 ^ r.pass.wrapping_mul(0x9e37_79b9),
                    );
                }
                let b = r.perm.get(r.next);
                r.next += 1;
                b
            };
            NextIo {
                ddir,
                file,
                offset: r.start + block * self.min_bs,
                len: len as u32,
            }
        } else if random {
            // Within a `randread:N` run: continue sequentially from the last offset.
            self.run_left -= 1;
            let r = &self.regions[file];
            let prev = self
                .last
                .map(|l| l.offset + l.len as u64 - r.start)
                .unwrap_or(0);
            let rel = if prev + len > r.len { 0 } else { prev };
            NextIo {
                ddir,
                file,
                offset: r.start + rel,
                len: len as u32,
            }
        } else {
            let r = &mut self.regions[file];
            if r.seq[d] + len > r.len {
                r.seq[d] = 0;
            }
            let rel = r.seq[d];
            r.seq[d] += len + self.modifier;
            NextIo {
                ddir,
                file,
                offset: r.start + rel,
                len: len as u32,
            }
        };
        if matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite) {
            let wlen = self.bs[1].min(io.len as u64) as u32;
            self.pending_write = Some(NextIo {
                ddir: Ddir::Write,
                len: wlen,
                ..io
            });
        }
        self.last = Some(io);
        io
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_options::{argv, assemble, Ctx};

    fn spec(args: &[&str]) -> JobSpec {
        let mut a: Vec<&str> = args.to_vec();
        a.push("--name=t");
        let cl = argv::parse(a).unwrap();
        assemble(&cl, &[], &Ctx::default()).unwrap().jobs[0]
            .spec
            .clone()
    }

    #[test]
    fn sequential_offsets_in_order_and_wrap() {
        let s = spec(&["--rw=read", "--bs=4k", "--size=16k"]);
        let mut g = IoGen::new(&s, &[(0, 16384)], 1);
        let offs: Vec<u64> = (0..6).map(|_| g.next().offset).collect();
        assert_eq!(offs, [0, 4096, 8192, 12288, 0, 4096]);
    }

    #[test]
    fn skip_modifier() {
        let s = spec(&["--rw=write:4k", "--bs=4k", "--size=64k"]);
        let mut g = IoGen::new(&s, &[(0, 65536)], 1);
        let offs: Vec<u64> = (0..3).map(|_| g.next().offset).collect();
        assert_eq!(offs, [0, 8192, 16384]);
    }

    #[test]
    fn random_touches_each_block_once_per_pass() {
        let s = spec(&["--rw=randread", "--bs=4k", "--size=1m"]);
        let mut g = IoGen::new(&s, &[(8192, 1 << 20)], 9);
        for _pass in 0..2 {
            let mut offs: Vec<u64> = (0..256).map(|_| g.next().offset).collect();
            offs.sort();
            assert_eq!(offs, (0..256).map(|i| 8192 + i * 4096).collect::<Vec<_>>());
        }
    }

    #[test]
    fn mix_ratio() {
        let s = spec(&["--rw=randrw", "--rwmixread=70", "--size=1m"]);
        let mut g = IoGen::new(&s, &[(0, 1 << 20)], 3);
        let reads = (0..10000).filter(|_| g.next().ddir == Ddir::Read).count();
        assert!((6700..7300).contains(&reads), "{reads}");
    }

    #[test]
    fn trimwrite_pairs() {
        let s = spec(&["--rw=trimwrite", "--size=16k"]);
        let mut g = IoGen::new(&s, &[(0, 16384)], 3);
        let a = g.next();
        let b = g.next();
        assert_eq!(
            (a.ddir, b.ddir, a.offset, b.offset),
            (Ddir::Trim, Ddir::Write, 0, 0)
        );
        assert_eq!(g.next().offset, 4096);
    }
}
