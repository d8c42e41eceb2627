//! `rados`: Ceph RADOS objects through librados, as fio 3.33's rados engine. Each of the job's
//! files is one object named as the file (`jobname.jobnum.filenum`, or `filename=`'s names
//! with `directory=` before them), `size / nrfiles` bytes long; offsets are offsets in the
//! object. Reads and writes are `rados_aio_read`/`rados_aio_write`, a trim zeroes its range
//! (a write op with `zero`), and a sync fails with EPERM as in fio. `touch_objects=1` (the
//! default) creates every object, empty, when the job starts.
//!
//! The objects stay in the pool after the job, as with fio 3.33 (observed: its engine's
//! removal at cleanup does not happen on a finished job), so a later job or fio itself can read
//! and verify them. Only when the job cannot start are the objects it touched removed again,
//! and only those that did not exist before.
//!
//! Where fio differs: every completion's return value is checked (fio 3.33 never reads it, so
//! EFBIG past the OSD's object size limit or ENOENT count as done), and a read past an object's
//! end returns zeros for the missing part (fio counts it whole too, without touching the buffer).

use std::ffi::CString;
use std::io;
use std::time::Duration;

use crate::ceph::{self, ffi, Done, Finished, Pool, Slot, Woke};
use crate::{Completion, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, RemoteFile};

#[derive(Default)]
struct Rados {
    state: Option<State>,
    limit: Option<Duration>,
    started: u32,
    finished: Vec<Finished>,
}

/// One unit's operation in flight: what it does, where its buffer is, and the write op to
/// release after a trim.
#[derive(Clone, Copy)]
struct Op {
    ddir: Ddir,
    len: u32,
    buf: *mut u8,
    write_op: ffi::WriteOpT,
}

struct State {
    lib: &'static ffi::Rados,
    /// The job's own connection, or one shared with other jobs (`ceph_shared_client=1`).
    pool: std::sync::Arc<Pool>,
    objects: Vec<CString>,
    done: Box<Done>,
    slots: Box<[Slot]>,
    ops: Vec<Op>,
}

unsafe extern "C" fn finished(c: ffi::RadosCompletionT, arg: *mut std::ffi::c_void) {
    let Some(lib) = ffi::rados_loaded() else { return };
    // SAFETY: `arg` is the address of a `Slot` the engine keeps (boxed) for as long as any of
    // its operations may complete, and `Slot::done` points to the engine's boxed `Done`.
    let slot = unsafe { &*(arg as *const Slot) };
    // SAFETY: `c` is the finished completion librados passes; it is released later, once.
    let result = unsafe { (lib.aio_get_return_value)(c) } as i64;
    // SAFETY: see above.
    let done = unsafe { &*slot.done };
    done.push(Finished { index: slot.index, result, completion: c as usize });
}

/// The objects: the planner's names (fio's file names), none of them with a size yet. Connects
/// once to check the library, configuration, cluster and pool before any I/O.
fn remote(spec: &fiox_options::JobSpec, _clone: u32, listed: &[String]) -> Result<Vec<RemoteFile>, String> {
    if spec.engine.ceph.pool.as_deref().is_none_or(str::is_empty) {
        return Err("ioengine=rados needs pool= (fio: \"rados pool name must be provided.\")".into());
    }
    let pool = Pool::connect("rados", &spec.engine.ceph, false)?;
    let mut facts = ceph::facts::of_pool(&pool, &spec.engine.ceph, false);
    facts.objects = ceph::facts::objects(&pool, listed);
    let mut facts = Some(Box::new(facts));
    Ok(listed
        .iter()
        .map(|name| RemoteFile { name: name.clone(), size: None, written: None, facts: facts.take() })
        .collect())
}

