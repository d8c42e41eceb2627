//! libblkio (`libblkio.so.1`, Debian's libblkio1 from Debian 13 on): the block I/O library the
//! `libblkio` engine drives, as a safe [`Blkio`] over the C functions it needs. The signatures
//! are written by hand from blkio.h as documented in blkio(3) (libblkio 1.x; every function
//! used here exists since 1.0).
//!
//! libblkio reports errors as negative errnos, with a message for the calling thread
//! (`blkio_get_error_msg`), read at once after a failed call.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;
use std::time::Duration;

use super::Lib;

type BlkioT = *mut c_void;
type QueueT = *mut c_void;

/// blkio.h's `struct blkio_completion`: 32 bytes, the last 12 reserved.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Completion {
    user_data: *mut c_void,
    error_msg: *const c_char,
    ret: c_int,
    reserved: [u8; 12],
}

impl Completion {
    pub(crate) const EMPTY: Completion =
        Completion { user_data: std::ptr::null_mut(), error_msg: std::ptr::null(), ret: 0, reserved: [0; 12] };

    /// The user data the request was submitted with (fiox passes the unit's index).
    pub(crate) fn user_data(&self) -> usize {
        self.user_data as usize
    }

    /// 0, or the request's negative errno.
    pub(crate) fn ret(&self) -> i32 {
        self.ret
    }
}

/// libblkio's functions (the `blkio_`/`blkioq_` prefixes kept where both exist).
struct Api {
    get_error_msg: unsafe extern "C" fn() -> *const c_char,
    create: unsafe extern "C" fn(*const c_char, *mut BlkioT) -> c_int,
    connect: unsafe extern "C" fn(BlkioT) -> c_int,
    start: unsafe extern "C" fn(BlkioT) -> c_int,
    destroy: unsafe extern "C" fn(*mut BlkioT),
    get_bool: unsafe extern "C" fn(BlkioT, *const c_char, *mut bool) -> c_int,
    get_uint64: unsafe extern "C" fn(BlkioT, *const c_char, *mut u64) -> c_int,
    set_bool: unsafe extern "C" fn(BlkioT, *const c_char, bool) -> c_int,
    set_int: unsafe extern "C" fn(BlkioT, *const c_char, c_int) -> c_int,
    set_str: unsafe extern "C" fn(BlkioT, *const c_char, *const c_char) -> c_int,
    get_queue: unsafe extern "C" fn(BlkioT, c_int) -> QueueT,
    get_poll_queue: unsafe extern "C" fn(BlkioT, c_int) -> QueueT,
    q_read: unsafe extern "C" fn(QueueT, u64, *mut c_void, usize, *mut c_void, u32),
    q_write: unsafe extern "C" fn(QueueT, u64, *const c_void, usize, *mut c_void, u32),
    q_readv: unsafe extern "C" fn(QueueT, u64, *const libc::iovec, c_int, *mut c_void, u32),
    q_writev: unsafe extern "C" fn(QueueT, u64, *mut libc::iovec, c_int, *mut c_void, u32),
    q_write_zeroes: unsafe extern "C" fn(QueueT, u64, u64, *mut c_void, u32),
    q_discard: unsafe extern "C" fn(QueueT, u64, u64, *mut c_void, u32),
    q_flush: unsafe extern "C" fn(QueueT, *mut c_void, u32),
    q_do_io: unsafe extern "C" fn(QueueT, *mut Completion, c_int, c_int, *mut libc::timespec) -> c_int,
    q_get_completion_fd: unsafe extern "C" fn(QueueT) -> c_int,
    q_set_completion_fd_enabled: unsafe extern "C" fn(QueueT, bool),
}

static API: OnceLock<Result<Api, String>> = OnceLock::new();

fn api() -> Result<&'static Api, String> {
    API.get_or_init(resolve).as_ref().map_err(Clone::clone)
}

/// Loads libblkio once; the error names the library and its package.
pub(crate) fn load() -> Result<(), String> {
    api().map(|_| ())
}

