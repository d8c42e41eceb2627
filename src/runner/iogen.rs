//! The next I/O of a job: its direction, file, offset and length, following `rw`, `rwmixread`,
//! the `:N` modifier, per-direction block sizes and the files' regions.

use fiox_engine::Ddir;
use fiox_options::{JobSpec, RwMode};

use super::offsets::{Permutation, Rng};
use crate::plan::io::BlockSizes;
use crate::plan::io::NextIo;

/// One file's region and position.
#[derive(Debug, Clone)]
pub struct Region {
    pub start: u64,
    pub len: u64,
    /// Bytes from `start` to the file's end ([`IoGen::set_rooms`]; `len` until set): a
    /// sequential block that starts in the region goes whole when it ends within them.
    room: u64,
    /// Next sequential offset (relative to `start`) per direction, as fio keeps one per direction.
    seq: [u64; 3],
    /// Random map: a permutation of the blocks, walked by `next`, renewed each pass.
    perm: Permutation,
    nblocks: u64,
    next: u64,
    pass: u64,
    /// With block sizes that vary, one bit per smallest block: which blocks this pass has
    /// already done. A random I/O starts at a block not done yet and is cut short at the first
    /// block that is, so that every block is done once per pass, as fio's random map does.
    /// With one block size the permutation alone guarantees that, and no map is kept.
    covered: Option<Vec<u64>>,
    /// Blocks of `covered` done this pass.
    done: u64,
}

impl Region {
    fn is_covered(&self, b: u64) -> bool {
        self.covered.as_ref().is_some_and(|c| c[(b / 64) as usize] & (1 << (b % 64)) != 0)
    }

    /// An empty map; the bits past the last block are set so they are never free.
    fn clear_map(&mut self) {
        let n = self.nblocks;
        if let Some(c) = &mut self.covered {
            c.fill(0);
            if n % 64 != 0 {
                if let Some(last) = c.last_mut() {
                    *last = !0u64 << (n % 64);
                }
            }
        }
        self.done = 0;
    }

    /// The first block at or after `b` not done this pass, wrapping to the start (fio moves a
    /// random offset that lands on a done block to the next free one). Some block is free.
    fn next_free(&self, b: u64) -> u64 {
        let Some(c) = &self.covered else { return b };
        let words = c.len();
        let first = (b / 64) as usize;
        for i in 0..=words {
            let w = (first + i) % words;
            let mut free = !c[w];
            if i == 0 {
                free &= !0u64 << (b % 64);
            }
            if free != 0 {
                return w as u64 * 64 + free.trailing_zeros() as u64;
            }
        }
        b
    }

    /// Marks up to `want` blocks from `b` as done, stopping at one already done or at the end;
    /// returns how many it marked (at least one: `b` itself is not done).
    fn cover(&mut self, b: u64, want: u64) -> u64 {
        let end = (b + want).min(self.nblocks);
        let mut n = 0;
        for x in b..end {
            if n > 0 && self.is_covered(x) {
                break;
            }
            if let Some(c) = &mut self.covered {
                c[(x / 64) as usize] |= 1 << (x % 64);
            }
            n += 1;
        }
        self.done += n;
        n.max(1)
    }
}

impl BlockSizes {
    // The fixed size is decided in line (it was a call on every I/O); drawn sizes are a call.
    #[inline(always)]
    fn pick(&self, rng: &mut Rng) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            _ => self.draw(rng),
        }
    }

    #[inline(never)]
    fn draw(&self, rng: &mut Rng) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { lo, hi, align } => {
                // fio's draw, as measured: uniform on [lo, hi + lo), down to a multiple of
                // `align`, at most hi. So 512-4k gives the eight multiples of 512 alike, and
                // 1000-2500 gives 1000 and 2000 for two fifths each, 2500 for the last fifth.
                let v = lo + rng.below(*hi);
                (v / align * align).clamp(*lo, *hi)
            }
            BlockSizes::Split(v) => {
                let r = rng.below(10_000) as f64 / 100.0;
                v.iter().find(|e| r < e.1).or(v.last()).map(|e| e.0).unwrap_or(1)
            }
        }
    }
}

