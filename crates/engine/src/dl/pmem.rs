//! PMDK's libpmem (`libpmem.so.1`, Debian's libpmem1) and libpmemblk (`libpmemblk.so.1`,
//! Debian's libpmemblk1): the persistent-memory copies the `libpmem` and `dev-dax` engines make
//! and the block pools of the `pmemblk` engine, as safe wrappers over the C functions they need.
//! The signatures are written by hand from libpmem.h and libpmemblk.h (ABI `LIBPMEM_1.0` and
//! `LIBPMEMBLK_1.0`: every function here exists since PMDK 1.0).
//!
//! Both libraries report errors through errno and a per-thread message (`*_errormsg`), read at
//! once after a failed call.

use std::ffi::{c_char, c_int, c_longlong, c_uint, c_void, CStr, CString};
use std::io;
use std::path::Path;
use std::sync::OnceLock;

use super::Lib;

/// libpmem's `pmem_memcpy` flags (libpmem.h).
pub(crate) const MEM_NODRAIN: c_uint = 1 << 0;
pub(crate) const MEM_NONTEMPORAL: c_uint = 1 << 1;
pub(crate) const MEM_TEMPORAL: c_uint = 1 << 2;

/// libpmem's functions (the `pmem_` prefix dropped).
struct Pmem {
    map_file: unsafe extern "C" fn(*const c_char, usize, c_int, libc::mode_t, *mut usize, *mut c_int) -> *mut c_void,
    unmap: unsafe extern "C" fn(*mut c_void, usize) -> c_int,
    memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_uint) -> *mut c_void,
    memcpy_persist: unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> *mut c_void,
    drain: unsafe extern "C" fn(),
    errormsg: unsafe extern "C" fn() -> *const c_char,
}

static PMEM: OnceLock<Result<Pmem, String>> = OnceLock::new();

fn pmem(engine: &str) -> Result<&'static Pmem, String> {
    PMEM.get_or_init(|| {
        let lib = Lib::open(c"libpmem.so.1", "libpmem1", engine)?;
        // SAFETY: every field's type is the signature libpmem.h gives the named function.
        unsafe {
            Ok(Pmem {
                map_file: lib.get(c"pmem_map_file")?,
                unmap: lib.get(c"pmem_unmap")?,
                memcpy: lib.get(c"pmem_memcpy")?,
                memcpy_persist: lib.get(c"pmem_memcpy_persist")?,
                drain: lib.get(c"pmem_drain")?,
                errormsg: lib.get(c"pmem_errormsg")?,
            })
        }
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The message a library left for this thread, or the errno's text.
fn message(get: unsafe extern "C" fn() -> *const c_char) -> String {
    let errno = io::Error::last_os_error();
    // SAFETY: the library's errormsg returns null or a NUL-terminated per-thread string that
    // stays valid until the next call into the library on this thread; it is copied at once.
    let p = unsafe { get() };
    let text = if p.is_null() {
        String::new()
    } else {
        // SAFETY: non-null and NUL-terminated (see above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    };
    if text.is_empty() {
        errno.to_string()
    } else {
        text
    }
}

/// libpmem, loaded for an engine: the copies to and from persistent memory.
#[derive(Clone, Copy)]
pub(crate) struct Copier(&'static Pmem);

impl Copier {
    /// Loads libpmem for `engine`; the error says which package to install.
    pub(crate) fn load(engine: &str) -> io::Result<Copier> {
        pmem(engine).map(Copier).map_err(io::Error::other)
    }

    /// Copies `len` bytes to persistent memory at `dst` with `pmem_memcpy`'s `flags`.
    ///
    /// # Safety
    /// `dst` and `src` must be valid for `len` bytes and must not overlap.
    pub(crate) unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize, flags: c_uint) {
        // SAFETY: the caller's promise.
        unsafe { (self.0.memcpy)(dst.cast(), src.cast(), len, flags) };
    }

    /// Copies `len` bytes to persistent memory at `dst` and makes them durable (flush, drain).
    ///
    /// # Safety
    /// As for [`Copier::copy`].
    pub(crate) unsafe fn copy_persist(&self, dst: *mut u8, src: *const u8, len: usize) {
        // SAFETY: the caller's promise.
        unsafe { (self.0.memcpy_persist)(dst.cast(), src.cast(), len) };
    }

    /// Waits for the flushes made so far to reach persistence (`pmem_drain`).
    pub(crate) fn drain(&self) {
        // SAFETY: pmem_drain takes no arguments and only fences.
        unsafe { (self.0.drain)() }
    }

    /// Maps the whole of an existing file with `pmem_map_file`: the address, the length, and
    /// whether libpmem found the mapping to be persistent memory (a DAX mapping it could make
    /// with MAP_SYNC).
    pub(crate) fn map_file(&self, path: &Path) -> io::Result<(*mut u8, usize, bool)> {
        let c = cstring(path)?;
        let (mut len, mut is_pmem) = (0usize, 0 as c_int);
        // SAFETY: a NUL-terminated path; length 0 and no flags map the existing file whole;
        // the two out-pointers point at live locals.
        let p = unsafe { (self.0.map_file)(c.as_ptr(), 0, 0, 0, &mut len, &mut is_pmem) };
        if p.is_null() {
            return Err(io::Error::other(format!("pmem_map_file '{}': {}", path.display(), message(self.0.errormsg))));
        }
        Ok((p.cast(), len, is_pmem != 0))
    }

    /// Unmaps what [`Copier::map_file`] mapped.
    ///
    /// # Safety
    /// `addr` and `len` must be a mapping `map_file` returned, not yet unmapped and no longer
    /// used.
    pub(crate) unsafe fn unmap(&self, addr: *mut u8, len: usize) {
        // SAFETY: the caller's promise.
        unsafe { (self.0.unmap)(addr.cast(), len) };
    }
}

fn cstring(path: &Path) -> io::Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("'{}' has a NUL byte", path.display())))
}

