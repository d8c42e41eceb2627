//! libgfapi (`libgfapi.so.0`, Debian's libgfapi0): GlusterFS's client library, which the
//! `gfapi` and `gfapi_async` engines use, as a safe [`Volume`] and [`File`] over the C
//! functions they need. The signatures are written by hand from glfs.h; the functions whose
//! signature GlusterFS 6 changed (a `struct glfs_stat` before and after, a callback with them)
//! are asked for at their `GFAPI_6.0` version, so an older library is refused as a whole
//! rather than called with the wrong arguments.
//!
//! libgfapi reports errors as C does: a call that fails returns -1 (or null) and sets the
//! calling thread's errno, read at once here. An asynchronous call's callback runs on one of
//! libgfapi's own threads with the result, and a negative result's errno in that thread's
//! errno.

use std::ffi::{c_char, c_int, c_void, CString};
use std::io;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::Duration;

use super::{Lib, Op};

type FsT = *mut c_void;
type FdT = *mut c_void;
/// `struct glfs_stat *`, never looked at (fiox passes null, and ignores what callbacks get).
type StatP = *mut c_void;

/// `glfs_io_cbk` as of GFAPI_6.0: the fd, the result, the stat before and after, the argument.
type Callback = unsafe extern "C" fn(FdT, isize, StatP, StatP, *mut c_void);

/// libgfapi's functions (the `glfs_` prefix dropped).
struct Gfapi {
    new: unsafe extern "C" fn(*const c_char) -> FsT,
    set_volfile_server: unsafe extern "C" fn(FsT, *const c_char, *const c_char, c_int) -> c_int,
    set_logging: unsafe extern "C" fn(FsT, *const c_char, c_int) -> c_int,
    init: unsafe extern "C" fn(FsT) -> c_int,
    fini: unsafe extern "C" fn(FsT) -> c_int,
    lstat: unsafe extern "C" fn(FsT, *const c_char, *mut libc::stat) -> c_int,
    creat: unsafe extern "C" fn(FsT, *const c_char, c_int, libc::mode_t) -> FdT,
    close: unsafe extern "C" fn(FdT) -> c_int,
    pread: unsafe extern "C" fn(FdT, *mut c_void, usize, libc::off_t, c_int, StatP, StatP) -> isize,
    pwrite: unsafe extern "C" fn(FdT, *const c_void, usize, libc::off_t, c_int, StatP, StatP) -> isize,
    fsync: unsafe extern "C" fn(FdT, StatP, StatP) -> c_int,
    fdatasync: unsafe extern "C" fn(FdT, StatP, StatP) -> c_int,
    ftruncate: unsafe extern "C" fn(FdT, libc::off_t, StatP, StatP) -> c_int,
    discard: unsafe extern "C" fn(FdT, libc::off_t, usize) -> c_int,
    pread_async: unsafe extern "C" fn(FdT, *mut c_void, usize, libc::off_t, c_int, Callback, *mut c_void) -> c_int,
    pwrite_async: unsafe extern "C" fn(FdT, *const c_void, usize, libc::off_t, c_int, Callback, *mut c_void) -> c_int,
    fsync_async: unsafe extern "C" fn(FdT, Callback, *mut c_void) -> c_int,
    fdatasync_async: unsafe extern "C" fn(FdT, Callback, *mut c_void) -> c_int,
    discard_async: unsafe extern "C" fn(FdT, libc::off_t, usize, Callback, *mut c_void) -> c_int,
}

static GFAPI: OnceLock<Result<Gfapi, String>> = OnceLock::new();

fn lib(engine: &str) -> Result<&'static Gfapi, String> {
    GFAPI.get_or_init(|| load(engine)).as_ref().map_err(Clone::clone)
}