/// [`IoGen::take_new_pass`]'s answer when every file starts a new pass.
pub const ALL_FILES: usize = usize::MAX;

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
    /// Each sequential pass over the files is a loop of the job, as in fio: when no file has
    /// room for another block the pass is over (`pass_over`, for the worker, which decides
    /// whether another starts) rather than wrapping in place ([`IoGen::set_rooms`]).
    pass_loops: bool,
    pass_over: bool,
    /// A time-based job on one file: a block that starts past the region wraps to its start
    /// without ending the pass; only one the file has no room for ends it (fio 3.33 closes and
    /// opens the file there, docs/fio-observed/seq-room.md).
    wrap_in_place: bool,
    /// Where the block a pass ended on would have started, when the pass ended on one not
    /// issued (past the region, or past the file's end): fio's iolog writes it on the sync
    /// line of the loop's end.
    pass_end_at: Option<u64>,
    /// A mixed random job with a random map, whose draw that finds a file's pass over is
    /// used up ([`IoGen::redraw_if_full`]); with several files, the draws due at a loop's
    /// start for the files it left done.
    full_redraws: bool,
    pending_redraws: u32,
    /// How each direction picks its block size.
    sizes: [BlockSizes; 3],
    percentage_random: [u32; 3],
    /// `bs_is_seq_rand`.
    seq_rand: bool,
    /// `fsync`, `fdatasync`, `sync_file_range`: after every so many writes (0: never), that
    /// sync, checked in this order as fio does; one sync at most after a write.
    syncs: [(u64, Ddir); 3],
    /// Writes issued so far, and whether a sync may come next: the job syncs, has written,
    /// and its last I/O was no sync.
    writes: u64,
    sync_due: bool,
    /// Whether any of `syncs` is on.
    syncing: bool,
    rw: RwMode,
    /// `rw=...:N` (see `JobSpec::rw_modifier`).
    modifier: i64,
    rwmixread: u32,
    /// The direction of each I/O of a mixed job, drawn as fio draws it.
    mix: super::offsets::MixStream,
    /// The mixed job's current direction (0 reads, 1 writes), the I/Os issued in each, and
    /// the count the current direction must reach before the next draw.
    mix_dir: usize,
    mix_issued: [u64; 2],
    mix_until: u64,
    /// Whether the last direction came from a draw (not from a direction catching up).
    mix_drew: bool,
    /// The seed each new loop restarts the direction stream from (see [`IoGen::follow_fio`]).
    mix_restart: Option<(u64, u64)>,
    /// Set by the worker under a per-direction rate limit: the direction whose turn it is.
    steer: Option<Ddir>,
    min_bs: u64,
    norandommap: bool,
    seed: u64,
    regions: Vec<Region>,
    files: super::files::FilePicker,
    rng: Rng,
    /// I/Os left in the current sequential run of a `randread:N` job.
    run_left: u64,
    last: Option<NextIo>,
    /// trimwrite: the write that follows the trim just issued.
    pending_write: Option<NextIo>,
    /// `sprandom`: fio 3.42's preconditioning order of blocks, which replaces the random
    /// offsets of the job's one file.
    sprandom: Option<Box<super::sprandom::Sprandom>>,
}

