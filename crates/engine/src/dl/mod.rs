//! Shared libraries that only some engines need, loaded at run time with dlopen/dlsym: fiox is
//! built without their headers or `-dev` packages and its binary names none of them (`ldd
//! fiox` lists none), so it starts on machines without them; only a job of such an engine
//! loads its library, once per process. Each library's table of C functions is in a file of
//! its own here (the Ceph libraries' in `ceph/ffi.rs`); a table is resolved whole before it is
//! used, so a library missing a symbol is refused as a whole and no call reaches a null pointer.

pub(crate) mod blkio;
pub(crate) mod gfapi;
pub(crate) mod iscsi;
pub(crate) mod nbd;
pub(crate) mod nfs;
pub(crate) mod pmem;
pub(crate) mod rdma;

use std::ffi::{c_void, CStr};

use crate::Ddir;

/// What an engine asks of its library for one I/O: one enum for every library here, so each
/// engine maps fio's directions the same way. A library without an operation (trim over NFS
/// or iSCSI) refuses it with EINVAL, as fio's engines do; one that cannot tell an fdatasync
/// from an fsync does a sync for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Write,
    Trim,
    Sync,
    DataSync,
}

impl Op {
    /// The operation for an I/O of direction `ddir`; `None` for `sync_file_range`, which the
    /// IoQueue does itself and never hands an engine.
    pub(crate) fn of(ddir: Ddir) -> Option<Op> {
        match ddir {
            Ddir::Read => Some(Op::Read),
            Ddir::Write => Some(Op::Write),
            Ddir::Trim => Some(Op::Trim),
            Ddir::Sync => Some(Op::Sync),
            Ddir::DataSync => Some(Op::DataSync),
            Ddir::SyncRange => None,
        }
    }
}

/// A library loaded for the rest of the process's life. Libraries such as librados keep
/// global state (threads) that outlives any handle, so none is ever unloaded (no `Drop`, no
/// dlclose).
pub(crate) struct Lib(*mut c_void, &'static CStr);

impl Lib {
    /// Loads `soname`; the error names the engine, the library and the Debian package that
    /// has it.
    pub(crate) fn open(soname: &'static CStr, package: &str, engine: &str) -> Result<Lib, String> {
        // SAFETY: dlopen takes a NUL-terminated name; RTLD_LOCAL keeps the library's symbols
        // out of the global namespace, RTLD_NOW resolves everything now rather than at a call.
        let handle = unsafe { libc::dlopen(soname.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(format!(
                "ioengine={engine} needs {} (Debian/Ubuntu: apt-get install {package}), which cannot be loaded: {}",
                soname.to_string_lossy(),
                dl_error()
            ));
        }
        Ok(Lib(handle, soname))
    }

    /// The address of `name` as a function pointer of type `F`.
    ///
    /// # Safety
    /// `F` must be an `unsafe extern "C" fn` type whose signature is the C function's.
    pub(crate) unsafe fn get<F: Copy>(&self, name: &CStr) -> Result<F, String> {
        const { assert!(std::mem::size_of::<F>() == std::mem::size_of::<*mut c_void>()) };
        // SAFETY: the handle came from a successful dlopen and is never closed.
        let p = unsafe { libc::dlsym(self.0, name.as_ptr()) };
        if p.is_null() {
            return Err(format!("{} lacks {} (too old?)", self.1.to_string_lossy(), name.to_string_lossy()));
        }
        // SAFETY: `p` is the non-null address of the named C function and `F` is a function
        // pointer of the same size with that function's signature (the caller's promise).
        Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
    }

    /// The address of `name` at symbol version `version` (a library that changed a function's
    /// signature keeps the old one under its old version; asking for the version whose
    /// signature the caller wrote makes an older library a clear refusal, not a wrong call).
    ///
    /// # Safety
    /// As [`Lib::get`]: `F` must be the signature of that version of the function.
    pub(crate) unsafe fn get_version<F: Copy>(&self, name: &CStr, version: &CStr) -> Result<F, String> {
        const { assert!(std::mem::size_of::<F>() == std::mem::size_of::<*mut c_void>()) };
        // SAFETY: the handle came from a successful dlopen and is never closed; both names are
        // NUL-terminated.
        let p = unsafe { libc::dlvsym(self.0, name.as_ptr(), version.as_ptr()) };
        if p.is_null() {
            return Err(format!(
                "{} lacks {}@{} (too old?)",
                self.1.to_string_lossy(),
                name.to_string_lossy(),
                version.to_string_lossy()
            ));
        }
        // SAFETY: as in `get`.
        Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
    }
}

fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string valid until the next dl* call on
    // this thread; it is copied at once.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null, NUL-terminated (see above).
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}
