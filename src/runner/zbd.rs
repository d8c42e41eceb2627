//! `zonemode=zbd`: I/O on zoned block devices as fio 3.33 does it (its HOWTO, and what it was
//! seen to do on emulated NVMe ZNS and zoned null_blk devices).
//!
//! The generator still decides direction, file, length and a first offset; [`Zbd`] then moves
//! each I/O to where the device allows it:
//! - A write goes to its zone's write pointer (a random write too: random I/O picks the zone).
//!   A zone without room for the smallest block is reset first (`BLKRESETZONE`), after the
//!   job's I/O in flight has completed, and the reset is counted ("N zone resets"). With
//!   `max_open_zones`/`job_max_open_zones`, a write to a zone that is not open while the limit
//!   is reached goes to one of the open zones instead, chosen by where its offset falls in the
//!   region; a zone is closed once full. `zone_reset_threshold`/`zone_reset_frequency` reset
//!   the zone written every 1/frequency writes once that share of the region holds data.
//! - A read stays below the write pointer unless `read_beyond_wp`: a sequential read that
//!   reaches it moves on to the next zone holding data (the job ends when none is left), a
//!   random one is moved into the nearest zone holding data.
//! - A trim of a sequential zone resets it instead (counted as a reset when the zone held
//!   data; the trim itself completes with its full length), fio's trim block being the zone
//!   size, once the write in flight to that zone (any job's) has completed; a random trim
//!   drawn in an empty zone goes to the nearest zone holding data.
//! - A sequential job skips the part of each zone beyond its capacity and ends at the
//!   region's end.
//! - `zoneskip`: a sequential job done with a zone goes on a zone and `zoneskip` bytes after
//!   where the last skip took it (back to the start past the device's end).
//!
//! Conventional zones, and the sequential-write-preferred zones of a host-aware device (fio
//! 3.33 gives them no write pointer either), take any I/O where it falls. Jobs on the same
//! device share its zones' state (write pointers, open zones), as fio's do.

use std::collections::HashMap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use anyhow::{Context, Result};
use fiox_engine::zoned::{Zone, ZoneType};
use fiox_engine::Ddir;
use fiox_options::JobSpec;

use crate::plan::io::NextIo;
use crate::plan::WorkerPlan;

/// One zone as the jobs see it.
#[derive(Debug, Clone)]
struct ZoneState {
    start: u64,
    len: u64,
    /// Where the zone's writable part ends.
    cap_end: u64,
    wp: u64,
    /// Written only at the write pointer (false: a conventional zone).
    seq: bool,
    /// Writes placed in the zone and not yet completed, by any job: the next write waits for
    /// them, so that the zone's writes reach the device one at a time, in write-pointer order
    /// (the kernel may reorder writes in flight together).
    writing: u32,
}

impl ZoneState {
    /// Bytes of data below the write pointer (a conventional zone is all data).
    fn data(&self) -> u64 {
        if self.seq {
            self.wp - self.start
        } else {
            self.len
        }
    }
}

/// A device's zones and which are open for writing, shared by the jobs using it.
#[derive(Debug)]
struct Device {
    zones: Vec<ZoneState>,
    /// Open zones (indices), in the order they were opened.
    open: Vec<usize>,
}

impl Device {
    fn new(zones: &[Zone]) -> Device {
        let zones = zones
            .iter()
            .map(|z| {
                // Only sequential-write-required zones have a write pointer for fio: it
                // writes a host-aware device's sequential-write-preferred zones anywhere.
                let seq = z.kind == ZoneType::SeqRequired;
                let cap_end = z.start + z.capacity.min(z.len);
                // A full zone's data ends at its capacity.
                ZoneState { start: z.start, len: z.len, cap_end, wp: z.wp.min(cap_end), seq, writing: 0 }
            })
            .collect();
        Device { zones, open: Vec::new() }
    }

    /// The zone holding `offset`.
    fn zone_of(&self, offset: u64) -> usize {
        self.zones.partition_point(|z| z.start + z.len <= offset).min(self.zones.len().saturating_sub(1))
    }
}

