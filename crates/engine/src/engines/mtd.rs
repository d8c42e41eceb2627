//! `mtd`: raw flash through the Linux MTD character devices (/dev/mtdN), as fio 3.33's engine
//! drives them: each I/O is split at erase-block boundaries; reads and writes are pread/pwrite
//! of each piece; a trim erases whole erase blocks (MEMERASE64) and fails with EINVAL when it does
//! not cover whole blocks (fio then erases the block anyway; fiox erases nothing it was not
//! asked to). A failed piece does not stop the rest of the I/O, whose error is the last piece's.
//! With `skip_bad`, pieces in blocks the device reports bad (MEMGETBADBLOCK) are skipped and
//! fail the I/O with EIO, and a block whose I/O fails with EIO is marked bad (MEMSETBADBLOCK).
//! Syncs do nothing: an MTD character device writes through. Failures are reported as fio
//! reports them: a failed erase as `func=mtd_erase`, a misaligned trim under the alignment
//! rule's words, a skipped bad block as the queueing step's (`td_io_queue`). The device's size
//! comes from sysfs, as MEMGETINFO's is 32 bits wide (a device of 4 GiB or more).

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;

use super::{devices, found, is_device, job_files};
use crate::{Ddir, EngineInfo, ErrorDetail, IoEngine, IoUnit, QueueStatus, Setup};

/// `struct mtd_info_user` (linux/mtd/mtd-abi.h).
#[repr(C)]
#[derive(Default)]
struct MtdInfo {
    kind: u8,
    flags: u32,
    size: u32,
    erasesize: u32,
    writesize: u32,
    oobsize: u32,
    padding: u64,
}

/// `struct erase_info_user64`: erase blocks past 4 GiB need the 64-bit form of MEMERASE.
#[repr(C)]
struct EraseInfo64 {
    start: u64,
    length: u64,
}

/// The ioctls of mtd-abi.h: `_IOR('M', 1, struct mtd_info_user)`, `_IOW('M', 11,
/// __kernel_loff_t)`, `_IOW('M', 12, __kernel_loff_t)`, `_IOW('M', 20, struct
/// erase_info_user64)`.
const MEMGETINFO: libc::c_ulong = 0x8020_4d01;
const MEMERASE64: libc::c_ulong = 0x4010_4d14;
const MEMGETBADBLOCK: libc::c_ulong = 0x4008_4d0b;
const MEMSETBADBLOCK: libc::c_ulong = 0x4008_4d0c;
/// `MTD_NANDFLASH` and `MTD_MLCNANDFLASH`: the device types with bad blocks.
const NAND_TYPES: [u8; 2] = [4, 8];

fn info(fd: RawFd) -> io::Result<MtdInfo> {
    let mut info = MtdInfo::default();
    // SAFETY: MEMGETINFO fills a `struct mtd_info_user`, which `info` is, laid out as in C.
    if unsafe { libc::ioctl(fd, MEMGETINFO as _, &mut info) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info)
}

/// The device's size in bytes from sysfs (`/sys/dev/char/MAJ:MIN/size`): MEMGETINFO's size is
/// 32 bits wide, so a device of 4 GiB reads as 0 there (and one of 5 GiB as 1 GiB).
fn sysfs_size(rdev: u64) -> Option<u64> {
    let at = format!("/sys/dev/char/{}:{}/size", libc::major(rdev), libc::minor(rdev));
    std::fs::read_to_string(at).ok()?.trim().parse().ok()
}

/// The device's size in bytes (its erase blocks are checked per I/O, as fio does).
fn device_size(path: &Path) -> Result<(u64, u64), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot stat '{}': {e}", path.display()))?;
    // mtdchar gives each device two minors: 2N is /dev/mtdN, 2N+1 its read-only twin.
    if libc::minor(meta.rdev()) % 2 == 1 {
        return Err(format!(
            "'{}' is the read-only node of an MTD device; name /dev/mtdN, as fio does",
            path.display()
        ));
    }
    let f = std::fs::File::open(path).map_err(|e| format!("cannot open '{}': {e}", path.display()))?;
    let i = info(f.as_raw_fd()).map_err(|e| format!("'{}' does not answer MEMGETINFO: {e}", path.display()))?;
    if i.erasesize == 0 {
        return Err(format!("'{}' reports an erase block of 0 bytes", path.display()));
    }
    Ok((sysfs_size(meta.rdev()).unwrap_or(i.size as u64), 1))
}

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let mtd: Vec<String> = devices("mtd").into_iter().filter(|d| !d.ends_with("ro")).collect();
    for f in job_files(spec) {
        if !is_device(&f, true) || !f.to_string_lossy().starts_with("/dev/mtd") {
            return Err(format!(
                "ioengine mtd needs an MTD character device (/dev/mtdN) as filename; '{}' is not one ({})",
                f.display(),
                found(&mtd)
            ));
        }
    }
    Ok(())
}

struct Device {
    fd: RawFd,
    erase: u64,
    /// Whether the device can have bad blocks (NAND); others never report one.
    nand: bool,
}