type PoolT = *mut c_void;

/// libpmemblk's functions (the `pmemblk_` prefix dropped).
struct PmemBlk {
    create: unsafe extern "C" fn(*const c_char, usize, usize, libc::mode_t) -> PoolT,
    open: unsafe extern "C" fn(*const c_char, usize) -> PoolT,
    close: unsafe extern "C" fn(PoolT),
    bsize: unsafe extern "C" fn(PoolT) -> usize,
    nblock: unsafe extern "C" fn(PoolT) -> usize,
    read: unsafe extern "C" fn(PoolT, *mut c_void, c_longlong) -> c_int,
    write: unsafe extern "C" fn(PoolT, *const c_void, c_longlong) -> c_int,
    errormsg: unsafe extern "C" fn() -> *const c_char,
}

static PMEMBLK: OnceLock<Result<PmemBlk, String>> = OnceLock::new();

fn pmemblk() -> Result<&'static PmemBlk, String> {
    PMEMBLK
        .get_or_init(|| {
            let lib = Lib::open(c"libpmemblk.so.1", "libpmemblk1", "pmemblk")?;
            // SAFETY: every field's type is the signature libpmemblk.h gives the named function.
            unsafe {
                Ok(PmemBlk {
                    create: lib.get(c"pmemblk_create")?,
                    open: lib.get(c"pmemblk_open")?,
                    close: lib.get(c"pmemblk_close")?,
                    bsize: lib.get(c"pmemblk_bsize")?,
                    nblock: lib.get(c"pmemblk_nblock")?,
                    read: lib.get(c"pmemblk_read")?,
                    write: lib.get(c"pmemblk_write")?,
                    errormsg: lib.get(c"pmemblk_errormsg")?,
                })
            }
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Whether libpmemblk can be loaded (the error says which package has it).
pub(crate) fn pmemblk_loads() -> Result<(), String> {
    pmemblk().map(|_| ())
}

/// An open libpmemblk pool: an array of blocks of one size, each written atomically. libpmemblk
/// makes concurrent calls on one pool safe, so a pool may be shared by the threads of a run.
pub(crate) struct BlockPool {
    lib: &'static PmemBlk,
    pool: PoolT,
}

// SAFETY: libpmemblk documents its pool handle as usable from several threads at once (its
// reads and writes take the pool's own locks); the handle is closed only in Drop.
unsafe impl Send for BlockPool {}
// SAFETY: as above.
unsafe impl Sync for BlockPool {}

impl BlockPool {
    /// Opens the pool at `path` (of blocks of `bsize` bytes; 0: whatever the pool has), or,
    /// when no file is there and `create` is the pool size in bytes, creates it (mode 0644).
    pub(crate) fn open_or_create(path: &Path, bsize: u64, create: Option<u64>) -> Result<BlockPool, String> {
        let lib = pmemblk()?;
        let c = cstring(path).map_err(|e| e.to_string())?;
        let pool = match create {
            Some(size) if bsize > 0 && !path.exists() => {
                // SAFETY: a NUL-terminated path; sizes by value.
                let p = unsafe { (lib.create)(c.as_ptr(), bsize as usize, size as usize, 0o644) };
                if p.is_null() {
                    return Err(format!(
                        "cannot create pmemblk pool '{}' (blocks of {bsize} bytes, {size} bytes): {}",
                        path.display(),
                        message(lib.errormsg)
                    ));
                }
                p
            }
            _ => {
                // SAFETY: a NUL-terminated path; the block size by value.
                let p = unsafe { (lib.open)(c.as_ptr(), bsize as usize) };
                if p.is_null() {
                    return Err(format!(
                        "unable to open pmemblk pool file '{}': {}",
                        path.display(),
                        message(lib.errormsg)
                    ));
                }
                p
            }
        };
        Ok(BlockPool { lib, pool })
    }

    /// The pool's block size and number of blocks.
    pub(crate) fn geometry(&self) -> (u64, u64) {
        // SAFETY: an open pool.
        unsafe { ((self.lib.bsize)(self.pool) as u64, (self.lib.nblock)(self.pool) as u64) }
    }

    /// Reads block `n` into `buf`.
    ///
    /// # Safety
    /// `buf` must be valid for writes of the pool's block size.
    pub(crate) unsafe fn read(&self, buf: *mut u8, n: u64) -> io::Result<()> {
        // SAFETY: an open pool and the caller's buffer.
        self.check(unsafe { (self.lib.read)(self.pool, buf.cast(), n as c_longlong) })
    }

    /// Writes `buf` to block `n`, atomically.
    ///
    /// # Safety
    /// `buf` must be valid for reads of the pool's block size.
    pub(crate) unsafe fn write(&self, buf: *const u8, n: u64) -> io::Result<()> {
        // SAFETY: an open pool and the caller's buffer.
        self.check(unsafe { (self.lib.write)(self.pool, buf.cast(), n as c_longlong) })
    }

    fn check(&self, rc: c_int) -> io::Result<()> {
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

impl Drop for BlockPool {
    fn drop(&mut self) {
        // SAFETY: the pool was opened once and is closed once, here.
        unsafe { (self.lib.close)(self.pool) }
    }
}

/// The pools open in this process, by path: the threads of a run share one handle per pool,
/// as libpmemblk locks a pool file against a second open.
static POOLS: std::sync::Mutex<Vec<(std::path::PathBuf, std::sync::Weak<BlockPool>)>> =
    std::sync::Mutex::new(Vec::new());

/// The pool at `path`, shared with the other users in this process that have it open, else
/// opened (or created, see [`BlockPool::open_or_create`]).
pub(crate) fn shared_pool(path: &Path, bsize: u64, create: Option<u64>) -> Result<std::sync::Arc<BlockPool>, String> {
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    pools.retain(|(_, w)| w.strong_count() > 0);
    if let Some(p) = pools.iter().find(|(p, _)| p == path).and_then(|(_, w)| w.upgrade()) {
        return Ok(p);
    }
    let pool = std::sync::Arc::new(BlockPool::open_or_create(path, bsize, create)?);
    pools.push((path.to_path_buf(), std::sync::Arc::downgrade(&pool)));
    Ok(pool)
}
