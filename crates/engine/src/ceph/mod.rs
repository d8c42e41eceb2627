//! Ceph for the `rbd` and `rados` engines: a connection to a pool ([`Pool`]), an open image
//! ([`Image`]) and the completion queue librados/librbd callbacks feed ([`Done`]), as safe types
//! over the run-time loaded C functions of `ffi.rs`.
//!
//! Errors are one line naming the step, the object (configuration file, monitors, pool,
//! image) and the errno, where fio 3.33 prints only the failing call's name.
//!
//! Threads: a completion callback runs on a librados/librbd thread. It only reads the
//! operation's return value, appends `(unit, result, completion)` to the job's [`Done`] list
//! and wakes the job thread through an eventfd; releasing the completion and everything else
//! happens on the job thread.

pub(crate) mod client;
pub mod facts;
pub(crate) mod ffi;
pub(crate) mod shared;

use std::ffi::{c_char, c_void, CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use fiox_options::CephOpts;

/// `-errno` as text: `No such file or directory (errno 2)`.
pub fn errno_text(r: i64) -> String {
    let e = io::Error::from_raw_os_error((-r) as i32);
    let text = e.to_string();
    // "No such file or directory (os error 2)" → "... (errno 2)"
    text.replace("(os error", "(errno")
}

fn cstring(what: &str, s: &str) -> Result<CString, String> {
    CString::new(s).map_err(|_| format!("{what} '{}' holds a NUL byte", s.escape_debug()))
}

/// The client name librados is given, the way fio 3.33 builds it: without `clustername`, the
/// bare id (`admin`) for `rados_create`; with it, a full `type.id` (`client.` prepended to a
/// name without a dot) for `rados_create2`. fiox also takes `client.admin` without
/// `clustername` (fio would look for `client.client.admin` and fail).
fn client_id(opts: &CephOpts) -> (Option<String>, Option<String>) {
    let name = opts.clientname.as_deref();
    match &opts.clustername {
        None => (None, name.map(|n| n.strip_prefix("client.").unwrap_or(n).to_string())),
        Some(cluster) => {
            let full = match name {
                Some(n) if n.contains('.') => n.to_string(),
                Some(n) => format!("client.{n}"),
                None => "client.admin".to_string(),
            };
            (Some(cluster.clone()), Some(full))
        }
    }
}

/// The configuration files librados reads when given none, in its order (`$CEPH_CONF`, else
/// `/etc/ceph/$cluster.conf`, `~/.ceph/$cluster.conf`, `./$cluster.conf`).
fn default_conf_search(cluster: &str) -> Vec<String> {
    if let Some(c) = std::env::var_os("CEPH_CONF").filter(|c| !c.is_empty()) {
        return vec![c.to_string_lossy().into_owned()];
    }
    let mut v = vec![format!("/etc/ceph/{cluster}.conf")];
    if let Some(home) = std::env::var_os("HOME") {
        v.push(format!("{}/.ceph/{cluster}.conf", home.to_string_lossy()));
    }
    v.push(format!("./{cluster}.conf"));
    v
}

/// What fiox waits for the monitors when the configuration leaves `client_mount_timeout` at
/// librados's default of 300 s (fio 3.33 waits those 300 s, silently).
const CONNECT_TIMEOUT_S: f64 = 60.0;

/// A connection to a cluster with an I/O context on one pool. Dropping it destroys the
/// context and shuts the connection down.
pub(crate) struct Pool {
    lib: &'static ffi::Rados,
    cluster: ffi::RadosT,
    ioctx: ffi::IoctxT,
    pub name: String,
    /// The configuration file read, for messages.
    pub conf: String,
}

impl Pool {
    /// Connects as the job's options say and opens `pool`. `direct` turns librbd's cache off
    /// (fio 3.33 does this only for direct=1). Each step's failure is one line saying what
    /// was tried and why it failed.
    pub(crate) fn connect(engine: &str, opts: &CephOpts, direct: bool) -> Result<Pool, String> {
        Pool::connect_with(engine, opts, direct, &[])
    }

    /// `connect`, with configuration values set before connecting (timeouts).
    pub(crate) fn connect_with(
        engine: &str,
        opts: &CephOpts,
        direct: bool,
        extra: &[(&str, String)],
    ) -> Result<Pool, String> {
        let pool_name = match &opts.pool {
            Some(p) if !p.is_empty() => p.clone(),
            _ => return Err(format!("ioengine={engine} needs pool= (the Ceph pool to use)")),
        };
        let mut pool = Pool::connect_cluster(engine, opts, pool_name, extra)?;
        if direct {
            // Before any image is opened, as fio does for direct=1.
            pool.set("rbd_cache", "false")?;
        }
        let pool_c = cstring("pool", &pool.name)?;
        let mut ioctx: ffi::IoctxT = std::ptr::null_mut();
        // SAFETY: a connected handle, a NUL-terminated pool name and a valid out-pointer.
        let r = unsafe { (pool.lib.ioctx_create)(pool.cluster, pool_c.as_ptr(), &mut ioctx) };
        if r < 0 {
            return Err(if r == -libc::ENOENT {
                format!("pool '{}' does not exist (pools: {})", pool.name, pool.pools().join(", "))
            } else {
                format!("cannot open pool '{}': {}", pool.name, errno_text(r as i64))
            });
        }
        pool.ioctx = ioctx;
        if let Some(ns) = &opts.namespace {
            pool.set_namespace(ns)?;
        }
        Ok(pool)
    }

    /// Connects to the cluster as the job's options say, without opening a pool (`ioctx()` is
    /// null until `connect` opens one); `extra` are configuration values set before connecting.
    fn connect_cluster(
        engine: &str,
        opts: &CephOpts,
        pool_name: String,
        extra: &[(&str, String)],
    ) -> Result<Pool, String> {
        let lib = ffi::rados(engine)?;
        let (cluster_name, id) = client_id(opts);
        let mut cluster: ffi::RadosT = std::ptr::null_mut();
        let who = id.clone().unwrap_or_else(|| "admin".into());
        let r = match &cluster_name {
            None => {
                let id_c = id.as_deref().map(|i| cstring("clientname", i)).transpose()?;
                // SAFETY: `cluster` is a valid out-pointer; the id is NUL-terminated or null
                // (librados's default, admin), and copied by librados.
                unsafe { (lib.create)(&mut cluster, id_c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())) }
            }
            Some(c) => {
                let c_c = cstring("clustername", c)?;
                let n_c = cstring("clientname", id.as_deref().unwrap_or("client.admin"))?;
                // SAFETY: as above, with the cluster and full client names NUL-terminated.
                unsafe { (lib.create2)(&mut cluster, c_c.as_ptr(), n_c.as_ptr(), 0) }
            }
        };
        if r < 0 {
            return Err(format!("cannot make a Ceph client for {who}: rados_create: {}", errno_text(r as i64)));
        }
        // From here on `pool` owns the handle: every early return shuts it down.
        let mut pool = Pool { lib, cluster, ioctx: std::ptr::null_mut(), name: pool_name, conf: String::new() };
        let searched = match &opts.conf {
            Some(c) => vec![c.clone()],
            None => default_conf_search(cluster_name.as_deref().unwrap_or("ceph")),
        };
        let conf_c = opts.conf.as_deref().map(|c| cstring("conf", c)).transpose()?;
        // SAFETY: the handle is valid and not yet connected; the path is NUL-terminated or
        // null (librados's own search).
        let r = unsafe { (lib.conf_read_file)(cluster, conf_c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())) };
        if r < 0 {
            return Err(match &opts.conf {
                Some(c) => format!("cannot read the Ceph configuration file '{c}': {}", errno_text(r as i64)),
                None => format!(
                    "no Ceph configuration found (searched {}): {}; set conf= (rados) or CEPH_CONF",
                    searched.join(", "),
                    errno_text(r as i64)
                ),
            });
        }
        pool.conf = searched.iter().find(|p| std::path::Path::new(p).exists()).cloned().unwrap_or_default();
        if let Some(k) = &opts.keyring {
            pool.set("keyring", k)?;
        }
        // A monitor that never answers makes rados_connect wait client_mount_timeout: bound it.
        let mut timeout = pool.get("client_mount_timeout").and_then(|v| v.parse::<f64>().ok()).unwrap_or(300.0);
        let mut which = "client_mount_timeout";
        if let Some(us) = opts.connect_timeout_us {
            timeout = us as f64 / 1e6;
            which = "ceph_connect_timeout";
            pool.set("client_mount_timeout", &format!("{timeout}"))?;
        } else if timeout == 300.0 {
            timeout = CONNECT_TIMEOUT_S;
            pool.set("client_mount_timeout", &format!("{timeout}"))?;
        }
        for (k, v) in extra {
            pool.set(k, v)?;
            if *k == "client_mount_timeout" {
                timeout = v.parse().unwrap_or(timeout);
            }
        }
        // SAFETY: a configured, unconnected handle.
        let r = unsafe { (lib.connect)(cluster) };
        if r < 0 {
            let mons = pool.get("mon_host").unwrap_or_default();
            let conf = if pool.conf.is_empty() { "no configuration file".to_string() } else { pool.conf.clone() };
            return Err(if mons.is_empty() {
                format!(
                    "cannot connect to Ceph: no monitors configured (mon_host is empty; {conf}): {}",
                    errno_text(r as i64)
                )
            } else if r == -libc::ETIMEDOUT {
                format!(
                    "cannot connect to Ceph: no answer from the monitors {mons} (mon_host in {conf}) within {timeout} s ({which}): {}",
                    errno_text(r as i64)
                )
            } else if r == -libc::ENOENT {
                let keyring = pool.get("keyring").unwrap_or_default();
                let cephx = pool.get("auth_client_required").unwrap_or_default().contains("cephx");
                let found = keyring.split([',', ';', ' ']).any(|k| !k.is_empty() && std::path::Path::new(k).is_file());
                if cephx && !found {
                    format!(
                        "cannot connect to Ceph as {who}: no keyring (searched: {keyring}; {conf} requires cephx): {}",
                        errno_text(r as i64)
                    )
                } else {
                    format!(
                        "cannot connect to Ceph as {who} (monitors {mons}, {conf}): {} (no keyring? searched: {keyring})",
                        errno_text(r as i64)
                    )
                }
            } else {
                format!("cannot connect to Ceph as {who} (monitors {mons}, {conf}): {}", errno_text(r as i64))
            });
        }
        Ok(pool)
    }

    /// A configuration value as librados sees it.
    pub(crate) fn get(&self, key: &str) -> Option<String> {
        let key_c = CString::new(key).ok()?;
        let mut buf = vec![0u8; 4096];
        // SAFETY: a valid handle, a NUL-terminated key and a buffer of the length given.
        let r = unsafe { (self.lib.conf_get)(self.cluster, key_c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        if r < 0 {
            return None;
        }
        let s = CStr::from_bytes_until_nul(&buf).ok()?;
        Some(s.to_string_lossy().into_owned())
    }

    fn set(&self, key: &str, value: &str) -> Result<(), String> {
        let (k, v) = (cstring("option", key)?, cstring("value", value)?);
        // SAFETY: a valid handle and two NUL-terminated strings librados copies.
        let r = unsafe { (self.lib.conf_set)(self.cluster, k.as_ptr(), v.as_ptr()) };
        if r < 0 {
            return Err(format!("cannot set Ceph option {key}={value}: {}", errno_text(r as i64)));
        }
        Ok(())
    }

    /// The cluster's pool names (for a message about a missing pool).
    fn pools(&self) -> Vec<String> {
        let mut buf = vec![0u8; 4096];
        for _ in 0..4 {
            // SAFETY: a connected handle and a buffer of the length given.
            let r = unsafe { (self.lib.pool_list)(self.cluster, buf.as_mut_ptr().cast(), buf.len()) };
            if r < 0 {
                return Vec::new();
            }
            if (r as usize) <= buf.len() {
                return nul_list(&buf[..r as usize]);
            }
            buf.resize(r as usize, 0);
        }
        Vec::new()
    }

    pub(crate) fn ioctx(&self) -> ffi::IoctxT {
        self.ioctx
    }

    /// Writes `data` at `off` of object `oid` synchronously (rados's touch: an empty write).
    pub(crate) fn write(&self, oid: &CStr, data: &[u8], off: u64) -> i64 {
        // SAFETY: an open context, a NUL-terminated name and a buffer of the length given,
        // which librados copies before returning.
        unsafe { (self.lib.write)(self.ioctx, oid.as_ptr(), data.as_ptr().cast(), data.len(), off) as i64 }
    }

    /// Whether object `oid` exists (`Err` with -errno when that cannot be known).
    pub(crate) fn exists(&self, oid: &CStr) -> Result<bool, i64> {
        let (mut size, mut mtime) = (0u64, 0 as libc::time_t);
        // SAFETY: an open context, a NUL-terminated name and two valid out-pointers.
        let r = unsafe { (self.lib.stat)(self.ioctx, oid.as_ptr(), &mut size, &mut mtime) };
        match r {
            0 => Ok(true),
            r if r == -libc::ENOENT => Ok(false),
            r => Err(r as i64),
        }
    }

    /// Object `oid`'s size, `None` when it does not exist (or cannot be looked up).
    pub(crate) fn size(&self, oid: &CStr) -> Option<u64> {
        let (mut size, mut mtime) = (0u64, 0 as libc::time_t);
        // SAFETY: an open context, a NUL-terminated name and two valid out-pointers.
        let r = unsafe { (self.lib.stat)(self.ioctx, oid.as_ptr(), &mut size, &mut mtime) };
        (r == 0).then_some(size)
    }

    /// Replaces object `oid` with `data`, synchronously.
    pub(crate) fn write_full(&self, oid: &CStr, data: &[u8]) -> i64 {
        // SAFETY: an open context, a NUL-terminated name and a buffer of the length given,
        // which librados has sent before returning.
        unsafe { (self.lib.write_full)(self.ioctx, oid.as_ptr(), data.as_ptr().cast(), data.len()) as i64 }
    }

    /// Reads up to `buf.len()` bytes at `off` of object `oid`: the bytes read, or -errno.
    pub(crate) fn read(&self, oid: &CStr, buf: &mut [u8], off: u64) -> i64 {
        // SAFETY: an open context, a NUL-terminated name and a buffer of the length given,
        // written by librados before it returns.
        unsafe { (self.lib.read)(self.ioctx, oid.as_ptr(), buf.as_mut_ptr().cast(), buf.len(), off) as i64 }
    }

    /// Sets the namespace later operations (and listings) use; "" is the default one.
    pub(crate) fn set_namespace(&self, ns: &str) -> Result<(), String> {
        let ns_c = cstring("namespace", ns)?;
        // SAFETY: an open context and a NUL-terminated name librados copies.
        unsafe { (self.lib.ioctx_set_namespace)(self.ioctx, ns_c.as_ptr()) };
        Ok(())
    }

    /// The names of the objects in the context's namespace, in librados's order.
    pub(crate) fn list(&self) -> Result<Vec<String>, i64> {
        let mut ctx: ffi::ListCtxT = std::ptr::null_mut();
        // SAFETY: an open context and a valid out-pointer.
        let r = unsafe { (self.lib.nobjects_list_open)(self.ioctx, &mut ctx) };
        if r < 0 {
            return Err(r as i64);
        }
        let mut out = Vec::new();
        let result = loop {
            let mut entry: *const c_char = std::ptr::null();
            // SAFETY: an open listing; librados sets `entry` to a NUL-terminated name valid
            // until the next call on this listing (copied at once); key and namespace unwanted.
            let r =
                unsafe { (self.lib.nobjects_list_next)(ctx, &mut entry, std::ptr::null_mut(), std::ptr::null_mut()) };
            if r == -libc::ENOENT {
                break Ok(());
            }
            if r < 0 {
                break Err(r as i64);
            }
            if !entry.is_null() {
                // SAFETY: see above.
                out.push(unsafe { CStr::from_ptr(entry) }.to_string_lossy().into_owned());
            }
        };
        // SAFETY: the listing opened above, closed once.
        unsafe { (self.lib.nobjects_list_close)(ctx) };
        result.map(|()| out)
    }

    pub(crate) fn remove(&self, oid: &CStr) -> i64 {
        // SAFETY: an open context and a NUL-terminated name.
        unsafe { (self.lib.remove)(self.ioctx, oid.as_ptr()) as i64 }
    }

    /// The cluster's fsid (its UUID), as `ceph fsid` prints it.
    pub(crate) fn fsid(&self) -> Option<String> {
        let mut buf = [0u8; 64];
        // SAFETY: a connected handle and a buffer of the length given.
        let r = unsafe { (self.lib.cluster_fsid)(self.cluster, buf.as_mut_ptr().cast(), buf.len()) };
        if r < 0 {
            return None;
        }
        CStr::from_bytes_until_nul(&buf).ok().map(|s| s.to_string_lossy().into_owned())
    }

    /// A monitor command (JSON, as `ceph` sends it): its output and status text, or -errno
    /// with the status text. librados bounds it by `rados_mon_op_timeout` when that is set.
    pub(crate) fn mon_command(&self, cmd: &str) -> Result<(String, String), (i64, String)> {
        let cmd_c = cstring("command", cmd).map_err(|e| (-(libc::EINVAL as i64), e))?;
        let mut cmds = [cmd_c.as_ptr()];
        let (mut outbuf, mut outlen, mut outs, mut outslen) =
            (std::ptr::null_mut::<c_char>(), 0usize, std::ptr::null_mut::<c_char>(), 0usize);
        // SAFETY: a connected handle; one NUL-terminated command; no input; four valid
        // out-pointers, whose buffers librados allocates and `take` frees once.
        let r = unsafe {
            (self.lib.mon_command)(
                self.cluster,
                cmds.as_mut_ptr(),
                1,
                std::ptr::null(),
                0,
                &mut outbuf,
                &mut outlen,
                &mut outs,
                &mut outslen,
            )
        };
        let take = |p: *mut c_char, len: usize| -> String {
            if p.is_null() {
                return String::new();
            }
            // SAFETY: librados returned `len` bytes at `p`, freed once here after the copy.
            let text = String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }).into_owned();
            // SAFETY: a buffer librados allocated for this call.
            unsafe { (self.lib.buffer_free)(p) };
            text
        };
        let (out, status) = (take(outbuf, outlen), take(outs, outslen));
        if r < 0 {
            return Err((r as i64, status));
        }
        Ok((out, status))
    }
}

