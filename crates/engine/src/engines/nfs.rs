//! `nfs`: files on an NFS export through libnfs, a user-space NFSv3 client, without a kernel
//! mount, as fio 3.33's engine of that name. `nfs_url=nfs://server/export[?arg=val...]` names
//! the export (libnfs's URL arguments, such as `nfsport=`, `mountport=`, `uid=`, pass through);
//! the job's files (`filename=`, or fio's generated names `job.N.M`) are paths from the
//! export's root, created when missing. Each job mounts the export on a connection of its own
//! and keeps up to `iodepth` of libnfs's asynchronous reads and writes in flight; the job thread
//! waits on the connection's socket and lets libnfs run the callbacks.
//!
//! Beyond fio 3.33's engine: syncs (`fsync=`, `fdatasync=`, `end_fsync`) are NFSv3 COMMITs
//! (fio fails them), `sync=1` opens with O_SYNC (stable writes), and a job that reads a file
//! that is missing or shorter than its region first lays it out, as fio does for local files
//! (fio's nfs engine fails to open a missing file unless the job is a sequential write).
//! NFSv3 has no discard, so a job that trims is refused before any I/O.
//!
//! libnfs is loaded at run time (`dl/nfs.rs`): on a machine without it a job is refused before
//! any I/O, naming the library and its package. An unreachable server, a missing export or one
//! the server refuses stops the run while it is planned, with the URL and libnfs's reason on one
//! line (fio prints its message and exits 0).

use std::io;
use std::time::Duration;

use crate::dl::nfs::{Mount, Slot};
use crate::dl::Op;
use crate::{Completion, EngineInfo, IoEngine, IoUnit, QueueStatus, RemoteFile};

/// How long the mount, and each call that sets the files up, may take. A server answers in
/// milliseconds; one that accepts and then says nothing must not hold the run.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

fn url(opts: &crate::EngineOpts) -> Result<&str, String> {
    match opts.nfs.url.as_deref() {
        Some(u) if !u.is_empty() => Ok(u),
        _ => Err("ioengine=nfs needs nfs_url= (the export, e.g. nfs://server/export; fio: \"nfs: nfs_url is a required parameter\")".into()),
    }
}

/// The job's files on the export. Mounts once to look, so that a missing library, an
/// unreachable server or a missing export stops the run before any I/O. A file's own size
/// counts only when the job gives none.
fn remote(spec: &fiox_options::JobSpec, _clone: u32, names: &[String]) -> Result<Vec<RemoteFile>, String> {
    let url = url(&spec.engine)?;
    if spec.rw.trims() {
        return Err(format!("ioengine=nfs cannot trim (NFSv3 has no discard), but rw={} trims", spec.rw.name()));
    }
    let mount = Mount::new(url, CONNECT_TIMEOUT)?;
    let sized = spec.size.is_some() || spec.filesize.is_some();
    names
        .iter()
        .map(|n| {
            let size = mount.size_of(n)?;
            Ok(RemoteFile { name: n.clone(), size: size.filter(|_| !sized), written: None, facts: None })
        })
        .collect()
}

/// Varied data for laying files out (not zeros, which a server may store as holes).
fn fill_chunk() -> Vec<u8> {
    let mut chunk = vec![0u8; 1 << 20];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for w in chunk.chunks_exact_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w.copy_from_slice(&x.to_le_bytes());
    }
    chunk
}

/// Mounts the export and opens the job's files, laying out those a reading job finds shorter
/// than its region.
fn open(setup: &crate::Setup<'_>) -> Result<Mount, String> {
    let mut mount = Mount::new(url(setup.opts)?, CONNECT_TIMEOUT)?;
    let extra = if setup.sync { libc::O_SYNC } else { 0 };
    let mut chunk = Vec::new();
    for (path, &want) in setup.paths.iter().zip(setup.sizes) {
        let name = path.to_string_lossy();
        let (file, have) = mount.open(&name, true, extra)?;
        if setup.reads && have < want {
            if chunk.is_empty() {
                chunk = fill_chunk();
            }
            mount
                .fill(file, want, &chunk)
                .map_err(|e| format!("ioengine=nfs: cannot lay out '{name}' ({want} bytes): {e}"))?;
        }
    }
    // The job's own I/O waits as long as the server takes, as with a kernel mount.
    mount.set_call_timeout(None);
    Ok(mount)
}

#[derive(Default)]
struct Nfs {
    /// Declared before `slots`, so that the context (whose teardown may still run callbacks)
    /// goes first.
    mount: Option<Mount>,
    /// One callback argument per unit, at fixed addresses (boxed slice).
    slots: Box<[Slot]>,
    in_flight: u32,
    limit: Option<Duration>,
    taken: Vec<(u32, i64)>,
}

impl IoEngine for Nfs {
    fn init(&mut self, setup: &crate::Setup<'_>) -> io::Result<()> {
        let mut mount = open(setup).map_err(io::Error::other)?;
        self.slots = (0..setup.depth).map(|i| mount.slot(i)).collect();
        self.mount = Some(mount);
        self.taken.reserve(setup.depth as usize);
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let Some(op) = Op::of(io.ddir) else { return Ok(QueueStatus::Completed(-(libc::EINVAL as i64))) };
        let mount = self.mount.as_mut().ok_or_else(|| io::Error::other("nfs: not mounted"))?;
        let Some(slot) = self.slots.get_mut(index as usize) else {
            return Err(io::Error::other(format!("nfs: unit {index} beyond the queue's depth")));
        };
        let slot: *mut Slot = slot;
        // SAFETY: the slot came from this mount and lives in this engine, boxed, until after the
        // mount is gone; the unit is idle until its completion is taken, so its slot is too.
        // For reads and writes the unit's buffer holds at least `len` bytes and is left alone by
        // everyone else until then (the IoQueue's rule).
        match unsafe { mount.start(slot, op, io.file_index, io.buf, io.len, io.offset) } {
            Ok(()) => {
                self.in_flight += 1;
                Ok(QueueStatus::Queued)
            }
            Err(errno) => Ok(QueueStatus::Completed(-(errno as i64))),
        }
    }

    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let Some(mount) = self.mount.as_mut() else { return Ok(()) };
        self.taken.clear();
        let n = mount.take(min, max, self.in_flight, self.limit, &mut self.taken).map_err(io::Error::other)?;
        self.in_flight -= n;
        out.extend(self.taken.iter().map(|&(index, result)| Completion { index, result }));
        Ok(())
    }

    fn set_wait_limit(&mut self, limit: Option<Duration>) {
        self.limit = limit;
    }
}

fn make() -> Box<dyn IoEngine> {
    Box::new(Nfs::default())
}

/// No local file is opened or laid out (`diskless`); the planner asks `remote` for the files.
pub const INFO: EngineInfo =
    EngineInfo { sync: false, diskless: true, remote: Some(remote), ..EngineInfo::base("nfs", make) };