/// The devices jobs of this run have open, by path: a job starting when no other uses the
/// device reads its zones afresh.
fn device(path: &PathBuf) -> Result<Arc<Mutex<Device>>> {
    static DEVICES: Mutex<Option<HashMap<PathBuf, Weak<Mutex<Device>>>>> = Mutex::new(None);
    let mut all = DEVICES.lock().unwrap_or_else(|e| e.into_inner());
    let map = all.get_or_insert_with(HashMap::new);
    if let Some(d) = map.get(path).and_then(Weak::upgrade) {
        return Ok(d);
    }
    let zones = crate::plan::zbd::zones_of(path)?;
    let d = Arc::new(Mutex::new(Device::new(&zones)));
    map.insert(path.clone(), Arc::downgrade(&d));
    Ok(d)
}

/// One of the job's files.
struct FileZones {
    dev: Arc<Mutex<Device>>,
    region_start: u64,
    region_end: u64,
    /// Where the device ends.
    device_end: u64,
    /// Zones of the region.
    first: usize,
    end: usize,
    /// Bytes a sequential job skipped (zone capacity, zones without data, `zoneskip`): its
    /// offsets are the generator's plus this (less, once `zoneskip` wrapped to the start).
    skip: i64,
    /// `zoneskip`: where the last skip took the job (fio's file offset; the region's start
    /// at first), and the generator's offset then.
    zone_base: u64,
    gen_base: u64,
    /// The block device that resets the zones when the job's file cannot (an NVMe generic
    /// character device, whose namespace's block device can).
    resetter: Option<File>,
}

/// A zone reset the job must make before its next I/O: file, zone start, zone length.
pub type Reset = (usize, u64, u64);

/// What a trim of a sequential zone becomes: fio resets the zone instead of discarding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneTrim {
    /// The zone held data: its write pointer is reset (and the reset counted).
    Reset(Reset),
    /// The zone was empty: nothing to do, the trim still completes.
    Empty,
    /// The trim does not start at its zone's start: it fails with EINVAL.
    Misaligned,
}

pub struct Zbd {
    files: Vec<FileZones>,
    sequential: bool,
    min_bs: u64,
    read_beyond_wp: bool,
    /// `zoneskip`: bytes a sequential job skips after each zone it is done with.
    zone_skip: u64,
    max_open: u32,
    job_max_open: u32,
    /// Zones this job opened (file, zone).
    job_open: Vec<(usize, usize)>,
    /// `zone_reset_threshold` and the writes between two resets (`zone_reset_frequency`).
    threshold: Option<(f64, u64)>,
    writes_left: u64,
    reset_due: Option<Reset>,
    /// A write placed and not yet handed to the engine (file, zone): its zone's count of
    /// writes is given back if the job ends first.
    placed: Option<(usize, usize)>,
    /// A write (or a trim that resets a zone) drawn while its zone was busy, drawn again next
    /// time.
    held: Option<NextIo>,
    /// The file whose region a sequential job just ran out of (its pass is over, early when
    /// it skipped parts of zones): the source starts the next loop, if any.
    pass_over: Option<usize>,
    /// The trim placed last, when it went to a sequential zone: done by the runner in place
    /// of the engine's discard.
    trim: Option<ZoneTrim>,
}

impl Zbd {
    /// The job's zones; a writing job with verify resets those holding data first, as fio
    /// does, so that no reset destroys what is to be verified. Returns the resets made.
    pub fn new(plan: &WorkerPlan, files: &[File]) -> Result<(Zbd, u64)> {
        let spec: &JobSpec = &plan.spec;
        let mut out = Vec::new();
        let mut limit = 0;
        for f in &plan.files {
            let dev = device(&f.path).with_context(|| format!("job '{}'", spec.name))?;
            let d = dev.lock().unwrap_or_else(|e| e.into_inner());
            let region_end = f.region_start + f.region_len;
            let first = d.zone_of(f.region_start);
            let end = d.zone_of(region_end.saturating_sub(1)) + 1;
            let device_end = d.zones.last().map_or(0, |z| z.start + z.len);
            drop(d);
            limit = crate::plan::zbd::open_limit(spec, crate::plan::zbd::device_max_open(&f.path));
            out.push(FileZones {
                dev,
                region_start: f.region_start,
                region_end,
                device_end,
                first,
                end,
                skip: 0,
                zone_base: f.region_start,
                gen_base: f.region_start,
                resetter: resetter(&f.path).with_context(|| format!("job '{}'", spec.name))?,
            });
        }
        let every = spec.zones.reset_frequency.filter(|&f| f > 0.0).map(|f| (1.0 / f).min(u32::MAX as f64) as u64);
        let threshold = every.map(|e| (spec.zones.reset_threshold.unwrap_or(0.0), e.max(1)));
        let z = Zbd {
            files: out,
            sequential: !spec.rw.is_random(),
            min_bs: crate::plan::io::min_block_size(spec).max(1),
            read_beyond_wp: spec.zones.read_beyond_wp,
            zone_skip: spec.zones.skip,
            max_open: limit,
            job_max_open: spec.zones.job_max_open_zones,
            job_open: Vec::new(),
            threshold,
            writes_left: threshold.map_or(0, |t| t.1),
            reset_due: None,
            placed: None,
            held: None,
            pass_over: None,
            trim: None,
        };
        let mut resets = 0;
        if spec.verify.is_some() && spec.rw.writes() {
            for (i, f) in z.files.iter().enumerate() {
                let mut d = f.dev.lock().unwrap_or_else(|e| e.into_inner());
                for zi in f.first..f.end {
                    let zone = &mut d.zones[zi];
                    if zone.seq && zone.wp != zone.start {
                        reset(f.resetter.as_ref().unwrap_or(&files[i]), zone.start, zone.len)
                            .with_context(|| format!("job '{}': cannot reset a zone", spec.name))?;
                        zone.wp = zone.start;
                        resets += 1;
                    }
                }
                d.open.retain(|&o| !(f.first..f.end).contains(&o));
            }
        }
        Ok((z, resets))
    }

