//! `gfapi` and `gfapi_async`: files on a GlusterFS volume through libgfapi, without a FUSE
//! mount, as fio 3.33's engines of those names. `volume=` names the volume and `brick=` the
//! server whose glusterd hands out its layout; the job's files (`filename=`, or fio's
//! generated names) are paths on the volume, created when missing. `gfapi` does each I/O with
//! a blocking call (`glfs_pread`, `glfs_pwrite`, `glfs_fsync`, ...); `gfapi_async` keeps up to
//! `iodepth` of libgfapi's asynchronous calls in flight, whose callbacks (on libgfapi's
//! threads) hand the results to the job thread. Trims are `glfs_discard` (fio's `gfapi` fails
//! them with EINVAL). `single-instance=1` shares one mount among the jobs that name the same
//! volume and server, as in fio.
//!
//! As in fio, a job that reads a file shorter than its region first extends it and fills it
//! with data, and files are sized as fio sizes a diskless engine's (`size / nrfiles`) unless
//! the job gives no size and the file exists.
//!
//! libgfapi is loaded at run time (`dl/gfapi.rs`): on a machine without it a job is refused
//! before any I/O, naming the library and its package; an unreachable server or a volume that
//! is not started stops the run while it is planned, with the volume, server and reason.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use crate::dl::gfapi::{Done, File, Slot, Volume};
use crate::dl::Op;
use crate::{Completion, EngineInfo, IoEngine, IoUnit, QueueStatus, RemoteFile};

/// The volume and server, which fio requires too.
fn target<'a>(engine: &str, opts: &'a crate::EngineOpts) -> Result<(&'a str, &'a str), String> {
    match (opts.gfapi.volume.as_deref(), opts.gfapi.brick.as_deref()) {
        (Some(v), Some(b)) if !v.is_empty() && !b.is_empty() => Ok((v, b)),
        _ => Err(format!(
            "ioengine={engine} needs volume= and brick= (the GlusterFS volume, and the server to reach it through)"
        )),
    }
}

fn mount(engine: &'static str, opts: &crate::EngineOpts) -> Result<Arc<Volume>, String> {
    let (volume, brick) = target(engine, opts)?;
    Volume::mount(engine, volume, brick, opts.gfapi.single_instance)
}

/// The job's files on the volume. Mounts once to look, so that a missing library, server or
/// volume stops the run before any I/O. A file's own size counts only when the job gives none.
fn remote(engine: &'static str, spec: &fiox_options::JobSpec, names: &[String]) -> Result<Vec<RemoteFile>, String> {
    let volume = mount(engine, &spec.engine)?;
    let sized = spec.size.is_some() || spec.filesize.is_some();
    let files = names
        .iter()
        .map(|n| {
            let size = volume.size_of(n)?;
            Ok(RemoteFile { name: n.clone(), size: size.filter(|_| !sized), written: None, facts: None })
        })
        .collect();
    // The job that starts next takes this mount over rather than making its own.
    volume.park();
    files
}

/// Opens the job's files, extending and filling those a reading job finds shorter than its
/// region, as fio does before it reads.
fn open(engine: &'static str, setup: &crate::Setup<'_>) -> Result<Vec<File>, String> {
    let volume = mount(engine, setup.opts)?;
    let mut flags = libc::O_RDWR;
    if setup.direct {
        flags |= libc::O_DIRECT;
    }
    let mut files = Vec::with_capacity(setup.paths.len());
    for (path, &want) in setup.paths.iter().zip(setup.sizes) {
        let name = path.to_string_lossy();
        let file = volume.create(&name, flags)?;
        let have = volume.size_of(&name)?.unwrap_or(0);
        if setup.reads && have < want {
            fill(&file, want).map_err(|e| {
                format!(
                    "ioengine={engine}: cannot lay out '{name}' ({want} bytes): {}",
                    io::Error::from_raw_os_error(e)
                )
            })?;
        }
        files.push(file);
    }
    Ok(files)
}

/// Writes `len` bytes of varied data over the whole file.
fn fill(file: &File, len: u64) -> Result<(), i32> {
    file.truncate(len)?;
    let mut chunk = vec![0u8; 1 << 20];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for w in chunk.chunks_exact_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w.copy_from_slice(&x.to_le_bytes());
    }
    let mut at = 0u64;
    while at < len {
        let n = (len - at).min(chunk.len() as u64) as u32;
        // SAFETY: `chunk` is this function's own buffer of at least `n` bytes.
        let r = unsafe { file.run(Op::Write, chunk.as_mut_ptr(), n, at) };
        if r <= 0 {
            return Err(if r < 0 { -r as i32 } else { libc::EIO });
        }
        at += r as u64;
    }
    Ok(())
}