impl IoGen {
    pub fn new(spec: &JobSpec, regions: &[(u64, u64)], seed: u64) -> IoGen {
        let sprandom = sprandom(spec, regions, seed, 1);
        let sizes = [0, 1, 2].map(|d| BlockSizes::of(spec, d));
        let on = if spec.bs_is_seq_rand {
            // The first list serves sequential I/O, the second random I/O.
            let some_seq = !spec.rw.is_random() || spec.percentage_random.iter().any(|&p| p < 100);
            [some_seq, spec.rw.is_random(), spec.rw.trims()]
        } else {
            [spec.rw.reads(), spec.rw.writes(), spec.rw.trims()]
        };
        let used = || (0..3).filter(|&d| on[d]);
        let min_bs = used().map(|d| sizes[d].min()).min().unwrap_or(spec.bs[0]);
        let max_bs = used().map(|d| sizes[d].max()).max().unwrap_or(spec.bs[0]);
        // Random offsets are multiples of blockalign (default: the smallest block size).
        let align = used().map(|d| spec.blockalign[d]).filter(|&a| a > 0).min().unwrap_or(min_bs);
        let min_bs = align;
        // fio's LFSR visits every block exactly once per pass without a map, which is why people
        // pair it with norandommap; fiox's permutation does the same.
        let norandommap = spec.norandommap && spec.random_generator != fiox_options::RandomGenerator::Lfsr;
        let mapped = max_bs > min_bs
            && spec.rw.is_random()
            && !norandommap
            && matches!(spec.random_distribution, fiox_options::RandomDist::Random);
        let regions: Vec<Region> = regions
            .iter()
            .enumerate()
            .map(|(i, &(start, len))| {
                // With varying sizes every block may start an I/O, which the map then cuts
                // short at the region's end; otherwise only blocks where the largest fits.
                let nblocks =
                    if mapped { (len / min_bs).max(1) } else { (len.saturating_sub(max_bs) / min_bs + 1).max(1) };
                let mut r = Region {
                    start,
                    len,
                    room: len,
                    seq: [0; 3],
                    perm: Permutation::new(nblocks, seed ^ (i as u64) << 32),
                    nblocks,
                    next: 0,
                    pass: 0,
                    covered: mapped.then(|| vec![0u64; nblocks.div_ceil(64) as usize]),
                    done: 0,
                };
                r.clear_map();
                r
            })
            .collect();
        let syncs = [
            (spec.fsync as u64, Ddir::Sync),
            (spec.fdatasync as u64, Ddir::DataSync),
            (spec.sync_file_range.map_or(0, |s| s.every as u64), Ddir::SyncRange),
        ];
        let nblocks = regions.first().map_or(1, |r: &Region| r.nblocks);
        IoGen {
            identical: spec.rw_sequencer_identical,
            dist: super::offsets::Dist::new(&spec.random_distribution, nblocks, min_bs, seed),
            new_pass: None,
            time_based: spec.time_based,
            loops_left: spec.loops.max(1),
            pass_loops: false,
            pass_over: false,
            wrap_in_place: false,
            pass_end_at: None,
            full_redraws: matches!(spec.rw, RwMode::RandRw)
                && !norandommap
                && sprandom.is_none()
                && matches!(spec.random_distribution, fiox_options::RandomDist::Random),
            pending_redraws: 0,
            sizes,
            percentage_random: spec.percentage_random,
            seq_rand: spec.bs_is_seq_rand,
            syncs,
            writes: 0,
            sync_due: false,
            syncing: syncs.iter().any(|&(every, _)| every > 0),
            rw: spec.rw,
            modifier: spec.rw_modifier,
            rwmixread: spec.rwmixread,
            mix: super::offsets::MixStream::fio(seed, 1),
            mix_dir: 0,
            mix_issued: [0; 2],
            mix_until: 0,
            mix_drew: false,
            mix_restart: None,
            steer: None,
            min_bs,
            norandommap,
            seed,
            files: super::files::FilePicker::new(spec.file_service.clone(), regions.len(), spec.openfiles as usize),
            regions,
            rng: Rng::new(seed.wrapping_mul(0x2545_f491_4f6c_dd1d)),
            run_left: 0,
            last: None,
            pending_write: None,
            sprandom,
        }
    }

    // One direction is decided in line (it was a call on every I/O); a mix is a call.
    #[inline(always)]
    fn pick_ddir(&mut self) -> Ddir {
        match self.rw {
            RwMode::Read | RwMode::RandRead => Ddir::Read,
            RwMode::Write | RwMode::RandWrite => Ddir::Write,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite => Ddir::Trim,
            RwMode::ReadWrite | RwMode::RandRw => self.pick_mixed(),
        }
    }

    #[inline(never)]
    fn pick_mixed(&mut self) -> Ddir {
        if let Some(d) = self.steer {
            return d;
        }
        // fio draws a direction only once the current one has caught up: after a
        // switch, the new direction goes on until its count of I/Os reaches the old
        // direction's count times the new one's share (observed in fio's logs, where a
        // lopsided start is followed by a run of the direction behind).
        self.mix_drew = self.mix_issued[self.mix_dir] >= self.mix_until;
        if self.mix_drew {
            let d = if self.mix.reads(self.rwmixread) { 0 } else { 1 };
            if d != self.mix_dir {
                let share = if d == 0 { self.rwmixread } else { 100 - self.rwmixread.min(100) };
                self.mix_until = self.mix_issued[self.mix_dir] * share as u64 / 100;
                self.mix_dir = d;
            }
        }
        self.mix_issued[self.mix_dir] += 1;
        if self.mix_dir == 0 {
            Ddir::Read
        } else {
            Ddir::Write
        }
    }

    /// Draws the directions from fio's stream for the job fio numbers `thread_number` with
    /// `randseed`, so that a mixed job reads and writes as often, and in the same order, as
    /// fio's. Without it (the tests' generators) the stream follows the generator's seed.
    pub fn follow_fio(&mut self, randseed: u64, thread_number: u64, spec: &JobSpec) {
        self.mix = super::offsets::MixStream::fio(randseed, thread_number);
        // Without a `randseed` of the job's own, fio 3.33 starts the directions of each loop
        // again from the stream's start (its logs: every loop of `rw=rw loops=3` repeats the
        // first's directions); with one, the stream runs on.
        self.mix_restart = (spec.randrepeat && !spec.randseed_given).then_some((randseed, thread_number));
        if self.sprandom.is_some() {
            let regions: Vec<(u64, u64)> = self.regions.iter().map(|r| (r.start, r.len)).collect();
            self.sprandom = sprandom(spec, &regions, randseed, thread_number);
        }
    }

