//! Verification in a job: writes made into fio 3.33's verify blocks (the format is
//! `fiox-verify`'s), a map of what each write left where, the read-back of a write job's
//! blocks (`do_verify`, `verify_only`), and the check of every read that is verified.
//!
//! The map is what fio lacks: every verify interval a write of this run covered holds the
//! generation stamp of the newest write that completed there (8 bytes per interval, in chunks
//! allocated as they are written, so a large device costs what the job touches). The stamp is
//! written into the header's time fields, which fio writes but never checks, so blocks stay
//! readable by fio while fiox can tell a lost or stale write (a valid block of an older
//! generation) from the current one.

use std::collections::{HashMap, VecDeque};
use std::io::Write as _;

use fiox_engine::Ddir;
use fiox_options::VerifySpec;
use fiox_verify::journal::{self, JournalHeader, Rec, RecKind};

use fiox_verify::state::VerifyState;
use fiox_verify::{Failure, Header, Kind, Layout, Stamp};

use super::offsets::Rng;
use crate::plan::io::NextIo;
use crate::plan::mix64;
use crate::plan::verify::{interval, layout};
use crate::plan::WorkerPlan;

/// Marks the first interval of a write in a map entry.
const START: u64 = 1 << 63;
/// Marks an interval already verified (by `verify_backlog`), which the read-back skips.
const VERIFIED: u64 = 1 << 62;
/// The stamp bits of an entry.
const STAMP: u64 = !(START | VERIFIED);
/// The stamp of a block this run trimmed (`trim_percentage` with `trim_verify_zero`): it must
/// read back as zeros. No write's stamp is this small (generation ids have bit 29 set).
const TRIMMED: u64 = 1;
/// The stamp of a block whose generation is unknown (`verify_only` rebuilds the blocks of an
/// earlier run): only the header and checksum are checked.
const ANY: u64 = STAMP;
/// Map entries per chunk.
const CHUNK: usize = 1 << 12;

/// Bits of a generation id below its run tag: the job's number (fiox runs at most 4088 jobs).
const RUN_SHIFT: u32 = 12;

/// A job's generation id (the `time_sec` of its blocks): bit 29 set (so it is never 0, and
/// the map's two flag bits stay free), a 17-bit tag of the run, the job's number. Jobs of one
/// run share the tag, so a block another job of this run wrote is told from an older run's.
fn generation_id(run_id: u64, number: usize) -> u32 {
    let tag = (mix64(run_id) & 0x1_ffff) as u32;
    (1 << 29) | tag << RUN_SHIFT | (number as u32 & ((1 << RUN_SHIFT) - 1))
}

/// What fiox writes in a state file's offset-generator field (which fio 3.33 never reads when
/// loading, and leaves zero for sequential jobs): `FIOX` and the writing run's tag, so that a
/// state left by another run than the one whose blocks are on the device is recognised.
fn state_mark(tag: u32) -> [u8; 48] {
    let mut r = [0u8; 48];
    r[..4].copy_from_slice(b"FIOX");
    r[4..8].copy_from_slice(&tag.to_le_bytes());
    r
}

/// The run tag a state file was saved with, when fiox saved it.
fn state_tag(st: &VerifyState) -> Option<u32> {
    (&st.rand[..4] == b"FIOX").then(|| u32::from_le_bytes(st.rand[4..8].try_into().expect("4 bytes")))
}

/// Where a job's verify state file is: fio's name, in the working directory.
pub fn state_path(plan: &WorkerPlan) -> String {
    fiox_verify::state::file_name(None, &plan.spec.name, plan.number - 1)
}

/// One file's map: entry `i` describes the interval at `base + i * interval`.
struct FileMap {
    base: u64,
    chunks: Vec<Option<Box<[u64]>>>,
}

