//! A memory mapping of a file or device that an engine copies to and from (`mmap`, `dev-dax`,
//! `libpmem`): the bounds check and the copies the three share. Each engine maps and unmaps in
//! its own way and says only how a write is stored (a plain copy, or one of libpmem's).

use crate::{Ddir, IoUnit};

pub(crate) struct Map {
    ptr: *mut u8,
    len: usize,
}

impl Map {
    /// # Safety
    /// `ptr..ptr + len` is mapped (readable, and writable for a job that writes) for as long as
    /// the `Map` is used.
    pub(crate) unsafe fn new(ptr: *mut u8, len: usize) -> Map {
        Map { ptr, len }
    }

    pub(crate) fn base(&self) -> *mut u8 {
        self.ptr
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The address of bytes `off..off + len` of the mapping, or `None` when they are not all
    /// inside it.
    pub(crate) fn span(&self, off: u64, len: usize) -> Option<*mut u8> {
        let off = usize::try_from(off).ok()?;
        let end = off.checked_add(len)?;
        // SAFETY: off <= end <= self.len, so the address is inside the mapping.
        (end <= self.len).then(|| unsafe { self.ptr.add(off) })
    }

    /// Does unit `io`'s read or write. A read copies out of the mapping into the unit's buffer;
    /// a write calls `store(destination, source, length)` with the span of the mapping and the
    /// unit's buffer, both `length` bytes long and apart (heap and mapping cannot overlap), to
    /// copy as the engine must. The result is the bytes moved, or EINVAL (negative) when the
    /// range leaves the mapping, as in fio.
    pub(crate) fn transfer(&self, io: &IoUnit, store: impl FnOnce(*mut u8, *const u8, usize)) -> i64 {
        let len = io.len as usize;
        let Some(at) = self.span(io.offset, len) else { return -(libc::EINVAL as i64) };
        match io.ddir {
            // SAFETY: `at` starts `len` bytes inside the mapping (span checked it) and the unit's
            // buffer holds at least `len` bytes (the IoQueue's rule); they cannot overlap.
            Ddir::Read => unsafe { std::ptr::copy_nonoverlapping(at, io.buf, len) },
            Ddir::Write => store(at, io.buf, len),
            other => unreachable!("only reads and writes copy through a mapping, not {other:?}"),
        }
        len as i64
    }
}

#[cfg(test)]
mod tests {
    use super::Map;

    #[test]
    fn spans_stay_inside() {
        let mut mem = vec![0u8; 4096];
        // SAFETY: the vector outlives the map.
        let m = unsafe { Map::new(mem.as_mut_ptr(), mem.len()) };
        assert_eq!(m.span(0, 4096), Some(m.base()));
        assert!(m.span(4095, 1).is_some());
        assert_eq!(m.span(4095, 2), None);
        assert_eq!(m.span(4096, 0).map(|p| p as usize - m.base() as usize), Some(4096));
        assert_eq!(m.span(u64::MAX, 1), None);
        assert_eq!(m.span(8, usize::MAX), None);
    }
}