    /// The next I/O's direction, whether it is random, which block sizes serve it and its
    /// length.
    #[inline(always)]
    fn draw_kind(&mut self) -> (Ddir, bool, usize, u64) {
        let ddir = self.pick_ddir();
        let d = ddir as usize;
        let pct = self.percentage_random[d];
        let random = self.rw.is_random() && (pct >= 100 || self.rng.below(100) < pct as u64);
        // bs_is_seq_rand: the read sizes serve sequential I/O, the write sizes random I/O.
        let sizes = if self.seq_rand && d < 2 { random as usize } else { d };
        let len = self.sizes[sizes].pick(&mut self.rng);
        (ddir, random, sizes, len)
    }

    /// Whether a loop's end closes the files (in `write_iolog`): fio 3.33 does not for a
    /// random job without a random map (`norandommap`, a non-uniform distribution), whose
    /// loops are bytes only.
    pub fn loops_close(&self) -> bool {
        !self.rw.is_random() || (!self.norandommap && self.dist.is_none())
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
    // Always inlined: the I/O source calls it from two arms (plain and zoned), and as a call
    // it cost the null engine ~6% of its IOPS (perf: 25% of the time in this function's body).
    #[inline(always)]
    pub fn next(&mut self) -> Option<NextIo> {
        if let Some(w) = self.pending_write.take() {
            self.count_write(w.ddir());
            return Some(w);
        }
        if self.sync_due {
            // fio: the first of fsync, fdatasync, sync_file_range whose count divides the
            // writes issued so far, before any I/O that does not follow a sync. So a mixed job
            // whose writes pause there syncs again after each read until it writes again
            // (fio 3.33's logs: `... write sync read sync read sync`).
            self.sync_due = false;
            let n = self.writes;
            if let Some(&(_, ddir)) = self.syncs.iter().find(|&&(every, _)| every > 0 && n % every == 0) {
                // As in fio, the sync takes the file service's next choice (not the file just
                // written), and uses up that choice.
                let file = self.files.pick_sync(&mut self.rng);
                return Some(NextIo::new(ddir, file, 0, 0));
            }
        }
        if let Some(s) = &mut self.sprandom {
            let block = s.next_block()?;
            let bs = s.block_size();
            let io = NextIo::new(Ddir::Write, 0, self.regions[0].start + block * bs, bs as u32);
            self.last = Some(io);
            self.count_write(io.ddir());
            return Some(io);
        }
        let (mut ddir, mut random, mut sizes, mut len) = self.draw_kind();
        let file = self.files.pick(&mut self.rng);
        if self.files.skipped() > 0 && self.full_redraws && self.files.wrapped() && self.steer.is_none() {
            self.pending_redraws = self.files.skipped();
        } else if self.files.skipped() > 0 && self.mixes() && self.steer.is_none() {
            // fio draws the direction before the file: each done file the pick closed sends it
            // back to draw again (`randrw nrfiles=2 fsync=1`: the syncs take every other file,
            // one file is done first, and the I/O after it follows the stream one draw later).
            for _ in 0..self.files.skipped() {
                self.mix_issued[self.mix_dir] -= 1;
                (ddir, random, sizes, len) = self.draw_kind();
            }
        }
        if self.full_redraws && random && self.steer.is_none() {
            (ddir, random, sizes, len) = self.redraw_if_full(file, (ddir, random, sizes, len));
        }
        let d = ddir as usize;
        let io = if random && self.run_left == 0 {
            if self.modifier > 0 {
                self.run_left = self.modifier as u64 - 1;
            }
            let r = &mut self.regions[file];
            let block = if let Some(d) = &self.dist {
                d.sample(&mut self.rng, r.nblocks)
            } else if self.norandommap {
                self.rng.below(r.nblocks)
            } else {
                let mapped = r.covered.is_some();
                // A pass ends when every block is done: all permutation entries without a map,
                // all map bits with one (where I/Os of several blocks use the entries up faster).
                let pass_over = if mapped { r.done >= r.nblocks } else { r.next == r.nblocks };
                if pass_over || r.next == r.nblocks {
                    if pass_over {
                        r.pass += 1;
                        self.new_pass = Some(file);
                        r.clear_map();
                    }
                    r.next = 0;
                    let salt = r.pass.wrapping_mul(0x9e37_79b9) ^ r.done.wrapping_mul(0x2545_f491);
                    r.perm = Permutation::new(r.nblocks, self.seed ^ (file as u64) << 32 ^ salt);
                }
                let mut b = r.perm.next();
                r.next += 1;
                if mapped {
                    b = r.next_free(b);
                    let blocks = r.cover(b, len.div_ceil(self.min_bs));
                    len = len.min(blocks * self.min_bs);
                }
                b
            };
            // A block drawn larger than what is left of the region shrinks to the whole
            // smallest blocks left, as fio's does (size=6k, bsrange=4k-8k moves 4k blocks).
            let rel = block * self.min_bs;
            if rel + len > r.len {
                len = ((r.len - rel) / self.min_bs * self.min_bs).max(self.min_bs);
            }
            NextIo::new(ddir, file, r.start + rel, len as u32)
        } else if self.rw.is_random() && self.run_left > 0 {
            // Within a `randread:N` run: continue sequentially from the last offset, or repeat it
            // (rw_sequencer=identical).
            self.run_left -= 1;
            let r = &self.regions[file];
            let prev = match (self.last, self.identical) {
                (Some(l), true) => l.offset - r.start,
                (Some(l), false) => l.offset + l.len() as u64 - r.start,
                (None, _) => 0,
            };
            let rel = if prev + len > r.len { 0 } else { prev };
            NextIo::new(ddir, file, r.start + rel, len as u32)
        } else {
            // A pass wraps when the position lands exactly on the region's end. When a block
            // would only partly fit (or the position jumped past the end through a `:N` hole),
            // fio ends the pass instead, and the job with it unless it loops or is time based.
            // A block starts in the region and ends within the file (its `room`), which may
            // go past the region's end, as fio's does (size=6k on a 16 KiB file reads 8 KiB).
            let (pos, room) = (self.regions[file].seq[d], self.regions[file].room);
            let min = self.sizes[sizes].min();
            if pos + len > room && pos + min <= room {
                // Variable sizes: a smaller block that fits is taken, as fio retries smaller
                // sizes until one fits.
                len = (room - pos) / min * min;
            }
            let rlen = self.regions[file].len;
            if pos >= rlen || pos + len > room {
                if self.pass_loops && !(self.wrap_in_place && pos >= rlen) {
                    return self.mixed_no_room(file, pos);
                } else if pos == rlen {
                    self.restart_pass(file);
                } else if !self.end_pass(file) {
                    return None;
                }
            }
            let r = &mut self.regions[file];
            let rel = r.seq[d];
            let next = (rel + len) as i64 + self.modifier;
            // Backwards (`read:-8k`) past the region's start goes on from its end, step
            // included, as in fio.
            r.seq[d] = if next >= 0 { next as u64 } else { (r.len as i64 + self.modifier).max(0) as u64 };
            let io = NextIo::new(ddir, file, r.start + rel, len as u32);
            // One direction's pass is over with its last block (so that a sync due then
            // comes before the loop's end, as in fio); a mixed job's when it draws the next.
            if self.pass_loops && !self.mixes() {
                self.check_pass(file, d, min);
            }
            io
        };
        if matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite) {
            let wlen = io.len();
            self.pending_write = Some(io.with_ddir(Ddir::Write).with_len(wlen));
        }
        self.last = Some(io);
        self.count_write(io.ddir());
        if self.regions.len() > 1 && !self.pass_loops && self.region_done(io.file(), d) {
            self.files.finished(io.file());
        }
        Some(io)
    }

