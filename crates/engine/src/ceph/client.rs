//! An RBD image for tools that drive librbd themselves (`fiox rbd bench`): asynchronous reads
//! and writes of buffers the client owns, one per slot, and a blocking wait for completions.
//! The same rules as the engines': a slot's buffer is lent out only while the slot is idle,
//! and a client with operations in flight is leaked rather than freed.

use std::mem::ManuallyDrop;

use fiox_options::CephOpts;

use super::{ffi, Done, Finished, Image, Pool, Slot, Woke};

/// One finished operation: the slot and librbd's result (bytes read, 0 for a write, or
/// -errno).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finish {
    pub slot: u32,
    pub result: i64,
}

/// Creates image `name` of `size` bytes in the pool `opts` name (librbd's default features and
/// 4 MiB objects). Fails with EEXIST when it exists: fiox never takes over an image it did
/// not make.
pub fn create_image(opts: &CephOpts, name: &str, size: u64) -> Result<(), String> {
    let (_, rbd) = ffi::rbd()?;
    let pool = Pool::connect("rbd", opts, false)?;
    let name_c = std::ffi::CString::new(name).map_err(|_| format!("image name '{name}' holds a NUL byte"))?;
    let mut order: std::ffi::c_int = 0;
    // SAFETY: an open context, a NUL-terminated name and a valid out-pointer (0: the default
    // object size).
    let r = unsafe { (rbd.create)(pool.ioctx(), name_c.as_ptr(), size, &mut order) };
    if r < 0 {
        return Err(format!("cannot create image '{name}' in pool '{}': {}", pool.name, super::errno_text(r as i64)));
    }
    Ok(())
}

/// Removes image `name` from the pool `opts` name.
pub fn remove_image(opts: &CephOpts, name: &str) -> Result<(), String> {
    let (_, rbd) = ffi::rbd()?;
    let pool = Pool::connect("rbd", opts, false)?;
    let name_c = std::ffi::CString::new(name).map_err(|_| format!("image name '{name}' holds a NUL byte"))?;
    // SAFETY: an open context and a NUL-terminated name.
    let r = unsafe { (rbd.remove)(pool.ioctx(), name_c.as_ptr()) };
    if r < 0 {
        return Err(format!("cannot remove image '{name}' from pool '{}': {}", pool.name, super::errno_text(r as i64)));
    }
    Ok(())
}

pub struct ImageClient {
    rbd: &'static ffi::Rbd,
    // Dropped by hand, and only with nothing in flight (see Drop).
    image: ManuallyDrop<Image>,
    done: ManuallyDrop<Box<Done>>,
    slots: ManuallyDrop<Box<[Slot]>>,
    bufs: ManuallyDrop<Vec<Vec<u8>>>,
    busy: Vec<bool>,
    in_flight: u32,
    finished: Vec<Finished>,
    /// `LIBRADOS_OP_FLAG_*` bits given with every read and write (fadvise hints).
    op_flags: i32,
}

impl ImageClient {
    /// Connects as `opts` say (`pool`, `rbdname`, `clustername`, `clientname`, `conf`), opens
    /// the image and makes `slots` buffers of `buf_size` bytes.
    pub fn open(opts: &CephOpts, slots: u32, buf_size: usize) -> Result<ImageClient, String> {
        Self::open_at(opts, None, slots, buf_size)
    }

    /// `open`, at snapshot `snap` when given (read-only then).
    pub fn open_at(opts: &CephOpts, snap: Option<&str>, slots: u32, buf_size: usize) -> Result<ImageClient, String> {
        let (_, rbd) = ffi::rbd()?;
        let name = opts.rbdname.clone().unwrap_or_default();
        let pool = Pool::connect("rbd", opts, false)?;
        let image = Image::open_at(pool, &name, snap)?;
        let done = Box::new(Done::new(slots).map_err(|e| format!("eventfd: {e}"))?);
        let slot_args = super::slots(&done, slots);
        Ok(ImageClient {
            rbd,
            image: ManuallyDrop::new(image),
            done: ManuallyDrop::new(done),
            slots: ManuallyDrop::new(slot_args),
            bufs: ManuallyDrop::new(vec![vec![0u8; buf_size]; slots as usize]),
            busy: vec![false; slots as usize],
            in_flight: 0,
            finished: Vec::with_capacity(slots as usize),
            op_flags: 0,
        })
    }

