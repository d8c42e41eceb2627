//! Thin, safe wrappers over the system calls fiox needs. Together with the ring engines
//! (`engines/io_uring.rs`, `engines/libaio.rs`) and the buffer pool (`mem.rs`), this is the only
//! code in fiox with `unsafe`; each use says why it is sound.
//!
//! I/O calls return the kernel's answer as fio does: bytes transferred, or a negative errno.
//! They never panic and never allocate.

use std::io;
use std::os::fd::RawFd;

/// The kernel's result as `i64`: the count on success, `-errno` on failure.
#[inline]
fn ret(r: isize) -> i64 {
    if r < 0 {
        -(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64)
    } else {
        r as i64
    }
}

/// A four-argument system call made directly, returning the kernel's value (`-errno` on
/// failure). The C library's `pread` wraps the same instruction in thread-cancellation
/// bookkeeping, which is a few percent of a cached 4 KiB read; fiox never cancels threads.
///
/// # Safety
/// The arguments must be valid for system call `nr` (pointers to memory it may access).
#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn syscall4(nr: libc::c_long, a1: i64, a2: i64, a3: i64, a4: i64) -> i64 {
    let ret: i64;
    // SAFETY: the x86-64 Linux system call convention: number in rax, arguments in rdi, rsi,
    // rdx, r10; the kernel clobbers rcx and r11 and returns in rax. The caller vouches for the
    // arguments.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") nr => ret,
            in("rdi") a1,
            in("rsi") a2,
            in("rdx") a3,
            in("r10") a4,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// `pread` into `buf`.
///
/// # Safety
/// `buf` must point to `len` bytes that nothing else reads or writes during the call.
#[inline]
pub(crate) unsafe fn pread(fd: RawFd, buf: *mut u8, len: usize, off: u64) -> i64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller vouches for `buf`; the other arguments are plain numbers.
    return unsafe { syscall4(libc::SYS_pread64, fd as i64, buf as i64, len as i64, off as i64) };
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as above.
    ret(unsafe { libc::pread(fd, buf.cast(), len, off as libc::off_t) })
}

/// `pwrite` from `buf`.
///
/// # Safety
/// `buf` must point to `len` readable bytes that nothing writes during the call.
#[inline]
pub(crate) unsafe fn pwrite(fd: RawFd, buf: *const u8, len: usize, off: u64) -> i64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller vouches for `buf`; the other arguments are plain numbers.
    return unsafe { syscall4(libc::SYS_pwrite64, fd as i64, buf as i64, len as i64, off as i64) };
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as above.
    ret(unsafe { libc::pwrite(fd, buf.cast(), len, off as libc::off_t) })
}

/// `lseek` then `read`/`write`, as the `sync` engine does.
///
/// # Safety
/// As for [`pread`] (reads) and [`pwrite`] (writes).
#[inline]
pub(crate) unsafe fn seek_rw(fd: RawFd, buf: *mut u8, len: usize, off: u64, write: bool) -> i64 {
    // SAFETY: lseek takes no pointers.
    if unsafe { libc::lseek(fd, off as libc::off_t, libc::SEEK_SET) } < 0 {
        return ret(-1);
    }
    // SAFETY: the caller vouches for `buf`, as for pread/pwrite.
    ret(unsafe {
        if write {
            libc::write(fd, buf.cast(), len)
        } else {
            libc::read(fd, buf.cast(), len)
        }
    })
}

/// `readv`/`writev` (after `lseek`) or `preadv2`/`pwritev2` with `flags` (`positional`), on one
/// buffer.
///
/// # Safety
/// As for [`pread`] (reads) and [`pwrite`] (writes).
#[inline]
pub(crate) unsafe fn vector_rw(
    fd: RawFd,
    buf: *mut u8,
    len: usize,
    off: u64,
    write: bool,
    positional: bool,
    flags: i32,
) -> i64 {
    let iov = libc::iovec { iov_base: buf.cast(), iov_len: len };
    if !positional {
        // SAFETY: lseek takes no pointers.
        if unsafe { libc::lseek(fd, off as libc::off_t, libc::SEEK_SET) } < 0 {
            return ret(-1);
        }
        // SAFETY: `iov` lives on the stack for the call and describes the unit's buffer.
        return ret(unsafe {
            if write {
                libc::writev(fd, &iov, 1)
            } else {
                libc::readv(fd, &iov, 1)
            }
        });
    }
    // SAFETY: as above; preadv2 with flags 0 is preadv.
    ret(unsafe {
        if write {
            libc::pwritev2(fd, &iov, 1, off as libc::off_t, flags)
        } else {
            libc::preadv2(fd, &iov, 1, off as libc::off_t, flags)
        }
    })
}