// SAFETY: librados's handles (`rados_t`, `rados_ioctx_t`) may be used from any thread and by
// several threads at once (librados.h: thread-safe); a `Pool` owns them and releases them once,
// in `Drop`. Sharing one connection among jobs (`ceph_shared_client=1`) relies on this.
unsafe impl Send for Pool {}
// SAFETY: see above.
unsafe impl Sync for Pool {}

impl Drop for Pool {
    fn drop(&mut self) {
        // SAFETY: each handle is released once, the context before the connection it belongs
        // to; no operation is in flight (the engines drop a pool only when all completed).
        unsafe {
            if !self.ioctx.is_null() {
                (self.lib.ioctx_destroy)(self.ioctx);
            }
            (self.lib.shutdown)(self.cluster);
        }
    }
}

/// A NUL-separated list (`a\0b\0\0`) as strings.
fn nul_list(buf: &[u8]) -> Vec<String> {
    buf.split(|&b| b == 0).filter(|s| !s.is_empty()).map(|s| String::from_utf8_lossy(s).into_owned()).collect()
}

/// An open RBD image. Dropping it closes the image, then the pool.
pub(crate) struct Image {
    lib: &'static ffi::Rbd,
    image: ffi::ImageT,
    pub size: u64,
    /// The size of the image's RADOS objects.
    pub object_size: u64,
    // Dropped after the image (field order); shared with other jobs under
    // `ceph_shared_client=1`.
    pub pool: std::sync::Arc<Pool>,
}

