//! libiscsi (`libiscsi.so.7`, Debian's libiscsi7): the iSCSI initiator the `libiscsi` engine
//! uses, as a safe [`Session`] over the C functions it needs. The signatures are written by
//! hand from libiscsi's `iscsi.h` and `scsi-lowlevel.h` (soname 7, libiscsi 1.18 and later;
//! every function used here is in all of them). Three public structs are read through their
//! leading fields only (`iscsi_url`, `scsi_readcapacity16`, `scsi_sense`), whose layout the
//! soname fixes.
//!
//! libiscsi is single-threaded and event driven: a command is queued with a callback, and the
//! caller polls the context's socket and hands the events to `iscsi_service`, inside which the
//! callbacks run. A [`Session`] is used by one thread at a time; its callbacks only append to
//! the session's list of finished commands, which the engine drains.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{Lib, Op};

type Ctx = *mut c_void;
type Task = *mut c_void;
type Callback = unsafe extern "C" fn(Ctx, c_int, *mut c_void, *mut c_void);

/// libiscsi's `struct scsi_iovec`.
#[repr(C)]
struct IoVec {
    base: *mut c_void,
    len: usize,
}

/// The leading fields of libiscsi's `struct iscsi_url` (`MAX_STRING_SIZE + 1` = 256 bytes
/// each), up to the LUN.
#[repr(C)]
struct Url {
    portal: [c_char; 256],
    target: [c_char; 256],
    user: [c_char; 256],
    passwd: [c_char; 256],
    target_user: [c_char; 256],
    target_passwd: [c_char; 256],
    lun: c_int,
}

/// The leading fields of `struct scsi_readcapacity16`.
#[repr(C)]
struct Capacity16 {
    returned_lba: u64,
    block_length: u32,
}

/// `struct scsi_sense` (16 bytes in libiscsi 1.19), with room to spare should a later
/// library write more: only the key and the additional sense code are read.
#[repr(C)]
struct Sense {
    error_type: u8,
    key: c_int,
    ascq: c_int,
    rest: [u8; 52],
}

const SESSION_NORMAL: c_int = 2;
const STATUS_GOOD: c_int = 0;
const STATUS_CHECK_CONDITION: c_int = 2;
const STATUS_CANCELLED: c_int = 0x0f00_0000;
const STATUS_ERROR: c_int = 0x0f00_0001;
const STATUS_TIMEOUT: c_int = 0x0f00_0002;

/// libiscsi's functions (the `iscsi_` prefix dropped; the `scsi_` ones keep theirs).
struct Iscsi {
    create_context: unsafe extern "C" fn(*const c_char) -> Ctx,
    destroy_context: unsafe extern "C" fn(Ctx) -> c_int,
    get_error: unsafe extern "C" fn(Ctx) -> *const c_char,
    parse_full_url: unsafe extern "C" fn(Ctx, *const c_char) -> *mut Url,
    destroy_url: unsafe extern "C" fn(*mut Url),
    set_targetname: unsafe extern "C" fn(Ctx, *const c_char) -> c_int,
    set_session_type: unsafe extern "C" fn(Ctx, c_int) -> c_int,
    set_initiator_username_pwd: unsafe extern "C" fn(Ctx, *const c_char, *const c_char) -> c_int,
    set_target_username_pwd: unsafe extern "C" fn(Ctx, *const c_char, *const c_char) -> c_int,
    set_timeout: unsafe extern "C" fn(Ctx, c_int) -> c_int,
    set_noautoreconnect: unsafe extern "C" fn(Ctx, c_int),
    full_connect_sync: unsafe extern "C" fn(Ctx, *const c_char, c_int) -> c_int,
    logout_sync: unsafe extern "C" fn(Ctx) -> c_int,
    is_logged_in: unsafe extern "C" fn(Ctx) -> c_int,
    get_fd: unsafe extern "C" fn(Ctx) -> c_int,
    which_events: unsafe extern "C" fn(Ctx) -> c_int,
    service: unsafe extern "C" fn(Ctx, c_int) -> c_int,
    queue_length: unsafe extern "C" fn(Ctx) -> c_int,
    readcapacity16_sync: unsafe extern "C" fn(Ctx, c_int) -> Task,
    #[allow(clippy::type_complexity)]
    read16_iov_task: unsafe extern "C" fn(
        Ctx,
        c_int,
        u64,
        u32,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        Callback,
        *mut c_void,
        *mut IoVec,
        c_int,
    ) -> Task,
    #[allow(clippy::type_complexity)]
    write16_iov_task: unsafe extern "C" fn(
        Ctx,
        c_int,
        u64,
        *mut u8,
        u32,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        Callback,
        *mut c_void,
        *mut IoVec,
        c_int,
    ) -> Task,
    synchronizecache16_task: unsafe extern "C" fn(Ctx, c_int, u64, u32, c_int, c_int, Callback, *mut c_void) -> Task,
    scsi_free_scsi_task: unsafe extern "C" fn(Task),
    scsi_datain_unmarshall: unsafe extern "C" fn(Task) -> *mut c_void,
    scsi_task_get_status: unsafe extern "C" fn(Task, *mut Sense) -> c_int,
    scsi_sense_ascq_str: unsafe extern "C" fn(c_int) -> *const c_char,
}