    /// A zone reset due before the I/O just placed.
    pub fn reset_due(&self) -> Option<Reset> {
        self.reset_due
    }

    /// The write drawn while its zone was busy, if one was: the job waits for its own I/O
    /// (or another job's) to complete, then draws it again.
    pub fn take_held(&mut self) -> Option<NextIo> {
        self.held.take()
    }

    /// Whether a write (or a zone-resetting trim) waits for its zone.
    pub fn waiting(&self) -> bool {
        self.held.is_some()
    }

    /// What the trim just placed becomes, when the runner does it instead of the engine.
    pub fn take_trim(&mut self) -> Option<ZoneTrim> {
        self.trim.take()
    }

    /// The file whose region a sequential job ran out of with the last I/O drawn, if it did.
    pub fn take_pass_over(&mut self) -> Option<usize> {
        self.pass_over.take()
    }

    /// The generator starts another pass over the regions: offsets are its own again.
    pub fn start_pass(&mut self) {
        for f in &mut self.files {
            f.skip = 0;
            f.zone_base = f.region_start;
            f.gen_base = f.region_start;
        }
    }

    /// The write placed last is with the engine.
    pub fn issued(&mut self) {
        self.placed = None;
    }

    /// A write completed (or failed): its zone may take the next.
    pub fn completed(&mut self, file: usize, offset: u64) {
        if let Some(f) = self.files.get(file) {
            let mut d = f.dev.lock().unwrap_or_else(|e| e.into_inner());
            let zi = d.zone_of(offset);
            let z = &mut d.zones[zi];
            if z.seq {
                z.writing = z.writing.saturating_sub(1);
            }
        }
    }

    /// Makes the reset due, on the job's file.
    pub fn do_reset(&mut self, files: &[File]) -> std::io::Result<()> {
        if let Some((f, start, len)) = self.reset_due.take() {
            self.trim_reset(files, (f, start, len))?;
        }
        Ok(())
    }

