//! libnfs (`libnfs.so.13`, Debian's libnfs13, libnfs 4.0): the user-space NFSv3 client the
//! `nfs` engine uses, as a safe [`Mount`] over the C functions it needs. The signatures are
//! written by hand from libnfs 4.0's `nfsc/libnfs.h`; libnfs versions with another soname
//! changed some of them (`nfs_pread_async` gained a buffer argument), so only this soname is
//! loaded and any other is refused as missing.
//!
//! A libnfs context is one connection, used by one thread: every callback runs inside
//! `nfs_service`, on the thread that calls it. Asynchronous calls report through a callback
//! `(status, context, data, private_data)`: `status` is bytes moved (or 0) on success and
//! `-errno` on failure, when `data` is libnfs's message.

use std::collections::VecDeque;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{Lib, Op};

type Ctx = *mut c_void;
type Fh = *mut c_void;
type Callback = unsafe extern "C" fn(c_int, Ctx, *mut c_void, *mut c_void);

/// libnfs's `struct nfs_url`.
#[repr(C)]
struct Url {
    server: *mut c_char,
    path: *mut c_char,
    file: *mut c_char,
}

/// libnfs's `struct nfs_stat_64`.
#[repr(C)]
#[derive(Default)]
struct Stat64 {
    dev: u64,
    ino: u64,
    mode: u64,
    nlink: u64,
    uid: u64,
    gid: u64,
    rdev: u64,
    size: u64,
    blksize: u64,
    blocks: u64,
    atime: u64,
    mtime: u64,
    ctime: u64,
    atime_nsec: u64,
    mtime_nsec: u64,
    ctime_nsec: u64,
    used: u64,
}

/// libnfs's functions (the `nfs_` prefix dropped).
struct Nfs {
    init_context: unsafe extern "C" fn() -> Ctx,
    destroy_context: unsafe extern "C" fn(Ctx),
    get_error: unsafe extern "C" fn(Ctx) -> *mut c_char,
    set_autoreconnect: unsafe extern "C" fn(Ctx, c_int),
    set_timeout: unsafe extern "C" fn(Ctx, c_int),
    parse_url_dir: unsafe extern "C" fn(Ctx, *const c_char) -> *mut Url,
    destroy_url: unsafe extern "C" fn(*mut Url),
    get_fd: unsafe extern "C" fn(Ctx) -> c_int,
    which_events: unsafe extern "C" fn(Ctx) -> c_int,
    service: unsafe extern "C" fn(Ctx, c_int) -> c_int,
    mount_async: unsafe extern "C" fn(Ctx, *const c_char, *const c_char, Callback, *mut c_void) -> c_int,
    open2: unsafe extern "C" fn(Ctx, *const c_char, c_int, c_int, *mut Fh) -> c_int,
    close: unsafe extern "C" fn(Ctx, Fh) -> c_int,
    stat64: unsafe extern "C" fn(Ctx, *const c_char, *mut Stat64) -> c_int,
    fstat64: unsafe extern "C" fn(Ctx, Fh, *mut Stat64) -> c_int,
    ftruncate: unsafe extern "C" fn(Ctx, Fh, u64) -> c_int,
    pwrite: unsafe extern "C" fn(Ctx, Fh, u64, u64, *const c_void) -> c_int,
    pread_async: unsafe extern "C" fn(Ctx, Fh, u64, u64, Callback, *mut c_void) -> c_int,
    pwrite_async: unsafe extern "C" fn(Ctx, Fh, u64, u64, *const c_void, Callback, *mut c_void) -> c_int,
    fsync_async: unsafe extern "C" fn(Ctx, Fh, Callback, *mut c_void) -> c_int,
}

static NFS: OnceLock<Result<Nfs, String>> = OnceLock::new();