// SAFETY: librbd's image handle may be used from several threads at once (its operations
// take the image's own locks); an `Image` closes it once, in `Drop`. Jobs share one under
// `rbd_shared_handle=1`.
unsafe impl Send for Image {}
// SAFETY: see above.
unsafe impl Sync for Image {}

impl Image {
    pub(crate) fn open(pool: impl Into<std::sync::Arc<Pool>>, name: &str) -> Result<Image, String> {
        Self::open_at(pool, name, None)
    }

    /// `open`, at snapshot `snap` when given (such an image is read-only).
    pub(crate) fn open_at(
        pool: impl Into<std::sync::Arc<Pool>>,
        name: &str,
        snap: Option<&str>,
    ) -> Result<Image, String> {
        let pool: std::sync::Arc<Pool> = pool.into();
        let (_, lib) = ffi::rbd()?;
        let name_c = cstring("rbdname", name)?;
        let snap_c = snap.map(|s| cstring("snapshot", s)).transpose()?;
        let mut image: ffi::ImageT = std::ptr::null_mut();
        // SAFETY: an open context, NUL-terminated names (the snapshot's or null), a valid
        // out-pointer.
        let r = unsafe {
            (lib.open)(
                pool.ioctx,
                name_c.as_ptr(),
                &mut image,
                snap_c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
            )
        };
        if r < 0 {
            if let (Some(s), true) = (snap, r == -libc::ENOENT) {
                // ENOENT for the image or for its snapshot: tell them apart.
                if list_images(lib, &pool).iter().any(|i| i == name) {
                    return Err(format!(
                        "snapshot '{s}' of image '{name}' not found in pool '{}': {}",
                        pool.name,
                        errno_text(r as i64)
                    ));
                }
            }
            return Err(if r == -libc::ENOENT {
                let images = list_images(lib, &pool);
                let images = if images.is_empty() { "none".to_string() } else { images.join(", ") };
                format!("image '{name}' not found in pool '{}' (images: {images})", pool.name)
            } else {
                format!("cannot open image '{name}' in pool '{}': {}", pool.name, errno_text(r as i64))
            });
        }
        let mut img = Image { lib, image, size: 0, object_size: 4 << 20, pool };
        let mut size = 0u64;
        // SAFETY: an open image and a valid out-pointer.
        let r = unsafe { (lib.get_size)(image, &mut size) };
        if r < 0 {
            return Err(format!("cannot read the size of image '{name}': {}", errno_text(r as i64)));
        }
        if size == 0 {
            return Err(format!("image '{name}' in pool '{}' is empty (size 0)", img.pool.name));
        }
        img.size = size;
        // SAFETY: rbd_image_info_t is plain data; zeroed is a valid value.
        let mut info: ffi::ImageInfo = unsafe { std::mem::zeroed() };
        // SAFETY: an open image and an info struct of the size given.
        if unsafe { (lib.stat)(image, &mut info, std::mem::size_of::<ffi::ImageInfo>()) } == 0 && info.obj_size > 0 {
            img.object_size = info.obj_size;
        }
        Ok(img)
    }