impl IoEngine for Rados {
    fn init(&mut self, setup: &crate::Setup<'_>) -> io::Result<()> {
        let opts = &setup.opts.ceph;
        let start = || -> Result<State, String> {
            let lib = ffi::rados("rados")?;
            let pool = ceph::shared::pool("rados", opts, false)?;
            let objects = setup
                .paths
                .iter()
                .map(|p| {
                    CString::new(p.to_string_lossy().into_owned())
                        .map_err(|_| "an object name holds a NUL byte".to_string())
                })
                .collect::<Result<Vec<_>, _>>()?;
            // Which objects a touch would create, so that a failed start removes only those.
            let mut created = Vec::with_capacity(objects.len());
            for o in objects.iter().filter(|_| opts.touch_objects) {
                let exists = pool.exists(o).map_err(|r| {
                    format!(
                        "cannot look up object '{}' in pool '{}': {}",
                        o.to_string_lossy(),
                        pool.name,
                        ceph::errno_text(r)
                    )
                })?;
                created.push(!exists);
            }
            let done = Box::new(Done::new(setup.depth).map_err(|e| format!("eventfd: {e}"))?);
            let slots = ceph::slots(&done, setup.depth);
            let op = Op { ddir: Ddir::Read, len: 0, buf: std::ptr::null_mut(), write_op: std::ptr::null_mut() };
            if opts.touch_objects {
                for (i, o) in objects.iter().enumerate() {
                    // An empty write creates the object (fio: "touching affects ceph caches").
                    let r = pool.write(o, &[], 0);
                    if r < 0 {
                        // Undo what this job made, and only that.
                        for (made, mine) in objects[..i].iter().zip(&created) {
                            if *mine {
                                let _ = pool.remove(made);
                            }
                        }
                        return Err(format!(
                            "cannot create object '{}' in pool '{}': {}",
                            o.to_string_lossy(),
                            pool.name,
                            ceph::errno_text(r)
                        ));
                    }
                }
            }
            Ok(State { lib, pool, objects, done, slots, ops: vec![op; setup.depth as usize] })
        };
        self.state = Some(start().map_err(io::Error::other)?);
        self.finished.reserve(setup.depth as usize);
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let st = self.state.as_mut().ok_or_else(|| io::Error::other("rados: not started"))?;
        let (Some(slot), Some(oid)) = (st.slots.get(index as usize), st.objects.get(io.file_index as usize)) else {
            return Err(io::Error::other(format!("rados: unit {index} or file {} out of range", io.file_index)));
        };
        if !matches!(io.ddir, Ddir::Read | Ddir::Write | Ddir::Trim) {
            // fio 3.33: "Only DDIR_READ, DDIR_WRITE and DDIR_TRIM are supported!", error 1.
            return Ok(QueueStatus::Completed(-(libc::EPERM as i64)));
        }
        let lib = st.lib;
        let mut c: ffi::RadosCompletionT = std::ptr::null_mut();
        // SAFETY: the slot outlives the operation (see `State`), the callback has the type
        // librados calls, and `c` is a valid out-pointer.
        let r = unsafe { (lib.aio_create_completion2)(ceph::arg(slot), finished, &mut c) };
        if r < 0 {
            return Ok(QueueStatus::Completed(r as i64));
        }
        let ioctx = st.pool.ioctx();
        let mut write_op: ffi::WriteOpT = std::ptr::null_mut();
        // SAFETY: an open context and a NUL-terminated name that lives as long as the engine;
        // for reads and writes the unit's buffer holds at least `len` bytes and is left alone by
        // everyone else until this unit's completion is reaped (the IoQueue's rule); the
        // completion is fresh and used once; a trim's write op is released after it completed.
        let r = unsafe {
            match io.ddir {
                Ddir::Write => {
                    (lib.aio_write)(ioctx, oid.as_ptr(), c, io.buf.cast_const().cast(), io.len as usize, io.offset)
                }
                Ddir::Read => (lib.aio_read)(ioctx, oid.as_ptr(), c, io.buf.cast(), io.len as usize, io.offset),
                _ => {
                    write_op = (lib.create_write_op)();
                    if write_op.is_null() {
                        -libc::ENOMEM
                    } else {
                        (lib.write_op_zero)(write_op, io.offset, io.len as u64);
                        (lib.aio_write_op_operate)(write_op, ioctx, c, oid.as_ptr(), std::ptr::null_mut(), 0)
                    }
                }
            }
        };
        if r < 0 {
            // Not started: no callback will come, so both are released here.
            // SAFETY: created above, never handed to a started operation.
            unsafe {
                if !write_op.is_null() {
                    (lib.release_write_op)(write_op);
                }
                (lib.aio_release)(c);
            }
            return Ok(QueueStatus::Completed(r as i64));
        }
        st.ops[index as usize] = Op { ddir: io.ddir, len: io.len, buf: io.buf, write_op };
        self.started += 1;
        Ok(QueueStatus::Queued)
    }

    fn commit(&mut self) -> io::Result<u32> {
        Ok(std::mem::take(&mut self.started))
    }

    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let Some(st) = self.state.as_mut() else { return Ok(()) };
        let mut got = 0u32;
        loop {
            st.done.take((max - got) as usize, &mut self.finished);
            for f in self.finished.drain(..) {
                let op = &mut st.ops[f.index as usize];
                // SAFETY: the operation finished (its callback ran): its completion and write
                // op are released once, here.
                unsafe {
                    (st.lib.aio_release)(f.completion as ffi::RadosCompletionT);
                    if !op.write_op.is_null() {
                        (st.lib.release_write_op)(op.write_op);
                        op.write_op = std::ptr::null_mut();
                    }
                }
                let result = match op.ddir {
                    _ if f.result < 0 => f.result,
                    Ddir::Read => {
                        let got_bytes = (f.result as u64).min(op.len as u64) as usize;
                        if got_bytes < op.len as usize {
                            // Past the object's end RADOS returns nothing: those bytes read as
                            // zeros, as from a sparse file.
                            // SAFETY: the unit's buffer holds `len` bytes and its read finished;
                            // the unit is still the engine's until this completion is returned.
                            unsafe { op.buf.add(got_bytes).write_bytes(0, op.len as usize - got_bytes) };
                        }
                        op.len as i64
                    }
                    _ => op.len as i64,
                };
                out.push(Completion { index: f.index, result });
                got += 1;
            }
            if got >= min || got >= max {
                return Ok(());
            }
            // busy_poll is accepted and, as in fio 3.33, has no effect on this engine.
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
    Box::new(Rados::default())
}

/// No local file is opened or laid out (`diskless`); `remote` names the objects.
pub const INFO: EngineInfo =
    EngineInfo { sync: false, diskless: true, remote: Some(remote), ..EngineInfo::base("rados", make) };
