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

/// How one direction's block sizes are chosen (`bs`, `bsrange`, `bssplit`).
#[derive(Debug, Clone)]
enum BlockSizes {
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
    fn of(spec: &JobSpec, d: usize) -> BlockSizes {
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
                // Sizes in a range are multiples of the low end (when it is a power of two),
                // unless bs_unaligned says otherwise, as in fio.
                let align = if spec.bs_unaligned || !lo.is_power_of_two() { 1 } else { lo };
                BlockSizes::Range { lo, hi, align }
            }
            Some((lo, _)) => BlockSizes::Fixed(lo),
            None => BlockSizes::Fixed(spec.bs[d]),
        }
    }
    fn min(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { lo, .. } => *lo,
            BlockSizes::Split(v) => v.iter().map(|e| e.0).min().unwrap_or(1),
        }
    }
    fn max(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { hi, .. } => *hi,
            BlockSizes::Split(v) => v.iter().map(|e| e.0).max().unwrap_or(1),
        }
    }
    #[inline]
    fn pick(&self, rng: &mut Rng) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { lo, hi, align } => {
                let v = lo + rng.below(hi - lo + 1);
                (v / align * align).max(*lo)
            }
            BlockSizes::Split(v) => {
                let r = rng.below(10_000) as f64 / 100.0;
                v.iter().find(|e| r < e.1).or(v.last()).map(|e| e.0).unwrap_or(1)
            }
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

