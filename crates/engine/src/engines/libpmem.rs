//! `libpmem`: loads and stores on a synchronous (MAP_SYNC) mapping of a file on persistent
//! memory, a file system mounted with `-o dax`. fio 3.33 refuses files elsewhere ("does not
//! point to persistent memory") after laying them out; fiox refuses them before any I/O and
//! names the file system that lacks DAX.

use super::{devices, found, job_files, Refused};
use crate::EngineInfo;

/// The mount point, type and options of the file system holding `path` (longest matching
/// mount point in /proc/mounts).
fn mount_of(path: &std::path::Path) -> Option<(String, String, String)> {
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
    Err("ioengine libpmem: fiox does not map persistent memory yet".to_string())
}

pub const INFO: EngineInfo =
    EngineInfo { preflight: Some(preflight), ..EngineInfo::base("libpmem", || Box::new(Refused)) };