static ISCSI: OnceLock<Result<Iscsi, String>> = OnceLock::new();

fn lib() -> Result<&'static Iscsi, String> {
    ISCSI.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Iscsi, String> {
    let lib = Lib::open(c"libiscsi.so.7", "libiscsi7", "libiscsi")?;
    // SAFETY: every field's type is the signature libiscsi's headers give the named function.
    unsafe {
        Ok(Iscsi {
            create_context: lib.get(c"iscsi_create_context")?,
            destroy_context: lib.get(c"iscsi_destroy_context")?,
            get_error: lib.get(c"iscsi_get_error")?,
            parse_full_url: lib.get(c"iscsi_parse_full_url")?,
            destroy_url: lib.get(c"iscsi_destroy_url")?,
            set_targetname: lib.get(c"iscsi_set_targetname")?,
            set_session_type: lib.get(c"iscsi_set_session_type")?,
            set_initiator_username_pwd: lib.get(c"iscsi_set_initiator_username_pwd")?,
            set_target_username_pwd: lib.get(c"iscsi_set_target_username_pwd")?,
            set_timeout: lib.get(c"iscsi_set_timeout")?,
            set_noautoreconnect: lib.get(c"iscsi_set_noautoreconnect")?,
            full_connect_sync: lib.get(c"iscsi_full_connect_sync")?,
            logout_sync: lib.get(c"iscsi_logout_sync")?,
            is_logged_in: lib.get(c"iscsi_is_logged_in")?,
            get_fd: lib.get(c"iscsi_get_fd")?,
            which_events: lib.get(c"iscsi_which_events")?,
            service: lib.get(c"iscsi_service")?,
            queue_length: lib.get(c"iscsi_queue_length")?,
            readcapacity16_sync: lib.get(c"iscsi_readcapacity16_sync")?,
            read16_iov_task: lib.get(c"iscsi_read16_iov_task")?,
            write16_iov_task: lib.get(c"iscsi_write16_iov_task")?,
            synchronizecache16_task: lib.get(c"iscsi_synchronizecache16_task")?,
            scsi_free_scsi_task: lib.get(c"scsi_free_scsi_task")?,
            scsi_datain_unmarshall: lib.get(c"scsi_datain_unmarshall")?,
            scsi_task_get_status: lib.get(c"scsi_task_get_status")?,
            scsi_sense_ascq_str: lib.get(c"scsi_sense_ascq_str")?,
        })
    }
}