/// `gfapi`: one blocking call per I/O.
struct Gfapi {
    engine: &'static str,
    files: Vec<File>,
}

impl IoEngine for Gfapi {
    fn init(&mut self, setup: &crate::Setup<'_>) -> io::Result<()> {
        self.files = open(self.engine, setup).map_err(io::Error::other)?;
        Ok(())
    }

    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let (Some(op), Some(file)) = (Op::of(io.ddir), self.files.get(io.file_index as usize)) else {
            return Ok(QueueStatus::Completed(-(libc::EINVAL as i64)));
        };
        // SAFETY: for reads and writes the unit's buffer holds at least `len` bytes and is
        // left alone by everyone else during the call (the IoQueue's rule).
        Ok(QueueStatus::Completed(unsafe { file.run(op, io.buf, io.len, io.offset) }))
    }
}

/// `gfapi_async`: libgfapi's asynchronous calls, up to `iodepth` in flight.
struct GfapiAsync {
    files: Vec<File>,
    /// Where callbacks put completions; boxed, so its address stays put while I/O is in flight.
    done: Box<Done>,
    /// One callback argument per unit, at fixed addresses (boxed slice).
    slots: Box<[Slot]>,
    in_flight: u32,
    limit: Option<Duration>,
    taken: Vec<(u32, i64)>,
}

impl IoEngine for GfapiAsync {
    fn init(&mut self, setup: &crate::Setup<'_>) -> io::Result<()> {
        self.files = open("gfapi_async", setup).map_err(io::Error::other)?;
        let done: *const Done = &*self.done;
        self.slots = (0..setup.depth).map(|index| Slot { done, index, len: 0, moves_data: false }).collect();
        self.taken.reserve(setup.depth as usize);
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let (Some(op), Some(file)) = (Op::of(io.ddir), self.files.get(io.file_index as usize)) else {
            return Ok(QueueStatus::Completed(-(libc::EINVAL as i64)));
        };
        let Some(slot) = self.slots.get_mut(index as usize) else {
            return Err(io::Error::other(format!("gfapi_async: unit {index} beyond the queue's depth")));
        };
        slot.len = io.len;
        slot.moves_data = matches!(op, Op::Read | Op::Write);
        let slot: *const Slot = slot;
        // SAFETY: for reads and writes the unit's buffer holds at least `len` bytes and is left
        // alone by everyone else until this unit's completion is reaped; the slot and `done`
        // are boxed and live in this engine, which the IoQueue drops only with nothing in
        // flight.
        match unsafe { file.start(op, io.buf, io.len, io.offset, slot) } {
            Ok(()) => {
                self.in_flight += 1;
                Ok(QueueStatus::Queued)
            }
            Err(errno) => Ok(QueueStatus::Completed(-(errno as i64))),
        }
    }

    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let mut got = 0u32;
        while got < max && self.in_flight > 0 {
            // Wait only while fewer than `min` have come; then take what is there.
            let wait = if got < min { self.limit } else { Some(Duration::ZERO) };
            self.taken.clear();
            let n = self.done.take((max - got) as usize, wait, &mut self.taken) as u32;
            for &(index, result) in &self.taken {
                out.push(Completion { index, result });
            }
            self.in_flight -= n;
            got += n;
            if n == 0 {
                // The wait limit passed (the runner decides what next), or nothing more is done.
                break;
            }
        }
        Ok(())
    }

    fn set_wait_limit(&mut self, limit: Option<Duration>) {
        self.limit = limit;
    }
}

fn make_sync() -> Box<dyn IoEngine> {
    Box::new(Gfapi { engine: "gfapi", files: Vec::new() })
}

fn make_async() -> Box<dyn IoEngine> {
    Box::new(GfapiAsync {
        files: Vec::new(),
        done: Box::default(),
        slots: Box::new([]),
        in_flight: 0,
        limit: None,
        taken: Vec::new(),
    })
}

/// No local file is opened or laid out (`diskless`); the planner asks `remote` for the files.
pub const GFAPI: EngineInfo = EngineInfo {
    diskless: true,
    remote: Some(|spec, _clone, names| remote("gfapi", spec, names)),
    ..EngineInfo::base("gfapi", make_sync)
};
pub const GFAPI_ASYNC: EngineInfo = EngineInfo {
    sync: false,
    diskless: true,
    remote: Some(|spec, _clone, names| remote("gfapi_async", spec, names)),
    ..EngineInfo::base("gfapi_async", make_async)
};
