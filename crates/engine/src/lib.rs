//! I/O engines: how a job's I/O reaches the kernel. Each engine is one file in `engines/` and
//! does I/O only; timing, accounting and the queue-depth logic live in the runner. The runner
//! drives an engine only through an [`IoQueue`] (`queue.rs`), which owns the engine, the I/O
//! units and their buffers, and knows which units are idle and which the kernel holds. Engines
//! follow fio's queue / commit / getevents model (the crate-private `IoEngine` trait).
//!
//! Architecture Invariant: this is the only fiox crate with `unsafe` code (system calls, the
//! buffer pool, the io_uring and libaio rings); every other crate forbids it. Each `unsafe` block
//! carries a `// SAFETY:` comment (clippy enforces it). No raw pointer crosses this crate's
//! public interface: a buffer's address exists only inside it, so no bug in the runner can make
//! the kernel write into memory that was freed or handed out again.
#![deny(clippy::undocumented_unsafe_blocks)]

use std::io;
use std::os::fd::RawFd;

mod ceph;
#[cfg(test)]
mod conformance;
mod dl;
mod engines;
mod map;
mod mem;
mod queue;
pub mod sigv4;
pub mod sys;
pub mod zoned;

pub use ceph::client::{
    create_image as ceph_create_image, remove_image as ceph_remove_image, Finish, ImageClient, PoolClient, WriteParts,
};
pub use ceph::errno_text as ceph_errno_text;
pub use ceph::facts as ceph_facts;
pub use fiox_options::spec::EngineOpts;
pub use fiox_options::MemKind;
pub use queue::{Io, IoQueue, QueueConfig, QueueError};

/// What an I/O unit does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ddir {
    Read = 0,
    Write = 1,
    Trim = 2,
    Sync = 3,
    DataSync = 4,
    /// sync_file_range(2) over what the file's writes completed since its last sync (fio's
    /// `sync_file_range`). The [`IoQueue`] does it itself, for every engine, as fio's engines
    /// do it with the same synchronous call: engines never see one.
    SyncRange = 5,
}

/// One I/O as an engine sees it. The [`IoQueue`] owns a fixed array of these (iodepth of them)
/// and fills one in for each I/O; an engine refers to a unit by its index, which is also the
/// io_uring/libaio user data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IoUnit {
    pub(crate) ddir: Ddir,
    pub(crate) fd: RawFd,
    /// Index of the file in the job's file list (registered-file slot for io_uring).
    pub(crate) file_index: u32,
    /// Whether the file is a block device (trim uses BLKDISCARD then).
    pub(crate) block_device: bool,
    pub(crate) offset: u64,
    pub(crate) len: u32,
    /// The unit's buffer in the queue's pool: at least `len` bytes for reads and writes (the
    /// queue checks), untouched by anyone else from `queue` until the unit's completion is reaped.
    pub(crate) buf: *mut u8,
    /// I/O priority (`class << 13 | level`) for engines that pass one per I/O; 0: none.
    pub(crate) ioprio: u16,
}

/// The answer to queueing an I/O (fio's `fio_q_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueStatus {
    /// Done already, with this result: bytes moved or a negative errno (synchronous engines,
    /// trims on ring engines, the null engine at depth 1).
    Completed(i64),
    /// Accepted; it completes after `commit`, reported by `reap`.
    Queued,
    /// The engine cannot take it now; reap completions and try again.
    Busy,
}

/// A finished I/O: the unit's index and the kernel's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub index: u32,
    pub result: i64,
}

/// What an engine needs to know when it starts.
pub(crate) struct Setup<'a> {
    /// The job's open files, in file-index order.
    pub fds: &'a [RawFd],
    /// Size of each file's mapping-relevant extent (what `mmap` maps).
    pub sizes: &'a [u64],
    /// Whether the job writes (files are open read-write).
    pub writes: bool,
    /// Whether the job reads (verification reads aside): engines that lay out their own files
    /// (gfapi) fill a short file first, as fio does.
    pub reads: bool,
    /// The files' paths, in file-index order (the metadata engines work on names).
    pub paths: &'a [std::path::PathBuf],
    pub buffers: &'a mem::IoBuffers,
    pub depth: u32,
    /// Whether the runner always waits for at least one completion (lets io_uring defer task
    /// work to the waiting call).
    pub waits_for_completions: bool,
    pub opts: &'a EngineOpts,
    /// The job's name and runtime (microseconds, 0: none): exec's `%n` and `%r`.
    pub job_name: &'a str,
    pub runtime_us: u64,
    /// Which of the job's `numjobs` clones this is (0-based).
    pub clone: u32,
    /// `direct` and `invalidate` for engines that apply them themselves (rbd: no cache, and
    /// dropping librbd's cache).
    pub direct: bool,
    pub invalidate: bool,
    /// `sync` (O_SYNC or O_DSYNC), for engines that apply it themselves (libpmem drains after
    /// each write).
    pub sync: bool,
}