/// A C string owned by libiscsi, copied (`fallback` when null).
///
/// # Safety
/// `p` is null or a NUL-terminated string valid for the duration of the call.
unsafe fn text(p: *const c_char, fallback: &str) -> String {
    if p.is_null() {
        fallback.to_string()
    } else {
        // SAFETY: non-null and NUL-terminated (the caller's promise).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// A NUL-terminated string in a fixed array of `iscsi_url`.
fn field(a: &[c_char; 256]) -> String {
    let bytes: Vec<u8> = a.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Whether a TCP connection to `portal` (`host[:port]`, `[v6]:port`; iSCSI's port 3260 when
/// none is given) can be made: the system's reason when not.
fn reach(portal: &str) -> Result<(), String> {
    use std::net::{TcpStream, ToSocketAddrs};
    let has_port = match portal.rsplit_once(':') {
        Some((host, port)) => port.parse::<u16>().is_ok() && (!host.contains(':') || host.ends_with(']')),
        None => false,
    };
    let addr = if has_port { portal.to_string() } else { format!("{portal}:3260") };
    let mut addrs = addr.to_socket_addrs().map_err(|e| format!("{addr}: {e}"))?;
    let first = addrs.next().ok_or_else(|| format!("{addr}: no address"))?;
    TcpStream::connect_timeout(&first, Duration::from_secs(5)).map(drop).map_err(|e| format!("connect to {addr}: {e}"))
}

/// The SCSI sense keys' names (SPC-4, table 52).
const SENSE_KEYS: [&str; 16] = [
    "NO SENSE",
    "RECOVERED ERROR",
    "NOT READY",
    "MEDIUM ERROR",
    "HARDWARE ERROR",
    "ILLEGAL REQUEST",
    "UNIT ATTENTION",
    "DATA PROTECT",
    "BLANK CHECK",
    "VENDOR SPECIFIC",
    "COPY ABORTED",
    "ABORTED COMMAND",
    "RESERVED",
    "VOLUME OVERFLOW",
    "MISCOMPARE",
    "COMPLETED",
];

/// A finished command: the caller's tag, and `Ok` or the errno and what the target or
/// libiscsi said.
pub(crate) struct Done {
    pub tag: u64,
    pub result: Result<(), (i32, String)>,
}

/// What a command's callback needs: where to report, under which tag, the task to free, and
/// the buffer's description, which libiscsi reads until the command is done.
struct Pending {
    lib: &'static Iscsi,
    done: *mut Vec<Done>,
    tag: u64,
    task: Task,
    iov: IoVec,
}

/// libiscsi's callback for every command: records the outcome and frees the task.
///
/// # Safety
/// `private` is a `Pending` made by [`Session::start`] (through `Box::into_raw`), whose
/// session's list of finished commands is still alive: libiscsi calls this once per command,
/// inside `iscsi_service` or `iscsi_destroy_context`, which the session calls before dropping
/// that list.
unsafe extern "C" fn finished(ctx: Ctx, status: c_int, _data: *mut c_void, private: *mut c_void) {
    // SAFETY: see the function's contract; the box is taken back exactly once, here.
    let p = unsafe { Box::from_raw(private.cast::<Pending>()) };
    let result = if status == STATUS_GOOD {
        Ok(())
    } else {
        // SAFETY: the task is the command's, alive until freed below; the context is live.
        Err(unsafe { failure(p.lib, ctx, p.task, status) })
    };
    if !p.task.is_null() {
        // SAFETY: the command is over (its callback is running), so its task may be freed;
        // nothing else frees it.
        unsafe { (p.lib.scsi_free_scsi_task)(p.task) };
    }
    // SAFETY: `done` points to the session's boxed list, alive (see the contract) and not
    // otherwise borrowed while libiscsi runs callbacks.
    unsafe { (*p.done).push(Done { tag: p.tag, result }) };
}

/// The errno and the words for a command that ended with `status`. fio 3.33 reports error 1
/// (EPERM) for every command the target fails (seen for DATA PROTECT and MEDIUM ERROR), so
/// fiox does too, with the SCSI status and sense data in the message; commands that never got
/// an answer fail as the connection did.
///
/// # Safety
/// `task` is null or a live task; `ctx` is a live context.
unsafe fn failure(lib: &Iscsi, ctx: Ctx, task: Task, status: c_int) -> (i32, String) {
    match status {
        STATUS_CHECK_CONDITION if !task.is_null() => {
            let mut sense = Sense { error_type: 0, key: 0, ascq: 0, rest: [0; 52] };
            // SAFETY: a live task and a buffer larger than libiscsi's `struct scsi_sense`.
            unsafe { (lib.scsi_task_get_status)(task, &mut sense) };
            let key = SENSE_KEYS.get(sense.key as usize).copied().unwrap_or("?");
            // SAFETY: returns null or a static string.
            let code = unsafe { text((lib.scsi_sense_ascq_str)(sense.ascq), "") };
            let code = if code.is_empty() { String::new() } else { format!(" {code}") };
            (
                libc::EPERM,
                format!("CHECK CONDITION, sense key {key} ({}), ASC/ASCQ 0x{:04x}{code}", sense.key, sense.ascq),
            )
        }
        STATUS_CANCELLED => (libc::ECANCELED, "the command was cancelled (the connection closed)".into()),
        STATUS_TIMEOUT => (libc::ETIMEDOUT, "the command timed out".into()),
        // SAFETY: a live context; the message is copied at once.
        STATUS_ERROR => (libc::EIO, unsafe { text((lib.get_error)(ctx), "transport error") }),
        0x08 => (libc::EPERM, "SCSI status BUSY".into()),
        0x18 => (libc::EPERM, "SCSI status RESERVATION CONFLICT".into()),
        0x28 => (libc::EPERM, "SCSI status TASK SET FULL".into()),
        other => (libc::EPERM, format!("SCSI status 0x{other:x}")),
    }
}

/// One logged-in iSCSI session to one LUN.
pub(crate) struct Session {
    lib: &'static Iscsi,
    ctx: Ctx,
    lun: c_int,
    block: u32,
    blocks: u64,
    /// Filled by [`finished`] inside `iscsi_service`; boxed so that its address, which every
    /// command in flight holds, does not move with the session (sessions live in a Vec).
    #[allow(clippy::box_collection)]
    done: Box<Vec<Done>>,
    in_flight: usize,
}

// SAFETY: a libiscsi context belongs to no thread; the session uses it from one thread at a
// time (it is not Sync), and its raw pointers are its own.
unsafe impl Send for Session {}

/// `url` as messages show it: a CHAP password (`user%password@`) written `***`, so that an
/// error line or a log does not carry it.
pub(crate) fn without_password(url: &str) -> String {
    let Some(rest) = url.strip_prefix("iscsi://") else { return url.to_string() };
    match rest.split_once('@') {
        Some((who, host)) if !who.contains('/') => match who.split_once('%') {
            Some((user, _)) => format!("iscsi://{user}%***@{host}"),
            None => url.to_string(),
        },
        _ => url.to_string(),
    }
}

impl Session {
    /// Logs in to the LUN that `url` names (`iscsi://[user[%password]@]host[:port]/iqn/lun`)
    /// as `initiator`, and reads its capacity. Login and the first command must be over
    /// within `timeout`, so that a server that accepts the connection and then says nothing
    /// cannot hold the run. The error is one line naming the URL and the reason.
    pub(crate) fn connect(url: &str, initiator: &str, timeout: Duration) -> Result<Session, String> {
        let lib = lib()?;
        let shown = without_password(url);
        let fail = |why: String| format!("ioengine=libiscsi: cannot use filename={shown}: {why}");
        let curl = CString::new(url).map_err(|_| fail("it holds a NUL byte".into()))?;
        let cinit = CString::new(initiator).map_err(|_| fail("initiator= holds a NUL byte".into()))?;
        // SAFETY: a NUL-terminated name, which libiscsi copies.
        let ctx = unsafe { (lib.create_context)(cinit.as_ptr()) };
        if ctx.is_null() {
            return Err(fail(format!("libiscsi cannot make a context for initiator={initiator}")));
        }
        let mut s = Session { lib, ctx, lun: 0, block: 0, blocks: 0, done: Box::default(), in_flight: 0 };
        // SAFETY: a live context and a NUL-terminated URL, which libiscsi copies.
        let parsed = unsafe { (lib.parse_full_url)(ctx, curl.as_ptr()) };
        if parsed.is_null() {
            // libiscsi's message goes on to spell out the URL's form over more lines.
            let why = s.error();
            return Err(fail(format!(
                "not an iSCSI URL ({}); the form is iscsi://host[:port]/target-iqn/lun, with each ':' written '\\:' in filename=",
                why.lines().next().unwrap_or_default()
            )));
        }
        // SAFETY: non-null, so a `struct iscsi_url` whose leading fields `Url` describes; it
        // is read once and then freed.
        let (portal, target, lun, creds) = unsafe {
            let u = &*parsed;
            let creds = [field(&u.user), field(&u.passwd), field(&u.target_user), field(&u.target_passwd)];
            let r = (field(&u.portal), field(&u.target), u.lun, creds);
            (lib.destroy_url)(parsed);
            r
        };
        s.lun = lun;
        // Read from C strings, so free of NUL bytes.
        let c = |v: &str| CString::new(v).unwrap_or_default();
        let (cportal, ctarget) = (c(&portal), c(&target));
        let ccreds = creds.each_ref().map(|v| c(v));
        // SAFETY: a live, not yet connected context; the strings are copied by libiscsi.
        unsafe {
            (lib.set_targetname)(ctx, ctarget.as_ptr());
            (lib.set_session_type)(ctx, SESSION_NORMAL);
            // CHAP, when the URL names a user (`user%password@host`).
            if !creds[0].is_empty() {
                (lib.set_initiator_username_pwd)(ctx, ccreds[0].as_ptr(), ccreds[1].as_ptr());
            }
            if !creds[2].is_empty() {
                (lib.set_target_username_pwd)(ctx, ccreds[2].as_ptr(), ccreds[3].as_ptr());
            }
            // A lost connection fails the commands in flight rather than being retried
            // forever behind the run's back.
            (lib.set_noautoreconnect)(ctx, 1);
            (lib.set_timeout)(ctx, timeout.as_secs().clamp(1, c_int::MAX as u64) as c_int);
        }
        let where_ = format!("LUN {lun} of {target} at {portal}");
        let started = Instant::now();
        // SAFETY: a live context and NUL-terminated portal.
        if unsafe { (lib.full_connect_sync)(ctx, cportal.as_ptr(), lun) } != 0 {
            let why = s.error();
            // libiscsi counts its timeout in whole seconds of the wall clock, so it may end
            // the wait up to a second early.
            let why = if started.elapsed() + Duration::from_secs(1) >= timeout {
                format!("no answer within {} s ({why})", timeout.as_secs())
            } else if let Err(e) = reach(&portal) {
                // libiscsi words a refused or failed TCP connection as a failed reconnect;
                // the system's reason is clearer.
                e
            } else {
                why
            };
            return Err(fail(format!("cannot log in to {where_} as {initiator}: {why}")));
        }
        s.capacity().map_err(|why| fail(format!("cannot read the capacity of {where_}: {why}")))?;
        // Commands then wait as long as the target takes, as fio's do; the runner bounds the
        // wait once the job's time is up.
        // SAFETY: a live context.
        unsafe { (lib.set_timeout)(ctx, 0) };
        Ok(s)
    }

    /// READ CAPACITY (16): the block size and the number of blocks.
    fn capacity(&mut self) -> Result<(), String> {
        // SAFETY: a logged-in context.
        let task = unsafe { (self.lib.readcapacity16_sync)(self.ctx, self.lun) };
        if task.is_null() {
            return Err(self.error());
        }
        // SAFETY: a live task, freed at the end of this block and not used after.
        unsafe {
            // `status` is the first field of `struct scsi_task`, an int.
            let status = *task.cast::<c_int>();
            let r = if status != STATUS_GOOD {
                Err(failure(self.lib, self.ctx, task, status).1)
            } else {
                let cap = (self.lib.scsi_datain_unmarshall)(task).cast::<Capacity16>();
                if cap.is_null() {
                    Err("the target's READ CAPACITY answer cannot be read".to_string())
                } else {
                    self.block = (*cap).block_length;
                    self.blocks = (*cap).returned_lba.saturating_add(1);
                    Ok(())
                }
            };
            (self.lib.scsi_free_scsi_task)(task);
            r?;
        }
        if self.block == 0 {
            return Err("the target reports a block size of 0".into());
        }
        Ok(())
    }

    /// libiscsi's last error on this context.
    fn error(&self) -> String {
        // SAFETY: a live context; the message is copied at once.
        unsafe { text((self.lib.get_error)(self.ctx), "unknown error") }
    }

    /// The LUN's block size in bytes.
    pub(crate) fn block_size(&self) -> u64 {
        self.block as u64
    }

    /// The LUN's size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.blocks.saturating_mul(self.block as u64)
    }

    /// Starts `op` on `len` bytes at byte `offset` (whole blocks), to be reported under `tag`
    /// by [`Session::take_done`]; or the errno and why it could not be started.
    ///
    /// # Safety
    /// For reads and writes, `buf` must point to at least `len` bytes that nobody else touches
    /// until the command is reported done (or the session is dropped).
    pub(crate) unsafe fn start(
        &mut self,
        op: Op,
        tag: u64,
        buf: *mut u8,
        len: u32,
        offset: u64,
    ) -> Result<(), (i32, String)> {
        let bs = self.block as u64;
        if op == Op::Trim {
            // fio's engine has no trim (it fails one with EINVAL); nor does fiox's.
            return Err((libc::EINVAL, "the libiscsi engine does not trim".to_string()));
        }
        if matches!(op, Op::Read | Op::Write) && (offset % bs != 0 || len as u64 % bs != 0) {
            return Err((
                libc::EINVAL,
                format!("offset {offset} or length {len} is not a multiple of the LUN's block size ({bs} bytes)"),
            ));
        }
        let pending = Box::into_raw(Box::new(Pending {
            lib: self.lib,
            done: &mut *self.done,
            tag,
            task: std::ptr::null_mut(),
            iov: IoVec { base: buf.cast(), len: len as usize },
        }));
        let (lba, block) = (offset / bs, self.block as c_int);
        // SAFETY: a logged-in context; `pending` (and the iovec in it) lives until the
        // callback frees it; the buffer is the caller's promise. No callback runs inside these
        // calls (only inside `iscsi_service`), so setting the task afterwards is in time.
        let task = unsafe {
            let iov = &raw mut (*pending).iov;
            match op {
                Op::Read => (self.lib.read16_iov_task)(
                    self.ctx,
                    self.lun,
                    lba,
                    len,
                    block,
                    0,
                    0,
                    0,
                    0,
                    0,
                    finished,
                    pending.cast(),
                    iov,
                    1,
                ),
                Op::Write => (self.lib.write16_iov_task)(
                    self.ctx,
                    self.lun,
                    lba,
                    std::ptr::null_mut(),
                    len,
                    block,
                    0,
                    0,
                    0,
                    0,
                    0,
                    finished,
                    pending.cast(),
                    iov,
                    1,
                ),
                // SYNCHRONIZE CACHE for both syncs; LBA 0 and 0 blocks: the whole medium.
                Op::Trim => unreachable!("a trim is refused above"),
                Op::Sync | Op::DataSync => {
                    (self.lib.synchronizecache16_task)(self.ctx, self.lun, 0, 0, 0, 0, finished, pending.cast())
                }
            }
        };
        if task.is_null() {
            // SAFETY: libiscsi did not take the command, so the box is still only ours.
            drop(unsafe { Box::from_raw(pending) });
            return Err((libc::EIO, self.error()));
        }
        // SAFETY: `pending` is alive until its callback, which has not run yet (see above).
        unsafe { (*pending).task = task };
        self.in_flight += 1;
        Ok(())
    }

    /// The commands finished since the last call.
    pub(crate) fn take_done(&mut self) -> Vec<Done> {
        let v = std::mem::take(&mut *self.done);
        self.in_flight -= v.len().min(self.in_flight);
        v
    }

    /// How many commands are started and not yet reported done.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// What to poll the session's socket for: `None` when libiscsi wants nothing now (it is
    /// between connections; its advice is to try again after 100 ms).
    pub(crate) fn wants(&self) -> Option<libc::pollfd> {
        // SAFETY: a live context (these two calls only read it).
        let (fd, events) = unsafe { ((self.lib.get_fd)(self.ctx), (self.lib.which_events)(self.ctx)) };
        (fd >= 0 && events != 0).then_some(libc::pollfd { fd, events: events as libc::c_short, revents: 0 })
    }

    /// Lets libiscsi act on `revents` (poll's answer for the socket; 0: none), running the
    /// callbacks of finished commands. A broken connection is an error naming libiscsi's reason.
    pub(crate) fn serve(&mut self, revents: libc::c_short) -> Result<(), String> {
        // SAFETY: a live context; callbacks run inside and only touch `self.done`.
        if unsafe { (self.lib.service)(self.ctx, revents as c_int) } < 0 {
            return Err(self.error());
        }
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Log out when the session is idle and logged in (as fio does), waiting a little for
        // the target, never for one that stopped answering; then close the connection, which
        // cancels what is still in flight (their callbacks run inside destroy, while
        // `self.done` is alive).
        // SAFETY: a live context, destroyed once, here, and never used again.
        unsafe {
            if (self.lib.is_logged_in)(self.ctx) == 1 && (self.lib.queue_length)(self.ctx) == 0 {
                (self.lib.set_timeout)(self.ctx, 2);
                (self.lib.logout_sync)(self.ctx);
            }
            (self.lib.destroy_context)(self.ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::without_password;

    #[test]
    fn a_chap_password_is_not_shown() {
        assert_eq!(without_password("iscsi://u%pw@h:3260/iqn.x:y/1"), "iscsi://u%***@h:3260/iqn.x:y/1");
        assert_eq!(without_password("iscsi://u@h/iqn/1"), "iscsi://u@h/iqn/1");
        assert_eq!(without_password("iscsi://h/iqn.a@b/1"), "iscsi://h/iqn.a@b/1");
        assert_eq!(without_password("/dev/sda"), "/dev/sda");
    }
}