    /// A mixed random job with a random map: fio finds a file's pass over on the draw after
    /// its last free block, and that draw is used up (its direction counted), so the next
    /// pass starts one direction later in the mix stream, as the sequential job whose draw
    /// had no room (fio 3.33's logs of `randrw loops=2`). Several files: one draw per file
    /// the loop left done and not yet closed (`pending_redraws`, see [`IoGen::new_loop`]),
    /// or that the pick closed as it found the loop's end (without `write_iolog`, whose loop
    /// ends put the files back first).
    #[cold]
    #[inline(never)]
    fn redraw_if_full(&mut self, file: usize, drawn: (Ddir, bool, usize, u64)) -> (Ddir, bool, usize, u64) {
        let mut drawn = drawn;
        let redraws = if self.regions.len() == 1 {
            let r = &self.regions[file];
            let full = if r.covered.is_some() { r.done >= r.nblocks } else { r.next == r.nblocks };
            full as u32
        } else {
            std::mem::take(&mut self.pending_redraws)
        };
        if redraws > 0 && self.restart_mix() {
            return self.draw_kind();
        }
        for _ in 0..redraws {
            let drew = self.mix_drew;
            self.drop_direction();
            drawn = self.draw_kind();
            if !drew {
                // A direction that stopped catching up takes the other files' ends with it
                // (fio's logs of `randrw nrfiles=2`: no draw is used up for them then).
                break;
            }
        }
        drawn
    }

