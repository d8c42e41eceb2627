//! libnbd (`libnbd.so.0`, Debian's libnbd0): the NBD client the `nbd` engine uses, as a safe
//! [`Handle`] over the C functions it needs. The signatures are written by hand from libnbd.h
//! (ABI `LIBNBD_1.0`; every function used here exists since libnbd 1.0, so any libnbd0 does).
//!
//! libnbd reports errors per thread: a call that fails returns -1 and leaves a message
//! (`nbd_get_error`) and an errno (`nbd_get_errno`) for the calling thread, read at once here.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::Lib;

type HandleT = *mut c_void;

/// libnbd's `nbd_completion_callback`, passed by value. fiox passes none (all null: libnbd's
/// `NBD_NULL_COMPLETION`) and retires each command with `nbd_aio_command_completed`.
#[repr(C)]
#[derive(Clone, Copy)]
struct CompletionCallback {
    callback: Option<unsafe extern "C" fn(*mut c_void, *mut c_int) -> c_int>,
    user_data: *mut c_void,
    free: Option<unsafe extern "C" fn(*mut c_void)>,
}

const NO_CALLBACK: CompletionCallback =
    CompletionCallback { callback: None, user_data: std::ptr::null_mut(), free: None };

/// libnbd's functions (the `nbd_` prefix dropped).
struct Nbd {
    create: unsafe extern "C" fn() -> HandleT,
    close: unsafe extern "C" fn(HandleT),
    get_error: unsafe extern "C" fn() -> *const c_char,
    get_errno: unsafe extern "C" fn() -> c_int,
    aio_connect_uri: unsafe extern "C" fn(HandleT, *const c_char) -> c_int,
    aio_is_ready: unsafe extern "C" fn(HandleT) -> c_int,
    aio_is_connecting: unsafe extern "C" fn(HandleT) -> c_int,
    aio_is_closed: unsafe extern "C" fn(HandleT) -> c_int,
    aio_is_dead: unsafe extern "C" fn(HandleT) -> c_int,
    poll: unsafe extern "C" fn(HandleT, c_int) -> c_int,
    get_size: unsafe extern "C" fn(HandleT) -> i64,
    is_read_only: unsafe extern "C" fn(HandleT) -> c_int,
    aio_pread: unsafe extern "C" fn(HandleT, *mut c_void, usize, u64, CompletionCallback, u32) -> i64,
    aio_pwrite: unsafe extern "C" fn(HandleT, *const c_void, usize, u64, CompletionCallback, u32) -> i64,
    aio_trim: unsafe extern "C" fn(HandleT, u64, u64, CompletionCallback, u32) -> i64,
    aio_flush: unsafe extern "C" fn(HandleT, CompletionCallback, u32) -> i64,
    aio_command_completed: unsafe extern "C" fn(HandleT, u64) -> c_int,
    aio_peek_command_completed: unsafe extern "C" fn(HandleT) -> i64,
    aio_in_flight: unsafe extern "C" fn(HandleT) -> c_int,
    aio_disconnect: unsafe extern "C" fn(HandleT, u32) -> c_int,
}

static NBD: OnceLock<Result<Nbd, String>> = OnceLock::new();

fn lib() -> Result<&'static Nbd, String> {
    NBD.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Nbd, String> {
    let lib = Lib::open(c"libnbd.so.0", "libnbd0", "nbd")?;
    // SAFETY: every field's type is the signature libnbd.h gives the named function.
    unsafe {
        Ok(Nbd {
            create: lib.get(c"nbd_create")?,
            close: lib.get(c"nbd_close")?,
            get_error: lib.get(c"nbd_get_error")?,
            get_errno: lib.get(c"nbd_get_errno")?,
            aio_connect_uri: lib.get(c"nbd_aio_connect_uri")?,
            aio_is_ready: lib.get(c"nbd_aio_is_ready")?,
            aio_is_connecting: lib.get(c"nbd_aio_is_connecting")?,
            aio_is_closed: lib.get(c"nbd_aio_is_closed")?,
            aio_is_dead: lib.get(c"nbd_aio_is_dead")?,
            poll: lib.get(c"nbd_poll")?,
            get_size: lib.get(c"nbd_get_size")?,
            is_read_only: lib.get(c"nbd_is_read_only")?,
            aio_pread: lib.get(c"nbd_aio_pread")?,
            aio_pwrite: lib.get(c"nbd_aio_pwrite")?,
            aio_trim: lib.get(c"nbd_aio_trim")?,
            aio_flush: lib.get(c"nbd_aio_flush")?,
            aio_command_completed: lib.get(c"nbd_aio_command_completed")?,
            aio_peek_command_completed: lib.get(c"nbd_aio_peek_command_completed")?,
            aio_in_flight: lib.get(c"nbd_aio_in_flight")?,
            aio_disconnect: lib.get(c"nbd_aio_disconnect")?,
        })
    }
}

