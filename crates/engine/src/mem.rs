//! The I/O buffer pool: one aligned region holding a buffer per I/O unit, from the heap or an
//! anonymous mapping (fio's `mem=`). Buffers never move while the pool lives, so a ring engine
//! may hand their addresses to the kernel.
//!
//! A pool may also be *shared*: every unit then has the same one buffer. It is for reads whose
//! data nobody looks at (see `QueueConfig::share_read_buffers`): the kernel may write into it
//! from several reads at once, which costs nothing when nothing reads it back, and the job's
//! resident memory is one buffer instead of one per unit in flight.

use std::alloc::Layout;
use std::io;

use fiox_options::MemKind;

pub(crate) struct IoBuffers {
    base: *mut u8,
    total: usize,
    unit: usize,
    count: usize,
    /// The distance between two units' buffers: `unit`, or 0 in a shared pool.
    stride: usize,
    kind: MemKind,
    layout: Layout,
}

impl IoBuffers {
    /// `count` buffers of `unit` bytes, each aligned to `align` (a power of two; page size is a
    /// safe choice for O_DIRECT). Huge-page kinds are rounded up to `huge_page` bytes, as the
    /// kernel maps them only in whole huge pages. `shared`: one buffer for all the units (see
    /// the module documentation).
    pub(crate) fn new(
        count: usize,
        unit: usize,
        align: usize,
        kind: MemKind,
        huge_page: usize,
        shared: bool,
    ) -> io::Result<IoBuffers> {
        let align = align.max(64).next_power_of_two();
        let unit = unit.max(1).div_ceil(align) * align;
        let total = unit
            .checked_mul(if shared { 1 } else { count.max(1) })
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "I/O buffers too large"))?;
        let layout =
            Layout::from_size_align(total, align).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // A large pool for the default `mem=malloc` comes from an anonymous mapping backed by
        // transparent huge pages when the kernel allows it: a 1 MiB buffer in one physically
        // contiguous page reaches the device as one request (in 4 KiB pages it often needs two
        // on a virtio disk limited to 254 segments), and pinning it for direct I/O costs one
        // page lookup instead of 256. The memory behaves the same otherwise.
        // An explicit `mem=mmap` stays a plain mapping: only the default is changed.
        const HUGE: usize = 2 << 20;
        let huge = kind == MemKind::Malloc && total >= HUGE;
        let (kind, total) = if huge { (MemKind::Mmap, total.div_ceil(HUGE) * HUGE) } else { (kind, total) };
        let total = if kind.huge() { total.div_ceil(huge_page.max(4096)) * huge_page.max(4096) } else { total };
        let base = match kind {
            MemKind::Mmap if huge => huge_aligned_mapping(total)?,
            MemKind::Malloc => {
                // SAFETY: layout has a non-zero size.
                let p = unsafe { std::alloc::alloc_zeroed(layout) };
                if p.is_null() {
                    return Err(io::Error::new(io::ErrorKind::OutOfMemory, "cannot allocate I/O buffers"));
                }
                p
            }
            MemKind::Shm | MemKind::ShmHuge => {
                let flags = libc::IPC_CREAT | 0o600 | if kind == MemKind::ShmHuge { libc::SHM_HUGETLB } else { 0 };
                // SAFETY: creates a new private segment; no pointers.
                let id = unsafe { libc::shmget(libc::IPC_PRIVATE, total, flags) };
                if id < 0 {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: attaches the segment just made at an address the kernel picks.
                let p = unsafe { libc::shmat(id, std::ptr::null(), 0) };
                // SAFETY: marks the segment for removal once detached, so it never outlives us.
                unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
                if p as isize == -1 {
                    return Err(io::Error::last_os_error());
                }
                p.cast()
            }
            MemKind::Mmap | MemKind::MmapHuge | MemKind::MmapShared => {
                let mut flags = libc::MAP_ANONYMOUS;
                flags |= if kind == MemKind::MmapShared { libc::MAP_SHARED } else { libc::MAP_PRIVATE };
                if kind == MemKind::MmapHuge {
                    flags |= libc::MAP_HUGETLB;
                }
                // SAFETY: a new anonymous mapping; no existing memory is touched.
                let p = unsafe {
                    libc::mmap(std::ptr::null_mut(), total, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0)
                };
                if p == libc::MAP_FAILED {
                    return Err(io::Error::last_os_error());
                }
                p.cast()
            }
        };
        let stride = if shared { 0 } else { unit };
        Ok(IoBuffers { base, total, unit, count, stride, kind, layout })
    }

    /// The address of buffer `i` (the same for every `i` in a shared pool).
    #[inline]
    pub(crate) fn ptr(&self, i: usize) -> *mut u8 {
        assert!(i < self.count);
        // SAFETY: i < count and stride is unit or 0, so the offset stays inside the allocation.
        unsafe { self.base.add(i * self.stride) }
    }

    /// Whether every unit has the same buffer.
    #[inline]
    pub(crate) fn shared(&self) -> bool {
        self.stride == 0
    }

    /// Buffer `i` as a slice, for filling write data. Only [`crate::IoQueue`] calls it, and only
    /// for units the engine does not hold.
    #[inline]
    pub(crate) fn slice_mut(&mut self, i: usize) -> &mut [u8] {
        let p = self.ptr(i);
        // SAFETY: p..p+unit is inside the allocation, and &mut self prevents aliasing through
        // this pool.
        unsafe { std::slice::from_raw_parts_mut(p, self.unit) }
    }

    /// Buffer `i` as a shared slice, for checking read data.
    #[inline]
    pub(crate) fn slice(&self, i: usize) -> &[u8] {
        // SAFETY: as for slice_mut, shared.
        unsafe { std::slice::from_raw_parts(self.ptr(i), self.unit) }
    }

    pub(crate) fn unit_size(&self) -> usize {
        self.unit
    }

    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// `(address, length)` of every distinct buffer, for registering them with io_uring: one
    /// per unit, in unit order, or the one buffer of a shared pool.
    pub(crate) fn regions(&self) -> impl Iterator<Item = (*mut u8, usize)> + '_ {
        let n = if self.shared() { 1 } else { self.count };
        (0..n).map(move |i| (self.ptr(i), self.unit))
    }
}

