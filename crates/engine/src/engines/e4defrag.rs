//! `e4defrag`: ext4 online defragmentation as a workload. Each write I/O swaps the blocks it
//! covers with the same blocks of a donor file (EXT4_IOC_MOVE_EXT), so the job's file gets the
//! donor's freshly allocated blocks and keeps its data. The donor (`donorname`, under
//! `directory` when set) is created if missing and left behind, as in fio. By default its
//! space is allocated once at start, `filesize` bytes (fio needs `filesize=` for that and
//! fails with EINVAL without it); with `inplace=1` each I/O allocates the donor's range first
//! and truncates the donor to nothing after.
//!
//! The block range is the I/O's, in file system blocks: from `offset / bs` to the block that
//! holds the I/O's last byte. Reads and trims have no meaning and fail with EINVAL, as in fio;
//! on a file system other than ext4 the ioctl fails (ENOTTY) and so does the job.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use crate::{sys, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

#[derive(Default)]
pub struct E4defrag {
    donor: Option<File>,
    inplace: bool,
    /// The file system block size of the job's file.
    block: u64,
}

impl IoEngine for E4defrag {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        let o = &setup.opts.e4defrag;
        let name = o.donorname.as_deref().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "ioengine e4defrag needs donorname= (the donor file)")
        })?;
        // The donor lives next to the job's file when `directory` put it elsewhere.
        let path = match setup.paths.first().and_then(|p| p.parent()).filter(|p| !p.as_os_str().is_empty()) {
            Some(dir) if !name.starts_with('/') => dir.join(name),
            _ => std::path::PathBuf::from(name),
        };
        let donor = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .open(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot open donorname={}: {e}", path.display())))?;
        self.inplace = o.inplace;
        if !self.inplace {
            let len = o.donor_size;
            if len == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "ioengine e4defrag needs filesize= (how much of the donor to allocate) unless inplace=1",
                ));
            }
            let r = sys::fallocate(donor.as_raw_fd(), 0, 0, len);
            if r < 0 {
                let e = io::Error::from_raw_os_error((-r) as i32);
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot allocate {len} bytes of donor {}: {e}", path.display()),
                ));
            }
        }
        self.block = match setup.fds.first() {
            Some(&fd) => sys::block_size(fd)?,
            None => 4096,
        };
        self.donor = Some(donor);
        Ok(())
    }

    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let result = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Write => {
                let donor = self.donor.as_ref().expect("started").as_raw_fd();
                let (off, len) = (io.offset, io.len as u64);
                if self.inplace {
                    let r = sys::fallocate(donor, 0, off, len);
                    if r < 0 {
                        return Ok(QueueStatus::Completed(r));
                    }
                }
                let start = off / self.block;
                let blocks = (off + len).div_ceil(self.block) - start;
                let r = sys::move_extent(io.fd, donor, start, blocks);
                if self.inplace {
                    sys::ftruncate(donor, 0);
                }
                if r < 0 {
                    r
                } else {
                    len as i64
                }
            }
            Ddir::Read | Ddir::Trim => -(libc::EINVAL as i64),
            Ddir::Sync => sys::fsync(io.fd, false),
            Ddir::DataSync => sys::fsync(io.fd, true),
        };
        Ok(QueueStatus::Completed(result))
    }
}

/// ext4's (and ext2/3's) superblock magic, as statfs reports it.
const EXT4_SUPER_MAGIC: i64 = 0xEF53;

/// Refuses, before anything is laid out, a job without a donor, without a donor size, or on a
/// file system other than ext4.
fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let o = &spec.engine.e4defrag;
    if o.donorname.is_none() {
        return Err("ioengine e4defrag needs donorname= (the file whose blocks are swapped in)".to_string());
    }
    if !o.inplace && o.donor_size == 0 {
        return Err(
            "ioengine e4defrag needs filesize= (how much of the donor to allocate) unless inplace=1".to_string()
        );
    }
    for f in super::job_files(spec) {
        let dir = f.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(".".as_ref()).to_path_buf();
        match sys::fs_type(&dir) {
            Ok(t) if t == EXT4_SUPER_MAGIC => {}
            Ok(t) => {
                return Err(format!(
                    "ioengine e4defrag needs an ext4 file system; '{}' is on another one (statfs type {t:#x})",
                    f.display()
                ))
            }
            Err(e) => {
                return Err(format!("ioengine e4defrag: cannot tell the file system of '{}': {e}", dir.display()))
            }
        }
    }
    Ok(())
}

pub const INFO: EngineInfo =
    EngineInfo { preflight: Some(preflight), ..EngineInfo::base("e4defrag", || Box::<E4defrag>::default()) };