/// The largest block a job can issue, for buffer sizing and region checks.
pub fn max_block(spec: &JobSpec) -> u64 {
    (0..3).map(|d| BlockSizes::of(spec, d).max()).max().unwrap_or(spec.bs[0])
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
    /// `rw_sequencer=identical`: the `:N` of a random pattern repeats one offset N times.
    identical: bool,
    /// A non-uniform offset distribution (which, as in fio, bypasses the random map).
    dist: Option<super::offsets::Dist>,
    /// A file whose region just started another pass (for `invalidate`, which fio applies on
    /// every pass).
    new_pass: Option<usize>,
    time_based: bool,
    /// Passes left for a size-bounded sequential job that ends a pass early.
    loops_left: u32,
    /// How each direction picks its block size.
    sizes: [BlockSizes; 3],
    percentage_random: [u32; 3],
    /// Insert an fsync (or fdatasync) after this many writes (0: never).
    fsync_every: u32,
    fsync_ddir: Ddir,
    writes_since_sync: u32,
    rw: RwMode,
    modifier: u64,
    rwmixread: u32,
    /// Set by the worker under a per-direction rate limit: the direction whose turn it is.
    steer: Option<Ddir>,
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
        let sizes = [0, 1, 2].map(|d| BlockSizes::of(spec, d));
        let on = [spec.rw.reads(), spec.rw.writes(), spec.rw.trims()];
        let used = || (0..3).filter(|&d| on[d]);
        let min_bs = used().map(|d| sizes[d].min()).min().unwrap_or(spec.bs[0]);
        let max_bs = used().map(|d| sizes[d].max()).max().unwrap_or(spec.bs[0]);
        // Random offsets are multiples of blockalign (default: the smallest block size).
        let align = used().map(|d| spec.blockalign[d]).filter(|&a| a > 0).min().unwrap_or(min_bs);
        let min_bs = align;
        let regions: Vec<Region> = regions
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
        let (fsync_every, fsync_ddir) =
            if spec.fdatasync > 0 { (spec.fdatasync, Ddir::DataSync) } else { (spec.fsync, Ddir::Sync) };
        let nblocks = regions.first().map_or(1, |r: &Region| r.nblocks);
        IoGen {
            identical: spec.rw_sequencer_identical,
            dist: super::offsets::Dist::new(&spec.random_distribution, nblocks, min_bs),
            new_pass: None,
            time_based: spec.time_based,
            loops_left: spec.loops.max(1),
            sizes,
            percentage_random: spec.percentage_random,
            fsync_every,
            fsync_ddir,
            writes_since_sync: 0,
            rw: spec.rw,
            modifier: spec.rw_modifier,
            rwmixread: spec.rwmixread,
            steer: None,
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
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite => Ddir::Trim,
            RwMode::ReadWrite | RwMode::RandRw => {
                if let Some(d) = self.steer {
                    return d;
                }
                if self.rng.below(100) < self.rwmixread as u64 {
                    Ddir::Read
                } else {
                    Ddir::Write
                }
            }
        }
    }

    /// Whether the job mixes reads and writes (so a rate limit can steer the direction).
    pub fn mixes(&self) -> bool {
        matches!(self.rw, RwMode::ReadWrite | RwMode::RandRw)
    }

    /// Makes a mixed job's next I/Os go in `d` (or back to `rwmixread` with `None`). fio does
    /// this under per-direction rate limits: when the drawn direction is ahead of its rate and
    /// the other is not, the other goes, so each direction reaches its own rate.
    pub fn steer(&mut self, d: Option<Ddir>) {
        self.steer = d;
    }

    /// The next I/O, or `None` when a sequential pass ended early and no loop is left (see
    /// [`IoGen::next`]'s rule for partial blocks).
    #[inline]
    pub fn next(&mut self) -> Option<NextIo> {
        if let Some(w) = self.pending_write.take() {
            self.count_write(w.ddir);
            return Some(w);
        }
        if self.fsync_every > 0 && self.writes_since_sync >= self.fsync_every {
            self.writes_since_sync = 0;
            let file = self.last.map_or(0, |l| l.file);
            return Some(NextIo { ddir: self.fsync_ddir, file, offset: 0, len: 0 });
        }
        let ddir = self.pick_ddir();
        let d = ddir as usize;
        let len = self.sizes[d].pick(&mut self.rng);
        let file = self.file;
        self.file = (self.file + 1) % self.regions.len();
        let pct = self.percentage_random[d];
        let random = self.rw.is_random() && (pct >= 100 || self.rng.below(100) < pct as u64);
        let io = if random && self.run_left == 0 {
            if self.modifier > 0 {
                self.run_left = self.modifier - 1;
            }
            let r = &mut self.regions[file];
            let block = if let Some(d) = &self.dist {
                d.sample(&mut self.rng, r.nblocks)
            } else if self.norandommap {
                self.rng.below(r.nblocks)
            } else {
                if r.next == r.nblocks {
                    r.next = 0;
                    r.pass += 1;
                    self.new_pass = Some(file);
                    r.perm =
                        Permutation::new(r.nblocks, self.seed ^ (file as u64) << 32 ^ r.pass.wrapping_mul(0x9e37_79b9));
                }
                let b = r.perm.get(r.next);
                r.next += 1;
                b
            };
            NextIo { ddir, file, offset: r.start + block * self.min_bs, len: len as u32 }
        } else if self.rw.is_random() && self.run_left > 0 {
            // Within a `randread:N` run: continue sequentially from the last offset, or repeat it
            // (rw_sequencer=identical).
            self.run_left -= 1;
            let r = &self.regions[file];
            let prev = match (self.last, self.identical) {
                (Some(l), true) => l.offset - r.start,
                (Some(l), false) => l.offset + l.len as u64 - r.start,
                (None, _) => 0,
            };
            let rel = if prev + len > r.len { 0 } else { prev };
            NextIo { ddir, file, offset: r.start + rel, len: len as u32 }
        } else {
            // A pass wraps when the position lands exactly on the region's end. When a block
            // would only partly fit (or the position jumped past the end through a `:N` hole),
            // fio ends the pass instead, and the job with it unless it loops or is time based.
            let pos = self.regions[file].seq[d];
            if pos + len > self.regions[file].len {
                if pos != self.regions[file].len && !self.time_based {
                    if self.loops_left <= 1 {
                        return None;
                    }
                    self.loops_left -= 1;
                }
                for r in &mut self.regions {
                    r.seq = [0; 3];
                }
                self.new_pass = Some(file);
            }
            let r = &mut self.regions[file];
            let rel = r.seq[d];
            r.seq[d] += len + self.modifier;
            NextIo { ddir, file, offset: r.start + rel, len: len as u32 }
        };
        if matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite) {
            let wlen = io.len;
            self.pending_write = Some(NextIo { ddir: Ddir::Write, len: wlen, ..io });
        }
        self.last = Some(io);
        self.count_write(io.ddir);
        Some(io)
    }

    /// The file that started a new pass with the last I/O, if one did.
    #[inline]
    pub fn take_new_pass(&mut self) -> Option<usize> {
        self.new_pass.take()
    }

    /// Fits an I/O into the bytes left of a size-bounded job, as fio does: a variable block size
    /// shrinks to what is left (in multiples of its smallest size); when even the smallest block
    /// of that direction does not fit, the job is done (`None`).
    pub fn fit(&self, mut io: NextIo, remaining: u64) -> Option<NextIo> {
        if (io.len as u64) <= remaining || io.ddir as usize >= 3 {
            return Some(io);
        }
        let min = self.sizes[io.ddir as usize].min();
        if remaining < min {
            return None;
        }
        io.len = (remaining / min * min) as u32;
        Some(io)
    }

    #[inline]
    fn count_write(&mut self, ddir: Ddir) {
        if ddir == Ddir::Write && self.fsync_every > 0 {
            self.writes_since_sync += 1;
        }
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
        assemble(&cl, &[], &Ctx::default()).unwrap().jobs[0].spec.clone()
    }

    #[test]
    fn sequential_offsets_in_order_and_wrap() {
        let s = spec(&["--rw=read", "--bs=4k", "--size=16k"]);
        let mut g = IoGen::new(&s, &[(0, 16384)], 1);
        let offs: Vec<u64> = (0..6).map(|_| g.next().unwrap().offset).collect();
        assert_eq!(offs, [0, 4096, 8192, 12288, 0, 4096]);
    }

    #[test]
    fn skip_modifier() {
        let s = spec(&["--rw=write:4k", "--bs=4k", "--size=64k"]);
        let mut g = IoGen::new(&s, &[(0, 65536)], 1);
        let offs: Vec<u64> = (0..3).map(|_| g.next().unwrap().offset).collect();
        assert_eq!(offs, [0, 8192, 16384]);
    }

    #[test]
    fn random_touches_each_block_once_per_pass() {
        let s = spec(&["--rw=randread", "--bs=4k", "--size=1m"]);
        let mut g = IoGen::new(&s, &[(8192, 1 << 20)], 9);
        for _pass in 0..2 {
            let mut offs: Vec<u64> = (0..256).map(|_| g.next().unwrap().offset).collect();
            offs.sort();
            assert_eq!(offs, (0..256).map(|i| 8192 + i * 4096).collect::<Vec<_>>());
        }
    }

    #[test]
    fn mix_ratio() {
        let s = spec(&["--rw=randrw", "--rwmixread=70", "--size=1m"]);
        let mut g = IoGen::new(&s, &[(0, 1 << 20)], 3);
        let reads = (0..10000).filter(|_| g.next().unwrap().ddir == Ddir::Read).count();
        assert!((6700..7300).contains(&reads), "{reads}");
    }

    #[test]
    fn rw_sequencer_identical_repeats_offsets() {
        let s = spec(&["--rw=randread:3", "--rw_sequencer=identical", "--size=1m"]);
        let mut g = IoGen::new(&s, &[(0, 1 << 20)], 4);
        let o: Vec<u64> = (0..9).map(|_| g.next().unwrap().offset).collect();
        for t in o.chunks(3) {
            assert!(t.iter().all(|&x| x == t[0]), "{o:?}");
        }
        assert!(o[0] != o[3] || o[3] != o[6], "{o:?}");
        // The default sequencer continues sequentially instead.
        let s = spec(&["--rw=randread:3", "--size=1m"]);
        let mut g = IoGen::new(&s, &[(0, 1 << 20)], 4);
        let o: Vec<u64> = (0..3).map(|_| g.next().unwrap().offset).collect();
        assert_eq!((o[1], o[2]), (o[0] + 4096, o[0] + 8192));
    }

    #[test]
    fn bssplit_and_bsrange() {
        let s = spec(&["--rw=randread", "--bssplit=4k/25:64k/75", "--size=16m"]);
        let mut g = IoGen::new(&s, &[(0, 16 << 20)], 5);
        let big = (0..4000).filter(|_| g.next().unwrap().len == 65536).count();
        assert!((2800..3200).contains(&big), "{big}");
        let s = spec(&["--rw=read", "--bsrange=4k-16k", "--size=1m"]);
        let mut g = IoGen::new(&s, &[(0, 1 << 20)], 5);
        for _ in 0..100 {
            let n = g.next().unwrap();
            assert!(n.len % 4096 == 0 && (4096..=16384).contains(&n.len), "{n:?}");
        }
    }

    #[test]
    fn fsync_every_n_writes() {
        let s = spec(&["--rw=write", "--fsync=2", "--size=64k"]);
        let mut g = IoGen::new(&s, &[(0, 65536)], 5);
        let d: Vec<Ddir> = (0..6).map(|_| g.next().unwrap().ddir).collect();
        assert_eq!(d, [Ddir::Write, Ddir::Write, Ddir::Sync, Ddir::Write, Ddir::Write, Ddir::Sync]);
    }

    #[test]
    fn trimwrite_pairs() {
        let s = spec(&["--rw=trimwrite", "--size=16k"]);
        let mut g = IoGen::new(&s, &[(0, 16384)], 3);
        let a = g.next().unwrap();
        let b = g.next().unwrap();
        assert_eq!((a.ddir, b.ddir, a.offset, b.offset), (Ddir::Trim, Ddir::Write, 0, 0));
        assert_eq!(g.next().unwrap().offset, 4096);
    }
}
