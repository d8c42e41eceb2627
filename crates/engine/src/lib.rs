//! I/O engines: how a job's I/O reaches the kernel. Each engine is one file in `engines/` and
//! does I/O only; timing, accounting and the queue-depth logic live in the runner, which drives
//! every engine through the same [`IoEngine`] calls (fio's queue / commit / getevents model).
//!
//! Architecture Invariant: this is the only fiox crate with `unsafe` code (system calls, the
//! buffer pool, the io_uring and libaio rings); every other crate forbids it. Each `unsafe` block
//! carries a `// SAFETY:` comment.

use std::io;
use std::os::fd::RawFd;

#[cfg(test)]
mod conformance;
pub mod engines;
pub mod mem;
pub mod sys;

pub use fiox_options::spec::EngineOpts;
pub use mem::{IoBuffers, MemKind};

/// What an I/O unit does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ddir {
    Read = 0,
    Write = 1,
    Trim = 2,
    Sync = 3,
    DataSync = 4,
}

/// One I/O in preparation or in flight. The runner owns a fixed array of these (iodepth of
/// them); an engine refers to a unit by its index, which is also the io_uring/libaio user data.
#[derive(Debug, Clone, Copy)]
pub struct IoUnit {
    pub ddir: Ddir,
    pub fd: RawFd,
    /// Index of the file in the job's file list (registered-file slot for io_uring).
    pub file_index: u32,
    /// Whether the file is a block device (trim uses BLKDISCARD then).
    pub block_device: bool,
    pub offset: u64,
    pub len: u32,
    /// The unit's buffer, from the job's [`IoBuffers`]; valid while the pool lives.
    pub buf: *mut u8,
    /// Bytes transferred, or a negative errno.
    pub result: i64,
    /// I/O priority (`class << 13 | level`) for engines that pass one per I/O; 0: none.
    pub ioprio: u16,
}

/// The answer to [`IoEngine::queue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// Done already; `result` is set (synchronous engines, and trims on ring engines).
    Completed,
    /// Accepted; it completes after `commit`, reported by `getevents`.
    Queued,
    /// The engine cannot take it now; the runner reaps completions and retries.
    Busy,
}

/// A finished I/O: the unit's index and the kernel's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub index: u32,
    pub result: i64,
}

/// What an engine needs to know when it starts.
pub struct Setup<'a> {
    /// The job's open files, in file-index order.
    pub fds: &'a [RawFd],
    /// Size of each file's mapping-relevant extent (what `mmap` maps).
    pub sizes: &'a [u64],
    /// Whether the job writes (files are open read-write).
    pub writes: bool,
    /// The files' paths, in file-index order (the metadata engines work on names).
    pub paths: &'a [std::path::PathBuf],
    pub buffers: &'a IoBuffers,
    pub depth: u32,
    /// Whether the runner always waits for at least one completion (lets io_uring defer task
    /// work to the waiting call).
    pub waits_for_completions: bool,
    pub opts: &'a EngineOpts,
}

/// An I/O engine, driven by one worker thread.
pub trait IoEngine {
    /// Called once, after the files are open and the buffers exist.
    fn init(&mut self, _setup: &Setup<'_>) -> io::Result<()> {
        Ok(())
    }
    /// Starts (or, for synchronous engines, does) one I/O of unit `index`.
    fn queue(&mut self, index: u32, io: &mut IoUnit) -> io::Result<Queued>;
    /// Submits what was queued; returns how many were submitted.
    fn commit(&mut self) -> io::Result<u32> {
        Ok(0)
    }
    /// Waits for at least `min` completions and appends at most `max` to `out`. With a wait
    /// limit set, it may return with fewer once the limit has passed.
    fn getevents(&mut self, _min: u32, _max: u32, _out: &mut Vec<Completion>) -> io::Result<()> {
        Ok(())
    }
    /// Bounds how long one `getevents` call may wait (`None`: as long as it takes). The runner
    /// sets it when the runtime is over, so that a device that stopped answering cannot hold
    /// the job past it.
    fn set_wait_limit(&mut self, _limit: Option<std::time::Duration>) {}
}

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
    pub make: fn() -> Box<dyn IoEngine>,
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
    engines::filemeta::FILECREATE,
    engines::filemeta::FILESTAT,
    engines::filemeta::FILEDELETE,
];

pub fn find(name: &str) -> Option<&'static EngineInfo> {
    ENGINES.iter().find(|e| e.name == name)
}

/// Names of the engines fiox has, for `--enghelp`.
pub fn names() -> Vec<&'static str> {
    ENGINES.iter().map(|e| e.name).collect()
}