/// The calling thread's last libnbd error: its message without the leading function name
/// (`nbd_aio_connect_uri: connect: ...` reads `connect: ...`), and its errno (0: none).
fn last_error(lib: &Nbd) -> (String, i32) {
    // SAFETY: nbd_get_error returns null or a NUL-terminated string owned by libnbd, valid until
    // the next libnbd call on this thread; it is copied at once.
    let msg = unsafe { (lib.get_error)() };
    let text = if msg.is_null() {
        "unknown error".to_string()
    } else {
        // SAFETY: non-null and NUL-terminated (see above).
        unsafe { CStr::from_ptr(msg) }.to_string_lossy().into_owned()
    };
    let text = match text.split_once(": ") {
        Some((call, rest)) if call.starts_with("nbd_") && !call.contains(' ') => rest.to_string(),
        _ => text,
    };
    // SAFETY: no arguments; reads the calling thread's errno for libnbd's last error.
    let errno = unsafe { (lib.get_errno)() };
    (text, errno)
}

/// What an operation on a [`Handle`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Write,
    Trim,
    Flush,
}

/// How [`Handle::poll`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Polled {
    /// libnbd did some work (read or wrote the socket).
    Progress,
    /// The timeout passed, or a signal interrupted the wait.
    Idle,
}

/// One connection to an NBD server, ready for commands. It is used by one thread at a time
/// (libnbd handles are thread-safe, so moving it between threads is sound too).
pub(crate) struct Handle {
    lib: &'static Nbd,
    h: HandleT,
}

// SAFETY: a libnbd handle has a lock of its own and may be used from any thread.
unsafe impl Send for Handle {}

