//! `dev-dax`: loads and stores on a mapping of a device DAX character device (/dev/daxX.Y), as
//! fio 3.33's engine does: reads copy out of the mapping, writes go through libpmem's
//! `pmem_memcpy_persist` (flushed and drained, so each write is durable when it completes),
//! syncs drain, and trims fail with EINVAL. The device's size is the one sysfs gives (stat
//! says nothing of a character device). libpmem (`libpmem.so.1`) is loaded at run time.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{devices, found, is_device, job_files};
use crate::dl::pmem::Copier;
use crate::map::Map;
use crate::{Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

/// The sysfs directory of a character device: /sys/dev/char/MAJOR:MINOR.
fn sysfs(path: &Path) -> Result<std::path::PathBuf, String> {
    let rdev = std::fs::metadata(path).map_err(|e| format!("cannot stat '{}': {e}", path.display()))?.rdev();
    Ok(format!("/sys/dev/char/{}:{}", libc::major(rdev), libc::minor(rdev)).into())
}

/// A number in a sysfs file of the device.
fn attribute(path: &Path, name: &str) -> Result<u64, String> {
    let file = sysfs(path)?.join(name);
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("'{}' is not a device DAX ({}: {e})", path.display(), file.display()))?;
    text.trim().parse().map_err(|_| format!("{} reads '{}'", file.display(), text.trim()))
}

/// The device's size in bytes; fio's engine takes no block size from it.
fn device_size(path: &Path) -> Result<(u64, u64), String> {
    Ok((attribute(path, "size")?, 1))
}

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let dax = devices("dax");
    for f in job_files(spec) {
        if !is_device(&f, true) || !f.to_string_lossy().starts_with("/dev/dax") {
            return Err(format!(
                "ioengine dev-dax needs a device DAX character device (/dev/daxX.Y) as filename; '{}' is not one ({})",
                f.display(),
                found(&dax)
            ));
        }
    }
    pmem_block_rule("dev-dax", spec)?;
    Copier::load("dev-dax").map(|_| ()).map_err(|e| e.to_string())
}

/// fio's rule for its mapping engines: a sync every N blocks needs blocks of whole pages.
pub(super) fn pmem_block_rule(engine: &str, spec: &fiox_options::JobSpec) -> Result<(), String> {
    let dirs = [spec.rw.reads(), spec.rw.writes(), spec.rw.trims()];
    let min = (0..3)
        .filter(|&d| dirs[d])
        .flat_map(|d| {
            let split = spec.bssplit[d].iter().map(|e| e.0);
            std::iter::once(spec.bs[d]).chain(spec.bsrange[d].map(|r| r.0)).chain(split)
        })
        .min()
        .unwrap_or(spec.bs[0]);
    if min % 4096 != 0 && (spec.fsync > 0 || spec.fdatasync > 0) {
        return Err(format!(
            "ioengine {engine}: fsync/fdatasync every N blocks needs a block size of whole 4096-byte pages (the smallest is {min} bytes), as in fio"
        ));
    }
    Ok(())
}

#[derive(Default)]
pub struct DevDax {
    pmem: Option<Copier>,
    maps: Vec<Map>,
}

impl IoEngine for DevDax {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        self.pmem = Some(Copier::load("dev-dax")?);
        for ((&fd, &size), path) in setup.fds.iter().zip(setup.sizes).zip(setup.paths) {
            // A device DAX mapping must start and end on the device's alignment (2 MiB by
            // default): the extent the job uses, rounded up to it and kept inside the device.
            let align = attribute(path, "align").unwrap_or(2 << 20).max(4096);
            let total = attribute(path, "size").map_err(io::Error::other)?;
            let len = size.div_ceil(align).saturating_mul(align).min(total).max(size) as usize;
            let prot = libc::PROT_READ | if setup.writes { libc::PROT_WRITE } else { 0 };
            // SAFETY: a new shared mapping of an open device; no existing memory is touched.
            let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
            if p == libc::MAP_FAILED {
                let e = io::Error::last_os_error();
                return Err(io::Error::new(e.kind(), format!("mmap of {len} bytes of '{}': {e}", path.display())));
            }
            // SAFETY: the mapping just made, unmapped only when the engine is dropped.
            self.maps.push(unsafe { Map::new(p.cast(), len) });
        }
        Ok(())
    }

    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let pmem = self.pmem.expect("init loaded libpmem");
        let m = &self.maps[io.file_index as usize];
        let result = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Read | Ddir::Write => m.transfer(io, |dst, src, len| {
                // SAFETY: transfer hands a span inside the mapping, writable for jobs that
                // write, and the unit's buffer, `len` bytes each and apart.
                unsafe { pmem.copy_persist(dst, src, len) }
            }),
            Ddir::Sync | Ddir::DataSync => {
                pmem.drain();
                0
            }
            Ddir::Trim => -(libc::EINVAL as i64),
        };
        Ok(QueueStatus::Completed(result))
    }
}

impl Drop for DevDax {
    fn drop(&mut self) {
        for m in &self.maps {
            // SAFETY: each mapping made in init, unmapped once.
            unsafe { libc::munmap(m.base().cast(), m.len()) };
        }
    }
}

pub const INFO: EngineInfo = EngineInfo {
    preflight: Some(preflight),
    device_size: Some(device_size),
    ..EngineInfo::base("dev-dax", || Box::new(DevDax::default()))
};
