//! One file per engine, named as in fio.

pub mod cpuio;
pub mod dev_dax;
pub mod e4defrag;
pub mod exec;
pub mod falloc;
pub mod filemeta;
pub mod ftruncate;
pub mod gfapi;
pub mod http;
pub mod io_uring;
pub mod io_uring_cmd;
pub mod libaio;
pub mod libblkio;
pub mod libiscsi;
pub mod libpmem;
pub mod mmap;
pub mod mtd;
pub mod nbd;
pub mod net;
pub mod nfs;
pub mod null;
pub mod pmemblk;
pub mod posixaio;
pub mod rados;
pub mod rbd;
pub mod rdma;
pub mod sg;
pub mod splice;
pub mod sync;

use std::path::PathBuf;

/// The job's files as the user named them (`directory` prepended), or the default name when
/// `filename` is not given.
pub(crate) fn job_files(spec: &fiox_options::JobSpec) -> Vec<PathBuf> {
    let names: Vec<String> = match &spec.filename {
        Some(list) => list.split(':').filter(|s| !s.is_empty()).map(str::to_string).collect(),
        None => vec![format!("{}.0.0", spec.name)],
    };
    let dir = spec.directory.as_deref().and_then(|d| d.split(':').next()).filter(|d| !d.is_empty());
    names
        .into_iter()
        .map(|n| match dir {
            Some(d) if !n.starts_with('/') => PathBuf::from(d).join(n),
            _ => PathBuf::from(n),
        })
        .collect()
}

/// The entries of /dev whose names start with `prefix`, sorted (`sg` gives `/dev/sg0`, ...).
pub(crate) fn devices(prefix: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir("/dev")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(prefix))
                .map(|n| format!("/dev/{n}"))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// "none" or the list, for messages that say what this machine has.
pub(crate) fn found(list: &[String]) -> String {
    if list.is_empty() {
        "this machine has none".to_string()
    } else {
        format!("this machine has {}", list.join(", "))
    }
}

/// Whether `path` is a character (`char_dev`) or block device.
pub(crate) fn is_device(path: &std::path::Path, char_dev: bool) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| {
        if char_dev {
            m.file_type().is_char_device()
        } else {
            m.file_type().is_block_device()
        }
    })
}
