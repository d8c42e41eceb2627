//! Where a worker's I/O comes from: the generator (`rw`, block sizes, offsets), the generator
//! with its offsets moved into strided zones, or a replayed trace. One `match` per I/O picks
//! the source; the generator's own path is unchanged.

use fiox_engine::Ddir;

use super::iogen::IoGen;
use super::replay::Replay;
use super::zbd::Zbd;
use super::zones::Zones;
use crate::plan::io::NextIo;

pub enum Source {
    Gen(IoGen),
    Zoned(IoGen, Zones),
    /// `zonemode=zbd`: the generator's I/O moved to where the zoned device allows it.
    Zbd(IoGen, Box<Zbd>),
    Replay(Replay),
}

impl Source {
    /// The next I/O; `None` when the pattern (or the trace) is used up.
    // The plain generator's draw is inlined into the worker's and its I/O stays in registers;
    // the other sources are a call of their own. Sharing one return slot with them made every
    // drawn I/O go through memory, written field by field and read back whole: a stalled
    // store-to-load forward per I/O.
    #[inline(always)]
    pub fn next(&mut self) -> Option<NextIo> {
        match self {
            Source::Gen(g) => g.next(),
            _ => self.next_other(),
        }
    }

    /// The next I/O of the zoned, zbd and replayed sources.
    #[inline(never)]
    fn next_other(&mut self) -> Option<NextIo> {
        match self {
            Source::Gen(g) => g.next(),
            Source::Zoned(g, z) => g.next().map(|io| z.place(io)),
            Source::Zbd(g, z) => {
                let io = z.take_held().or_else(|| g.next()).and_then(|io| z.place(io));
                if io.is_some() {
                    return io;
                }
                // A sequential pass that ran out of region early: the next loop, if any.
                let file = z.take_pass_over()?;
                if !g.end_pass(file) {
                    return None;
                }
                z.start_pass();
                g.next().and_then(|io| z.place(io))
            }
            Source::Replay(r) => r.next(),
        }
    }

    /// The zoned device's state, when the job does zoned I/O.
    #[inline]
    pub fn zbd_mut(&mut self) -> Option<&mut Zbd> {
        match self {
            Source::Zbd(_, z) => Some(z),
            _ => None,
        }
    }

    /// The replay, when the source is one (for its timing).
    #[inline]
    pub fn replay_mut(&mut self) -> Option<&mut Replay> {
        match self {
            Source::Replay(r) => Some(r),
            _ => None,
        }
    }

    fn gen(&self) -> Option<&IoGen> {
        match self {
            Source::Gen(g) | Source::Zoned(g, _) | Source::Zbd(g, _) => Some(g),
            Source::Replay(_) => None,
        }
    }

    /// The file that started a new pass with the last I/O, if one did. Under
    /// `zonemode=strided` none does: fio moves from zone to zone and wraps to the first zone
    /// without dropping the cache, which it drops once, when it opens the file (fio 3.33
    /// reads a 64 MiB file over and over with a few dozen device reads).
    #[inline]
    pub fn take_new_pass(&mut self) -> Option<usize> {
        match self {
            Source::Gen(g) | Source::Zbd(g, _) => g.take_new_pass(),
            Source::Zoned(g, _) => g.take_new_pass().and(None),
            Source::Replay(_) => None,
        }
    }

    /// Whether a sequential pass ended with the last I/O drawn (see [`IoGen::set_rooms`]).
    #[inline]
    pub fn take_pass_over(&mut self) -> bool {
        match self {
            Source::Gen(g) => g.take_pass_over(),
            _ => false,
        }
    }

    /// See [`IoGen::take_pass_end_at`].
    pub fn take_pass_end_at(&mut self) -> Option<u64> {
        match self {
            Source::Gen(g) => g.take_pass_end_at(),
            _ => None,
        }
    }

    /// The generator's `fsync=N` sync due next, if one is (see [`IoGen::due_fsync`]).
    pub fn due_fsync(&self) -> Option<NextIo> {
        self.gen().and_then(IoGen::due_fsync)
    }

    /// See [`IoGen::loops_close`]; a replay's loops close its files.
    pub fn loops_close(&self) -> bool {
        self.gen().is_none_or(IoGen::loops_close)
    }

    /// See [`IoGen::new_loop`].
    pub fn new_loop(&mut self) {
        if let Source::Gen(g) | Source::Zoned(g, _) | Source::Zbd(g, _) = self {
            g.new_loop();
        }
    }

    /// See [`IoGen::take_closed`]; a replay closes nothing here.
    pub fn take_closed(&mut self) -> Vec<usize> {
        match self {
            Source::Gen(g) | Source::Zoned(g, _) | Source::Zbd(g, _) => g.take_closed(),
            Source::Replay(_) => Vec::new(),
        }
    }

    /// See [`IoGen::rearm_sync`].
    pub fn rearm_sync(&mut self) {
        if let Source::Gen(g) | Source::Zoned(g, _) | Source::Zbd(g, _) = self {
            g.rearm_sync();
        }
    }

    /// Whether the job mixes reads and writes (so a rate limit can steer the direction).
    pub fn mixes(&self) -> bool {
        self.gen().is_some_and(IoGen::mixes)
    }

    pub fn steer(&mut self, d: Option<Ddir>) {
        if let Source::Gen(g) | Source::Zoned(g, _) | Source::Zbd(g, _) = self {
            g.steer(d);
        }
    }

    /// Fits an I/O into the bytes left of a size-bounded job (see [`IoGen::fit`]); a replayed
    /// I/O is never cut.
    pub fn fit(&self, io: NextIo, remaining: u64) -> Option<NextIo> {
        match self.gen() {
            Some(g) => g.fit(io, remaining),
            None => Some(io),
        }
    }
}