    /// How many bytes of `[off, off + len)` were ever written (the image is thin: the rest
    /// reads as zeros without touching a disk).
    pub(crate) fn written_bytes(&self, off: u64, len: u64) -> Result<u64, i64> {
        Ok(self.written_extents(off, len)?.iter().map(|e| e.1).sum())
    }

    /// The written extents of `[off, off + len)`, as librbd reports them (with the object map,
    /// whole objects).
    pub(crate) fn written_extents(&self, off: u64, len: u64) -> Result<Vec<(u64, u64)>, i64> {
        unsafe extern "C" fn add(off: u64, len: usize, exists: std::ffi::c_int, arg: *mut c_void) -> std::ffi::c_int {
            if exists != 0 {
                // SAFETY: `arg` is the Vec the caller below passes, alive for the whole call
                // and touched by nobody else meanwhile. Pushing cannot unwind into C unless
                // memory runs out, which aborts.
                unsafe { (*(arg as *mut Vec<(u64, u64)>)).push((off, len as u64)) };
            }
            0
        }
        let mut out: Vec<(u64, u64)> = Vec::new();
        // SAFETY: an open image; no snapshot; the callback runs on this thread during the call
        // and gets a pointer to `out`, which outlives the call.
        let r = unsafe {
            (self.lib.diff_iterate2)(
                self.image,
                std::ptr::null(),
                off,
                len,
                1,
                0,
                add,
                (&mut out as *mut Vec<(u64, u64)>).cast(),
            )
        };
        if r < 0 {
            return Err(r as i64);
        }
        Ok(out)
    }