/// The newest completed write over every interval of a job's files.
pub struct WriteMap {
    interval: u64,
    files: Vec<FileMap>,
    /// Where the read-back is: file, entry.
    cursor: (usize, usize),
    /// Longest block the read-back may issue, in intervals.
    max_intervals: usize,
    /// Entries set (for the report).
    pub blocks: u64,
}

impl WriteMap {
    fn new(plan: &WorkerPlan, interval: u64, max_block: u64) -> WriteMap {
        let files = plan
            .files
            .iter()
            .map(|f| {
                let n = f.region_len.div_ceil(interval) as usize;
                FileMap { base: f.region_start, chunks: (0..n.div_ceil(CHUNK)).map(|_| None).collect() }
            })
            .collect();
        WriteMap { interval, files, cursor: (0, 0), max_intervals: (max_block / interval).max(1) as usize, blocks: 0 }
    }

    /// The entry index of `offset` in `file`, when it is an interval boundary in the region.
    fn index(&self, file: usize, offset: u64) -> Option<usize> {
        let f = self.files.get(file)?;
        let rel = offset.checked_sub(f.base)?;
        (rel % self.interval == 0).then_some((rel / self.interval) as usize)
    }

    fn get(&self, file: usize, i: usize) -> u64 {
        self.files.get(file).and_then(|f| f.chunks.get(i / CHUNK)).and_then(|c| c.as_ref()).map_or(0, |c| c[i % CHUNK])
    }

    fn set(&mut self, file: usize, i: usize, v: u64) {
        let Some(slot) = self.files.get_mut(file).and_then(|f| f.chunks.get_mut(i / CHUNK)) else { return };
        let chunk = slot.get_or_insert_with(|| vec![0; CHUNK].into_boxed_slice());
        chunk[i % CHUNK] = v;
    }

    /// Records a completed write of `len` bytes at `offset` with `stamp`.
    fn record(&mut self, file: usize, offset: u64, len: u32, stamp: u64) {
        let Some(first) = self.index(file, offset) else { return };
        let n = (len as u64).div_ceil(self.interval) as usize;
        for k in 0..n {
            if self.get(file, first + k) == 0 {
                self.blocks += 1;
            }
            self.set(file, first + k, if k == 0 { stamp | START } else { stamp });
        }
    }

    /// Forgets every block, for the next loop of writes.
    fn clear(&mut self) {
        for f in &mut self.files {
            f.chunks.iter_mut().for_each(|c| *c = None);
        }
        self.cursor = (0, 0);
        self.blocks = 0;
    }

    /// Forgets what was written over a range: its contents are unknown.
    fn forget(&mut self, file: usize, offset: u64, len: u32) {
        let Some(first) = self.index(file, offset) else { return };
        for k in 0..(len as u64).div_ceil(self.interval) as usize {
            if self.get(file, first + k) != 0 {
                self.set(file, first + k, 0);
            }
        }
    }

    /// Rebuilds the map from a journal's records, in their order. Returns the intervals whose
    /// last write never completed, with that write's stamp: their blocks hold the contents of
    /// the write before (which the map keeps) or of that one.
    fn replay(&mut self, recs: &[Rec]) -> HashMap<(usize, usize), u64> {
        let mut pending: HashMap<u64, Rec> = HashMap::new();
        for r in recs {
            let file = r.file as usize;
            match r.kind {
                RecKind::Pending => {
                    pending.insert(r.stamp, *r);
                }
                RecKind::Done => {
                    pending.remove(&r.stamp);
                    self.record(file, r.offset, r.len, r.stamp);
                }
                RecKind::Failed => {
                    pending.remove(&r.stamp);
                    self.forget(file, r.offset, r.len);
                }
            }
        }
        let mut in_flight = HashMap::new();
        for r in pending.values() {
            let Some(first) = self.index(r.file as usize, r.offset) else { continue };
            for k in 0..(r.len as u64).div_ceil(self.interval) as usize {
                in_flight.insert((r.file as usize, first + k), r.stamp);
            }
        }
        in_flight
    }