/// An anonymous private mapping of `total` bytes (a multiple of 2 MiB) starting on a 2 MiB
/// boundary, advised to use transparent huge pages (ignored where THP is off).
fn huge_aligned_mapping(total: usize) -> io::Result<*mut u8> {
    const HUGE: usize = 2 << 20;
    let len = total + HUGE;
    // SAFETY: a new anonymous mapping; no existing memory is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_ANONYMOUS | libc::MAP_PRIVATE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let start = p as usize;
    let aligned = start.div_ceil(HUGE) * HUGE;
    let (head, tail) = (aligned - start, start + len - (aligned + total));
    // SAFETY: both ranges lie inside the mapping just made and outside [aligned, aligned+total),
    // which is what the pool keeps; nothing refers to them.
    unsafe {
        if head > 0 {
            libc::munmap(p, head);
        }
        if tail > 0 {
            libc::munmap((aligned + total) as *mut libc::c_void, tail);
        }
        // SAFETY: advice on the range this function owns; failure only means no huge pages.
        libc::madvise(aligned as *mut libc::c_void, total, libc::MADV_HUGEPAGE);
    }
    Ok(aligned as *mut u8)
}

impl Drop for IoBuffers {
    fn drop(&mut self) {
        match self.kind {
            // SAFETY: allocated in `new` with this layout, freed once.
            MemKind::Malloc => unsafe { std::alloc::dealloc(self.base, self.layout) },
            // SAFETY: the segment attached in `new`, detached once (it was already marked for
            // removal, so this frees it).
            MemKind::Shm | MemKind::ShmHuge => unsafe {
                libc::shmdt(self.base.cast());
            },
            // SAFETY: the mapping made in `new`, unmapped once.
            _ => unsafe {
                libc::munmap(self.base.cast(), self.total);
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_default_pools_are_huge_page_aligned() {
        let mut b = IoBuffers::new(8, 1 << 20, 4096, MemKind::Malloc, 2 << 20, false).unwrap();
        assert_eq!(b.ptr(0) as usize % (2 << 20), 0);
        b.slice_mut(7).fill(3);
        assert!(b.slice(7).iter().all(|&x| x == 3));
    }

    #[test]
    fn aligned_and_separate() {
        for kind in [MemKind::Malloc, MemKind::Mmap, MemKind::MmapShared, MemKind::Shm] {
            let mut b = IoBuffers::new(4, 4096, 4096, kind, 2 << 20, false).unwrap();
            assert_eq!(b.regions().count(), 4);
            for i in 0..4 {
                assert_eq!(b.ptr(i) as usize % 4096, 0);
                b.slice_mut(i).fill(i as u8);
            }
            for i in 0..4 {
                assert!(b.slice(i).iter().all(|&x| x == i as u8));
            }
        }
    }

    #[test]
    fn a_shared_pool_is_one_buffer() {
        for kind in [MemKind::Malloc, MemKind::Mmap, MemKind::Shm] {
            let b = IoBuffers::new(1024, 8 << 20, 4096, kind, 2 << 20, true).unwrap();
            assert!(b.shared());
            assert_eq!(b.total, 8 << 20, "{kind:?}: one unit's worth of memory, not 1024");
            assert!((0..1024).all(|i| b.ptr(i) == b.ptr(0)));
            assert_eq!(b.regions().collect::<Vec<_>>(), vec![(b.ptr(0), 8 << 20)]);
            assert_eq!(b.slice(1023).len(), 8 << 20);
        }
        let b = IoBuffers::new(3, 4096, 4096, MemKind::Malloc, 2 << 20, false).unwrap();
        assert!(!b.shared());
        assert_eq!(b.ptr(1) as usize - b.ptr(0) as usize, 4096);
    }
}