    pub(crate) fn handle(&self) -> ffi::ImageT {
        self.image
    }

    /// rbd_flush: with librbd's cache on, the first flush turns writeback on (fio does one).
    pub(crate) fn flush(&self) -> i64 {
        // SAFETY: an open image.
        unsafe { (self.lib.flush)(self.image) as i64 }
    }

    pub(crate) fn invalidate_cache(&self) -> i64 {
        // SAFETY: an open image.
        unsafe { (self.lib.invalidate_cache)(self.image) as i64 }
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        // SAFETY: the image is closed once, with nothing in flight, before its pool goes.
        unsafe {
            (self.lib.close)(self.image);
        }
    }
}

fn list_images(lib: &ffi::Rbd, pool: &Pool) -> Vec<String> {
    let mut len = 4096usize;
    for _ in 0..4 {
        let mut buf = vec![0u8; len];
        // SAFETY: an open context, a buffer of `len` bytes and `len` as an in/out pointer.
        let r = unsafe { (lib.list)(pool.ioctx, buf.as_mut_ptr().cast::<c_char>(), &mut len) };
        if r == -libc::ERANGE {
            continue;
        }
        if r < 0 {
            return Vec::new();
        }
        return nul_list(&buf[..(r as usize).min(buf.len())]);
    }
    Vec::new()
}