    /// A new loop of a job whose direction stream restarts on each (see
    /// [`IoGen::follow_fio`]): the stream and its counts from their start. Returns whether
    /// it did.
    fn restart_mix(&mut self) -> bool {
        let Some((randseed, thread_number)) = self.mix_restart else { return false };
        self.mix = super::offsets::MixStream::fio(randseed, thread_number);
        (self.mix_dir, self.mix_issued, self.mix_until, self.mix_drew) = (0, [0; 2], 0, false);
        true
    }

    /// The direction just picked found its file's pass over, so it is dropped. One that was
    /// drawn stays drawn and counted; one that was catching up stops catching up, uncounted,
    /// and the next I/O draws (fio 3.33's logs of `randrw loops=3` at rwmixread 30 and 50:
    /// each fits only this rule).
    fn drop_direction(&mut self) {
        if self.mixes() && !self.mix_drew && self.steer.is_none() {
            self.mix_issued[self.mix_dir] -= 1;
            self.mix_until = 0;
        }
    }

    /// Whether file `f`'s region is done for this pass in direction `d`: every block done for
    /// random I/O (never without a random map), no whole smallest block left for sequential.
    fn region_done(&self, f: usize, d: usize) -> bool {
        let r = &self.regions[f];
        if self.rw.is_random() && self.dist.is_none() && !self.norandommap {
            if r.covered.is_some() {
                r.done >= r.nblocks
            } else {
                r.next == r.nblocks
            }
        } else if self.rw.is_random() {
            false
        } else {
            r.seq[d] >= r.len || r.seq[d] + self.sizes[d].min() > r.room
        }
    }

    /// Gives each region the room its file has past its start (`ends`: where each file ends,
    /// see [`crate::plan::FilePlan::file_end`]), and makes each sequential pass a loop of the
    /// job (`pass_loops`) as fio makes it: fio ends a pass when the next block starts past
    /// the region or would end past the file, closes the files, and starts the next pass
    /// as a loop (docs/fio-observed/seq-room.md).
    /// A time-based job's passes end as the others' do, but for a job on one file, whose
    /// block past the region wraps in place (`wrap_in_place`).
    pub fn set_rooms(&mut self, ends: &[u64]) {
        for (r, &end) in self.regions.iter_mut().zip(ends) {
            r.room = end.saturating_sub(r.start).max(r.len);
        }
        self.pass_loops = !self.rw.is_random() && self.sprandom.is_none();
        self.wrap_in_place = self.time_based && self.regions.len() == 1;
    }

    /// Where the block that ended the last pass would have started (see `pass_end_at`).
    pub fn take_pass_end_at(&mut self) -> Option<u64> {
        self.pass_end_at.take()
    }

    /// Ends the pass when file `f`'s next block in direction `d` (of at least `min` bytes)
    /// starts past its region or ends past its file; on one file of a time-based job only the
    /// latter, the former wrapping in place (`wrap_in_place`).
    #[inline]
    fn check_pass(&mut self, f: usize, d: usize, min: u64) {
        let r = &self.regions[f];
        let over = if self.wrap_in_place {
            r.seq[d] < r.len && r.seq[d] + min > r.room
        } else {
            r.seq[d] >= r.len || r.seq[d] + min > r.room
        };
        if over {
            // fio finds the pass over as it tries the next block, which its iolog shows on the
            // loop's sync; a block that ended on the region's end tries none.
            self.pass_end_at = (r.seq[d] != r.len).then_some(r.start + r.seq[d]);
            self.file_done(f, d, min);
        }
    }

    /// The sequential position of file `f` in direction `d` has no room for a block of `min`
    /// bytes: the file is done for this pass, and when every file is, the pass is over (the
    /// worker decides whether another starts, from the regions' starts).
    #[cold]
    #[inline(never)]
    fn file_done(&mut self, f: usize, d: usize, min: u64) {
        if self.regions.len() > 1 {
            self.files.finished(f);
        }
        if self.regions.iter().all(|r| r.seq[d] >= r.len || r.seq[d] + min > r.room) {
            self.end_all_passes();
        }
    }

    /// A mixed job drew a direction that has no room left in `file`: that draw is used up
    /// and the file is done for this pass, closed at once (fio 3.33's logs show its close
    /// before the next I/O, while the direction not yet at the end stays short of it). The
    /// next I/O draws its direction and file again; when no file is left the pass is over.
    /// `pos` is where the block would have started in the region (see `pass_end_at`).
    #[cold]
    #[inline(never)]
    fn mixed_no_room(&mut self, file: usize, pos: u64) -> Option<NextIo> {
        let end_at = (pos != self.regions[file].len).then_some(self.regions[file].start + pos);
        self.drop_direction();
        if self.regions.len() > 1 && !self.files.last_open(file) && self.files.close_now(file) {
            return self.next();
        }
        self.restart_mix();
        // The last file closes first, before the loop's end closes any other still open.
        self.files.record_close(file);
        self.pass_end_at = end_at;
        self.end_all_passes();
        None
    }

