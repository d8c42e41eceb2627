//! `rbd`: a Ceph RBD image through librbd, as fio 3.33's rbd engine. The job's file is the
//! image (named `rbd`, or `filename=`, as in fio); offsets are image offsets, and the size
//! defaults to the image's. Reads, writes, trims (discard) and syncs (`fsync=`: flush) are
//! librbd's asynchronous calls; each completion's return value is checked, and the job thread
//! sleeps on an eventfd the completion callbacks write (spins with `busy_poll=1`).
//!
//! librbd is loaded at run time (`ceph/ffi.rs`); a job on a machine without it is refused
//! before any I/O, naming the library and its package.

use std::io;
use std::time::Duration;

use std::sync::Arc;

use crate::ceph::{self, ffi, Done, Finished, Image, Pool, Slot, Woke};
use crate::{Completion, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, RemoteFile};

#[derive(Default)]
struct Rbd {
    state: Option<State>,
    limit: Option<Duration>,
    /// Operations started since the last commit.
    started: u32,
    finished: Vec<Finished>,
}

struct State {
    rbd: &'static ffi::Rbd,
    /// The job's own image, or one shared with other jobs (`rbd_shared_handle=1`).
    image: Arc<Image>,
    busy_poll: bool,
    // Callbacks point into these: boxed, so that their addresses stay put.
    done: Box<Done>,
    slots: Box<[Slot]>,
    /// Per unit: what its operation does and how long it is (librbd answers 0 for a finished
    /// write, discard or flush; the runner counts bytes).
    ops: Vec<(Ddir, u32)>,
}

/// The callback librbd calls on its own thread when an operation of unit `arg` finished.
unsafe extern "C" fn finished(c: ffi::RbdCompletionT, arg: *mut std::ffi::c_void) {
    let Some(lib) = ffi::rbd_loaded() else { return };
    // SAFETY: `arg` is the address of a `Slot` the engine keeps (boxed) for as long as any of
    // its operations may complete, and `Slot::done` points to the engine's boxed `Done`.
    let slot = unsafe { &*(arg as *const Slot) };
    // SAFETY: `c` is the finished completion librbd passes; it is released later, once.
    let result = unsafe { (lib.aio_get_return_value)(c) } as i64;
    // SAFETY: see above.
    let done = unsafe { &*slot.done };
    done.push(Finished { index: slot.index, result, completion: c as usize });
}

/// The image name and its pool, checked: fio's messages for what is missing.
fn names(opts: &fiox_options::CephOpts) -> Result<&str, String> {
    match opts.pool.as_deref() {
        Some(p) if !p.is_empty() => {}
        _ => {
            return Err(
                "ioengine=rbd needs pool= (the pool holding the image; fio: \"rbd pool name must be provided.\")"
                    .into(),
            )
        }
    }
    match opts.rbdname.as_deref() {
        Some(n) if !n.is_empty() => Ok(n),
        _ => Err("ioengine=rbd needs rbdname= (the image; fio: \"rbdname must be provided.\")".into()),
    }
}

/// The job's file: the image, as `rbd` (fio's name for it) or as `filename=` names it, with
/// the image's size. Connects once to look (fio's setup connects in the main thread too), so
/// a missing library, configuration, cluster, pool or image stops the run before any I/O.
fn remote(spec: &fiox_options::JobSpec, _clone: u32, listed: &[String]) -> Result<Vec<RemoteFile>, String> {
    let name = names(&spec.engine.ceph)?;
    ffi::rbd()?;
    let pool = Pool::connect("rbd", &spec.engine.ceph, spec.direct)?;
    let image = Image::open(pool, name)?;
    let files = if spec.filename.is_some() { listed.to_vec() } else { vec!["rbd".to_string()] };
    let facts = ceph::facts::of_image(&image, name, &spec.engine.ceph, spec.rw.reads());
    // A read of a range never written measures nothing: the planner says how much of the
    // job's region that is.
    let written = if spec.rw.reads() { facts.written.clone() } else { None };
    let mut facts = Some(Box::new(facts));
    Ok(files
        .into_iter()
        .map(|name| RemoteFile { name, size: Some(image.size), written: written.clone(), facts: facts.take() })
        .collect())
}