    /// Moves the generator's I/O to where the device allows it; `None` when the job has no
    /// more I/O to do (a sequential job past its region, reads with no data left).
    pub fn place(&mut self, mut io: NextIo) -> Option<NextIo> {
        let raw = io;
        if io.ddir() == Ddir::Trim {
            return self.place_trim(io);
        }
        if !matches!(io.ddir(), Ddir::Read | Ddir::Write) {
            return Some(io);
        }
        let seq = self.sequential;
        let min_bs = self.min_bs;
        let f = self.files.get_mut(io.file())?;
        let dev = f.dev.clone();
        let mut d = dev.lock().unwrap_or_else(|e| e.into_inner());
        let mut off = if seq { io.offset.saturating_add_signed(f.skip) } else { io.offset };
        if seq && self.zone_skip > 0 {
            off = zone_skip(f, &d, io.offset, off, io.ddir(), self.read_beyond_wp, self.zone_skip)?;
        }
        if off >= f.region_end {
            self.pass_over = seq.then_some(io.file());
            return None;
        }
        let mut zi = d.zone_of(off);
        if io.ddir() == Ddir::Read {
            if self.read_beyond_wp || !d.zones[zi].seq {
                io.offset = off;
                return Some(io);
            }
            if seq {
                if off + min_bs > d.zones[zi].wp {
                    // On to the next zone holding data.
                    let Some(next) = (zi + 1..f.end).find(|&i| d.zones[i].data() >= min_bs) else {
                        self.pass_over = Some(io.file());
                        return None;
                    };
                    zi = next;
                    f.skip += (d.zones[zi].start - off) as i64;
                    off = d.zones[zi].start;
                }
                let room = d.zones[zi].start + d.zones[zi].data() - off;
                io = io.with_len((io.len() as u64).min(room / min_bs * min_bs).max(min_bs) as u32);
                io.offset = off;
                return Some(io);
            }
            // A random read: in the zone drawn if it holds data, else the nearest that does.
            let orig = d.zones[zi].start;
            if d.zones[zi].data() < min_bs {
                zi = nearest(zi, f.first, f.end, |i| d.zones[i].data() >= min_bs)?;
            }
            let z = &d.zones[zi];
            let range = z.data();
            let len = (io.len() as u64).min(range / min_bs * min_bs);
            let span = range - len + 1;
            io.offset = z.start + (off - orig) % span / min_bs * min_bs;
            io = io.with_len(len as u32);
            return Some(io);
        }
        // A write.
        if !d.zones[zi].seq {
            io.offset = off;
            return Some(io);
        }
        if seq && off >= d.zones[zi].cap_end {
            // Past the zone's capacity: the next zone.
            let next = d.zones[zi].start + d.zones[zi].len;
            f.skip += (next - off) as i64;
            off = next;
            if off >= f.region_end {
                self.pass_over = Some(io.file());
                return None;
            }
            zi = d.zone_of(off);
            if !d.zones[zi].seq {
                io.offset = off;
                return Some(io);
            }
        }
        let file = io.file();
        if self.max_open > 0 && !d.open.contains(&zi) {
            let mine = self.job_open.iter().filter(|o| o.0 == file).count() as u32;
            let full = d.open.len() as u32 >= self.max_open || (self.job_max_open > 0 && mine >= self.job_max_open);
            if full {
                // One of the open zones of the region instead, picked by where the offset is.
                let (first, end) = (f.first, f.end);
                let open: Vec<usize> = d.open.iter().copied().filter(|o| (first..end).contains(o)).collect();
                if !open.is_empty() {
                    let pos = (off - f.region_start) as u128 * open.len() as u128
                        / (f.region_end - f.region_start).max(1) as u128;
                    zi = open[(pos as usize).min(open.len() - 1)];
                }
            }
            if !d.open.contains(&zi) {
                d.open.push(zi);
                self.job_open.push((file, zi));
            }
        }
        if d.zones[zi].writing > 0 {
            // A write to the zone is in flight: this one waits for it.
            self.held = Some(raw);
            return None;
        }
        let mut reset_now = false;
        if let Some((ratio, every)) = self.threshold {
            self.writes_left = self.writes_left.saturating_sub(1);
            if self.writes_left == 0 {
                self.writes_left = every;
                let data: u64 = d.zones[f.first..f.end].iter().filter(|z| z.seq).map(|z| z.wp - z.start).sum();
                reset_now = data as f64 >= (f.region_end - f.region_start) as f64 * ratio;
            }
        }
        let z = &mut d.zones[zi];
        if reset_now || z.wp + min_bs > z.cap_end {
            z.wp = z.start;
            self.reset_due = Some((file, z.start, z.len));
        }
        let len = (io.len() as u64).min(z.cap_end - z.wp) / min_bs * min_bs;
        if len < min_bs {
            return None;
        }
        io.offset = z.wp;
        io = io.with_len(len as u32);
        z.wp += len;
        z.writing += 1;
        self.placed = Some((file, zi));
        if z.wp + min_bs > z.cap_end {
            // Full: closed, so another zone may open.
            d.open.retain(|&o| o != zi);
            self.job_open.retain(|&o| o != (file, zi));
        }
        Some(io)
    }
}