fn resolve() -> Result<Api, String> {
    let lib = Lib::open(c"libblkio.so.1", "libblkio1", "libblkio")?;
    // SAFETY: every field's type is the signature blkio.h gives the named function.
    unsafe {
        Ok(Api {
            get_error_msg: lib.get(c"blkio_get_error_msg")?,
            create: lib.get(c"blkio_create")?,
            connect: lib.get(c"blkio_connect")?,
            start: lib.get(c"blkio_start")?,
            destroy: lib.get(c"blkio_destroy")?,
            get_bool: lib.get(c"blkio_get_bool")?,
            get_uint64: lib.get(c"blkio_get_uint64")?,
            set_bool: lib.get(c"blkio_set_bool")?,
            set_int: lib.get(c"blkio_set_int")?,
            set_str: lib.get(c"blkio_set_str")?,
            get_queue: lib.get(c"blkio_get_queue")?,
            get_poll_queue: lib.get(c"blkio_get_poll_queue")?,
            q_read: lib.get(c"blkioq_read")?,
            q_write: lib.get(c"blkioq_write")?,
            q_readv: lib.get(c"blkioq_readv")?,
            q_writev: lib.get(c"blkioq_writev")?,
            q_write_zeroes: lib.get(c"blkioq_write_zeroes")?,
            q_discard: lib.get(c"blkioq_discard")?,
            q_flush: lib.get(c"blkioq_flush")?,
            q_do_io: lib.get(c"blkioq_do_io")?,
            q_get_completion_fd: lib.get(c"blkioq_get_completion_fd")?,
            q_set_completion_fd_enabled: lib.get(c"blkioq_set_completion_fd_enabled")?,
        })
    }
}

/// The calling thread's last libblkio message, or the errno's text when there is none.
fn message(api: &Api, ret: c_int) -> String {
    // SAFETY: blkio_get_error_msg returns null or a NUL-terminated per-thread string, valid until
    // the next libblkio call on this thread; it is copied at once.
    let p = unsafe { (api.get_error_msg)() };
    let text = if p.is_null() {
        String::new()
    } else {
        // SAFETY: non-null and NUL-terminated (see above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    };
    if text.is_empty() {
        std::io::Error::from_raw_os_error(-ret).to_string()
    } else {
        text
    }
}

fn c_text(what: &str, text: &str) -> Result<CString, String> {
    CString::new(text).map_err(|_| format!("{what} {} holds a NUL byte", text.escape_debug()))
}

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Write,
    Readv,
    Writev,
    Discard,
    WriteZeroes,
    Flush,
}

/// One libblkio instance (`struct blkio`) and, once started, its queue. Used by one thread at a
/// time; destroyed (its file or device closed) when dropped.
pub(crate) struct Blkio {
    api: &'static Api,
    b: BlkioT,
    q: QueueT,
}

impl Blkio {
    /// A new instance of `driver`; the error is fio's `blkio_create() failed: ...`.
    pub(crate) fn create(driver: &str) -> Result<Blkio, String> {
        let api = api()?;
        let name = c_text("libblkio_driver=", driver)?;
        let mut b: BlkioT = std::ptr::null_mut();
        // SAFETY: a NUL-terminated driver name and a place for the new instance's pointer.
        let ret = unsafe { (api.create)(name.as_ptr(), &mut b) };
        if ret < 0 || b.is_null() {
            return Err(format!("blkio_create() failed: {}", message(api, ret)));
        }
        Ok(Blkio { api, b, q: std::ptr::null_mut() })
    }

    fn check(&self, call: &str, ret: c_int) -> Result<(), String> {
        if ret < 0 {
            return Err(format!("{call} failed: {}", message(self.api, ret)));
        }
        Ok(())
    }

    /// Sets property `name` from its text (libblkio converts it to the property's type).
    pub(crate) fn set_str(&mut self, name: &str, value: &str) -> Result<(), String> {
        let (n, v) = (c_text("property", name)?, c_text("value", value)?);
        // SAFETY: a live instance and two NUL-terminated strings, which libblkio copies.
        let ret = unsafe { (self.api.set_str)(self.b, n.as_ptr(), v.as_ptr()) };
        if ret < 0 {
            return Err(format!("error setting property '{name}' to '{value}': {}", message(self.api, ret)));
        }
        Ok(())
    }

    pub(crate) fn set_bool(&mut self, name: &CStr, value: bool) -> Result<(), String> {
        // SAFETY: a live instance and a NUL-terminated name.
        let ret = unsafe { (self.api.set_bool)(self.b, name.as_ptr(), value) };
        self.check("blkio_set_bool()", ret)
    }

    pub(crate) fn set_int(&mut self, name: &CStr, value: i32) -> Result<(), String> {
        // SAFETY: a live instance and a NUL-terminated name.
        let ret = unsafe { (self.api.set_int)(self.b, name.as_ptr(), value) };
        self.check("blkio_set_int()", ret)
    }

    pub(crate) fn get_bool(&self, name: &CStr) -> Result<bool, String> {
        let mut v = false;
        // SAFETY: a live instance, a NUL-terminated name and a place for the value.
        let ret = unsafe { (self.api.get_bool)(self.b, name.as_ptr(), &mut v) };
        self.check("blkio_get_bool()", ret).map(|()| v)
    }