    /// The stamp expected at `offset` (0: never written by this run).
    fn expected(&self, file: usize, offset: u64) -> u64 {
        self.index(file, offset).map_or(0, |i| self.get(file, i) & STAMP)
    }

    /// Marks the intervals of a verified block that still hold `stamp`, so the read-back
    /// skips them.
    fn verified(&mut self, file: usize, offset: u64, len: u32, stamp: u64) {
        let Some(first) = self.index(file, offset) else { return };
        for k in 0..(len as u64).div_ceil(self.interval) as usize {
            let e = self.get(file, first + k);
            if e & STAMP == stamp {
                self.set(file, first + k, e | VERIFIED);
            }
        }
    }

    /// The next block to read back: the intervals of one write still holding its stamp, in
    /// file and offset order. `None` when every block was read.
    pub fn next_read(&mut self) -> Option<NextIo> {
        while self.cursor.0 < self.files.len() {
            let (fi, mut i) = self.cursor;
            let f = &self.files[fi];
            let total = f.chunks.len() * CHUNK;
            while i < total {
                match &f.chunks[i / CHUNK] {
                    None => i = (i / CHUNK + 1) * CHUNK,
                    Some(c) if c[i % CHUNK] == 0 || c[i % CHUNK] & VERIFIED != 0 => i += 1,
                    Some(_) => break,
                }
            }
            if i >= total {
                self.cursor = (fi + 1, 0);
                continue;
            }
            let stamp = self.get(fi, i) & STAMP;
            let mut n = 1;
            while n < self.max_intervals && self.get(fi, i + n) == stamp {
                n += 1;
            }
            self.cursor = (fi, i + n);
            let offset = f.base + i as u64 * self.interval;
            let len = (n as u64 * self.interval) as u32;
            return Some(NextIo::new(Ddir::Read, fi, offset, len).checked());
        }
        None
    }
}

/// `verify_backlog`: completed writes waiting to be read back while the job writes on.
struct Backlog {
    /// Read back after every this many writes, this many blocks at a time.
    every: u64,
    batch: u64,
    due: u64,
    /// Completed writes not yet read back, oldest first: file, offset, length, stamp.
    fifo: VecDeque<(u32, u64, u32, u64)>,
}

/// `trim_percentage`: completed writes picked to be trimmed, and when.
struct Trims {
    /// Percent of completed writes picked.
    pct: u64,
    /// Trim after every this many writes completed, this many picked blocks at a time.
    every: u64,
    batch: u64,
    writes: u64,
    due: u64,
    /// Trimmed blocks must read back as zeros (`trim_verify_zero`); otherwise they are not
    /// verified at all.
    zero: bool,
    /// Picked writes not yet trimmed, oldest first: file, offset, length, stamp.
    fifo: VecDeque<(u32, u64, u32, u64)>,
    rng: Rng,
}

/// A verify failure found in a read, as the job reports it.
pub struct Verdict {
    /// fio's lines for the first failure of the block (fiox's for a stale one), ready to print.
    pub message: String,
}