/// One finished operation, as a callback reports it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Finished {
    pub index: u32,
    pub result: i64,
    /// The completion to release (an address: it is released on the job thread).
    pub completion: usize,
}

/// The list completion callbacks append to, and the eventfd that wakes the job thread.
pub(crate) struct Done {
    list: Mutex<Vec<Finished>>,
    ready: AtomicUsize,
    efd: OwnedFd,
}

/// A unit's callback argument: where its completion goes and which unit it is. The engine
/// keeps one per unit, at a fixed address, for as long as operations may complete.
pub(crate) struct Slot {
    pub(crate) done: *const Done,
    pub(crate) index: u32,
}

/// How a wait for completions ended.
pub(crate) enum Woke {
    Ready,
    /// The wait limit passed, or a signal interrupted the wait (the runner's watchdog).
    Stop,
}

impl Done {
    pub(crate) fn new(depth: u32) -> io::Result<Done> {
        // SAFETY: no pointers; the descriptor is owned from here on.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let efd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Done { list: Mutex::new(Vec::with_capacity(depth as usize)), ready: AtomicUsize::new(0), efd })
    }

    /// Called from a callback: records the completion and wakes the job thread.
    pub(crate) fn push(&self, f: Finished) {
        self.list.lock().unwrap_or_else(|e| e.into_inner()).push(f);
        self.ready.fetch_add(1, Ordering::Release);
        let one = 1u64;
        // SAFETY: writes 8 bytes from a live u64 to an eventfd this struct owns.
        unsafe { libc::write(self.efd.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    /// Whether a completion is waiting (cheap: for busy polling).
    pub(crate) fn any(&self) -> bool {
        self.ready.load(Ordering::Acquire) > 0
    }

    /// Moves at most `max` completions, oldest first, into `out`.
    pub(crate) fn take(&self, max: usize, out: &mut Vec<Finished>) {
        if !self.any() {
            return;
        }
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        let n = list.len().min(max);
        out.extend(list.drain(..n));
        self.ready.fetch_sub(n, Ordering::AcqRel);
    }

    /// Sleeps until a callback wakes it, `limit` passes or a signal arrives.
    pub(crate) fn sleep(&self, limit: Option<Duration>) -> Woke {
        if self.any() {
            return Woke::Ready;
        }
        let mut pfd = libc::pollfd { fd: self.efd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        let ms = limit.map_or(-1, |l| l.as_millis().min(i32::MAX as u128) as i32);
        // SAFETY: one valid pollfd for the call's duration.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r <= 0 {
            return Woke::Stop;
        }
        let mut n = 0u64;
        // SAFETY: reads 8 bytes into a live u64 (resets the counter; a callback after this
        // read writes again, so no wake-up is lost).
        unsafe { libc::read(self.efd.as_raw_fd(), (&mut n as *mut u64).cast(), 8) };
        Woke::Ready
    }
}

/// The callback arguments for `depth` units of `done`, at addresses that stay put.
pub(crate) fn slots(done: &Done, depth: u32) -> Box<[Slot]> {
    (0..depth).map(|index| Slot { done, index }).collect()
}

/// A slot's address, as librados/librbd take their callback argument.
pub(crate) fn arg(slot: &Slot) -> *mut c_void {
    (slot as *const Slot).cast_mut().cast()
}