fn lib() -> Result<&'static Nfs, String> {
    NFS.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Nfs, String> {
    let lib = Lib::open(c"libnfs.so.13", "libnfs13", "nfs")?;
    // SAFETY: every field's type is the signature libnfs 4.0's libnfs.h gives the named function.
    unsafe {
        Ok(Nfs {
            init_context: lib.get(c"nfs_init_context")?,
            destroy_context: lib.get(c"nfs_destroy_context")?,
            get_error: lib.get(c"nfs_get_error")?,
            set_autoreconnect: lib.get(c"nfs_set_autoreconnect")?,
            set_timeout: lib.get(c"nfs_set_timeout")?,
            parse_url_dir: lib.get(c"nfs_parse_url_dir")?,
            destroy_url: lib.get(c"nfs_destroy_url")?,
            get_fd: lib.get(c"nfs_get_fd")?,
            which_events: lib.get(c"nfs_which_events")?,
            service: lib.get(c"nfs_service")?,
            mount_async: lib.get(c"nfs_mount_async")?,
            open2: lib.get(c"nfs_open2")?,
            close: lib.get(c"nfs_close")?,
            stat64: lib.get(c"nfs_stat64")?,
            fstat64: lib.get(c"nfs_fstat64")?,
            ftruncate: lib.get(c"nfs_ftruncate")?,
            pwrite: lib.get(c"nfs_pwrite")?,
            pread_async: lib.get(c"nfs_pread_async")?,
            pwrite_async: lib.get(c"nfs_pwrite_async")?,
            fsync_async: lib.get(c"nfs_fsync_async")?,
        })
    }
}