/// An I/O engine, driven by one worker thread through its [`IoQueue`].
pub(crate) trait IoEngine {
    /// Called once, after the files are open and the buffers exist.
    fn init(&mut self, _setup: &Setup<'_>) -> io::Result<()> {
        Ok(())
    }
    /// Starts (or, for synchronous engines, does) one I/O of unit `index`.
    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus>;
    /// Submits what was queued; returns how many were submitted. An engine may leave the system
    /// call to the next reap (io_uring folds it into the wait), so a caller reaps after committing
    /// before it waits on anything else.
    fn commit(&mut self) -> io::Result<u32> {
        Ok(0)
    }
    /// Waits for at least `min` completions and appends at most `max` to `out`. It may return
    /// with fewer once a wait limit has passed or when a signal interrupts the wait.
    fn getevents(&mut self, _min: u32, _max: u32, _out: &mut Vec<Completion>) -> io::Result<()> {
        Ok(())
    }
    /// Bounds how long one `getevents` call may wait (`None`: as long as it takes). The runner
    /// sets it when the runtime is over, so that a device that stopped answering cannot hold
    /// the job past it.
    fn set_wait_limit(&mut self, _limit: Option<std::time::Duration>) {}
    /// No-I/O engines (cpuio, exec): how long the job pauses after each of its "I/Os", in
    /// nanoseconds. That pause is what sets the engine's duty cycle.
    fn think_ns(&self) -> u64 {
        0
    }
    /// The line the engine prints when the job starts (cpuio, exec), if any.
    fn banner(&self) -> Option<String> {
        None
    }
    /// Called once when the job's time is up, before the queue is dropped. Returns true when
    /// the work it did counts as one more I/O (exec's stopping of its program, as fio counts it).
    fn finish(&mut self) -> bool {
        false
    }
    /// The peer has ended the stream (net: the sender closed, or sent its close message). An
    /// I/O that then moves nothing ends the job instead of failing it.
    fn peer_done(&self) -> bool {
        false
    }
    /// Asked once the peer has ended: whether the I/O that saw the end counts as one I/O of no
    /// bytes (rdma's passive server, whose wait for the client's end fio counts so).
    fn end_counts(&mut self) -> bool {
        false
    }
    /// Why unit `index`'s last I/O failed beyond its errno, in the engine's words, given once
    /// (sg: the SCSI status and sense data; http: the request, the status and the server's error
    /// code); `None`: the errno says it all.
    fn error_detail(&mut self, _index: u32) -> Option<ErrorDetail> {
        None
    }
    /// The kernel features the engine set up and that took effect (io_uring's setup flags and
    /// registrations), for the report; empty for engines without any.
    fn features(&self) -> Vec<&'static str> {
        Vec::new()
    }
}

/// An engine's account of a failed I/O, and where the runner prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorDetail {
    /// Appended to the `io_u error` line in parentheses (http's request and status).
    Inline(String),
    /// Lines of their own after the `io_u error` line, as fio prints sg's sense data.
    Lines(String),
    /// The error is the device's status, not an errno (io_uring_cmd: an NVMe status): the
    /// `io_u error` line says `Device-specific error`, as fio 3.42's does, and these lines
    /// follow it.
    Device(String),
    /// fio reports the error as one of the engine's steps (`func=mtd_erase`), with no `io_u
    /// error` line; `line`, the engine's account of it, goes before the error line.
    Step { func: &'static str, line: Option<String> },
}

/// What the planner knows of a job when it asks an engine whether the job can run here.
pub type Preflight = fn(&fiox_options::JobSpec) -> Result<(), String>;

/// A file of an engine whose files live on a server (rbd: the image; rados: one object per
/// file): its name, and its size when it exists and has one of its own (an image).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteFile {
    pub name: String,
    pub size: Option<u64>,
    /// For a job that reads a thin image: the extents ever written (reads elsewhere return
    /// zeros without disk I/O, which the planner warns about).
    pub written: Option<Vec<(u64, u64)>>,
    /// What the run manifest reports about the cluster (a Ceph engine's first file only).
    pub facts: Option<Box<ceph::facts::Facts>>,
}

/// Asks such an engine for clone `clone`'s files, given the names the planner made of the
/// job's `filename=`/`directory=` or fio's generated names. It may connect to the server to
/// look, so that what is missing (library, configuration, server, pool, image) stops the run
/// before any I/O; the error is one line.
pub type Remote = fn(&fiox_options::JobSpec, u32, &[String]) -> Result<Vec<RemoteFile>, String>;

/// Size in bytes and logical block size of a character device an engine drives; the error is
/// one line.
pub type DeviceSize = fn(&std::path::Path) -> Result<(u64, u64), String>;