    /// The pass over every file is over: the next starts from the regions' starts.
    fn end_all_passes(&mut self) {
        for r in &mut self.regions {
            r.seq = [0; 3];
        }
        self.pass_over = true;
    }

    /// Whether a pass ended with the last I/O drawn (see [`IoGen::set_rooms`]); the first I/O
    /// of the next pass marks a new pass (`take_new_pass`).
    #[inline]
    pub fn take_pass_over(&mut self) -> bool {
        // trimwrite: the write of the pass's last trimmed block comes first.
        if self.pending_write.is_some() || !std::mem::take(&mut self.pass_over) {
            return false;
        }
        // fio opens every file again for the next pass, dropping each one's cache.
        self.new_pass = Some(ALL_FILES);
        true
    }

    /// Ends a sequential pass before the generator reached its region's end (a zoned job
    /// that skipped the zones' unwritable parts ran out of region first): as when a pass ends
    /// on a partial block, the next loop starts from the region's start, and the job ends when
    /// none is left. Returns whether another pass starts.
    pub fn end_pass(&mut self, file: usize) -> bool {
        if !self.time_based {
            if self.loops_left <= 1 {
                return false;
            }
            self.loops_left -= 1;
        }
        self.restart_pass(file);
        true
    }

    /// Every region's sequential positions back to their start, a new pass over `file`.
    fn restart_pass(&mut self, file: usize) {
        for r in &mut self.regions {
            r.seq = [0; 3];
        }
        self.new_pass = Some(file);
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
        if (io.len() as u64) <= remaining || io.ddir() as usize >= 3 {
            return Some(io);
        }
        let min = self.sizes[io.ddir() as usize].min();
        if remaining < min {
            return None;
        }
        io = io.with_len((remaining / min * min) as u32);
        Some(io)
    }

    /// The `fsync=N`, `fdatasync=N` or `sync_file_range=...:N` sync the next draw would issue
    /// (the writes issued are a multiple of N and the last I/O was no sync), without drawing
    /// it.
    pub fn due_fsync(&self) -> Option<NextIo> {
        let n = self.writes;
        let (_, ddir) = self.syncs.iter().find(|&&(every, _)| every > 0 && n % every == 0)?;
        let file = self.last.map_or(0, |l| l.file());
        self.sync_due.then_some(NextIo::new(*ddir, file, 0, 0))
    }

    /// A new loop: the file service starts it with every file back (see
    /// [`super::files::FilePicker::new_loop`]).
    pub fn new_loop(&mut self) {
        if self.full_redraws && self.regions.len() > 1 {
            self.pending_redraws = self.files.done_unclosed();
        }
        self.files.new_loop();
    }

    /// Records the files the file service closes from now on (for `write_iolog`).
    pub fn track_closes(&mut self) {
        self.files.track_closes();
    }

    /// The files closed since the last call, in order (see [`super::files::FilePicker`]).
    pub fn take_closed(&mut self) -> Vec<usize> {
        self.files.take_closed()
    }

    /// Makes the last write's sync due again (drawn next), as after a loop that ended on it.
    pub fn rearm_sync(&mut self) {
        self.sync_due = true;
    }

    /// Counts an issued read, write or trim (never a sync).
    #[inline]
    fn count_write(&mut self, ddir: Ddir) {
        if ddir == Ddir::Write {
            self.writes += 1;
        }
        self.sync_due = self.syncing && self.writes > 0;
    }
}