/// A worker's verification: how it writes, what it remembers, what it checks.
pub struct Verifier {
    layout: Layout,
    kind: Kind,
    /// The map of this job's writes, when it reads them back.
    pub map: Option<WriteMap>,
    /// The stamp each unit's write carries, by unit.
    unit_stamp: Vec<u64>,
    /// This worker's generation id (the header's `time_sec`), and its writes so far (`time_nsec`).
    id: u32,
    seq: u32,
    numberio: u16,
    thread: u16,
    rng: Rng,
    /// Reads are checked: always in a job that only reads, in a write job's read-back phase.
    pub check_reads: bool,
    /// io_u flags fio prints with a failure: 0x8 for a read job, 0x88 for a read-back.
    flags: u32,
    pub dump: bool,
    pub fatal: bool,
    /// Blocks are read back after the writes (`do_verify`, `verify_only`).
    pub read_back: bool,
    /// `verify_only`: nothing is written.
    pub only: bool,
    /// An engine that moves no data (null): reads are not checked, as in fio, but writes
    /// are made into blocks, so the cost of verification can be measured.
    diskless: bool,
    /// Writes issued, and the last ones completed (file, offset), newest first: what a
    /// verify state file records.
    issued: u64,
    recent: VecDeque<(u64, u64)>,
    recent_max: usize,
    /// `verify_state_load`: the point an earlier run's writes reached, and the blocks checked
    /// against it so far.
    pub state: Option<VerifyState>,
    pub state_reads: u64,
    backlog: Option<Backlog>,
    /// Per unit: its read verifies (see `NextIo::check`).
    unit_check: Vec<bool>,
    /// `verify_journal` of a writing job: the file and the records not yet written to it.
    journal: Option<(std::fs::File, Vec<u8>)>,
    /// From a loaded journal: intervals whose last write was in flight when the writer
    /// stopped, with that write's stamp (the old and the new contents are both right there).
    in_flight: HashMap<(usize, usize), u64>,
    /// The run tag of the blocks' writer: this run's, or the journal's.
    tag: u32,
    /// The blocks come from a journal: the read-back reads them (no dry run).
    pub from_journal: bool,
    trims: Option<Trims>,
}

impl Verifier {
    pub fn new(plan: &WorkerPlan, v: &VerifySpec, depth: u32, seed: u64, run_id: u64) -> anyhow::Result<Verifier> {
        let spec = &*plan.spec;
        let interval = interval(spec, v);
        let layout = layout(spec, v);
        let writes = spec.rw.writes();
        let read_back = writes && (v.after_write || v.only);
        let max_block = crate::plan::io::max_block(spec);
        let id = generation_id(run_id, plan.number);
        let state = if v.state_load {
            let path = state_path(plan);
            let bytes = std::fs::read(&path)
                .map_err(|e| anyhow::anyhow!("job '{}': verify_state_load: cannot read '{path}': {e}", spec.name))?;
            let st = VerifyState::decode(&bytes)
                .map_err(|e| anyhow::anyhow!("job '{}': verify_state_load: '{path}': {e}", spec.name))?;
            Some(st)
        } else {
            None
        };
        let recent_max = (depth as usize).max(1) * plan.files.len().max(1);
        let mut map = read_back.then(|| WriteMap::new(plan, interval, max_block));
        let mut in_flight = HashMap::new();
        let mut tag = id >> RUN_SHIFT;
        let mut from_journal = false;
        let mut journal = None;
        if let Some(path) = &v.journal {
            let ctx = |e: String| anyhow::anyhow!("job '{}': verify_journal '{path}': {e}", spec.name);
            if writes && !v.only {
                let header = JournalHeader {
                    run_tag: tag,
                    interval,
                    files: plan.files.iter().map(|f| (f.path.display().to_string(), f.region_start)).collect(),
                };
                let mut f = std::fs::File::create(path).map_err(|e| ctx(e.to_string()))?;
                f.write_all(&header.encode()).map_err(|e| ctx(e.to_string()))?;
                journal = Some((f, Vec::with_capacity(64 * journal::RECORD_LEN)));
            } else {
                let bytes = std::fs::read(path).map_err(|e| ctx(e.to_string()))?;
                let (header, recs) = journal::decode(&bytes).map_err(ctx)?;
                let names: Vec<String> = plan.files.iter().map(|f| f.path.display().to_string()).collect();
                let written: Vec<&String> = header.files.iter().map(|(p, _)| p).collect();
                if written != names.iter().collect::<Vec<_>>() {
                    return Err(ctx(format!("it records the files {written:?}, this job has {names:?}")));
                }
                if header.interval != interval {
                    return Err(ctx(format!(
                        "it was written with a {}-byte verify interval, this job uses {interval}",
                        header.interval
                    )));
                }
                let mut m = WriteMap::new(plan, interval, max_block);
                in_flight = m.replay(&recs);
                map = Some(m);
                tag = header.run_tag;
                from_journal = true;
            }
        }
        Ok(Verifier {
            layout,
            kind: v.kind,
            map,
            unit_stamp: vec![0; depth as usize],
            id,
            seq: 0,
            numberio: 0,
            thread: plan.number as u16,
            rng: Rng::new(mix64(seed ^ 0x7e61_f1e5)),
            // A remote engine's data is real (rbd, rados), so its reads are checked.
            check_reads: !writes && (!plan.engine.diskless || plan.engine.remote.is_some()),
            diskless: plan.engine.diskless && plan.engine.remote.is_none(),
            flags: 0x8,
            dump: v.dump,
            fatal: v.fatal,
            read_back,
            only: v.only && writes,
            issued: 0,
            recent: VecDeque::with_capacity(recent_max),
            recent_max,
            state,
            state_reads: 0,
            backlog: (v.backlog > 0 && read_back && !v.only).then(|| Backlog {
                every: v.backlog,
                batch: if v.backlog_batch > 0 { v.backlog_batch } else { v.backlog },
                due: 0,
                fifo: VecDeque::new(),
            }),
            unit_check: vec![false; depth as usize],
            journal,
            in_flight,
            tag,
            from_journal,
            trims: (v.trim_percentage > 0 && read_back && !v.only).then(|| {
                let every = v.trim_backlog.max(1);
                Trims {
                    pct: v.trim_percentage,
                    every,
                    batch: if v.trim_backlog_batch > 0 { v.trim_backlog_batch } else { every },
                    writes: 0,
                    due: 0,
                    zero: v.trim_verify_zero,
                    fifo: VecDeque::new(),
                    rng: Rng::new(mix64(seed ^ 0x7219)),
                }
            }),
        })
    }

