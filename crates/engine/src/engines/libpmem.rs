//! `libpmem`: loads and stores on a synchronous (MAP_SYNC) mapping of a file on persistent
//! memory, a file system mounted with `-o dax`, through PMDK's libpmem (`libpmem.so.1`, loaded
//! at run time), as fio 3.33's engine does: each file is mapped whole with `pmem_map_file`;
//! reads copy out of it; writes use `pmem_memcpy`, non-temporal with `direct=1` (temporal
//! otherwise) and drained at once with `sync=1` (else left to the next sync); syncs drain; trims
//! fail with EINVAL. fio 3.33 refuses files elsewhere ("does not point to persistent memory")
//! after laying them out; fiox refuses them before any I/O and names the file system that lacks
//! DAX.

use std::io;

use super::{devices, found, job_files};
use crate::dl::pmem::{Copier, MEM_NODRAIN, MEM_NONTEMPORAL, MEM_TEMPORAL};
use crate::map::Map;
use crate::{Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

/// The mount point, type and options of the file system holding `path` (longest matching
/// mount point in /proc/mounts).
pub(super) fn mount_of(path: &std::path::Path) -> Option<(String, String, String)> {
    let abs =
        std::fs::canonicalize(path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(".".as_ref())).ok()?;
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 4 && abs.starts_with(f[1])).then(|| (f[1].to_string(), f[2].to_string(), f[3].to_string()))
        })
        .max_by_key(|m| m.0.len())
}

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let pmem = devices("pmem");
    for f in job_files(spec) {
        match mount_of(&f) {
            Some((mnt, _, opts)) if opts.split(',').any(|o| o == "dax" || o == "dax=always") => {
                let _ = mnt;
            }
            Some((mnt, fstype, _)) => {
                return Err(format!(
                    "ioengine libpmem needs its file on persistent memory (a file system mounted with -o dax); '{}' is on {fstype} at {mnt}, mounted without dax ({})",
                    f.display(),
                    found(&pmem).replace("none", "no /dev/pmemN")
                ))
            }
            None => return Err(format!("ioengine libpmem: cannot tell which file system holds '{}'", f.display())),
        }
    }
    super::dev_dax::pmem_block_rule("libpmem", spec)?;
    Copier::load("libpmem").map(|_| ()).map_err(|e| e.to_string())
}

#[derive(Default)]
pub struct Libpmem {
    pmem: Option<Copier>,
    maps: Vec<Map>,
    /// `pmem_memcpy`'s flags for writes.
    flags: std::ffi::c_uint,
}

impl IoEngine for Libpmem {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        let pmem = Copier::load("libpmem")?;
        self.pmem = Some(pmem);
        self.flags =
            if setup.sync { 0 } else { MEM_NODRAIN } | if setup.direct { MEM_NONTEMPORAL } else { MEM_TEMPORAL };
        for (path, &size) in setup.paths.iter().zip(setup.sizes) {
            let (ptr, len, is_pmem) = pmem.map_file(path)?;
            // SAFETY: pmem_map_file mapped it read-write; it is unmapped only when the engine
            // is dropped.
            self.maps.push(unsafe { Map::new(ptr, len) });
            if !is_pmem {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!(
                        "'{}' does not point to persistent memory (libpmem could not map it with MAP_SYNC)",
                        path.display()
                    ),
                ));
            }
            if (len as u64) < size {
                return Err(io::Error::other(format!(
                    "'{}' maps {len} bytes, fewer than the {size} the job uses",
                    path.display()
                )));
            }
        }
        Ok(())
    }

    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let pmem = self.pmem.expect("init loaded libpmem");
        let m = &self.maps[io.file_index as usize];
        let result = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Read | Ddir::Write => m.transfer(io, |dst, src, len| {
                // SAFETY: transfer hands a span inside the mapping (pmem_map_file maps
                // read-write) and the unit's buffer, `len` bytes each and apart.
                unsafe { pmem.copy(dst, src, len, self.flags) }
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

impl Drop for Libpmem {
    fn drop(&mut self) {
        if let Some(pmem) = self.pmem {
            for m in &self.maps {
                // SAFETY: each mapping made by pmem_map_file in init, unmapped once.
                unsafe { pmem.unmap(m.base(), m.len()) };
            }
        }
    }
}

pub const INFO: EngineInfo = EngineInfo {
    preflight: Some(preflight),
    prepopulates: true,
    ..EngineInfo::base("libpmem", || Box::new(Libpmem::default()))
};