#[derive(Default)]
pub struct Mtd {
    devices: Vec<Device>,
    skip_bad: bool,
    /// Per unit: how fio reports its last I/O's failure (the step it names, and a line).
    details: Vec<Option<ErrorDetail>>,
}

impl Mtd {
    fn is_bad(&self, d: &Device, block: u64) -> io::Result<bool> {
        if !d.nand {
            return Ok(false);
        }
        let at = (block * d.erase) as libc::loff_t;
        // SAFETY: MEMGETBADBLOCK reads a loff_t, passed by address.
        let rc = unsafe { libc::ioctl(d.fd, MEMGETBADBLOCK as _, &at) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(rc > 0)
    }

    /// fio's rule after a failed piece: with `skip_bad`, an EIO marks the block bad.
    fn maybe_mark_bad(&self, d: &Device, block: u64, errno: i32) {
        if self.skip_bad && d.nand && errno == libc::EIO {
            let at = (block * d.erase) as libc::loff_t;
            // SAFETY: MEMSETBADBLOCK reads a loff_t, passed by address.
            unsafe { libc::ioctl(d.fd, MEMSETBADBLOCK as _, &at) };
        }
    }
}

impl IoEngine for Mtd {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        self.skip_bad = setup.opts.mtd.skip_bad;
        self.details = vec![None; setup.depth as usize];
        for &fd in setup.fds {
            let i = info(fd).map_err(|e| io::Error::new(e.kind(), format!("MEMGETINFO: {e}")))?;
            self.devices.push(Device { fd, erase: (i.erasesize as u64).max(1), nand: NAND_TYPES.contains(&i.kind) });
        }
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let d = &self.devices[io.file_index as usize];
        self.details[index as usize] = None;
        let (mut done, len) = (0u64, io.len as u64);
        let mut errno = 0;
        let mut detail = None;
        if matches!(io.ddir, Ddir::Sync | Ddir::DataSync) {
            return Ok(QueueStatus::Completed(0));
        }
        while done < len {
            let at = io.offset + done;
            let (block, in_block) = (at / d.erase, at % d.erase);
            let piece = (len - done).min(d.erase - in_block);
            if self.skip_bad {
                match self.is_bad(d, block) {
                    Err(e) => {
                        errno = e.raw_os_error().unwrap_or(libc::EIO);
                        detail = Some(step("mtd_is_bad", None));
                        break;
                    }
                    Ok(true) => {
                        errno = libc::EIO;
                        done += piece;
                        continue;
                    }
                    Ok(false) => {}
                }
            }
            // SAFETY: the unit's buffer holds `len` bytes (the queue's promise), so
            // done..done+piece is inside it; the device's fd is open for the job's directions.
            let rc = unsafe {
                let buf = io.buf.add(done as usize);
                match io.ddir {
                    Ddir::Read => libc::pread(d.fd, buf.cast(), piece as usize, at as libc::off_t) as i64,
                    Ddir::Write => libc::pwrite(d.fd, buf.cast(), piece as usize, at as libc::off_t) as i64,
                    Ddir::Trim if in_block != 0 || piece != d.erase => {
                        errno = libc::EINVAL;
                        detail = Some(step("trim on MTD must be erase block-aligned", None));
                        done += piece;
                        continue;
                    }
                    Ddir::Trim => {
                        let e = EraseInfo64 { start: block * d.erase, length: d.erase };
                        // MEMERASE64 reads a `struct erase_info_user64`, passed by address.
                        libc::ioctl(d.fd, MEMERASE64 as _, &e) as i64
                    }
                    Ddir::Sync | Ddir::DataSync => 0,
                    Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
                }
            };
            if rc < 0 {
                let e = io::Error::last_os_error();
                errno = e.raw_os_error().unwrap_or(libc::EIO);
                if io.ddir == Ddir::Trim {
                    detail = Some(step("mtd_erase", Some(format!("MEMERASE64 failed for erase block {block}: {e}"))));
                }
                self.maybe_mark_bad(d, block, errno);
            } else if io.ddir != Ddir::Trim && (rc as u64) < piece {
                // A short transfer on flash: the piece did not fit the device.
                errno = libc::EIO;
            }
            done += piece;
        }
        if errno != 0 && detail.is_none() && (self.skip_bad || io.ddir == Ddir::Trim) {
            // A bad block skipped, or an erase: fio reports either as its queueing step's error.
            detail = Some(step("td_io_queue", None));
        }
        self.details[index as usize] = detail;
        Ok(QueueStatus::Completed(if errno != 0 { -(errno as i64) } else { len as i64 }))
    }

    fn error_detail(&mut self, index: u32) -> Option<ErrorDetail> {
        self.details.get_mut(index as usize)?.take()
    }
}

/// How fio reports an I/O that failed in step `func`.
fn step(func: &'static str, line: Option<String>) -> ErrorDetail {
    ErrorDetail::Step { func, line }
}

pub const INFO: EngineInfo = EngineInfo {
    preflight: Some(preflight),
    device_size: Some(device_size),
    ..EngineInfo::base("mtd", || Box::new(Mtd::default()))
};
