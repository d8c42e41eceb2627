//! The C functions of librados (`librados.so.2`) and librbd (`librbd.so.1`) that fiox calls,
//! found at run time with dlopen/dlsym (`dl/`). fiox is built without Ceph's headers or `-dev`
//! packages and its binary does not name either library (`ldd fiox` lists neither), so it
//! starts on machines without Ceph; only an `rbd` or `rados` job loads them, once per process.
//!
//! The signatures are written by hand from librados.h / librbd.h (C API 3.0 / 1.16, Ceph
//! pacific; every one of them is unchanged since luminous). Handles are opaque pointers. Each
//! table is resolved whole before it is used: a library missing any symbol is refused as a
//! whole, with the symbol named, so no call can reach a null pointer.

use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

use crate::dl::Lib;

pub(crate) type RadosT = *mut c_void;
pub(crate) type IoctxT = *mut c_void;
pub(crate) type RadosCompletionT = *mut c_void;
pub(crate) type WriteOpT = *mut c_void;
pub(crate) type ListCtxT = *mut c_void;
pub(crate) type ImageT = *mut c_void;
pub(crate) type RbdCompletionT = *mut c_void;
/// Called by librados on one of its threads when an asynchronous operation has finished.
pub(crate) type RadosCallback = unsafe extern "C" fn(RadosCompletionT, *mut c_void);
/// Called by librbd on one of its threads when an asynchronous operation has finished.
pub(crate) type RbdCallback = unsafe extern "C" fn(RbdCompletionT, *mut c_void);

/// librados's functions (the `rados_` prefix dropped).
pub(crate) struct Rados {
    pub version: unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_int),
    pub create: unsafe extern "C" fn(*mut RadosT, *const c_char) -> c_int,
    pub create2: unsafe extern "C" fn(*mut RadosT, *const c_char, *const c_char, u64) -> c_int,
    pub conf_read_file: unsafe extern "C" fn(RadosT, *const c_char) -> c_int,
    pub conf_set: unsafe extern "C" fn(RadosT, *const c_char, *const c_char) -> c_int,
    pub conf_get: unsafe extern "C" fn(RadosT, *const c_char, *mut c_char, usize) -> c_int,
    pub connect: unsafe extern "C" fn(RadosT) -> c_int,
    pub shutdown: unsafe extern "C" fn(RadosT),
    pub pool_list: unsafe extern "C" fn(RadosT, *mut c_char, usize) -> c_int,
    pub ioctx_create: unsafe extern "C" fn(RadosT, *const c_char, *mut IoctxT) -> c_int,
    pub ioctx_destroy: unsafe extern "C" fn(IoctxT),
    pub ioctx_set_namespace: unsafe extern "C" fn(IoctxT, *const c_char),
    pub read: unsafe extern "C" fn(IoctxT, *const c_char, *mut c_char, usize, u64) -> c_int,
    pub nobjects_list_open: unsafe extern "C" fn(IoctxT, *mut ListCtxT) -> c_int,
    pub nobjects_list_next:
        unsafe extern "C" fn(ListCtxT, *mut *const c_char, *mut *const c_char, *mut *const c_char) -> c_int,
    pub nobjects_list_close: unsafe extern "C" fn(ListCtxT),
    pub aio_remove: unsafe extern "C" fn(IoctxT, *const c_char, RadosCompletionT) -> c_int,
    pub write: unsafe extern "C" fn(IoctxT, *const c_char, *const c_char, usize, u64) -> c_int,
    pub write_full: unsafe extern "C" fn(IoctxT, *const c_char, *const c_char, usize) -> c_int,
    pub remove: unsafe extern "C" fn(IoctxT, *const c_char) -> c_int,
    pub stat: unsafe extern "C" fn(IoctxT, *const c_char, *mut u64, *mut libc::time_t) -> c_int,
    pub aio_create_completion2: unsafe extern "C" fn(*mut c_void, RadosCallback, *mut RadosCompletionT) -> c_int,
    pub aio_write: unsafe extern "C" fn(IoctxT, *const c_char, RadosCompletionT, *const c_char, usize, u64) -> c_int,
    pub aio_read: unsafe extern "C" fn(IoctxT, *const c_char, RadosCompletionT, *mut c_char, usize, u64) -> c_int,
    pub aio_get_return_value: unsafe extern "C" fn(RadosCompletionT) -> c_int,
    pub aio_release: unsafe extern "C" fn(RadosCompletionT),
    pub create_write_op: unsafe extern "C" fn() -> WriteOpT,
    pub write_op_zero: unsafe extern "C" fn(WriteOpT, u64, u64),
    pub aio_write_op_operate:
        unsafe extern "C" fn(WriteOpT, IoctxT, RadosCompletionT, *const c_char, *mut libc::time_t, c_int) -> c_int,
    pub release_write_op: unsafe extern "C" fn(WriteOpT),
    pub cluster_fsid: unsafe extern "C" fn(RadosT, *mut c_char, usize) -> c_int,
    pub mon_command: unsafe extern "C" fn(
        RadosT,
        *mut *const c_char,
        usize,
        *const c_char,
        usize,
        *mut *mut c_char,
        *mut usize,
        *mut *mut c_char,
        *mut usize,
    ) -> c_int,
    pub buffer_free: unsafe extern "C" fn(*mut c_char),
    pub write_op_write: unsafe extern "C" fn(WriteOpT, *const c_char, usize, u64),
    pub write_op_set_alloc_hint2: unsafe extern "C" fn(WriteOpT, u64, u64, u32),
    pub write_op_omap_set:
        unsafe extern "C" fn(WriteOpT, *const *const c_char, *const *const c_char, *const usize, usize),
    pub write_op_setxattr: unsafe extern "C" fn(WriteOpT, *const c_char, *const c_char, usize),
}