    /// `trim_percentage`: the next trim to issue now, if a batch is due: the oldest picked
    /// write whose blocks still hold its data.
    #[inline]
    pub fn trim_next(&mut self) -> Option<NextIo> {
        let t = self.trims.as_mut()?;
        let map = self.map.as_ref()?;
        while t.due > 0 {
            let Some((file, offset, len, stamp)) = t.fifo.pop_front() else {
                t.due = 0;
                break;
            };
            if map.expected(file as usize, offset) == stamp {
                t.due -= 1;
                return Some(NextIo::new(Ddir::Trim, file as usize, offset, len).checked());
            }
        }
        None
    }

    /// A trim of the job's own blocks completed: they now read as zeros, which the read-back
    /// checks (or, without `trim_verify_zero`, they are not verified).
    pub fn trimmed(&mut self, file: usize, offset: u64, len: u32) {
        let zero = self.trims.as_ref().is_some_and(|t| t.zero);
        if let Some(m) = &mut self.map {
            if zero {
                m.record(file, offset, len, TRIMMED);
            } else {
                m.forget(file, offset, len);
            }
        }
    }

    /// Writes the journal's pending records: before a write reaches the device, its record
    /// must be in the file (a crash between the two must not leave a write the journal does
    /// not know).
    #[inline]
    pub fn flush_journal(&mut self) -> std::io::Result<()> {
        match &mut self.journal {
            Some((f, buf)) if !buf.is_empty() => {
                let r = f.write_all(buf);
                buf.clear();
                r
            }
            _ => Ok(()),
        }
    }

    /// The job is over: the journal's last records go to the file and to stable storage.
    pub fn close_journal(&mut self) -> std::io::Result<()> {
        self.flush_journal()?;
        match &self.journal {
            Some((f, _)) => f.sync_data(),
            None => Ok(()),
        }
    }

    fn journal_rec(&mut self, kind: RecKind, file: usize, offset: u64, len: u32, stamp: u64) {
        if let Some((_, buf)) = &mut self.journal {
            Rec { kind, file: file as u16, len, offset, stamp }.encode(buf);
        }
    }