#[inline]
pub fn fsync(fd: RawFd, data_only: bool) -> i64 {
    // SAFETY: no pointers.
    let r = unsafe {
        if data_only {
            libc::fdatasync(fd)
        } else {
            libc::fsync(fd)
        }
    };
    ret(r as isize)
}

/// syncfs(2): writes back the whole file system that holds `fd`.
pub fn syncfs(fd: RawFd) -> io::Result<()> {
    // SAFETY: no pointers.
    if unsafe { libc::syncfs(fd) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

const BLKDISCARD: libc::c_ulong = 0x1277;
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
const BLKSSZGET: libc::c_ulong = 0x1268;

/// Trims a range: `BLKDISCARD` on a block device, a hole punched in a regular file.
pub fn trim(fd: RawFd, off: u64, len: u64, block_device: bool) -> i64 {
    if block_device {
        let range = [off, len];
        // SAFETY: BLKDISCARD reads two u64s from the pointer, which lives for the call.
        let r = unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) };
        return if r < 0 { ret(-1) } else { len as i64 };
    }
    // SAFETY: no pointers.
    let r = unsafe {
        libc::fallocate(
            fd,
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            off as libc::off_t,
            len as libc::off_t,
        )
    };
    if r < 0 {
        ret(-1)
    } else {
        len as i64
    }
}

/// fallocate(2): `len` on success, `-errno` on failure, as an I/O's result.
pub fn fallocate(fd: RawFd, mode: i32, off: u64, len: u64) -> i64 {
    // SAFETY: no pointers.
    let r = unsafe { libc::fallocate(fd, mode, off as libc::off_t, len as libc::off_t) };
    if r < 0 {
        ret(-1)
    } else {
        len as i64
    }
}

/// ftruncate(2): 0 on success, `-errno` on failure.
pub fn ftruncate(fd: RawFd, len: u64) -> i64 {
    // SAFETY: no pointers.
    let r = unsafe { libc::ftruncate(fd, len as libc::off_t) };
    if r < 0 {
        ret(-1)
    } else {
        0
    }
}