/// librbd's `rbd_image_info_t`.
#[repr(C)]
pub(crate) struct ImageInfo {
    pub size: u64,
    pub obj_size: u64,
    pub num_objs: u64,
    pub order: c_int,
    pub block_name_prefix: [c_char; 24],
    pub parent_pool: i64,
    pub parent_name: [c_char; 96],
}

/// `rbd_diff_iterate2`'s callback: offset, length, whether the extent exists, argument.
pub(crate) type DiffCallback = unsafe extern "C" fn(u64, usize, c_int, *mut c_void) -> c_int;

/// librbd's functions (the `rbd_` prefix dropped).
pub(crate) struct Rbd {
    pub list: unsafe extern "C" fn(IoctxT, *mut c_char, *mut usize) -> c_int,
    pub create: unsafe extern "C" fn(IoctxT, *const c_char, u64, *mut c_int) -> c_int,
    pub remove: unsafe extern "C" fn(IoctxT, *const c_char) -> c_int,
    pub open: unsafe extern "C" fn(IoctxT, *const c_char, *mut ImageT, *const c_char) -> c_int,
    pub close: unsafe extern "C" fn(ImageT) -> c_int,
    pub get_size: unsafe extern "C" fn(ImageT, *mut u64) -> c_int,
    pub stat: unsafe extern "C" fn(ImageT, *mut ImageInfo, usize) -> c_int,
    pub diff_iterate2:
        unsafe extern "C" fn(ImageT, *const c_char, u64, u64, u8, u8, DiffCallback, *mut c_void) -> c_int,
    pub flush: unsafe extern "C" fn(ImageT) -> c_int,
    pub invalidate_cache: unsafe extern "C" fn(ImageT) -> c_int,
    pub aio_create_completion: unsafe extern "C" fn(*mut c_void, RbdCallback, *mut RbdCompletionT) -> c_int,
    pub aio_write: unsafe extern "C" fn(ImageT, u64, usize, *const c_char, RbdCompletionT) -> c_int,
    pub aio_read: unsafe extern "C" fn(ImageT, u64, usize, *mut c_char, RbdCompletionT) -> c_int,
    /// `aio_write` and `aio_read` with op flags (`LIBRADOS_OP_FLAG_FADVISE_*`).
    pub aio_write2: unsafe extern "C" fn(ImageT, u64, usize, *const c_char, RbdCompletionT, c_int) -> c_int,
    pub aio_read2: unsafe extern "C" fn(ImageT, u64, usize, *mut c_char, RbdCompletionT, c_int) -> c_int,
    pub aio_discard: unsafe extern "C" fn(ImageT, u64, u64, RbdCompletionT) -> c_int,
    pub aio_flush: unsafe extern "C" fn(ImageT, RbdCompletionT) -> c_int,
    pub aio_get_return_value: unsafe extern "C" fn(RbdCompletionT) -> isize,
    pub aio_release: unsafe extern "C" fn(RbdCompletionT),
    pub version: unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_int),
    pub get_features: unsafe extern "C" fn(ImageT, *mut u64) -> c_int,
    pub get_stripe_unit: unsafe extern "C" fn(ImageT, *mut u64) -> c_int,
    pub get_stripe_count: unsafe extern "C" fn(ImageT, *mut u64) -> c_int,
    /// `rbd_lock_get_owners(image, &mode, owners, &max)`: the exclusive lock's owners.
    pub lock_get_owners: unsafe extern "C" fn(ImageT, *mut c_int, *mut *mut c_char, *mut usize) -> c_int,
    pub lock_get_owners_cleanup: unsafe extern "C" fn(*mut *mut c_char, usize),
}