    /// A write of unit `unit` failed: its blocks hold unknown contents, which are not checked
    /// (as fio drops a failed write from its list).
    pub fn write_failed(&mut self, unit: u32, file: usize, offset: u64, len: u32) {
        let stamp = self.unit_stamp[unit as usize];
        self.journal_rec(RecKind::Failed, file, offset, len, stamp);
        if let Some(m) = &mut self.map {
            m.forget(file, offset, len);
        }
    }

    /// Makes unit `unit`'s buffer the verify block of a write of `buf.len()` bytes at `offset`.
    #[inline]
    pub fn seal(&mut self, unit: u32, buf: &mut [u8], file: usize, offset: u64) {
        self.seq = self.seq.wrapping_add(1).max(1);
        let stamp = Stamp {
            rand_seed: self.rng.next_u64(),
            time_sec: self.id,
            time_nsec: self.seq,
            thread: self.thread,
            numberio: self.numberio,
        };
        self.numberio = self.numberio.wrapping_add(1);
        self.issued += 1;
        self.layout.fill(buf, offset, &stamp);
        let stamp = (self.id as u64) << 32 | self.seq as u64;
        self.unit_stamp[unit as usize] = stamp;
        if self.journal.is_some() {
            let len = buf.len() as u32;
            self.journal_rec(RecKind::Pending, file, offset, len, stamp);
        }
    }

    /// A write of unit `unit` completed: its blocks now hold its stamp.
    #[inline]
    pub fn written(&mut self, unit: u32, file: usize, offset: u64, len: u32) {
        let stamp = self.unit_stamp[unit as usize];
        if let Some(m) = &mut self.map {
            m.record(file, offset, len, stamp);
        }
        if self.journal.is_some() {
            self.journal_rec(RecKind::Done, file, offset, len, stamp);
        }
        if let Some(b) = &mut self.backlog {
            // As fio: a batch is due whenever the writes waiting to be read back are a multiple
            // of verify_backlog (with a smaller batch, the queue then grows by the difference).
            b.fifo.push_back((file as u32, offset, len, self.unit_stamp[unit as usize]));
            if b.fifo.len() as u64 % b.every == 0 {
                b.due += b.batch;
            }
        }
        if let Some(t) = &mut self.trims {
            if t.rng.below(100) < t.pct {
                t.fifo.push_back((file as u32, offset, len, stamp));
            }
            t.writes += 1;
            if t.writes % t.every == 0 {
                t.due += t.batch;
            }
        }
        if self.recent.len() == self.recent_max {
            self.recent.pop_back();
        }
        self.recent.push_front((file as u64, offset));
    }

    /// What a verify state file records of this job's writes.
    pub fn state(&self, plan: &WorkerPlan, depth: u32) -> VerifyState {
        VerifyState {
            numberio: self.issued,
            depth,
            nofiles: plan.files.len() as u32,
            index: (plan.number - 1) as u64,
            name: plan.spec.name.clone(),
            comps: self.recent.iter().copied().collect(),
            rand: state_mark(self.id >> RUN_SHIFT),
            ..VerifyState::default()
        }
    }

    /// Under `verify_state_load`: whether the block at (`file`, `offset`), the next one
    /// checked, was written before the saved point (false: the check stops here, as fio's).
    pub fn within_state(&mut self, file: usize, offset: u64) -> bool {
        let Some(st) = &self.state else { return true };
        let ok = st.covers(self.state_reads, file as u64, offset);
        self.state_reads += 1;
        ok
    }

    /// `verify_backlog`: the next block to read back now, if a batch is due: the oldest
    /// completed write whose blocks still hold its data (one written over since is skipped;
    /// its successor is in the queue).
    #[inline]
    pub fn backlog_next(&mut self) -> Option<NextIo> {
        let b = self.backlog.as_mut()?;
        let map = self.map.as_ref()?;
        while b.due > 0 {
            let (file, offset, len, stamp) = b.fifo.pop_front()?;
            if map.expected(file as usize, offset) == stamp {
                b.due -= 1;
                return Some(NextIo::new(Ddir::Read, file as usize, offset, len).checked());
            }
        }
        if b.fifo.is_empty() {
            b.due = 0;
        }
        None
    }