/// A C string libnfs owns (or null), copied.
fn text(p: *const c_char) -> Option<String> {
    // SAFETY: libnfs hands out null or NUL-terminated strings that stay valid until its next
    // call on the context; each is copied at once.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The argument each asynchronous call's callback gets: where its unit's completion goes and,
/// for a read, where the data goes. One per I/O unit, at a fixed address while the call is in
/// flight.
pub(crate) struct Slot {
    done: *mut VecDeque<(u32, i64)>,
    index: u32,
    op: Op,
    buf: *mut u8,
    len: u32,
}

/// Called by libnfs inside `nfs_service` when a read, write or sync finishes.
unsafe extern "C" fn finished(status: c_int, _ctx: Ctx, data: *mut c_void, slot: *mut c_void) {
    // SAFETY: `slot` is the `Slot` given to the call, which stays put and untouched until this
    // callback has run (the Mount's rule); `done` is the mount's boxed queue, alive as long as
    // the context whose service runs this.
    let slot = unsafe { &*(slot as *const Slot) };
    let result = match slot.op {
        Op::Read if status > 0 => {
            let n = (status as u32).min(slot.len) as usize;
            // SAFETY: on success `data` holds `status` bytes read; the unit's buffer holds at
            // least `len` bytes and is left alone by everyone else until its completion is
            // reaped (the IoQueue's rule). The two never overlap (libnfs's own buffer).
            unsafe { std::ptr::copy_nonoverlapping(data as *const u8, slot.buf, n) };
            n as i64
        }
        Op::Sync | Op::DataSync if status == 0 => slot.len as i64,
        _ => status as i64,
    };
    // SAFETY: see above; only this thread touches the queue.
    unsafe { (*slot.done).push_back((slot.index, result)) };
}

/// Called by libnfs when the mount finishes: stores its status and message.
unsafe extern "C" fn mounted(status: c_int, _ctx: Ctx, data: *mut c_void, out: *mut c_void) {
    // SAFETY: `out` is the `Option<Result<..>>` that `Mount::new` waits on, alive until this
    // callback has run; on failure `data` is libnfs's message (or null).
    let out = unsafe { &mut *(out as *mut Option<Result<(), String>>) };
    *out = Some(if status == 0 {
        Ok(())
    } else {
        // libnfs's message names the server's answer (`MNT3ERR_NOENT(2) ...`); without one the
        // errno says what happened.
        Err(text(data as *const c_char)
            .filter(|w| !w.is_empty())
            .unwrap_or_else(|| std::io::Error::from_raw_os_error(-status).to_string()))
    });
}

/// One mount of an NFS export through one libnfs context, with the files the job opened on
/// it. Used by one thread at a time.
pub(crate) struct Mount {
    lib: &'static Nfs,
    ctx: Ctx,
    files: Vec<Fh>,
    /// Completions the callbacks recorded and the engine has not taken yet. Boxed although a
    /// VecDeque's items are on the heap already: the slots point at the VecDeque itself, which
    /// must not move when the Mount does.
    #[allow(clippy::box_collection)]
    done: Box<VecDeque<(u32, i64)>>,
}

// SAFETY: a libnfs context is used by one thread at a time; the Mount moves with the job's
// queue to the job's thread and is used only there.
unsafe impl Send for Mount {}

impl Mount {
    /// Mounts the export of `url` (`nfs://server/export[?arg=val...]`), giving up after
    /// `timeout`, so that a server that accepts connections and then says nothing cannot hold
    /// the run. The error is one line naming the URL and libnfs's reason.
    pub(crate) fn new(url: &str, timeout: Duration) -> Result<Mount, String> {
        let lib = lib()?;
        // Where the mount's callback puts its outcome: made before the context, so that it
        // outlives it whatever libnfs does with a pending call when the context is destroyed.
        let mut state: Box<Option<Result<(), String>>> = Box::new(None);
        let fail = |why: String| format!("ioengine=nfs: cannot mount nfs_url={url}: {why}");
        let curl = CString::new(url).map_err(|_| format!("nfs_url={} holds a NUL byte", url.escape_debug()))?;
        // SAFETY: no arguments; returns a new context or null.
        let ctx = unsafe { (lib.init_context)() };
        if ctx.is_null() {
            return Err(fail("libnfs cannot make a context".into()));
        }
        let mut m = Mount { lib, ctx, files: Vec::new(), done: Box::default() };
        // A lost server fails the calls in flight rather than being waited for forever
        // (libnfs's default); set before the URL is read, so that `?autoreconnect=` still wins.
        // SAFETY: a live context (so for every call on `ctx` below).
        unsafe { (lib.set_autoreconnect)(ctx, 0) };
        // SAFETY: as above; the URL is NUL-terminated and copied by libnfs.
        let parsed = unsafe { (lib.parse_url_dir)(ctx, curl.as_ptr()) };
        if parsed.is_null() {
            return Err(format!(
                "ioengine=nfs: nfs_url={url} is not a libnfs URL (nfs://server/export[?arg=val]): {}",
                m.error()
            ));
        }
        // SAFETY: a non-null URL from libnfs, read and then freed once.
        let (server, path) = unsafe {
            let u = &*parsed;
            let sp = (text(u.server), text(u.path));
            (lib.destroy_url)(parsed);
            sp
        };
        let (Some(server), Some(path)) = (server.filter(|s| !s.is_empty()), path) else {
            return Err(format!("ioengine=nfs: nfs_url={url} names no server or no export"));
        };
        let (cs, cp) = (CString::new(server).unwrap_or_default(), CString::new(path).unwrap_or_default());
        let arg: *mut Option<Result<(), String>> = &mut *state;
        // SAFETY: a live context, NUL-terminated strings libnfs copies, and a callback argument
        // that outlives the context (see `state`).
        if unsafe { (lib.mount_async)(ctx, cs.as_ptr(), cp.as_ptr(), mounted, arg.cast()) } != 0 {
            return Err(fail(m.error()));
        }
        let deadline = Instant::now() + timeout;
        loop {
            // SAFETY: the callback wrote `state` inside `service` on this thread; read here only
            // between calls.
            if let Some(r) = unsafe { (*arg).take() } {
                r.map_err(fail)?;
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(fail(format!("the server did not answer within {} s", timeout.as_secs())));
            }
            m.service(Some(left)).map_err(fail)?;
        }
        // The setup calls that follow (open, stat, laying out) wait no longer than the mount.
        // SAFETY: a live context.
        unsafe { (lib.set_timeout)(ctx, timeout.as_millis().min(c_int::MAX as u128) as c_int) };
        Ok(m)
    }

    /// The context's last error.
    fn error(&self) -> String {
        // SAFETY: a live context.
        text(unsafe { (self.lib.get_error)(self.ctx) }).unwrap_or_else(|| "unknown error".into())
    }

    /// Waits up to `timeout` (`None`: no limit) for the socket, then lets libnfs read and write
    /// it, which runs the callbacks of what finished. A dead connection is an error.
    fn service(&mut self, timeout: Option<Duration>) -> Result<(), String> {
        // SAFETY: a live context.
        let (fd, events) = unsafe { ((self.lib.get_fd)(self.ctx), (self.lib.which_events)(self.ctx)) };
        let mut pfd = libc::pollfd { fd, events: events as i16, revents: 0 };
        // Wake at least once a second, so that libnfs's own timeouts are checked.
        let ms = timeout.map_or(1000, |t| t.as_millis().clamp(1, 1000) as c_int);
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return if e.raw_os_error() == Some(libc::EINTR) { Ok(()) } else { Err(format!("poll: {e}")) };
        }
        // SAFETY: a live context; callbacks run inside and touch only their slots and `done`.
        if unsafe { (self.lib.service)(self.ctx, if n > 0 { pfd.revents as c_int } else { 0 }) } < 0 {
            // libnfs says only "Socket failed with POLLHUP" of a refused or reset connection
            // (and has closed the socket, whose error is gone with it).
            let why = self.error();
            return Err(if why.contains("POLLHUP") {
                format!("{why}: the server refused or closed the connection")
            } else {
                why
            });
        }
        Ok(())
    }

    /// The export-relative path libnfs wants: absolute from the export's root.
    fn cpath(name: &str) -> Result<CString, String> {
        let p = if name.starts_with('/') { name.to_string() } else { format!("/{name}") };
        CString::new(p).map_err(|_| format!("ioengine=nfs: file name {} holds a NUL byte", name.escape_debug()))
    }

    /// The size of file `name` on the export, `None` when there is no such file.
    pub(crate) fn size_of(&self, name: &str) -> Result<Option<u64>, String> {
        let p = Self::cpath(name)?;
        let mut st = Stat64::default();
        // SAFETY: a live context, a NUL-terminated path and a stat buffer of libnfs's layout.
        match unsafe { (self.lib.stat64)(self.ctx, p.as_ptr(), &mut st) } {
            0 => Ok(Some(st.size)),
            e if e == -libc::ENOENT => Ok(None),
            _ => Err(format!("ioengine=nfs: cannot look up '{name}': {}", self.error())),
        }
    }

    /// Opens `name` (created when `create`), read-write, with `extra` open flags (O_SYNC);
    /// returns its file index and size.
    pub(crate) fn open(&mut self, name: &str, create: bool, extra: c_int) -> Result<(u32, u64), String> {
        let p = Self::cpath(name)?;
        let flags = libc::O_RDWR | extra | if create { libc::O_CREAT } else { 0 };
        let mut fh: Fh = std::ptr::null_mut();
        // SAFETY: a live context, a NUL-terminated path and a place for the handle.
        if unsafe { (self.lib.open2)(self.ctx, p.as_ptr(), flags, 0o644, &mut fh) } != 0 || fh.is_null() {
            return Err(format!("ioengine=nfs: cannot open '{name}' on the export: {}", self.error()));
        }
        self.files.push(fh);
        let mut st = Stat64::default();
        // SAFETY: a live context, an open handle and a stat buffer of libnfs's layout.
        if unsafe { (self.lib.fstat64)(self.ctx, fh, &mut st) } != 0 {
            return Err(format!("ioengine=nfs: cannot stat '{name}': {}", self.error()));
        }
        Ok((self.files.len() as u32 - 1, st.size))
    }

    /// Extends file `file` to `len` bytes and writes `chunk` over all of it, waiting for each
    /// write (laying a file out before a job reads it).
    pub(crate) fn fill(&self, file: u32, len: u64, chunk: &[u8]) -> Result<(), String> {
        let fh = self.files[file as usize];
        // SAFETY: a live context and an open handle.
        if unsafe { (self.lib.ftruncate)(self.ctx, fh, len) } != 0 {
            return Err(self.error());
        }
        let mut at = 0u64;
        while at < len {
            let n = (len - at).min(chunk.len() as u64);
            // SAFETY: a live context, an open handle and `n` bytes of `chunk`.
            let r = unsafe { (self.lib.pwrite)(self.ctx, fh, at, n, chunk.as_ptr().cast()) };
            if r <= 0 {
                return Err(self.error());
            }
            at += r as u64;
        }
        Ok(())
    }

    /// No call waits longer than this any more (`None`: as long as it takes), once the job's
    /// I/O starts.
    pub(crate) fn set_call_timeout(&self, t: Option<Duration>) {
        let ms = t.map_or(-1, |t| t.as_millis().min(c_int::MAX as u128) as c_int);
        // SAFETY: a live context.
        unsafe { (self.lib.set_timeout)(self.ctx, ms) };
    }

    /// A slot for unit `index`, to be kept at a fixed address and passed to [`Mount::start`].
    pub(crate) fn slot(&mut self, index: u32) -> Slot {
        Slot { done: &mut *self.done, index, op: Op::Read, buf: std::ptr::null_mut(), len: 0 }
    }

    /// Starts `op` of `len` bytes at `offset` of file `file`; its completion is taken later by
    /// [`Mount::take`]. The error is an errno when libnfs could not start it.
    ///
    /// # Safety
    /// `slot` must come from [`Mount::slot`] of this mount and stay put and untouched until
    /// its completion has been taken; for reads and writes, `buf` must point to at least `len`
    /// bytes nobody else touches until then.
    pub(crate) unsafe fn start(
        &mut self,
        slot: *mut Slot,
        op: Op,
        file: u32,
        buf: *mut u8,
        len: u32,
        offset: u64,
    ) -> Result<(), i32> {
        let Some(&fh) = self.files.get(file as usize) else { return Err(libc::EBADF) };
        // SAFETY: the slot is the caller's promise; it is written before the call starts.
        unsafe {
            (*slot).op = op;
            (*slot).buf = buf;
            (*slot).len = len;
        }
        let arg: *mut c_void = slot.cast();
        // SAFETY: a live context and handle; the buffer and slot are the caller's promise.
        let r = unsafe {
            match op {
                Op::Read => (self.lib.pread_async)(self.ctx, fh, offset, len as u64, finished, arg),
                Op::Write => {
                    (self.lib.pwrite_async)(self.ctx, fh, offset, len as u64, buf.cast_const().cast(), finished, arg)
                }
                // NFS's COMMIT of the file's unstable writes (`nfs_fsync`), for both syncs.
                Op::Sync | Op::DataSync => (self.lib.fsync_async)(self.ctx, fh, finished, arg),
                // NFS has no trim; fio's engine fails one with EINVAL.
                Op::Trim => return Err(libc::EINVAL),
            }
        };
        if r != 0 {
            // libnfs answers -1 for most refusals, a negative errno for a few.
            return Err(if r < -1 && r > -4096 { -r } else { libc::EIO });
        }
        Ok(())
    }

    /// Appends to `out` up to `max` finished calls as `(unit, result)`, waiting (up to
    /// `limit`) while fewer than `min` have finished and `in_flight` are outstanding. Returns
    /// how many it appended. A dead connection is an error.
    pub(crate) fn take(
        &mut self,
        min: u32,
        max: u32,
        in_flight: u32,
        limit: Option<Duration>,
        out: &mut Vec<(u32, i64)>,
    ) -> Result<u32, String> {
        let deadline = limit.map(|l| Instant::now() + l);
        let mut got = 0u32;
        loop {
            while got < max {
                let Some(c) = self.done.pop_front() else { break };
                out.push(c);
                got += 1;
            }
            if got >= min || got >= max || got >= in_flight {
                return Ok(got);
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|l| l.is_zero()) {
                return Ok(got);
            }
            self.service(left).map_err(|e| format!("nfs: {e}"))?;
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        for &fh in &self.files {
            // SAFETY: each handle is closed once, here (NFSv3 has no close on the wire).
            unsafe { (self.lib.close)(self.ctx, fh) };
        }
        // No UMNT is sent: a server that stopped answering must not hold the exit. Destroying
        // the context closes its socket.
        // SAFETY: the context is destroyed once, here, and never used again.
        unsafe { (self.lib.destroy_context)(self.ctx) };
    }
}
