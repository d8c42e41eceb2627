//! `pmemblk`: blocks of a PMDK libpmemblk pool (`libpmemblk.so.1`, loaded at run time), as fio
//! 3.33's engine does it. A file is named `path[,bsize[,sizeMiB]]`: the pool at `path`, opened
//! (checking its block size when one is given) or, when missing and both numbers are given,
//! created with blocks of `bsize` bytes and `sizeMiB` MiB; the file's size is the pool's
//! blocks. An I/O whose offset or length is not a whole number of blocks fails with EINVAL;
//! else it reads or writes its blocks one by one (each block atomically); syncs do nothing
//! (libpmemblk is always durable); trims fail with EINVAL. The job needs `thread`, as in fio:
//! the pool is opened once and shared by the job's threads. fiox also asks for the pool to be
//! on persistent memory (a file system mounted with `-o dax`).

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{devices, found, job_files};
use crate::dl::pmem::{pmemblk_loads, shared_pool, BlockPool};
use crate::{Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, RemoteFile, Setup};

/// A file name's parts: the pool's path, its block size and its size in MiB (0: not given).
fn parse(name: &str) -> (PathBuf, u64, u64) {
    let mut parts = name.splitn(3, ',');
    let path = PathBuf::from(parts.next().unwrap_or(""));
    let mut number = || parts.next().and_then(|p| p.trim().parse::<u64>().ok()).unwrap_or(0);
    let (bsize, mib) = (number(), number());
    (path, bsize, mib)
}

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let pmem = devices("pmem");
    for f in job_files(spec) {
        let (pool, _, _) = parse(&f.to_string_lossy());
        match super::libpmem::mount_of(&pool) {
            Some((_, _, opts)) if opts.split(',').any(|o| o == "dax" || o == "dax=always") => {}
            Some((mnt, fstype, _)) => {
                return Err(format!(
                    "ioengine pmemblk needs PMDK's libpmemblk and a persistent memory device (a file system mounted with -o dax); '{}' is on {fstype} at {mnt}, mounted without dax ({})",
                    pool.display(),
                    found(&pmem).replace("none", "no /dev/pmemN")
                ))
            }
            None => return Err(format!("ioengine pmemblk: cannot tell which file system holds '{}'", pool.display())),
        }
    }
    if !spec.thread {
        return Err("ioengine pmemblk: must set thread=1 for pmemblk engine (libpmemblk's pools are shared by the job's threads, as in fio)".to_string());
    }
    pmemblk_loads()
}

/// The job's pools, each opened (or created) to learn its size; they stay open in this
/// process's table while a worker holds them.
fn pools(spec: &fiox_options::JobSpec, _clone: u32, names: &[String]) -> Result<Vec<RemoteFile>, String> {
    names
        .iter()
        .map(|name| {
            let pool = open(name, spec.allow_file_create)?;
            let (bsize, n) = pool.geometry();
            Ok(RemoteFile { name: name.clone(), size: Some(bsize * n), written: None, facts: None })
        })
        .collect()
}

fn open(name: &str, create: bool) -> Result<Arc<BlockPool>, String> {
    let (path, bsize, mib) = parse(name);
    shared_pool(&path, bsize, (create && mib > 0).then_some(mib << 20))
}

/// fio says once per run that `direct=0` makes no difference.
static DIRECT_NOTED: AtomicBool = AtomicBool::new(false);

#[derive(Default)]
pub struct Pmemblk {
    /// Per file: the pool, its block size and its number of blocks.
    pools: Vec<(Arc<BlockPool>, u64, u64)>,
    banner: Option<String>,
}

impl IoEngine for Pmemblk {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        for path in setup.paths {
            let pool = open(&path.to_string_lossy(), true).map_err(io::Error::other)?;
            let (bsize, n) = pool.geometry();
            self.pools.push((pool, bsize.max(1), n));
        }
        if !setup.direct && !DIRECT_NOTED.swap(true, Ordering::Relaxed) {
            self.banner = Some("pmemblk: direct == 0, but pmemblk is always direct".to_string());
        }
        Ok(())
    }

    fn banner(&self) -> Option<String> {
        self.banner.clone()
    }

    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let (pool, bsize, blocks) = &self.pools[io.file_index as usize];
        let (off, len) = (io.offset, io.len as u64);
        let result = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Sync | Ddir::DataSync => 0,
            Ddir::Trim => -(libc::EINVAL as i64),
            _ if off % bsize != 0 || len % bsize != 0 || (off + len) / bsize > *blocks => -(libc::EINVAL as i64),
            Ddir::Read | Ddir::Write => {
                let mut result = len as i64;
                for i in 0..len / bsize {
                    // SAFETY: the unit's buffer holds `len` bytes (the queue's promise), so block
                    // i of it, bsize bytes at i * bsize, is inside it.
                    let r = unsafe {
                        let buf = io.buf.add((i * bsize) as usize);
                        match io.ddir {
                            Ddir::Read => pool.read(buf, off / bsize + i),
                            _ => pool.write(buf, off / bsize + i),
                        }
                    };
                    if let Err(e) = r {
                        result = -(e.raw_os_error().unwrap_or(libc::EIO) as i64);
                        break;
                    }
                }
                result
            }
        };
        Ok(QueueStatus::Completed(result))
    }
}

pub const INFO: EngineInfo = EngineInfo {
    preflight: Some(preflight),
    diskless: true,
    remote: Some(pools),
    ..EngineInfo::base("pmemblk", || Box::new(Pmemblk::default()))
};