    pub(crate) fn get_uint64(&self, name: &CStr) -> Result<u64, String> {
        let mut v = 0u64;
        // SAFETY: a live instance, a NUL-terminated name and a place for the value.
        let ret = unsafe { (self.api.get_uint64)(self.b, name.as_ptr(), &mut v) };
        self.check("blkio_get_uint64()", ret).map(|()| v)
    }

    pub(crate) fn connect(&mut self) -> Result<(), String> {
        // SAFETY: a live instance, in the created state.
        let ret = unsafe { (self.api.connect)(self.b) };
        self.check("blkio_connect()", ret)
    }

    /// Starts the instance and takes its first queue (a poll queue when `poll`).
    pub(crate) fn start(&mut self, poll: bool) -> Result<(), String> {
        // SAFETY: a live instance, in the connected state.
        let ret = unsafe { (self.api.start)(self.b) };
        self.check("blkio_start()", ret)?;
        // SAFETY: a started instance; queue 0 exists when num-queues (num-poll-queues) >= 1.
        let q = unsafe {
            if poll {
                (self.api.get_poll_queue)(self.b, 0)
            } else {
                (self.api.get_queue)(self.b, 0)
            }
        };
        if q.is_null() {
            return Err(format!(
                "blkio_get_{}queue() failed: {}",
                if poll { "poll_" } else { "" },
                message(self.api, 0)
            ));
        }
        self.q = q;
        Ok(())
    }

    /// Queues one request; `user_data` comes back in its completion.
    ///
    /// # Safety
    /// A started instance. For reads and writes `buf` points at `len` bytes that nobody else
    /// touches until this request's completion is returned by [`Blkio::do_io`]; for the
    /// vectored ones `iov` points at one iovec describing them, which stays put as long.
    pub(crate) unsafe fn queue(
        &mut self,
        op: Op,
        offset: u64,
        buf: *mut u8,
        len: u64,
        iov: *mut libc::iovec,
        user_data: usize,
    ) {
        let (q, ud) = (self.q, user_data as *mut c_void);
        // SAFETY: the caller's promise covers the buffers; the queue is live while self is.
        unsafe {
            match op {
                Op::Read => (self.api.q_read)(q, offset, buf.cast(), len as usize, ud, 0),
                Op::Write => (self.api.q_write)(q, offset, buf.cast(), len as usize, ud, 0),
                Op::Readv => (self.api.q_readv)(q, offset, iov, 1, ud, 0),
                Op::Writev => (self.api.q_writev)(q, offset, iov, 1, ud, 0),
                Op::Discard => (self.api.q_discard)(q, offset, len, ud, 0),
                Op::WriteZeroes => (self.api.q_write_zeroes)(q, offset, len, ud, 0),
                Op::Flush => (self.api.q_flush)(q, ud, 0),
            }
        }
    }

    /// Submits what was queued and returns between `min` and `out.len()` completions into
    /// `out` (how many), waiting at most `limit` when given. `Err` is the negative errno:
    /// `-ETIME` when the limit passed first.
    pub(crate) fn do_io(&mut self, out: &mut [Completion], min: usize, limit: Option<Duration>) -> Result<usize, i32> {
        let mut ts =
            limit.map(|d| libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as _ });
        let tsp = ts.as_mut().map_or(std::ptr::null_mut(), |t| t as *mut libc::timespec);
        let ptr = if out.is_empty() { std::ptr::null_mut() } else { out.as_mut_ptr() };
        // SAFETY: a started instance's queue; `out` has room for `out.len()` completions and
        // `tsp` is null or a live timespec, both for the whole call.
        let ret = unsafe { (self.api.q_do_io)(self.q, ptr, min as c_int, out.len() as c_int, tsp) };
        if ret < 0 {
            Err(ret)
        } else {
            Ok(ret as usize)
        }
    }

    /// The message of the last failed call on this thread (for a failed `do_io`).
    pub(crate) fn last_error(&self, ret: i32) -> String {
        message(self.api, ret)
    }

    /// The queue's completion eventfd (non-blocking), enabled for events.
    pub(crate) fn completion_fd(&mut self) -> std::os::fd::RawFd {
        // SAFETY: a started instance's queue.
        unsafe {
            (self.api.q_set_completion_fd_enabled)(self.q, true);
            (self.api.q_get_completion_fd)(self.q)
        }
    }
}

impl Drop for Blkio {
    fn drop(&mut self) {
        // SAFETY: a live instance, destroyed once; blkio_destroy closes its queues and file and
        // sets the pointer to null.
        unsafe { (self.api.destroy)(&mut self.b) };
    }
}
