//! What write buffers contain: random data (fio's default, lightly scrambled before each write
//! so deduplicating storage cannot collapse the writes), zeros (`zero_buffers`), fresh random
//! data each time (`refill_buffers`), a `buffer_pattern`, data that compresses to
//! `buffer_compress_percentage` (in `buffer_compress_chunk` pieces), and a share of writes that
//! repeat an earlier buffer exactly (`dedupe_percentage`): the last unique one
//! (`dedupe_mode=repeat`) or one of a working set (`working_set`, see `plan::dedupe`).

use anyhow::Result;
use fiox_options::JobSpec;

use super::offsets::Rng;
use crate::plan::dedupe::WorkingSet;
use crate::plan::mix64;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Set once, never changed (zeros, or random data with scrambling off).
    Fixed,
    Scramble,
    Refill,
    Pattern,
    /// Random bytes then zeros in each chunk, regenerated for every write.
    Compress,
}

pub struct Content {
    mode: Mode,
    /// `zero_buffers`: the zeroed buffers are left as they are.
    zero: bool,
    pattern: Vec<u8>,
    /// Percent of each chunk left as zeros.
    compress_pct: u32,
    chunk: usize,
    dedupe_pct: u32,
    /// The last buffer generated, which a deduplicated write repeats (`repeat` mode).
    last: Vec<u8>,
    /// The working set deduplicated writes pick from, and how many of this job's own members
    /// its unique writes have made so far.
    set: Option<WorkingSet>,
    set_made: u64,
    rng: Rng,
}

impl Content {
    pub fn new(spec: &JobSpec, seed: u64) -> Result<Content> {
        let pattern = spec.buffer_pattern.clone().unwrap_or_default();
        let mode = if spec.zero_buffers {
            Mode::Fixed
        } else if !pattern.is_empty() {
            Mode::Pattern
        } else if spec.buffer_compress_percentage > 0 {
            Mode::Compress
        } else if spec.refill_buffers || spec.dedupe_percentage > 0 {
            Mode::Refill
        } else if spec.scramble_buffers {
            Mode::Scramble
        } else {
            Mode::Fixed
        };
        Ok(Content {
            mode,
            zero: spec.zero_buffers,
            pattern,
            compress_pct: spec.buffer_compress_percentage,
            chunk: (spec.buffer_compress_chunk as usize).max(1),
            dedupe_pct: spec.dedupe_percentage,
            last: Vec::new(),
            set: None,
            set_made: 0,
            rng: Rng::new(seed ^ 0xb0ff),
        })
    }

    /// Deduplicated writes come from `set` instead of repeating the last unique buffer. A set
    /// of the job's own is seeded from the job's seed; a shared one has the same seed in every
    /// job, so all of them make the same members.
    pub fn with_working_set(mut self, set: Option<WorkingSet>, seed: u64) -> Content {
        self.set = set.filter(|s| s.len > 0).map(|mut s| {
            if !s.global {
                s.seed = mix64(seed ^ 0xd3d0_5e75);
            }
            s
        });
        self
    }

    /// Fills `buf` with working-set member `i`: the job's random stream is set aside while
    /// the member's own seed makes it.
    fn member(&mut self, buf: &mut [u8], i: u64, set: WorkingSet) {
        let saved = std::mem::replace(&mut self.rng, Rng::new(set.member_seed(i)));
        self.generate(buf);
        self.rng = saved;
    }

    fn random(&mut self, buf: &mut [u8]) {
        for w in buf.chunks_mut(8) {
            w.copy_from_slice(&self.rng.next_u64().to_le_bytes()[..w.len()]);
        }
    }

    fn generate(&mut self, buf: &mut [u8]) {
        match self.mode {
            Mode::Pattern => {
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = self.pattern[i % self.pattern.len()];
                }
            }
            Mode::Compress => {
                let keep = self.chunk * (100 - self.compress_pct.min(100)) as usize / 100;
                for c in buf.chunks_mut(self.chunk) {
                    let k = keep.min(c.len());
                    let (data, zeros) = c.split_at_mut(k);
                    for w in data.chunks_mut(8) {
                        w.copy_from_slice(&self.rng.next_u64().to_le_bytes()[..w.len()]);
                    }
                    zeros.fill(0);
                }
            }
            _ => self.random(buf),
        }
    }

    /// Fills a buffer when the job starts (buffers start zeroed).
    pub fn initial(&mut self, buf: &mut [u8]) {
        if !self.zero {
            self.generate(buf);
        }
    }

    /// Whether buffers change before each write.
    pub fn changes(&self) -> bool {
        !matches!(self.mode, Mode::Fixed | Mode::Pattern)
    }

    /// Prepares the `len` bytes of a buffer about to be written at `offset`.
    #[inline]
    pub fn before_write(&mut self, buf: &mut [u8], len: usize, offset: u64) {
        let n = len.min(buf.len());
        let buf = &mut buf[..n];
        match self.mode {
            Mode::Fixed | Mode::Pattern => {}
            Mode::Scramble => {
                let stamp = self.rng.next_u64() ^ offset;
                for sector in buf.chunks_mut(512) {
                    let k = sector.len().min(8);
                    sector[..k].copy_from_slice(&stamp.to_le_bytes()[..k]);
                }
            }
            Mode::Refill | Mode::Compress => {
                if let Some(set) = self.set {
                    if self.rng.below(100) < self.dedupe_pct as u64 {
                        let i = self.rng.below(set.len);
                        self.member(buf, i, set);
                    } else if self.set_made < set.own {
                        // The job's first unique writes are its members of the set.
                        self.member(buf, set.first + self.set_made, set);
                        self.set_made += 1;
                    } else {
                        self.generate(buf);
                    }
                    return;
                }
                if self.dedupe_pct > 0 && self.last.len() >= n && self.rng.below(100) < self.dedupe_pct as u64 {
                    buf.copy_from_slice(&self.last[..n]);
                    return;
                }
                self.generate(buf);
                if self.dedupe_pct > 0 {
                    self.last.clear();
                    self.last.extend_from_slice(buf);
                }
            }
        }
    }
}