static RADOS: OnceLock<Result<Rados, String>> = OnceLock::new();
static RBD: OnceLock<Result<Rbd, String>> = OnceLock::new();

/// librados, loaded on first use; the error names the library and its Debian package.
pub(crate) fn rados(engine: &str) -> Result<&'static Rados, String> {
    RADOS.get_or_init(|| load_rados(engine)).as_ref().map_err(Clone::clone)
}

/// librbd (and librados, which it needs), loaded on first use.
pub(crate) fn rbd() -> Result<(&'static Rados, &'static Rbd), String> {
    let rados = rados("rbd")?;
    let rbd = RBD.get_or_init(load_rbd).as_ref().map_err(Clone::clone)?;
    Ok((rados, rbd))
}

/// librados when it is already loaded (completion callbacks run only after a load).
pub(crate) fn rados_loaded() -> Option<&'static Rados> {
    RADOS.get().and_then(|r| r.as_ref().ok())
}

/// librbd when it is already loaded.
pub(crate) fn rbd_loaded() -> Option<&'static Rbd> {
    RBD.get().and_then(|r| r.as_ref().ok())
}

fn load_rados(engine: &str) -> Result<Rados, String> {
    let lib = Lib::open(c"librados.so.2", "librados2", engine)?;
    // SAFETY: every field's type is the signature librados.h gives the named function.
    let table = unsafe {
        Rados {
            version: lib.get(c"rados_version")?,
            create: lib.get(c"rados_create")?,
            create2: lib.get(c"rados_create2")?,
            conf_read_file: lib.get(c"rados_conf_read_file")?,
            conf_set: lib.get(c"rados_conf_set")?,
            conf_get: lib.get(c"rados_conf_get")?,
            connect: lib.get(c"rados_connect")?,
            shutdown: lib.get(c"rados_shutdown")?,
            pool_list: lib.get(c"rados_pool_list")?,
            ioctx_create: lib.get(c"rados_ioctx_create")?,
            ioctx_destroy: lib.get(c"rados_ioctx_destroy")?,
            ioctx_set_namespace: lib.get(c"rados_ioctx_set_namespace")?,
            read: lib.get(c"rados_read")?,
            nobjects_list_open: lib.get(c"rados_nobjects_list_open")?,
            nobjects_list_next: lib.get(c"rados_nobjects_list_next")?,
            nobjects_list_close: lib.get(c"rados_nobjects_list_close")?,
            aio_remove: lib.get(c"rados_aio_remove")?,
            write: lib.get(c"rados_write")?,
            write_full: lib.get(c"rados_write_full")?,
            remove: lib.get(c"rados_remove")?,
            stat: lib.get(c"rados_stat")?,
            aio_create_completion2: lib.get(c"rados_aio_create_completion2")?,
            aio_write: lib.get(c"rados_aio_write")?,
            aio_read: lib.get(c"rados_aio_read")?,
            aio_get_return_value: lib.get(c"rados_aio_get_return_value")?,
            aio_release: lib.get(c"rados_aio_release")?,
            create_write_op: lib.get(c"rados_create_write_op")?,
            write_op_zero: lib.get(c"rados_write_op_zero")?,
            aio_write_op_operate: lib.get(c"rados_aio_write_op_operate")?,
            release_write_op: lib.get(c"rados_release_write_op")?,
            cluster_fsid: lib.get(c"rados_cluster_fsid")?,
            mon_command: lib.get(c"rados_mon_command")?,
            buffer_free: lib.get(c"rados_buffer_free")?,
            write_op_write: lib.get(c"rados_write_op_write")?,
            write_op_set_alloc_hint2: lib.get(c"rados_write_op_set_alloc_hint2")?,
            write_op_omap_set: lib.get(c"rados_write_op_omap_set")?,
            write_op_setxattr: lib.get(c"rados_write_op_setxattr")?,
        }
    };
    let (mut major, mut minor, mut extra) = (0, 0, 0);
    // SAFETY: three valid out-pointers.
    unsafe { (table.version)(&mut major, &mut minor, &mut extra) };
    if major < 3 {
        return Err(format!(
            "ioengine={engine} needs librados C API 3.0 or later (Ceph octopus+); librados.so.2 here is {major}.{minor}.{extra}"
        ));
    }
    Ok(table)
}