impl Handle {
    /// Connects to `uri` (libnbd's URI forms: `nbd://host[:port][/export]`, `nbd+unix:///export?
    /// socket=PATH`, ...) and completes the handshake, giving up after `timeout`, so that a
    /// server that accepts the connection and then says nothing cannot hold the run. The error
    /// is one line naming the URI and libnbd's reason.
    pub(crate) fn connect(uri: &str, timeout: Duration) -> Result<Handle, String> {
        let lib = lib()?;
        let curi = CString::new(uri).map_err(|_| format!("uri={} holds a NUL byte", uri.escape_debug()))?;
        // SAFETY: no arguments; returns a new handle or null.
        let h = unsafe { (lib.create)() };
        if h.is_null() {
            return Err(format!("ioengine=nbd: cannot create a libnbd handle: {}", last_error(lib).0));
        }
        let handle = Handle { lib, h };
        let fail = |why: String| Err(format!("ioengine=nbd: cannot connect to uri={uri}: {why}"));
        // SAFETY: a live handle and a NUL-terminated URI, which libnbd copies.
        if unsafe { (lib.aio_connect_uri)(h, curi.as_ptr()) } < 0 {
            return fail(last_error(lib).0);
        }
        let deadline = Instant::now() + timeout;
        loop {
            // SAFETY: a live handle (all the state queries below too).
            if unsafe { (lib.aio_is_ready)(h) } == 1 {
                return Ok(handle);
            }
            // SAFETY: as above.
            let (dead, closed) = unsafe { ((lib.aio_is_dead)(h) == 1, (lib.aio_is_closed)(h) == 1) };
            if dead || closed {
                return fail("the server closed the connection during the handshake".into());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            // SAFETY: as above.
            let connecting = unsafe { (lib.aio_is_connecting)(h) } == 1;
            if left.is_zero() || !connecting {
                return fail(format!(
                    "the server did not complete the NBD handshake within {} s{}",
                    timeout.as_secs(),
                    if connecting { " (it does not answer)" } else { "" }
                ));
            }
            let ms = left.as_millis().clamp(1, c_int::MAX as u128) as c_int;
            // SAFETY: a live handle; poll waits at most `ms` milliseconds.
            if unsafe { (lib.poll)(h, ms) } < 0 {
                let (text, errno) = last_error(lib);
                if errno != libc::EINTR {
                    return fail(text);
                }
            }
        }
    }

    /// The export's size in bytes.
    pub(crate) fn size(&self) -> Result<u64, String> {
        // SAFETY: a connected handle.
        let n = unsafe { (self.lib.get_size)(self.h) };
        if n < 0 {
            return Err(format!("ioengine=nbd: cannot get the export's size: {}", last_error(self.lib).0));
        }
        Ok(n as u64)
    }

    /// Whether the server serves the export read-only.
    pub(crate) fn read_only(&self) -> bool {
        // SAFETY: a connected handle.
        unsafe { (self.lib.is_read_only)(self.h) == 1 }
    }

    /// Starts `op` on `len` bytes at `offset`; returns the command's cookie, or the errno and
    /// libnbd's message when it could not be started (a read-only export written to, an
    /// operation the server does not offer, a dead connection).
    ///
    /// # Safety
    /// For reads and writes, `buf` must point to at least `len` bytes that nobody else touches
    /// until the command has been retired by [`Handle::completed`] (or the handle is closed).
    pub(crate) unsafe fn start(&self, op: Op, buf: *mut u8, len: u32, offset: u64) -> Result<u64, (i32, String)> {
        // SAFETY: a connected handle; the buffer is the caller's promise; no callback.
        let cookie = unsafe {
            match op {
                Op::Read => (self.lib.aio_pread)(self.h, buf.cast(), len as usize, offset, NO_CALLBACK, 0),
                Op::Write => {
                    (self.lib.aio_pwrite)(self.h, buf.cast_const().cast(), len as usize, offset, NO_CALLBACK, 0)
                }
                Op::Trim => (self.lib.aio_trim)(self.h, len as u64, offset, NO_CALLBACK, 0),
                Op::Flush => (self.lib.aio_flush)(self.h, NO_CALLBACK, 0),
            }
        };
        if cookie < 0 {
            let (text, errno) = last_error(self.lib);
            return Err((if errno > 0 { errno } else { libc::EIO }, text));
        }
        Ok(cookie as u64)
    }

    /// The cookie of a command that has finished and awaits [`Handle::completed`], if any.
    pub(crate) fn next_finished(&self) -> Option<u64> {
        // SAFETY: a connected handle.
        let c = unsafe { (self.lib.aio_peek_command_completed)(self.h) };
        (c > 0).then_some(c as u64)
    }

    /// Retires finished command `cookie`: `Ok(())` when it succeeded, else its errno and
    /// libnbd's message.
    pub(crate) fn completed(&self, cookie: u64) -> Result<(), (i32, String)> {
        // SAFETY: a connected handle; an unknown cookie is an error, not undefined behaviour.
        match unsafe { (self.lib.aio_command_completed)(self.h, cookie) } {
            1 => Ok(()),
            0 => Err((libc::EAGAIN, "the command has not finished".into())),
            _ => {
                let (text, errno) = last_error(self.lib);
                Err((if errno > 0 { errno } else { libc::EIO }, text))
            }
        }
    }

    /// Lets libnbd move data until it has made progress or `timeout` has passed (`None`: no
    /// limit). A dead connection is an error naming libnbd's reason.
    pub(crate) fn poll(&self, timeout: Option<Duration>) -> Result<Polled, String> {
        let ms = timeout.map_or(-1, |t| t.as_millis().min(c_int::MAX as u128) as c_int);
        // SAFETY: a connected handle.
        match unsafe { (self.lib.poll)(self.h, ms) } {
            1 => Ok(Polled::Progress),
            0 => Ok(Polled::Idle),
            _ => {
                let (text, errno) = last_error(self.lib);
                if errno == libc::EINTR {
                    Ok(Polled::Idle)
                } else {
                    Err(format!("nbd: {text}"))
                }
            }
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // Tell the server the client is going (NBD_CMD_DISC), waiting a little for it to be
        // sent, but never for a server that stopped answering; then close the socket.
        // SAFETY: a live handle; disconnect is refused (harmlessly) unless it is connected
        // with no command in flight.
        if unsafe { (self.lib.aio_in_flight)(self.h) } == 0 && unsafe { (self.lib.aio_is_ready)(self.h) } == 1 {
            // SAFETY: as above.
            if unsafe { (self.lib.aio_disconnect)(self.h, 0) } == 0 {
                let deadline = Instant::now() + Duration::from_secs(1);
                // SAFETY: as above; each poll waits at most 100 ms.
                while unsafe { (self.lib.aio_is_closed)(self.h) == 0 && (self.lib.aio_is_dead)(self.h) == 0 }
                    && Instant::now() < deadline
                {
                    // SAFETY: as above.
                    if unsafe { (self.lib.poll)(self.h, 100) } < 0 {
                        break;
                    }
                }
            }
        }
        // SAFETY: the handle is closed once, here, and never used again.
        unsafe { (self.lib.close)(self.h) };
    }
}