/// The sprandom order of blocks over the job's one file region, when the job asks for it (the
/// plan has checked its layout).
fn sprandom(
    spec: &JobSpec,
    regions: &[(u64, u64)],
    randseed: u64,
    thread_number: u64,
) -> Option<Box<super::sprandom::Sprandom>> {
    let &(_, len) = regions.first().filter(|_| spec.sprandom.on)?;
    let layout = crate::plan::sprandom::Layout::new(spec, len).ok()?;
    Some(Box::new(super::sprandom::Sprandom::new(layout, randseed, thread_number)))
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
        let reads = (0..10000).filter(|_| g.next().unwrap().ddir() == Ddir::Read).count();
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
    fn varied_sizes_do_every_block_once_per_pass() {
        // With the map, I/Os are cut short at blocks already done, as fio's: one pass over 4 MiB
        // touches each 4 KiB block exactly once, and the next pass starts afresh.
        let s = spec(&["--rw=randread", "--bssplit=4k/50:64k/50", "--size=4m"]);
        let mut g = IoGen::new(&s, &[(0, 4 << 20)], 9);
        for pass in 0..2 {
            let mut seen = vec![0u32; 1024];
            let mut bytes = 0u64;
            let mut cut = 0;
            while bytes < 4 << 20 {
                let n = g.next().unwrap();
                assert!(n.offset % 4096 == 0 && n.len() % 4096 == 0 && n.offset + n.len() as u64 <= 4 << 20, "{n:?}");
                cut += usize::from(n.len() != 4096 && n.len() != 65536);
                for b in n.offset / 4096..(n.offset + n.len() as u64) / 4096 {
                    seen[b as usize] += 1;
                }
                bytes += n.len() as u64;
            }
            assert!(seen.iter().all(|&c| c == 1), "pass {pass}: a block done twice or never");
            assert!(cut > 0, "pass {pass}: no I/O was cut short");
            assert_eq!(g.take_new_pass().is_some(), pass == 1, "pass {pass}");
        }
    }

    #[test]
    fn lfsr_keeps_each_block_once_per_pass_without_the_map() {
        for (gen, once) in [("lfsr", true), ("tausworthe", false)] {
            let s = spec(&["--rw=randread", "--size=4m", "--norandommap", &format!("--random_generator={gen}")]);
            let mut g = IoGen::new(&s, &[(0, 4 << 20)], 9);
            let mut seen = vec![0u32; 1024];
            for _ in 0..1024 {
                seen[(g.next().unwrap().offset / 4096) as usize] += 1;
            }
            assert_eq!(seen.iter().all(|&c| c == 1), once, "random_generator={gen}");
        }
    }

    #[test]
    fn bssplit_and_bsrange() {
        // Without the random map every pick keeps its size.
        let s = spec(&["--rw=randread", "--bssplit=4k/25:64k/75", "--size=16m", "--norandommap"]);
        let mut g = IoGen::new(&s, &[(0, 16 << 20)], 5);
        let big = (0..4000).filter(|_| g.next().unwrap().len() == 65536).count();
        assert!((2800..3200).contains(&big), "{big}");
        let s = spec(&["--rw=read", "--bsrange=4k-16k", "--size=1m"]);
        let mut g = IoGen::new(&s, &[(0, 1 << 20)], 5);
        for _ in 0..100 {
            let n = g.next().unwrap();
            assert!(n.len() % 4096 == 0 && (4096..=16384).contains(&n.len()), "{n:?}");
        }
        // Multiples of the low end (a power of two or not), the high end as likely as the
        // others or capped from the rest of the span, as fio draws them.
        for (range, want) in
            [("512-4k", &[(512, 0.125), (4096, 0.125)][..]), ("1000-2500", &[(1000, 0.4), (2500, 0.2)])]
        {
            let s = spec(&["--rw=read", &format!("--bsrange={range}"), "--size=1g", "--norandommap"]);
            let mut g = IoGen::new(&s, &[(0, 1 << 30)], 5);
            let lens: Vec<u64> = (0..20_000).map(|_| u64::from(g.next().unwrap().len())).collect();
            let lo = if range == "512-4k" { 512 } else { 1000 };
            assert!(lens.iter().all(|l| l % lo == 0 || *l == 2500), "{range}");
            for &(len, share) in want {
                let got = lens.iter().filter(|&&l| l == len).count() as f64 / 20_000.0;
                assert!((got - share).abs() < 0.02, "{range}: {len} drawn {got}");
            }
        }
    }

    #[test]
    fn fsync_every_n_writes() {
        let s = spec(&["--rw=write", "--fsync=2", "--size=64k"]);
        let mut g = IoGen::new(&s, &[(0, 65536)], 5);
        let d: Vec<Ddir> = (0..6).map(|_| g.next().unwrap().ddir()).collect();
        assert_eq!(d, [Ddir::Write, Ddir::Write, Ddir::Sync, Ddir::Write, Ddir::Write, Ddir::Sync]);
    }

    #[test]
    fn trimwrite_pairs() {
        let s = spec(&["--rw=trimwrite", "--size=16k"]);
        let mut g = IoGen::new(&s, &[(0, 16384)], 3);
        let a = g.next().unwrap();
        let b = g.next().unwrap();
        assert_eq!((a.ddir(), b.ddir(), a.offset, b.offset), (Ddir::Trim, Ddir::Write, 0, 0));
        assert_eq!(g.next().unwrap().offset, 4096);
    }
}