impl IoEngine for Rbd {
    fn init(&mut self, setup: &crate::Setup<'_>) -> io::Result<()> {
        let opts = &setup.opts.ceph;
        let start = || -> Result<State, String> {
            let name = names(opts)?;
            let (_, rbd) = ffi::rbd()?;
            let image = ceph::shared::image(opts, setup.direct, name)?;
            if !setup.direct {
                // librbd's cache stays writethrough until the first flush; fio flushes once.
                let r = image.flush();
                if r < 0 {
                    return Err(format!("rbd: the initial flush of image '{name}' failed: {}", ceph::errno_text(r)));
                }
            }
            if setup.invalidate {
                let r = image.invalidate_cache();
                if r < 0 {
                    return Err(format!("rbd: cannot drop the cache of image '{name}': {}", ceph::errno_text(r)));
                }
            }
            let done = Box::new(Done::new(setup.depth).map_err(|e| format!("eventfd: {e}"))?);
            let slots = ceph::slots(&done, setup.depth);
            let ops = vec![(Ddir::Read, 0); setup.depth as usize];
            Ok(State { rbd, image, busy_poll: opts.busy_poll, done, slots, ops })
        };
        self.state = Some(start().map_err(io::Error::other)?);
        self.finished.reserve(setup.depth as usize);
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let st = self.state.as_mut().ok_or_else(|| io::Error::other("rbd: not started"))?;
        let Some(slot) = st.slots.get(index as usize) else {
            return Err(io::Error::other(format!("rbd: unit {index} beyond the queue depth")));
        };
        let mut c: ffi::RbdCompletionT = std::ptr::null_mut();
        // SAFETY: the slot outlives the operation (see `State`), the callback has the type
        // librbd calls, and `c` is a valid out-pointer.
        let r = unsafe { (st.rbd.aio_create_completion)(ceph::arg(slot), finished, &mut c) };
        if r < 0 {
            return Ok(QueueStatus::Completed(r as i64));
        }
        let img = st.image.handle();
        // SAFETY: an open image; for reads and writes the unit's buffer holds at least `len`
        // bytes and is left alone by everyone else until this unit's completion is reaped
        // (the IoQueue's rule); the completion is fresh and used once.
        let r = unsafe {
            match io.ddir {
                Ddir::Write => (st.rbd.aio_write)(img, io.offset, io.len as usize, io.buf.cast_const().cast(), c),
                Ddir::Read => (st.rbd.aio_read)(img, io.offset, io.len as usize, io.buf.cast(), c),
                Ddir::Trim => (st.rbd.aio_discard)(img, io.offset, io.len as u64, c),
                Ddir::Sync | Ddir::DataSync => (st.rbd.aio_flush)(img, c),
                Ddir::SyncRange => -libc::EINVAL,
            }
        };
        if r < 0 {
            // Not started: no callback will come, so the completion is released here.
            // SAFETY: the completion was created above and never handed to an operation.
            unsafe { (st.rbd.aio_release)(c) };
            return Ok(QueueStatus::Completed(r as i64));
        }
        st.ops[index as usize] = (io.ddir, io.len);
        self.started += 1;
        Ok(QueueStatus::Queued)
    }

    fn commit(&mut self) -> io::Result<u32> {
        Ok(std::mem::take(&mut self.started))
    }

    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let Some(st) = self.state.as_ref() else { return Ok(()) };
        let mut got = 0u32;
        loop {
            st.done.take((max - got) as usize, &mut self.finished);
            for f in self.finished.drain(..) {
                // SAFETY: a completion whose callback has run, released once, here.
                unsafe { (st.rbd.aio_release)(f.completion as ffi::RbdCompletionT) };
                let (ddir, len) = st.ops[f.index as usize];
                let result = match ddir {
                    _ if f.result < 0 => f.result,
                    Ddir::Write | Ddir::Trim => len as i64,
                    _ => f.result,
                };
                out.push(Completion { index: f.index, result });
                got += 1;
            }
            if got >= min || got >= max {
                return Ok(());
            }
            if st.busy_poll && self.limit.is_none() {
                std::hint::spin_loop();
                continue;
            }
            if let Woke::Stop = st.done.sleep(self.limit) {
                return Ok(());
            }
        }
    }

    fn set_wait_limit(&mut self, limit: Option<Duration>) {
        self.limit = limit;
    }
}

fn make() -> Box<dyn IoEngine> {
    Box::new(Rbd::default())
}

/// No local file is opened or laid out (`diskless`); the planner asks `remote` for the image.
pub const INFO: EngineInfo =
    EngineInfo { sync: false, diskless: true, remote: Some(remote), ..EngineInfo::base("rbd", make) };