fn load_rbd() -> Result<Rbd, String> {
    let lib = Lib::open(c"librbd.so.1", "librbd1", "rbd")?;
    // SAFETY: every field's type is the signature librbd.h gives the named function.
    let table = unsafe {
        Rbd {
            list: lib.get(c"rbd_list")?,
            create: lib.get(c"rbd_create")?,
            remove: lib.get(c"rbd_remove")?,
            open: lib.get(c"rbd_open")?,
            close: lib.get(c"rbd_close")?,
            get_size: lib.get(c"rbd_get_size")?,
            stat: lib.get(c"rbd_stat")?,
            diff_iterate2: lib.get(c"rbd_diff_iterate2")?,
            flush: lib.get(c"rbd_flush")?,
            invalidate_cache: lib.get(c"rbd_invalidate_cache")?,
            aio_create_completion: lib.get(c"rbd_aio_create_completion")?,
            aio_write: lib.get(c"rbd_aio_write")?,
            aio_read: lib.get(c"rbd_aio_read")?,
            aio_write2: lib.get(c"rbd_aio_write2")?,
            aio_read2: lib.get(c"rbd_aio_read2")?,
            aio_discard: lib.get(c"rbd_aio_discard")?,
            aio_flush: lib.get(c"rbd_aio_flush")?,
            aio_get_return_value: lib.get(c"rbd_aio_get_return_value")?,
            aio_release: lib.get(c"rbd_aio_release")?,
            version: lib.get(c"rbd_version")?,
            get_features: lib.get(c"rbd_get_features")?,
            get_stripe_unit: lib.get(c"rbd_get_stripe_unit")?,
            get_stripe_count: lib.get(c"rbd_get_stripe_count")?,
            lock_get_owners: lib.get(c"rbd_lock_get_owners")?,
            lock_get_owners_cleanup: lib.get(c"rbd_lock_get_owners_cleanup")?,
        }
    };
    Ok(table)
}
