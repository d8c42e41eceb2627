//! Multi-host runs (fio's client/server, on fiox's own protocol from `fiox-multihost`):
//! `server.rs` runs jobs for a coordinator with the ordinary runner, `coordinator.rs` drives
//! the hosts (prepare everywhere, clock probes, a corrected start barrier, liveness) through
//! its phases, `fleet.rs` is what it knows of each host and the clients report made of that,
//! `observe.rs` the run's watchers (live page, status line, status reports) as
//! `runner::RunObserver`s of the fleet, and `merge.rs` turns the hosts' reports into fio's
//! "All clients" and the client layout the report crate prints; `eta.rs` is the status line
//! of every host together.

pub mod coordinator;
mod eta;
mod fleet;
mod merge;
mod observe;
mod policy;
pub mod server;

use std::io::Write;
use std::sync::{Arc, Mutex};

use fiox_multihost::msg::{self, HostFacts, Msg};

/// A duplex's write half shared by the threads that send (replies, heartbeats, intervals).
#[derive(Clone)]
pub(crate) struct Sender(Arc<Mutex<Box<dyn Write + Send>>>);

impl Sender {
    pub fn new(w: Box<dyn Write + Send>) -> Sender {
        Sender(Arc::new(Mutex::new(w)))
    }

    pub fn send(&self, m: &Msg) -> std::io::Result<()> {
        let mut w = self.0.lock().map_err(|_| std::io::Error::other("sender lock poisoned"))?;
        msg::send(&mut **w, m)
    }
}

/// A duplex's close, callable from any thread (a watchdog releasing a blocked reader).
#[derive(Clone)]
pub(crate) struct Closer(Arc<Mutex<Box<dyn FnMut() + Send>>>);

impl Closer {
    pub fn new(f: Box<dyn FnMut() + Send>) -> Closer {
        Closer(Arc::new(Mutex::new(f)))
    }

    pub fn close(&self) {
        if let Ok(mut f) = self.0.lock() {
            (f)();
        }
    }
}

/// This machine as a Welcome describes it.
pub(crate) fn host_facts() -> HostFacts {
    let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_default();
    let (_, cpus, _) = fiox_engine::sys::machine();
    HostFacts {
        hostname: read("/proc/sys/kernel/hostname"),
        os: "Linux".into(),
        arch: std::env::consts::ARCH.replace('_', "-"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpus,
        bigendian: cfg!(target_endian = "big"),
        bits: usize::BITS,
    }
}

/// fio's probe line for a host (`hostname=vm, be=0, 64-bit, os=Linux, arch=x86-64, fio=...`),
/// naming fiox and the protocol version where fio names its build and flags.
pub(crate) fn probe_line(h: &HostFacts, fiox_version: &str, proto: u32) -> String {
    format!(
        "hostname={}, be={}, {}-bit, os={}, arch={}, fiox=fiox-{} (fio-3.33 compatible), proto={}",
        h.hostname, h.bigendian as u8, h.bits, h.os, h.arch, fiox_version, proto
    )
}

/// The coordinator's and the servers' clock: CLOCK_MONOTONIC in ns.
pub(crate) fn mono_ns() -> u64 {
    fiox_engine::sys::monotonic_ns()
}

/// Wall-clock time in ns since the epoch.
pub(crate) fn wall_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}