/// Size in bytes of an open block device.
pub fn block_device_size(fd: RawFd) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 to the pointer.
    if unsafe { libc::ioctl(fd, BLKGETSIZE64, &mut size) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Logical block size of an open block device (the O_DIRECT alignment unit).
pub fn logical_block_size(fd: RawFd) -> io::Result<u32> {
    let mut size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int to the pointer.
    if unsafe { libc::ioctl(fd, BLKSSZGET, &mut size) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size as u32)
}

/// Drops a file's cached pages from `offset` for `len` bytes (fio's `invalidate`).
pub fn fadvise_dontneed(fd: RawFd, offset: u64, len: u64) -> io::Result<()> {
    // SAFETY: no pointers.
    let r = unsafe { libc::posix_fadvise(fd, offset as libc::off_t, len as libc::off_t, libc::POSIX_FADV_DONTNEED) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(())
}

/// Makes descriptor `target` refer to `with`'s open file (dup3), so that whoever holds the
/// number (an engine) uses the new file from now on; `with` keeps its own descriptor.
pub fn replace_fd(target: RawFd, with: RawFd) -> io::Result<()> {
    // SAFETY: no pointers; `target` is a descriptor the caller owns and keeps.
    if unsafe { libc::dup3(with, target, libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// sync_file_range(2) over `len` bytes from `offset` with `flags` (SYNC_FILE_RANGE_*): 0 or a
/// negative errno, as an I/O result.
pub fn sync_range(fd: RawFd, offset: u64, len: u64, flags: u32) -> i64 {
    // SAFETY: no pointers.
    if unsafe { libc::sync_file_range(fd, offset as i64, len as i64, flags) } == 0 {
        0
    } else {
        -(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64)
    }
}

/// Writes a file's dirty pages back and waits for them, so that they can be dropped. Unlike
/// fdatasync it commits no metadata and does not flush the device's cache, so on a clean file it
/// costs next to nothing (a job of 10,000 files pays it 10,000 times). File systems without it
/// fall back to fdatasync.
pub fn write_back(fd: RawFd) -> io::Result<()> {
    let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    // SAFETY: no pointers.
    if unsafe { libc::sync_file_range(fd, 0, 0, flags) } == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::EINVAL) && err.raw_os_error() != Some(libc::ESPIPE) {
        return Err(err);
    }
    // SAFETY: no pointers.
    if unsafe { libc::fdatasync(fd) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Milliseconds since the epoch of clock `id` (a clock_gettime clock id); `None` for a clock
/// this kernel does not have.
pub fn clock_ms(id: i32) -> Option<u64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    if unsafe { libc::clock_gettime(id as libc::clockid_t, &mut ts) } != 0 {
        return None;
    }
    Some(ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000)
}

/// CPU use of the calling thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub usr_us: u64,
    pub sys_us: u64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
}

impl Usage {
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            usr_us: self.usr_us.saturating_sub(earlier.usr_us),
            sys_us: self.sys_us.saturating_sub(earlier.sys_us),
            ctx: self.ctx.saturating_sub(earlier.ctx),
            majf: self.majf.saturating_sub(earlier.majf),
            minf: self.minf.saturating_sub(earlier.minf),
        }
    }
}

fn tv_us(tv: libc::timeval) -> u64 {
    tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64
}

/// `getrusage(RUSAGE_THREAD)`.
pub fn thread_usage() -> Usage {
    usage(libc::RUSAGE_THREAD)
}

/// `getrusage(RUSAGE_SELF)`: the whole process, every thread (a Ceph client's included).
pub fn process_usage() -> Usage {
    usage(libc::RUSAGE_SELF)
}

fn usage(who: libc::c_int) -> Usage {
    // SAFETY: rusage is plain data; zeroed is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one rusage to the pointer.
    unsafe { libc::getrusage(who, &mut ru) };
    Usage {
        usr_us: tv_us(ru.ru_utime),
        sys_us: tv_us(ru.ru_stime),
        ctx: (ru.ru_nvcsw + ru.ru_nivcsw) as u64,
        majf: ru.ru_majflt as u64,
        minf: ru.ru_minflt as u64,
    }
}

/// The calling thread's id, printed as fio prints a job's pid.
pub fn gettid() -> u32 {
    // SAFETY: no pointers.
    unsafe { libc::gettid() as u32 }
}

/// Memory locked for the life of the value (fio's `lockmem`: less RAM left for the page cache).
pub struct LockedMem {
    ptr: *mut libc::c_void,
    len: usize,
}

impl LockedMem {
    pub fn new(len: usize) -> io::Result<LockedMem> {
        // SAFETY: anonymous private mapping; no existing memory is touched.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: ptr..ptr+len is the mapping just made.
        if unsafe { libc::mlock(ptr, len) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: unmapping the mapping just made.
            unsafe { libc::munmap(ptr, len) };
            return Err(e);
        }
        Ok(LockedMem { ptr, len })
    }
}

impl Drop for LockedMem {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

// SAFETY: the mapping is owned by the value and never accessed through the pointer.
unsafe impl Send for LockedMem {}

/// Local time in C's `ctime` layout without the newline: `Sat Nov 21 07:09:51 2026`.
pub fn ctime(epoch_secs: i64) -> String {
    let t: libc::time_t = epoch_secs as libc::time_t;
    // SAFETY: tm is plain data; zeroed is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r reads one time_t and writes one tm, both on our stack.
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return String::new();
    }
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[tm.tm_wday.rem_euclid(7) as usize],
        MONTHS[tm.tm_mon.rem_euclid(12) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year + 1900
    )
}

/// Whether standard output is a terminal (the live status line is shown only then).
pub fn stdout_is_tty() -> bool {
    // SAFETY: no pointers.
    unsafe { libc::isatty(1) == 1 }
}

/// Page size, CPU count and memory in MiB, for `$pagesize`, `$ncpus` and `$mb_memory`.
pub fn machine() -> (u64, u64, u64) {
    // SAFETY: sysconf takes no pointers.
    let (page, cpus, pages) = unsafe {
        (
            libc::sysconf(libc::_SC_PAGESIZE),
            libc::sysconf(libc::_SC_NPROCESSORS_ONLN),
            libc::sysconf(libc::_SC_PHYS_PAGES),
        )
    };
    let page = page.max(4096) as u64;
    (page, cpus.max(1) as u64, (pages.max(0) as u64 * page) >> 20)
}

static INTERRUPT: std::sync::OnceLock<&'static std::sync::atomic::AtomicBool> = std::sync::OnceLock::new();
static ABORT: std::sync::OnceLock<&'static std::sync::atomic::AtomicBool> = std::sync::OnceLock::new();

static CAUGHT: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The signal that stopped the run, 0 if none.
pub fn caught_signal() -> i32 {
    CAUGHT.load(std::sync::atomic::Ordering::Relaxed)
}

extern "C" fn on_signal(sig: libc::c_int) {
    // Only atomic loads and stores: async-signal-safe.
    let again = CAUGHT.swap(sig, std::sync::atomic::Ordering::Relaxed) != 0;
    if let Some(flag) = INTERRUPT.get() {
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    if let (true, Some(flag)) = (again, ABORT.get()) {
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Makes a second SIGINT or SIGTERM (after the one [`stop_on_signals`] turns into a stop
/// request) set `flag`: stop waiting for in-flight I/O.
pub fn abort_on_second_signal(flag: &'static std::sync::atomic::AtomicBool) {
    let _ = ABORT.set(flag);
}

/// Makes SIGINT and SIGTERM set `flag` instead of killing the process, so a run can finish its
/// in-flight I/O and still print what it measured.
pub fn stop_on_signals(flag: &'static std::sync::atomic::AtomicBool) {
    let _ = INTERRUPT.set(flag);
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction is plain data; the handler only performs an atomic store.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The signal that wakes a worker thread out of a blocking wait (SIGURG: ignored by default,
/// used by nothing fiox touches, and the choice other runtimes made for the same purpose).
const WAKE_SIGNAL: libc::c_int = libc::SIGURG;

extern "C" fn on_wake(_sig: libc::c_int) {}

/// Installs a handler for the wake-up signal without `SA_RESTART`, so that a wait it
/// interrupts returns `EINTR` to the engine instead of resuming.
pub fn install_wake_signal() {
    // SAFETY: sigaction is plain data; the handler does nothing.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_wake as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(WAKE_SIGNAL, &sa, std::ptr::null_mut());
    }
}

/// Interrupts thread `tid` of this process if it is blocked in an interruptible wait (reaping
/// completions, sleeping); a thread in an uninterruptible call is not affected.
pub fn wake_thread(tid: u32) {
    // SAFETY: no pointers; a thread id that has exited only makes the call fail.
    unsafe {
        libc::syscall(libc::SYS_tgkill, libc::getpid(), tid as libc::c_long, WAKE_SIGNAL);
    }
}

/// Sends `sig` to the process `pid` (a child fiox started), so a stop request reaches it even
/// when it did not come from the terminal.
pub fn send_signal(pid: u32, sig: i32) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    if unsafe { libc::kill(pid, sig) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Pins the calling thread to `cpus`.
pub fn set_affinity(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("CPU {c} is out of range")));
        }
        // SAFETY: c is within the set's size (checked above).
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: the set lives on our stack for the call; 0 means the calling thread.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the calling thread's nice value.
pub fn set_nice(nice: i32) -> io::Result<()> {
    // SAFETY: no pointers; on Linux PRIO_PROCESS with a thread id affects that thread.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, gettid(), nice) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the calling thread's I/O priority (class 1 realtime, 2 best effort, 3 idle).
pub fn set_ioprio(class: u32, level: u32) -> io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    let prio = ((class as libc::c_long) << 13) | level as libc::c_long;
    // SAFETY: no pointers; 0 means the calling thread.
    if unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0 as libc::c_long, prio) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Switches the calling thread (only it: the raw system calls, not libc's wrappers, which
/// change every thread of the process) to group `gid` and user `uid`, group first while the
/// thread may still change it.
pub fn set_thread_ids(uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
    let keep = -1i64 as libc::c_long;
    if let Some(g) = gid {
        let g = g as libc::c_long;
        // SAFETY: no pointers; the kernel changes the calling thread's credentials only.
        if unsafe { libc::syscall(libc::SYS_setresgid, g, g, keep) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    if let Some(u) = uid {
        let u = u as libc::c_long;
        // SAFETY: as above.
        if unsafe { libc::syscall(libc::SYS_setresuid, u, u, keep) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The calling thread's NUMA memory policy, as set_mempolicy(2) numbers the modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumaMode {
    Default = 0,
    Preferred = 1,
    Bind = 2,
    Interleave = 3,
    Local = 4,
}

/// Sets the calling thread's NUMA memory policy over `nodes` (empty for default and local).
pub fn set_mempolicy(mode: NumaMode, nodes: &[usize]) -> io::Result<()> {
    const WORDS: usize = 16;
    let mut mask = [0 as libc::c_ulong; WORDS];
    let bits = libc::c_ulong::BITS as usize;
    for &n in nodes {
        if n >= WORDS * bits {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("node {n} is out of range")));
        }
        mask[n / bits] |= 1 << (n % bits);
    }
    let (ptr, maxnode) =
        if nodes.is_empty() { (std::ptr::null(), 0) } else { (mask.as_ptr(), (WORDS * bits) as libc::c_ulong) };
    // SAFETY: the mask lives on our stack for the call and holds `maxnode` bits (or is null
    // with maxnode 0); the policy applies to the calling thread.
    if unsafe { libc::syscall(libc::SYS_set_mempolicy, mode as libc::c_long, ptr, maxnode) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// posix_fadvise(2) over the whole file; `random` picks POSIX_FADV_RANDOM, else SEQUENTIAL.
pub fn fadvise_pattern(fd: RawFd, random: bool) -> io::Result<()> {
    let advice = if random { libc::POSIX_FADV_RANDOM } else { libc::POSIX_FADV_SEQUENTIAL };
    // SAFETY: no pointers; fd is the caller's open descriptor.
    match unsafe { libc::posix_fadvise(fd, 0, 0, advice) } {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// F_SET_RW_HINT: the expected lifetime of data written through the file's inode.
pub fn set_write_hint(fd: RawFd, hint: u64) -> io::Result<()> {
    const F_SET_RW_HINT: libc::c_int = 1036;
    let value: u64 = hint;
    // SAFETY: the kernel reads one u64 from the pointer, which lives on our stack.
    if unsafe { libc::fcntl(fd, F_SET_RW_HINT, &value as *const u64) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Bytes an unprivileged user may still write on the file system holding `path` (statvfs's
/// f_bavail blocks of f_frsize bytes).
pub fn free_space(path: &std::path::Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"))?;
    // SAFETY: statvfs is plain data; zeroed is a valid value, overwritten by the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` lives on our stack for the call.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Drops a block device's buffer cache (`invalidate` on a device).
pub fn flush_block_device(fd: RawFd) -> io::Result<()> {
    const BLKFLSBUF: libc::c_ulong = 0x1261;
    // SAFETY: BLKFLSBUF takes no argument.
    if unsafe { libc::ioctl(fd, BLKFLSBUF, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPU's time stamp counter, where the architecture has one.
#[inline]
pub fn rdtsc() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC exists on every x86-64 CPU, reads a counter and touches no memory.
        Some(unsafe { core::arch::x86_64::_rdtsc() })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// gettimeofday(2) in nanoseconds (microsecond resolution), for `clocksource=gettimeofday`.
#[inline]
pub fn gettimeofday_ns() -> u64 {
    let mut tv = libc::timeval { tv_sec: 0, tv_usec: 0 };
    // SAFETY: gettimeofday writes one timeval to the pointer; the time zone argument may be null.
    unsafe { libc::gettimeofday(&mut tv, std::ptr::null_mut()) };
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000
}

/// CLOCK_MONOTONIC in nanoseconds: the clock every latency is measured with. Cheaper than
/// `Instant::elapsed` (no Duration arithmetic), which matters at millions of reads a second.
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec to the pointer; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Drops what the page cache holds of a file's `len` bytes from `offset` (the job's region,
/// as fio 3.33 advises: `posix_fadvise(fd, offset, len, DONTNEED)` under strace), or of a
/// whole block device (fio's `invalidate`).
pub fn drop_cache(fd: RawFd, block_device: bool, offset: u64, len: u64) -> io::Result<()> {
    if block_device {
        flush_block_device(fd)
    } else {
        fadvise_dontneed(fd, offset, len)
    }
}

/// How `fallocate=` reserves a file's space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prealloc {
    None,
    /// fallocate(2) mode 0 (fio's `native`; also `posix`, which glibc implements with it).
    Allocate,
    /// fallocate(2) with FALLOC_FL_KEEP_SIZE.
    KeepSize,
}

/// Reserves `len` bytes of a file; file systems without fallocate are not an error (fio's
/// `native` falls back to nothing, too).
pub fn preallocate(fd: RawFd, how: Prealloc, len: u64) -> io::Result<()> {
    let mode = match how {
        Prealloc::None => return Ok(()),
        Prealloc::Allocate => 0,
        Prealloc::KeepSize => libc::FALLOC_FL_KEEP_SIZE,
    };
    // SAFETY: no pointers.
    if unsafe { libc::fallocate(fd, mode, 0, len as libc::off_t) } != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

/// A pipe, both ends closed on drop: `(read end, write end)`.
pub(crate) fn pipe() -> io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` is a two-element array the kernel fills in.
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and belong to nobody else.
    Ok(unsafe { (std::os::fd::OwnedFd::from_raw_fd(fds[0]), std::os::fd::OwnedFd::from_raw_fd(fds[1])) })
}

/// `splice(2)` of up to `len` bytes from `from` to `to`; a `Some` offset is the file side's
/// position (and is advanced). Bytes moved or `-errno`.
pub(crate) fn splice(
    from: RawFd,
    from_off: Option<&mut i64>,
    to: RawFd,
    to_off: Option<&mut i64>,
    len: usize,
    flags: u32,
) -> i64 {
    let p = |o: Option<&mut i64>| o.map_or(std::ptr::null_mut(), |o| o as *mut i64);
    // SAFETY: the offsets are null or point to live i64s; no buffer is involved.
    ret(unsafe { libc::splice(from, p(from_off), to, p(to_off), len, flags) })
}

/// `vmsplice(2)` of one buffer: into the pipe `fd` (its write end: the pipe takes the bytes) or
/// out of it (its read end: the bytes are copied into the buffer). Bytes moved or `-errno`.
///
/// # Safety
/// `buf` must point to `len` bytes that nothing else reads or writes during the call.
pub(crate) unsafe fn vmsplice(fd: RawFd, buf: *mut u8, len: usize, flags: u32) -> i64 {
    let iov = libc::iovec { iov_base: buf.cast(), iov_len: len };
    // SAFETY: one iovec describing memory the caller vouches for.
    ret(unsafe { libc::vmsplice(fd, &iov, 1, flags) })
}

/// Waits until `fd` can be written to (`poll` with POLLOUT, no time limit).
pub(crate) fn wait_writable(fd: RawFd) -> i64 {
    let mut p = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
    // SAFETY: one pollfd on the stack.
    ret(unsafe { libc::poll(&mut p, 1, -1) } as isize)
}

/// ext4's `struct move_extent` (EXT4_IOC_MOVE_EXT).
#[repr(C)]
struct MoveExtent {
    reserved: u32,
    donor_fd: u32,
    orig_start: u64,
    donor_start: u64,
    len: u64,
    moved_len: u64,
}

/// `_IOWR('f', 15, struct move_extent)`.
const EXT4_IOC_MOVE_EXT: libc::c_ulong = 0xc028_660f;

/// Swaps `len` blocks at block `start` of `fd` with the same blocks of `donor` (ext4 online
/// defragmentation). Returns the blocks moved or `-errno`.
pub(crate) fn move_extent(fd: RawFd, donor: RawFd, start: u64, len: u64) -> i64 {
    let mut me =
        MoveExtent { reserved: 0, donor_fd: donor as u32, orig_start: start, donor_start: start, len, moved_len: 0 };
    // SAFETY: the kernel reads and updates the struct on the stack, nothing else.
    let r = unsafe { libc::ioctl(fd, EXT4_IOC_MOVE_EXT, &mut me as *mut MoveExtent) };
    if r < 0 {
        ret(-1)
    } else {
        me.moved_len as i64
    }
}

/// The file system block size of `fd` (`st_blksize`).
pub(crate) fn block_size(fd: RawFd) -> io::Result<u64> {
    // SAFETY: fstat fills in a zeroed stat struct on the stack.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `st` is valid for writes.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.st_blksize.max(1) as u64)
}

/// `send(2)` of a buffer (MSG_NOSIGNAL: a closed peer is EPIPE, not a signal).
///
/// # Safety
/// `buf` must point to `len` bytes that nothing writes during the call.
pub(crate) unsafe fn send(fd: RawFd, buf: *const u8, len: usize) -> i64 {
    // SAFETY: the caller vouches for `buf`.
    ret(unsafe { libc::send(fd, buf.cast(), len, libc::MSG_NOSIGNAL) })
}

/// `recv(2)` into a buffer (`flags`: MSG_WAITALL for a stream).
///
/// # Safety
/// `buf` must point to `len` bytes that nothing else reads or writes during the call.
pub(crate) unsafe fn recv(fd: RawFd, buf: *mut u8, len: usize, flags: i32) -> i64 {
    // SAFETY: the caller vouches for `buf`.
    ret(unsafe { libc::recv(fd, buf.cast(), len, flags) })
}

/// Sets an integer socket option.
pub(crate) fn set_sockopt(fd: RawFd, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: the option value is an int on the stack, its size given.
    let r = unsafe {
        libc::setsockopt(fd, level, name, (&value as *const i32).cast(), std::mem::size_of::<i32>() as libc::socklen_t)
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The file system type (statfs `f_type`) of the file system holding `path`.
pub(crate) fn fs_type(path: &std::path::Path) -> io::Result<i64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: statfs fills in a zeroed struct on the stack.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` is valid for writes.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.f_type as i64)
}

/// Whether standard output is a pipe or socket whose reader has gone (`fiox ... | head -1` after
/// `head` exited): polling the write end then reports an error condition.
pub fn stdout_reader_gone() -> bool {
    let mut pfd = libc::pollfd { fd: libc::STDOUT_FILENO, events: libc::POLLOUT, revents: 0 };
    // SAFETY: one pollfd on our stack, a zero timeout; fd 1 may be closed, which poll reports.
    let n = unsafe { libc::poll(&mut pfd, 1, 0) };
    n == 1 && pfd.revents & libc::POLLERR != 0
}

/// Ends the process as a C program that left SIGPIPE alone ends when it writes to a closed pipe
/// (fio does): killed by SIGPIPE, which shells report as status 141, with nothing printed.
pub fn die_of_sigpipe() -> ! {
    // SAFETY: plain integers; restoring the default action and raising the signal touches no
    // memory of ours, and the default action ends the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    // Only reached if the signal is blocked: end with the status a shell gives a SIGPIPE death.
    std::process::exit(128 + libc::SIGPIPE)
}

/// Moves the calling thread to SCHED_IDLE, so it runs only on a CPU nothing else wants
/// (`--idle-prof`'s measuring threads).
pub fn set_sched_idle() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; param lives on our stack for the call.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