    /// Gives every later read and write these `LIBRADOS_OP_FLAG_*` bits (`rbd bench` asks for
    /// `FADVISE_RANDOM` or `FADVISE_SEQUENTIAL`).
    pub fn set_op_flags(&mut self, flags: i32) {
        self.op_flags = flags;
    }

    /// The image's size in bytes.
    pub fn size(&self) -> u64 {
        self.image.size
    }

    /// The size of the image's RADOS objects (4 MiB unless the image was made otherwise).
    pub fn object_size(&self) -> u64 {
        self.image.object_size
    }

    /// How many bytes of `[off, off + len)` of the image were ever written.
    pub fn written_bytes(&self, off: u64, len: u64) -> Result<u64, i64> {
        self.image.written_bytes(off, len)
    }

    /// A configuration value as this client's librados sees it (`rbd_cache`, ...).
    pub fn conf_value(&self, key: &str) -> Option<String> {
        self.image.pool.get(key)
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// An idle slot's buffer. Panics for a slot in flight.
    pub fn buf_mut(&mut self, slot: u32) -> &mut [u8] {
        assert!(!self.busy[slot as usize], "buffer of slot {slot} lent out while librbd holds it");
        &mut self.bufs[slot as usize]
    }

    /// Starts a read or write of `len` bytes (at most the buffer's) at `off` from idle `slot`.
    pub fn submit(&mut self, slot: u32, write: bool, off: u64, len: usize) -> Result<(), i64> {
        let i = slot as usize;
        assert!(!self.busy[i], "slot {slot} submitted twice");
        assert!(len <= self.bufs[i].len(), "an I/O longer than its buffer");
        let mut c: ffi::RbdCompletionT = std::ptr::null_mut();
        // SAFETY: the slot argument outlives the operation (never freed while in flight), the
        // callback has librbd's type, and `c` is a valid out-pointer.
        let r = unsafe { (self.rbd.aio_create_completion)(super::arg(&self.slots[i]), rbd_finished, &mut c) };
        if r < 0 {
            return Err(r as i64);
        }
        let buf = self.bufs[i].as_mut_ptr();
        let img = self.image.handle();
        // SAFETY: an open image and a buffer of at least `len` bytes that nobody touches until
        // this slot's completion is returned by `wait` (`busy`), a fresh completion used once.
        let r = unsafe {
            if write {
                (self.rbd.aio_write2)(img, off, len, buf.cast_const().cast(), c, self.op_flags)
            } else {
                (self.rbd.aio_read2)(img, off, len, buf.cast(), c, self.op_flags)
            }
        };
        if r < 0 {
            // SAFETY: never handed to a started operation, released once.
            unsafe { (self.rbd.aio_release)(c) };
            return Err(r as i64);
        }
        self.busy[i] = true;
        self.in_flight += 1;
        Ok(())
    }

    /// Waits until at least `min` operations finished, `limit` passed or a signal arrived,
    /// and appends what finished to `out`.
    pub fn wait(&mut self, min: u32, limit: Option<std::time::Duration>, out: &mut Vec<Finish>) {
        let min = min.min(self.in_flight);
        let mut got = 0;
        loop {
            self.done.take(self.busy.len(), &mut self.finished);
            for f in self.finished.drain(..) {
                // SAFETY: a completion whose callback has run, released once, here.
                unsafe { (self.rbd.aio_release)(f.completion as ffi::RbdCompletionT) };
                self.busy[f.index as usize] = false;
                self.in_flight -= 1;
                out.push(Finish { slot: f.index, result: f.result });
                got += 1;
            }
            if got >= min {
                return;
            }
            if let Woke::Stop = self.done.sleep(limit) {
                return;
            }
        }
    }

    /// rbd_flush: writes librbd's cache back.
    pub fn flush(&self) -> Result<(), String> {
        let r = self.image.flush();
        if r < 0 {
            return Err(super::errno_text(r));
        }
        Ok(())
    }
}

unsafe extern "C" fn rbd_finished(c: ffi::RbdCompletionT, arg: *mut std::ffi::c_void) {
    let Some(lib) = ffi::rbd_loaded() else { return };
    // SAFETY: the finished completion librbd passes, released later on the client's thread.
    let result = unsafe { (lib.aio_get_return_value)(c) } as i64;
    // SAFETY: `arg` is the slot librbd was given with this completion.
    unsafe { deliver(arg, result, c as usize) };
}

/// Hands a finished operation to its client: `arg` is the `Slot` given with the operation.
///
/// # Safety
/// `arg` must point to a `Slot` of a live client, kept at its address while operations may
/// finish, whose `done` points to the client's boxed `Done`.
unsafe fn deliver(arg: *mut std::ffi::c_void, result: i64, completion: usize) {
    // SAFETY: as the caller promises.
    let slot = unsafe { &*(arg as *const Slot) };
    // SAFETY: as the caller promises.
    unsafe { &*slot.done }.push(Finished { index: slot.index, result, completion });
}

impl Drop for ImageClient {
    fn drop(&mut self) {
        if self.in_flight > 0 {
            // librbd may still write into the buffers or call back into the slots: leave
            // everything to the process's end.
            return;
        }
        // SAFETY: nothing is in flight; each field is dropped once, the image (and its
        // connection) before the slots and buffers nothing refers to any more.
        unsafe {
            ManuallyDrop::drop(&mut self.image);
            ManuallyDrop::drop(&mut self.slots);
            ManuallyDrop::drop(&mut self.done);
            ManuallyDrop::drop(&mut self.bufs);
        }
    }
}

/// A pool for tools that drive librados themselves (`fiox rados bench`): asynchronous writes
/// of per-slot buffers to named objects, synchronous whole-object writes and removals.
pub struct PoolClient {
    lib: &'static ffi::Rados,
    // Dropped by hand, and only with nothing in flight (see Drop).
    pool: ManuallyDrop<Pool>,
    done: ManuallyDrop<Box<Done>>,
    slots: ManuallyDrop<Box<[Slot]>>,
    bufs: ManuallyDrop<Vec<Vec<u8>>>,
    /// Each slot's object name while its write is in flight (librados reads it at submission;
    /// kept anyway until the completion).
    names: Vec<Option<std::ffi::CString>>,
    /// Each slot's compound write operation while in flight (released once it finished), and
    /// the omap key and xattr name it carries.
    write_ops: Vec<ffi::WriteOpT>,
    op_keys: Vec<Vec<std::ffi::CString>>,
    in_flight: u32,
    finished: Vec<Finished>,
}

/// What one compound write of `PoolClient::write_parts` carries, in the order `rados bench`
/// adds the parts: an allocation hint and the data, an omap entry, an xattr (each value the
/// slot's buffer).
#[derive(Debug, Clone, Default)]
pub struct WriteParts {
    /// `(expected object size, expected write size, LIBRADOS_ALLOC_HINT_FLAG_* bits)`.
    pub alloc_hint: Option<(u64, u64, u32)>,
    /// Write the data into the object at the offset.
    pub object: bool,
    /// Set this omap key to the data.
    pub omap_key: Option<String>,
    /// Set this extended attribute to the data.
    pub xattr: Option<String>,
}

impl PoolClient {
    /// Connects as `opts` say and opens `pool`, with `slots` buffers of `buf_size` bytes.
    pub fn open(opts: &CephOpts, slots: u32, buf_size: usize) -> Result<PoolClient, String> {
        let lib = ffi::rados("rados")?;
        let pool = Pool::connect("rados", opts, false)?;
        let done = Box::new(Done::new(slots).map_err(|e| format!("eventfd: {e}"))?);
        let slot_args = super::slots(&done, slots);
        Ok(PoolClient {
            lib,
            pool: ManuallyDrop::new(pool),
            done: ManuallyDrop::new(done),
            slots: ManuallyDrop::new(slot_args),
            bufs: ManuallyDrop::new(vec![vec![0u8; buf_size]; slots as usize]),
            names: vec![None; slots as usize],
            write_ops: vec![std::ptr::null_mut(); slots as usize],
            op_keys: vec![Vec::new(); slots as usize],
            in_flight: 0,
            finished: Vec::with_capacity(slots as usize),
        })
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// An idle slot's buffer. Panics for a slot in flight.
    pub fn buf_mut(&mut self, slot: u32) -> &mut [u8] {
        assert!(self.names[slot as usize].is_none(), "buffer of slot {slot} lent out while librados holds it");
        &mut self.bufs[slot as usize]
    }

    /// Starts writing the first `len` bytes of idle `slot`'s buffer at `off` of object `oid`.
    pub fn write(&mut self, slot: u32, oid: &str, len: usize, off: u64) -> Result<(), i64> {
        let i = slot as usize;
        assert!(self.names[i].is_none(), "slot {slot} submitted twice");
        assert!(len <= self.bufs[i].len(), "a write longer than its buffer");
        let name = std::ffi::CString::new(oid).map_err(|_| -(libc::EINVAL as i64))?;
        let mut c: ffi::RadosCompletionT = std::ptr::null_mut();
        // SAFETY: the slot argument outlives the operation (never freed while in flight), the
        // callback has librados's type, and `c` is a valid out-pointer.
        let r = unsafe { (self.lib.aio_create_completion2)(super::arg(&self.slots[i]), rados_finished, &mut c) };
        if r < 0 {
            return Err(r as i64);
        }
        // SAFETY: an open context, a NUL-terminated name kept until the completion, a buffer of
        // at least `len` bytes nobody touches until `wait` returns this slot, a fresh completion.
        let r = unsafe {
            (self.lib.aio_write)(self.pool.ioctx(), name.as_ptr(), c, self.bufs[i].as_ptr().cast(), len, off)
        };
        if r < 0 {
            // SAFETY: never handed to a started operation, released once.
            unsafe { (self.lib.aio_release)(c) };
            return Err(r as i64);
        }
        self.names[i] = Some(name);
        self.in_flight += 1;
        Ok(())
    }

    /// Starts reading `len` bytes at `off` of object `oid` into idle `slot`'s buffer; the
    /// result is the number of bytes read.
    pub fn read(&mut self, slot: u32, oid: &str, len: usize, off: u64) -> Result<(), i64> {
        let i = slot as usize;
        assert!(self.names[i].is_none(), "slot {slot} submitted twice");
        assert!(len <= self.bufs[i].len(), "a read longer than its buffer");
        let name = std::ffi::CString::new(oid).map_err(|_| -(libc::EINVAL as i64))?;
        let c = self.completion(i)?;
        // SAFETY: an open context, a NUL-terminated name kept until the completion, a buffer of
        // at least `len` bytes nobody touches until `wait` returns this slot, a fresh completion.
        let r = unsafe {
            (self.lib.aio_read)(self.pool.ioctx(), name.as_ptr(), c, self.bufs[i].as_mut_ptr().cast(), len, off)
        };
        self.started(i, name, c, r)
    }

    /// Starts one compound write operation on object `oid` from idle `slot`: the parts
    /// `parts` names, each with the first `len` bytes of the slot's buffer (the data at `off`).
    pub fn write_parts(&mut self, slot: u32, oid: &str, len: usize, off: u64, parts: &WriteParts) -> Result<(), i64> {
        let i = slot as usize;
        assert!(self.names[i].is_none(), "slot {slot} submitted twice");
        assert!(len <= self.bufs[i].len(), "a write longer than its buffer");
        let cstr = |s: &str| std::ffi::CString::new(s).map_err(|_| -(libc::EINVAL as i64));
        let name = cstr(oid)?;
        let omap_key = parts.omap_key.as_deref().map(cstr).transpose()?;
        let xattr = parts.xattr.as_deref().map(cstr).transpose()?;
        // SAFETY: no arguments; a null result is checked.
        let op = unsafe { (self.lib.create_write_op)() };
        if op.is_null() {
            return Err(-(libc::ENOMEM as i64));
        }
        let buf = self.bufs[i].as_ptr().cast::<std::ffi::c_char>();
        // SAFETY: a fresh write op; the buffer holds at least `len` bytes and, like the key and
        // attribute names kept in `op_keys`, is left alone until `wait` returns this slot.
        unsafe {
            if parts.object {
                if let Some((object_size, write_size, flags)) = parts.alloc_hint {
                    (self.lib.write_op_set_alloc_hint2)(op, object_size, write_size, flags);
                }
                (self.lib.write_op_write)(op, buf, len, off);
            }
            if let Some(k) = &omap_key {
                let (key, val, l) = (k.as_ptr(), buf, len);
                (self.lib.write_op_omap_set)(op, &key, &val, &l, 1);
            }
            if let Some(x) = &xattr {
                (self.lib.write_op_setxattr)(op, x.as_ptr(), buf, len);
            }
        }
        let c = match self.completion(i) {
            Ok(c) => c,
            Err(r) => {
                // SAFETY: never operated, released once.
                unsafe { (self.lib.release_write_op)(op) };
                return Err(r);
            }
        };
        // SAFETY: an open context, the write op built above, a NUL-terminated name kept until
        // the completion, a fresh completion; no mtime, no flags.
        let r = unsafe {
            (self.lib.aio_write_op_operate)(op, self.pool.ioctx(), c, name.as_ptr(), std::ptr::null_mut(), 0)
        };
        if r < 0 {
            // SAFETY: librados refused it: nothing refers to the op any more.
            unsafe { (self.lib.release_write_op)(op) };
        } else {
            self.write_ops[i] = op;
            self.op_keys[i] = omap_key.into_iter().chain(xattr).collect();
        }
        self.started(i, name, c, r)
    }

    /// Starts removing object `oid` from idle `slot`.
    pub fn remove_async(&mut self, slot: u32, oid: &str) -> Result<(), i64> {
        let i = slot as usize;
        assert!(self.names[i].is_none(), "slot {slot} submitted twice");
        let name = std::ffi::CString::new(oid).map_err(|_| -(libc::EINVAL as i64))?;
        let c = self.completion(i)?;
        // SAFETY: an open context, a NUL-terminated name kept until the completion, a fresh
        // completion.
        let r = unsafe { (self.lib.aio_remove)(self.pool.ioctx(), name.as_ptr(), c) };
        self.started(i, name, c, r)
    }

    fn completion(&self, i: usize) -> Result<ffi::RadosCompletionT, i64> {
        let mut c: ffi::RadosCompletionT = std::ptr::null_mut();
        // SAFETY: the slot argument outlives the operation (never freed while in flight), the
        // callback has librados's type, and `c` is a valid out-pointer.
        let r = unsafe { (self.lib.aio_create_completion2)(super::arg(&self.slots[i]), rados_finished, &mut c) };
        if r < 0 {
            return Err(r as i64);
        }
        Ok(c)
    }

    /// Books an operation librados accepted (`r` >= 0), or releases its completion.
    fn started(&mut self, i: usize, name: std::ffi::CString, c: ffi::RadosCompletionT, r: i32) -> Result<(), i64> {
        if r < 0 {
            // SAFETY: never handed to a started operation, released once.
            unsafe { (self.lib.aio_release)(c) };
            return Err(r as i64);
        }
        self.names[i] = Some(name);
        self.in_flight += 1;
        Ok(())
    }

    /// Gives every slot a buffer of `len` bytes (a read bench learns its op size from a
    /// metadata object after connecting). Panics with operations in flight.
    pub fn resize_buffers(&mut self, len: usize) {
        assert_eq!(self.in_flight, 0, "buffers resized while librados holds some");
        for b in self.bufs.iter_mut() {
            b.resize(len, 0);
        }
    }

    /// An idle slot's buffer, to look at what a read brought. Panics for a slot in flight.
    pub fn buf(&self, slot: u32) -> &[u8] {
        assert!(self.names[slot as usize].is_none(), "buffer of slot {slot} read while librados holds it");
        &self.bufs[slot as usize]
    }

    /// Reads up to `len` bytes at `off` of object `oid` (synchronously).
    pub fn read_sync(&self, oid: &str, len: usize, off: u64) -> Result<Vec<u8>, i64> {
        let name = std::ffi::CString::new(oid).map_err(|_| -(libc::EINVAL as i64))?;
        let mut buf = vec![0u8; len];
        match self.pool.read(&name, &mut buf, off) {
            r if r < 0 => Err(r),
            r => {
                buf.truncate(r as usize);
                Ok(buf)
            }
        }
    }

    /// The objects of the current namespace.
    pub fn list(&self) -> Result<Vec<String>, i64> {
        self.pool.list()
    }

    /// Makes later operations use namespace `ns` ("" is the default one).
    pub fn set_namespace(&self, ns: &str) -> Result<(), String> {
        self.pool.set_namespace(ns)
    }

    /// Waits until at least `min` operations finished, `limit` passed or a signal arrived,
    /// and appends what finished to `out`.
    pub fn wait(&mut self, min: u32, limit: Option<std::time::Duration>, out: &mut Vec<Finish>) {
        let min = min.min(self.in_flight);
        let mut got = 0;
        loop {
            self.done.take(self.names.len(), &mut self.finished);
            for f in self.finished.drain(..) {
                // SAFETY: a completion whose callback has run, released once, here.
                unsafe { (self.lib.aio_release)(f.completion as ffi::RadosCompletionT) };
                let op = std::mem::replace(&mut self.write_ops[f.index as usize], std::ptr::null_mut());
                if !op.is_null() {
                    // SAFETY: the slot's write op, whose operation has finished; released once.
                    unsafe { (self.lib.release_write_op)(op) };
                }
                self.op_keys[f.index as usize].clear();
                self.names[f.index as usize] = None;
                self.in_flight -= 1;
                out.push(Finish { slot: f.index, result: f.result });
                got += 1;
            }
            if got >= min {
                return;
            }
            if let Woke::Stop = self.done.sleep(limit) {
                return;
            }
        }
    }

    /// Replaces object `oid` with `data` (synchronously).
    pub fn write_full(&self, oid: &str, data: &[u8]) -> Result<(), i64> {
        let name = std::ffi::CString::new(oid).map_err(|_| -(libc::EINVAL as i64))?;
        match self.pool.write_full(&name, data) {
            r if r < 0 => Err(r),
            _ => Ok(()),
        }
    }

    /// Removes object `oid` (synchronously); -ENOENT when it does not exist.
    pub fn remove(&self, oid: &str) -> Result<(), i64> {
        let name = std::ffi::CString::new(oid).map_err(|_| -(libc::EINVAL as i64))?;
        match self.pool.remove(&name) {
            r if r < 0 => Err(r),
            _ => Ok(()),
        }
    }
}

unsafe extern "C" fn rados_finished(c: ffi::RadosCompletionT, arg: *mut std::ffi::c_void) {
    let Some(lib) = ffi::rados_loaded() else { return };
    // SAFETY: the finished completion librados passes, released later on the client's thread.
    let result = unsafe { (lib.aio_get_return_value)(c) } as i64;
    // SAFETY: `arg` is the slot librados was given with this completion.
    unsafe { deliver(arg, result, c as usize) };
}

impl Drop for PoolClient {
    fn drop(&mut self) {
        if self.in_flight > 0 {
            // librados may still read the buffers or call back into the slots: leave
            // everything to the process's end.
            return;
        }
        // SAFETY: nothing is in flight; each field is dropped once, the pool (and its
        // connection) before the slots and buffers nothing refers to any more.
        unsafe {
            ManuallyDrop::drop(&mut self.pool);
            ManuallyDrop::drop(&mut self.slots);
            ManuallyDrop::drop(&mut self.done);
            ManuallyDrop::drop(&mut self.bufs);
        }
    }
}