fn load(engine: &str) -> Result<Gfapi, String> {
    let lib = Lib::open(c"libgfapi.so.0", "libgfapi0", engine)?;
    let v6 = c"GFAPI_6.0";
    // SAFETY: every field's type is the signature glfs.h gives the named function at the
    // version asked for (the unversioned ones have had one signature since GFAPI_3.4.0/3.5.0).
    unsafe {
        Ok(Gfapi {
            new: lib.get(c"glfs_new")?,
            set_volfile_server: lib.get(c"glfs_set_volfile_server")?,
            set_logging: lib.get(c"glfs_set_logging")?,
            init: lib.get(c"glfs_init")?,
            fini: lib.get(c"glfs_fini")?,
            lstat: lib.get(c"glfs_lstat")?,
            creat: lib.get(c"glfs_creat")?,
            close: lib.get(c"glfs_close")?,
            pread: lib.get_version(c"glfs_pread", v6)?,
            pwrite: lib.get_version(c"glfs_pwrite", v6)?,
            fsync: lib.get_version(c"glfs_fsync", v6)?,
            fdatasync: lib.get_version(c"glfs_fdatasync", v6)?,
            ftruncate: lib.get_version(c"glfs_ftruncate", v6)?,
            discard: lib.get(c"glfs_discard")?,
            pread_async: lib.get_version(c"glfs_pread_async", v6)?,
            pwrite_async: lib.get_version(c"glfs_pwrite_async", v6)?,
            fsync_async: lib.get_version(c"glfs_fsync_async", v6)?,
            fdatasync_async: lib.get_version(c"glfs_fdatasync_async", v6)?,
            discard_async: lib.get_version(c"glfs_discard_async", v6)?,
        })
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().filter(|&e| e > 0).unwrap_or(libc::EIO)
}

fn cstr(what: &str, s: &str) -> Result<CString, String> {
    CString::new(s).map_err(|_| format!("{what}={} holds a NUL byte", s.escape_debug()))
}

/// A mounted GlusterFS volume (a `glfs_t` after `glfs_init`), unmounted (`glfs_fini`) when the
/// last [`Arc`] to it goes. libgfapi's calls on one volume may come from any thread.
pub(crate) struct Volume {
    lib: &'static Gfapi,
    fs: FsT,
    engine: &'static str,
    volume: String,
    brick: String,
}

// SAFETY: a glfs_t is meant to be shared among threads; libgfapi locks what it must.
unsafe impl Send for Volume {}
// SAFETY: as above.
unsafe impl Sync for Volume {}

/// The volumes mounted with `single-instance=1`, by volume and server, while any job uses one.
type Shared = Mutex<Vec<((String, String), Weak<Volume>)>>;
static SHARED: OnceLock<Shared> = OnceLock::new();

/// Mounts made while a run was planned, kept for the first job that starts on the same volume
/// and server: unmounting takes libgfapi about 10 s (`glfs_fini` waits for its connections to
/// wind down), which a job should not pay twice. A run that never starts leaves them to the
/// end of the process.
static PARKED: Parked = Mutex::new(Vec::new());
type Parked = Mutex<Vec<((String, String), Arc<Volume>)>>;

impl Volume {
    /// Mounts `volume` through the GlusterFS server `brick` (its glusterd, TCP port 24007), or,
    /// with `shared`, returns the mount another job of this process already has of it (fio's
    /// `single-instance=1`). The error is one line naming the volume, the server and libgfapi's
    /// reason.
    pub(crate) fn mount(engine: &'static str, volume: &str, brick: &str, shared: bool) -> Result<Arc<Volume>, String> {
        let key = (volume.to_string(), brick.to_string());
        let parked = {
            let mut p = PARKED.lock().unwrap_or_else(|e| e.into_inner());
            p.iter().position(|(k, _)| *k == key).map(|at| p.swap_remove(at).1)
        };
        if !shared {
            return match parked {
                Some(v) => Ok(v),
                None => Volume::mount_new(engine, volume, brick).map(Arc::new),
            };
        }
        let list = SHARED.get_or_init(Shared::default);
        let mut list = list.lock().unwrap_or_else(|e| e.into_inner());
        list.retain(|(_, w)| w.strong_count() > 0);
        if let Some(v) = list.iter().find(|(k, _)| *k == key).and_then(|(_, w)| w.upgrade()) {
            return Ok(v);
        }
        let v = match parked {
            Some(v) => v,
            None => Arc::new(Volume::mount_new(engine, volume, brick)?),
        };
        list.push((key, Arc::downgrade(&v)));
        Ok(v)
    }

    /// Keeps a mount made while planning for the next [`Volume::mount`] of the same volume
    /// and server (see `PARKED`).
    pub(crate) fn park(self: Arc<Volume>) {
        let key = (self.volume.clone(), self.brick.clone());
        PARKED.lock().unwrap_or_else(|e| e.into_inner()).push((key, self));
    }

    fn mount_new(engine: &'static str, volume: &str, brick: &str) -> Result<Volume, String> {
        let lib = lib(engine)?;
        let (cvol, cbrick) = (cstr("volume", volume)?, cstr("brick", brick)?);
        let fail = |what: &str, e: i32| {
            Err(format!(
                "ioengine={engine}: cannot mount volume={volume} through brick={brick}: {what}: {}",
                io::Error::from_raw_os_error(e)
            ))
        };
        // SAFETY: a NUL-terminated name, copied by libgfapi; returns a new handle or null.
        let fs = unsafe { (lib.new)(cvol.as_ptr()) };
        if fs.is_null() {
            return fail("glfs_new", errno());
        }
        let v = Volume { lib, fs, engine, volume: volume.to_string(), brick: brick.to_string() };
        // libgfapi logs to a file of its own; fiox keeps stdout and stderr for its report and
        // names libgfapi's errors itself, so the log goes nowhere.
        // SAFETY: a live handle and NUL-terminated strings, copied by libgfapi.
        unsafe { (lib.set_logging)(fs, c"/dev/null".as_ptr(), 0) };
        // SAFETY: as above; port 0 is glusterd's default (24007).
        if unsafe { (lib.set_volfile_server)(fs, c"tcp".as_ptr(), cbrick.as_ptr(), 0) } != 0 {
            return fail("glfs_set_volfile_server", errno());
        }
        // SAFETY: a live handle, initialised once.
        if unsafe { (lib.init)(fs) } != 0 {
            let e = errno();
            return fail(&format!("glfs_init (is glusterd running on {brick}, and is volume {volume} started?)"), e);
        }
        // The root answering proves the volume's bricks are reachable, not only glusterd.
        if let Err(e) = v.stat(".") {
            return fail("the volume's root", e);
        }
        Ok(v)
    }

    /// `path`'s size, `None` when it does not exist; else the errno.
    fn stat(&self, path: &str) -> Result<Option<u64>, i32> {
        let p = CString::new(path).map_err(|_| libc::EINVAL)?;
        // SAFETY: an all-zero stat is a valid value of the plain C struct.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a mounted volume, a NUL-terminated path and a live stat buffer.
        if unsafe { (self.lib.lstat)(self.fs, p.as_ptr(), &mut st) } != 0 {
            return match errno() {
                libc::ENOENT => Ok(None),
                e => Err(e),
            };
        }
        Ok(Some(st.st_size as u64))
    }

    /// The size of file `path` on the volume, `None` when it does not exist. The error names
    /// the file.
    pub(crate) fn size_of(&self, path: &str) -> Result<Option<u64>, String> {
        self.stat(path).map_err(|e| {
            format!(
                "ioengine={}: cannot look up '{path}' on volume {}: {}",
                self.engine,
                self.volume,
                io::Error::from_raw_os_error(e)
            )
        })
    }

    /// Opens `path`, creating it (mode 0644) when it does not exist, with `flags` (`O_RDWR`
    /// or `O_RDONLY`, and `O_DIRECT`/`O_SYNC` as the job asks).
    pub(crate) fn create(self: &Arc<Volume>, path: &str, flags: i32) -> Result<File, String> {
        let p = cstr("filename", path)?;
        // SAFETY: a mounted volume and a NUL-terminated path.
        let fd = unsafe { (self.lib.creat)(self.fs, p.as_ptr(), flags, 0o644) };
        if fd.is_null() {
            return Err(format!(
                "ioengine={}: cannot open '{path}' on volume {} (brick {}): {}",
                self.engine,
                self.volume,
                self.brick,
                io::Error::from_raw_os_error(errno())
            ));
        }
        Ok(File { lib: self.lib, fd, _volume: Arc::clone(self) })
    }
}

impl Drop for Volume {
    fn drop(&mut self) {
        // SAFETY: a live handle; every File holds an Arc to its Volume, so none is open now.
        unsafe { (self.lib.fini)(self.fs) };
    }
}

/// An open file on a volume (`glfs_fd_t`), used by one job thread at a time; it keeps its
/// volume mounted.
pub(crate) struct File {
    lib: &'static Gfapi,
    fd: FdT,
    _volume: Arc<Volume>,
}

// SAFETY: a glfs_fd_t may be used from any thread, one call at a time (the engine's thread).
unsafe impl Send for File {}

impl File {
    /// Does `op` on `len` bytes at `offset` and waits for it: the bytes moved (0 for trims and
    /// syncs) or a negative errno.
    ///
    /// # Safety
    /// For reads and writes, `buf` must point to at least `len` bytes that nobody else touches
    /// during the call.
    pub(crate) unsafe fn run(&self, op: Op, buf: *mut u8, len: u32, offset: u64) -> i64 {
        let (l, off) = (len as usize, offset as libc::off_t);
        let null = std::ptr::null_mut();
        // SAFETY: an open fd; the buffer is the caller's promise; no stat buffers.
        let r = unsafe {
            match op {
                Op::Read => (self.lib.pread)(self.fd, buf.cast(), l, off, 0, null, null) as i64,
                Op::Write => (self.lib.pwrite)(self.fd, buf.cast_const().cast(), l, off, 0, null, null) as i64,
                Op::Trim => (self.lib.discard)(self.fd, off, l) as i64,
                Op::Sync => (self.lib.fsync)(self.fd, null, null) as i64,
                Op::DataSync => (self.lib.fdatasync)(self.fd, null, null) as i64,
            }
        };
        if r < 0 {
            return -(errno() as i64);
        }
        match op {
            Op::Read | Op::Write => r,
            _ => len as i64,
        }
    }

    /// Sets the file's length.
    pub(crate) fn truncate(&self, len: u64) -> Result<(), i32> {
        let null = std::ptr::null_mut();
        // SAFETY: an open fd; no stat buffers.
        if unsafe { (self.lib.ftruncate)(self.fd, len as libc::off_t, null, null) } != 0 {
            return Err(errno());
        }
        Ok(())
    }

    /// Starts `op` without waiting; its completion is pushed to `slot`'s [`Done`] list, from
    /// one of libgfapi's threads. On a refusal to start, the errno.
    ///
    /// # Safety
    /// For reads and writes, `buf` must point to at least `len` bytes that nobody else touches
    /// until the completion has been taken from the list. `slot` and the `Done` it points to
    /// must stay where they are until then.
    pub(crate) unsafe fn start(
        &self,
        op: Op,
        buf: *mut u8,
        len: u32,
        offset: u64,
        slot: *const Slot,
    ) -> Result<(), i32> {
        let (l, off, arg) = (len as usize, offset as libc::off_t, slot as *mut c_void);
        // SAFETY: an open fd; the buffer and the slot are the caller's promise.
        let r = unsafe {
            match op {
                Op::Read => (self.lib.pread_async)(self.fd, buf.cast(), l, off, 0, finished, arg),
                Op::Write => (self.lib.pwrite_async)(self.fd, buf.cast_const().cast(), l, off, 0, finished, arg),
                Op::Trim => (self.lib.discard_async)(self.fd, off, l, finished, arg),
                Op::Sync => (self.lib.fsync_async)(self.fd, finished, arg),
                Op::DataSync => (self.lib.fdatasync_async)(self.fd, finished, arg),
            }
        };
        if r != 0 {
            return Err(errno());
        }
        Ok(())
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // SAFETY: an open fd, closed once; the engine drops it only with nothing in flight.
        unsafe { (self.lib.close)(self.fd) };
    }
}

/// A unit's callback argument: where its completion goes, which unit it is, how long its
/// I/O is and whether it moves data (a finished sync or trim reports 0, which counts as the
/// whole length; a read's 0 is the end of the file).
pub(crate) struct Slot {
    pub(crate) done: *const Done,
    pub(crate) index: u32,
    pub(crate) len: u32,
    pub(crate) moves_data: bool,
}

/// The completions callbacks have pushed and the job thread has not taken yet.
#[derive(Default)]
pub(crate) struct Done {
    list: Mutex<Vec<(u32, i64)>>,
    ready: Condvar,
}

impl Done {
    /// Moves up to `max` completions to `out` (unit, bytes or negative errno), waiting up to
    /// `limit` (`None`: without end) for the first when there is none yet; returns how many.
    pub(crate) fn take(&self, max: usize, limit: Option<Duration>, out: &mut Vec<(u32, i64)>) -> usize {
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        if list.is_empty() {
            list = match limit {
                Some(t) => {
                    self.ready.wait_timeout_while(list, t, |l| l.is_empty()).unwrap_or_else(|e| e.into_inner()).0
                }
                None => self.ready.wait_while(list, |l| l.is_empty()).unwrap_or_else(|e| e.into_inner()),
            };
        }
        let n = list.len().min(max);
        out.extend(list.drain(..n));
        n
    }
}

unsafe extern "C" fn finished(_fd: FdT, ret: isize, _pre: StatP, _post: StatP, arg: *mut c_void) {
    // A failed operation's errno is this (libgfapi's) thread's, read before anything else.
    let result = if ret < 0 { -(errno() as i64) } else { ret as i64 };
    // SAFETY: `arg` is the Slot passed to `start`, which the engine keeps at a fixed address
    // until this completion has been taken; its `done` likewise.
    let slot = unsafe { &*(arg as *const Slot) };
    // A sync or trim returns 0 on success; the I/O counts its whole length.
    let result = if result == 0 && !slot.moves_data { slot.len as i64 } else { result };
    // SAFETY: see above.
    let done = unsafe { &*slot.done };
    done.list.lock().unwrap_or_else(|e| e.into_inner()).push((slot.index, result));
    done.ready.notify_one();
}