    /// Unit `unit` carries `io` now: whether its read verifies is noted.
    #[inline]
    pub fn issue(&mut self, unit: u32, io: &NextIo) {
        self.unit_check[unit as usize] = io.check();
    }

    /// Whether the read unit `unit` completed is checked.
    #[inline]
    pub fn checks(&self, unit: u32) -> bool {
        self.check_reads || (self.unit_check[unit as usize] && !self.diskless)
    }

    /// `verify_only`: the job's write at `offset` is remembered without writing, to be checked
    /// as an earlier run left it.
    pub fn planned(&mut self, file: usize, offset: u64, len: u32) {
        if let Some(m) = &mut self.map {
            m.record(file, offset, len, ANY);
        }
    }

    /// The read-back is over and the job writes its next loop: what was read back is
    /// forgotten (fio's list is emptied by its read-back), reads are no longer checked.
    pub fn end_read_back(&mut self) {
        self.flags = 0x8;
        if let Some(m) = &mut self.map {
            m.clear();
        }
        if let Some(b) = &mut self.backlog {
            b.fifo.clear();
            b.due = 0;
        }
        if let Some(t) = &mut self.trims {
            t.fifo.clear();
            t.due = 0;
        }
    }

    /// The read-back starts: every read from now on is checked against the map.
    pub fn start_read_back(&mut self) {
        self.flags = 0x88;
    }

    /// Checks a read of `buf` (`len` bytes at `offset` of `file`, named `name`). Every interval
    /// is checked; the first failure (or, with `verify_fatal`, the only one) is described.
    pub fn check(&mut self, buf: &mut [u8], file: usize, path: &std::path::Path, offset: u64) -> Option<Verdict> {
        // The file's name is only made for a message: a read that passes allocates nothing.
        let name = path.display();
        if self.kind == Kind::Null {
            return None;
        }
        let len = buf.len();
        let mut message = String::new();
        let mut failures = 0;
        for i in 0..self.layout.intervals(len) {
            let iv_offset = offset + (i * self.layout.interval) as u64;
            if self.trims.is_some() && self.map.as_ref().is_some_and(|m| m.expected(file, iv_offset) == TRIMMED) {
                let iv = &buf[i * self.layout.interval..(i + 1) * self.layout.interval];
                if let Some(at) = iv.iter().position(|&b| b != 0) {
                    failures += 1;
                    if failures == 1 {
                        // fio's words for a trimmed block that does not read back as zeros.
                        message = format!(
                            "trim: verify failed at file {name} offset {iv_offset}, length {}, block offset {at}\n",
                            self.layout.interval
                        );
                    }
                    if self.fatal {
                        break;
                    }
                }
                continue;
            }
            let found = match self.layout.check_interval(buf, offset, i) {
                Ok(h) => h,
                Err(f) => {
                    failures += 1;
                    if failures == 1 {
                        message = f.fio_message(self.kind, &name.to_string(), offset, len as u64, self.flags);
                        if self.dump {
                            message.push_str(&self.dump_block(buf, &name.to_string(), offset, &f));
                        }
                    }
                    if self.fatal {
                        break;
                    }
                    continue;
                }
            };
            if let (Some(h), Some(tag)) = (found, self.state.as_ref().and_then(state_tag)) {
                if h.time_sec >> RUN_SHIFT != tag && h.time_sec & (1 << 29) != 0 {
                    // The blocks are fiox's, but of another run than the state's: a state file
                    // left over from an earlier run (fio uses it silently, with false failures).
                    failures += 1;
                    if failures == 1 {
                        message = format!(
                            "verify: stale verify state file: it was saved by run {tag:05x}, but the block at file {name} offset {iv_offset} was written by run {:05x} (requested block: offset={offset}, length={len})\n",
                            h.time_sec >> RUN_SHIFT
                        );
                    }
                    break;
                }
            }
            if let (Some(h), Some(map)) = (found, &self.map) {
                let want = map.expected(file, iv_offset);
                let got = (h.time_sec as u64) << 32 | h.time_nsec as u64;
                // A block of another job of this run: jobs sharing a file overwrite each
                // other's blocks, which fio accepts (with its warning); so does fiox.
                let sibling = h.time_sec >> RUN_SHIFT == self.tag && (want >> 32) as u32 != h.time_sec;
                let landed = !self.in_flight.is_empty()
                    && map.index(file, iv_offset).and_then(|i| self.in_flight.get(&(file, i))) == Some(&got);
                if want != 0 && want != ANY && got != want && !sibling && !landed {
                    failures += 1;
                    if failures == 1 {
                        message = self.stale_message(&h, want, &name.to_string(), iv_offset, offset, len);
                    }
                    if self.fatal {
                        break;
                    }
                }
            }
        }
        if failures == 0 && self.backlog.is_some() {
            // Verified while writing: the read-back does not read it again (as fio drops it
            // from its list).
            if let Some(map) = &mut self.map {
                let stamp = map.expected(file, offset);
                map.verified(file, offset, len as u32, stamp);
            }
        }
        (failures > 0).then_some(Verdict { message })
    }