/// A registry entry.
#[derive(Debug)]
pub struct EngineInfo {
    pub name: &'static str,
    /// Synchronous engines complete every I/O inside `queue`; they have no submission latency.
    pub sync: bool,
    /// The engine touches no files (null).
    pub diskless: bool,
    /// Each I/O is an operation on a whole file (filecreate, filestat, filedelete); the runner
    /// neither opens the files nor moves data.
    pub metadata: bool,
    /// The engine creates the job's files itself (filecreate), so they are not laid out first.
    pub creates_files: bool,
    /// The engine changes the file whatever the direction (falloc: a read reserves space), so
    /// its files are opened for writing.
    pub writes_any_direction: bool,
    /// The engine moves no data (cpuio, exec): each "I/O" is counted as a read of no bytes, the
    /// job has no file, and its report has no direction block, as in fio.
    pub no_io: bool,
    /// The engine talks to a peer over a socket (net, netsplice) instead of opening files.
    pub network: bool,
    /// Checks that the job can run on this machine (devices, libraries, required options),
    /// made when the run is planned, before any file is laid out. The error is one line that
    /// says what is missing.
    pub preflight: Option<Preflight>,
    /// The engine's files are on a server (rbd, rados): nothing local is opened or laid out
    /// (the entry is also `diskless`), but the data is real, so reads are verified.
    pub remote: Option<Remote>,
    /// The engine drives character devices of its own kind (io_uring_cmd: /dev/ngXnY; sg:
    /// /dev/sgN) and tells their size in bytes and their logical block size, which the planner
    /// uses as it uses a block device's. Such files are never laid out, created or removed.
    pub device_size: Option<DeviceSize>,
    /// fio prints "Prepopulating IO file" for each of the job's files instead of "Laying out
    /// IO file" (libpmem, whose engine prepares its files itself in fio).
    pub prepopulates: bool,
    /// Committing and reaping are operations on the engine's own memory that never make a
    /// system call or wait (null): the runner may date a commit by the clock reading it takes
    /// right after the reap that follows it (see the runner's `submit`).
    pub instant: bool,
    /// The engine only lets the kernel write a read's data into the unit's buffer and never
    /// reads the buffer itself (libaio, io_uring, posixaio): a job whose reads' data nobody
    /// looks at may give all its units one buffer (`QueueConfig::share_read_buffers`). An
    /// engine that checks what it read (io_uring_cmd's protection information), copies it
    /// elsewhere or names buffers by address keeps one per unit.
    pub shares_read_buffers: bool,
    pub(crate) make: fn() -> Box<dyn IoEngine>,
}

/// Every engine fiox has, by fio's names.
pub static ENGINES: &[EngineInfo] = &[
    engines::sync::SYNC,
    engines::sync::PSYNC,
    engines::sync::VSYNC,
    engines::sync::PVSYNC,
    engines::sync::PVSYNC2,
    engines::libaio::INFO,
    engines::io_uring::INFO,
    engines::posixaio::INFO,
    engines::mmap::INFO,
    engines::null::INFO,
    engines::falloc::INFO,
    engines::ftruncate::INFO,
    engines::filemeta::FILECREATE,
    engines::filemeta::FILESTAT,
    engines::filemeta::FILEDELETE,
    engines::cpuio::INFO,
    engines::exec::INFO,
    engines::splice::INFO,
    engines::e4defrag::INFO,
    engines::net::NET,
    engines::net::NETSPLICE,
    engines::sg::INFO,
    engines::io_uring_cmd::INFO,
    engines::dev_dax::INFO,
    engines::libpmem::INFO,
    engines::pmemblk::INFO,
    engines::mtd::INFO,
    engines::nbd::INFO,
    engines::libiscsi::INFO,
    engines::nfs::INFO,
    engines::rdma::INFO,
    engines::gfapi::GFAPI,
    engines::gfapi::GFAPI_ASYNC,
    engines::rados::INFO,
    engines::rbd::INFO,
    engines::http::INFO,
    engines::libblkio::INFO,
];

impl EngineInfo {
    /// An engine entry with every flag off: engines spell out only what differs.
    pub(crate) const fn base(name: &'static str, make: fn() -> Box<dyn IoEngine>) -> EngineInfo {
        EngineInfo {
            name,
            sync: true,
            diskless: false,
            metadata: false,
            creates_files: false,
            writes_any_direction: false,
            no_io: false,
            network: false,
            preflight: None,
            remote: None,
            device_size: None,
            prepopulates: false,
            instant: false,
            shares_read_buffers: false,
            make,
        }
    }
}

pub fn find(name: &str) -> Option<&'static EngineInfo> {
    ENGINES.iter().find(|e| e.name == name)
}

/// Names of the engines fiox has, for `--enghelp`.
pub fn names() -> Vec<&'static str> {
    ENGINES.iter().map(|e| e.name).collect()
}

#[cfg(test)]
mod tests {
    use fiox_options::table::{self, Kind};

    /// Engine facts are typed and checked against the option table, so a renamed engine or a
    /// typo in an engine option's owner list fails here rather than at a user's run.
    #[test]
    fn engines_and_the_option_table_agree() {
        let Kind::Choice(words) = table::lookup("ioengine").unwrap().kind else { panic!("ioengine is a choice") };
        let is_word = |name: &str| words.iter().any(|c| c.word == name);
        for e in super::ENGINES {
            assert!(is_word(e.name), "engine {} is not an ioengine choice", e.name);
        }
        for def in table::all() {
            for &owner in def.engines {
                assert!(is_word(owner), "option {} names an unknown engine {owner}", def.name);
                assert!(
                    super::find(owner).is_some(),
                    "option {} belongs to {owner}, which is not registered",
                    def.name
                );
            }
        }
    }
}