impl Zbd {
    /// A trim: of a conventional zone, a discard as usual; of a sequential one, a reset of the
    /// zone (the job's trim block is the zone size). A random trim drawn in an empty zone goes
    /// to the nearest zone holding data instead, and the job ends when none does.
    fn place_trim(&mut self, mut io: NextIo) -> Option<NextIo> {
        let raw = io;
        let f = self.files.get(io.file())?;
        let mut d = f.dev.lock().unwrap_or_else(|e| e.into_inner());
        if io.offset >= f.region_end {
            return None;
        }
        let mut zi = d.zone_of(io.offset);
        if !self.sequential && d.zones[zi].data() == 0 {
            zi = nearest(zi, f.first, f.end, |i| d.zones[i].data() > 0)?;
            io.offset = d.zones[zi].start;
        }
        let z = &mut d.zones[zi];
        if !z.seq {
            return Some(io);
        }
        if z.writing > 0 && io.offset == z.start {
            // A write to the zone is in flight (this job's or another's): the reset waits for
            // it, as in fio, lest it land on a zone reset under it.
            self.held = Some(raw);
            return None;
        }
        self.trim = Some(if io.offset != z.start {
            ZoneTrim::Misaligned
        } else if z.wp > z.start {
            z.wp = z.start;
            ZoneTrim::Reset((io.file(), z.start, z.len))
        } else {
            ZoneTrim::Empty
        });
        Some(io)
    }

    /// Resets a zone for a trim (see [`ZoneTrim`]).
    pub fn trim_reset(&self, files: &[File], (f, start, len): Reset) -> std::io::Result<()> {
        let by = self.files.get(f).and_then(|z| z.resetter.as_ref());
        reset(by.unwrap_or(&files[f]), start, len)
    }
}

impl Drop for Zbd {
    /// A job that ends with a write placed and never issued must not hold its zone.
    fn drop(&mut self) {
        if let Some((f, zi)) = self.placed.take() {
            let mut d = self.files[f].dev.lock().unwrap_or_else(|e| e.into_inner());
            d.zones[zi].writing = d.zones[zi].writing.saturating_sub(1);
        }
    }
}

/// `zoneskip` for a sequential job whose generator is at `gen` (`off` with what was skipped):
/// once it is done with a zone (it did a zone's worth of I/O since the last skip, a write
/// reached the zone's capacity, a read its write pointer), it goes on from where the last skip
/// took it, a zone and `zoneskip` bytes further; back to the region's start past the device's
/// end. Counted from where the skip took it, not from the zone a read then moved on to, as in
/// fio. Returns the offset; `None` ends the job (it skipped past a region that ends before the
/// device, where fio 3.33 aborts on an assertion).
fn zone_skip(f: &mut FileZones, d: &Device, gen: u64, off: u64, ddir: Ddir, beyond_wp: bool, skip: u64) -> Option<u64> {
    let z = &d.zones[d.zone_of(off)];
    let done = gen.saturating_sub(f.gen_base) >= z.len
        || off >= z.start + z.len
        || (ddir == Ddir::Write && z.seq && off >= z.cap_end)
        || (ddir == Ddir::Read && z.seq && !beyond_wp && off >= z.wp);
    if !done {
        return Some(off);
    }
    let mut next = f.zone_base + z.len + skip;
    if next >= f.device_end {
        next = f.region_start;
    } else if next >= f.region_end {
        return None;
    }
    f.zone_base = next;
    f.gen_base = gen;
    f.skip = next as i64 - gen as i64;
    Some(next)
}

/// The zone nearest `from` within `first..end` that `ok` accepts, looking after it first.
fn nearest(from: usize, first: usize, end: usize, ok: impl Fn(usize) -> bool) -> Option<usize> {
    for step in 1..(end - first).max(1) {
        if from + step < end && ok(from + step) {
            return Some(from + step);
        }
        if from >= first + step && ok(from - step) {
            return Some(from - step);
        }
    }
    None
}

/// The block device to reset zones through, when the job's file is not it.
fn resetter(path: &std::path::Path) -> Result<Option<File>> {
    let node = crate::plan::zbd::zone_node(path);
    if node == path {
        return Ok(None);
    }
    let f = std::fs::OpenOptions::new().read(true).write(true).open(&node);
    Ok(Some(f.with_context(|| format!("cannot open '{}' to reset its zones", node.display()))?))
}

fn reset(file: &File, start: u64, len: u64) -> std::io::Result<()> {
    fiox_engine::zoned::reset_zones(file.as_raw_fd(), start, len)
}