    /// fiox's report of a block that holds a valid header of another write than the newest one
    /// that completed there: a lost write, or data from elsewhere in time.
    fn stale_message(&self, h: &Header, want: u64, name: &str, at: u64, offset: u64, len: usize) -> String {
        let (ws, wn) = ((want >> 32) as u32, want as u32);
        let origin = if h.time_sec == ws {
            format!("write #{} of this job", h.time_nsec)
        } else {
            format!("generation {:08x}.{}, another run or job", h.time_sec, h.time_nsec)
        };
        format!(
            "verify: stale block (lost write?): found {origin}, wanted write #{wn} (generation {ws:08x}) at file {name} offset {at}, length {} (requested block: offset={offset}, length={len})\n",
            self.layout.interval
        )
    }

    /// `verify_dump`: the failing interval as read, into `<file>.<offset>.hdr_fail` when its
    /// header is bad, else into `.received` with the interval as it should be (made again
    /// from its header) in `.expected`, in the working directory, as fio names them. Returns
    /// fio's lines naming them.
    fn dump_block(&self, buf: &[u8], name: &str, offset: u64, f: &Failure) -> String {
        use fiox_verify::What;
        let base = std::path::Path::new(name).file_name().map_or(name.into(), |n| n.to_string_lossy().into_owned());
        let iv = self.layout.interval;
        let at = (f.interval * iv).min(buf.len());
        let got = &buf[at..(at + iv).min(buf.len())];
        let mut out = String::new();
        let mut dump = |kind: &str, bytes: &[u8]| {
            let file = format!("{base}.{}.{kind}", f.offset);
            if std::fs::write(&file, bytes).is_ok() {
                out.push_str(&format!("       {kind} data dumped as {file}\n"));
            }
        };
        if matches!(f.what, What::BadMagic(_) | What::BadLength { .. } | What::BadOffset { .. } | What::BadCrc { .. }) {
            dump("hdr_fail", got);
            return out;
        }
        dump("received", got);
        if let Some(h) = Header::decode(got) {
            let mut expected = buf.to_vec();
            let stamp = Stamp {
                rand_seed: h.rand_seed,
                time_sec: h.time_sec,
                time_nsec: h.time_nsec,
                thread: h.thread,
                numberio: h.numberio,
            };
            self.layout.fill(&mut expected, offset, &stamp);
            dump("expected", &expected[at..at + got.len()]);
        }
        out
    }
}
