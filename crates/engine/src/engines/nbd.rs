//! `nbd`: an NBD export through libnbd, as fio 3.33's nbd engine (`uri=`, libnbd's URI forms:
//! `nbd://host[:port][/export]`, `nbd+unix:///?socket=PATH`). Every job file is the export, as
//! large as the server says; each job opens a connection of its own. Reads, writes, trims and
//! flushes (`fsync=` and friends) are libnbd's asynchronous commands, up to `iodepth` of them
//! in flight; the job thread waits in `nbd_poll` for the server's replies.
//!
//! libnbd is loaded at run time (`dl/nbd.rs`): on a machine without it a job is refused before
//! any I/O, naming the library and its package. An unreachable or refusing server stops the run
//! while it is planned, with the URI and libnbd's reason on one line.

use std::io;
use std::time::Duration;

use crate::dl::nbd::{Handle, Op, Polled};
use crate::{Completion, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, RemoteFile};

/// How long a connection may take, handshake included. A server on the network answers in
/// milliseconds; one that accepts and then says nothing must not hold the run.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

fn uri(opts: &crate::EngineOpts) -> Result<&str, String> {
    match opts.nbd.uri.as_deref() {
        Some(u) if !u.is_empty() => Ok(u),
        _ => Err("ioengine=nbd needs uri= (the export, e.g. nbd://localhost/disk or nbd+unix:///?socket=/run/nbd.sock; fio: \"nbd: uri parameter was not specified\")".into()),
    }
}

/// The job's files, each the whole export. Connects once to look, so that a missing library,
/// an unreachable or refusing server, or a read-only export a job would write stops the run
/// before any I/O.
fn remote(spec: &fiox_options::JobSpec, _clone: u32, names: &[String]) -> Result<Vec<RemoteFile>, String> {
    let uri = uri(&spec.engine)?;
    let h = Handle::connect(uri, CONNECT_TIMEOUT)?;
    let size = h.size()?;
    if h.read_only() && (spec.rw.writes() || spec.rw.trims()) {
        return Err(format!("ioengine=nbd: the server serves uri={uri} read-only, but rw={} writes", spec.rw.name()));
    }
    Ok(names.iter().map(|n| RemoteFile { name: n.clone(), size: Some(size), written: None, facts: None }).collect())
}

#[derive(Default)]
struct Nbd {
    handle: Option<Handle>,
    /// The commands in flight: cookie, unit and the unit's length (libnbd answers a finished
    /// command with success only; the runner counts bytes).
    flight: Vec<(u64, u32, u32)>,
    limit: Option<Duration>,
}

impl IoEngine for Nbd {
    fn init(&mut self, setup: &crate::Setup<'_>) -> io::Result<()> {
        let uri = uri(setup.opts).map_err(io::Error::other)?;
        self.handle = Some(Handle::connect(uri, CONNECT_TIMEOUT).map_err(io::Error::other)?);
        self.flight.reserve(setup.depth as usize);
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let h = self.handle.as_ref().ok_or_else(|| io::Error::other("nbd: not connected"))?;
        let op = match io.ddir {
            Ddir::Read => Op::Read,
            Ddir::Write => Op::Write,
            Ddir::Trim => Op::Trim,
            Ddir::Sync | Ddir::DataSync => Op::Flush,
            Ddir::SyncRange => return Ok(QueueStatus::Completed(-(libc::EINVAL as i64))),
        };
        // SAFETY: for reads and writes the unit's buffer holds at least `len` bytes and is left
        // alone by everyone else until this unit's completion is reaped (the IoQueue's rule),
        // which happens only after libnbd retired the command.
        match unsafe { h.start(op, io.buf, io.len, io.offset) } {
            Ok(cookie) => {
                self.flight.push((cookie, index, io.len));
                Ok(QueueStatus::Queued)
            }
            Err((errno, _)) => Ok(QueueStatus::Completed(-(errno as i64))),
        }
    }

    fn commit(&mut self) -> io::Result<u32> {
        // libnbd sends each command as it is started; there is nothing left to submit.
        Ok(0)
    }

    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let Some(h) = self.handle.as_ref() else { return Ok(()) };
        let mut got = 0u32;
        loop {
            while got < max {
                let Some(cookie) = h.next_finished() else { break };
                let Some(at) = self.flight.iter().position(|f| f.0 == cookie) else {
                    return Err(io::Error::other(format!(
                        "nbd: libnbd finished command {cookie}, which fiox did not start"
                    )));
                };
                let (_, index, len) = self.flight.swap_remove(at);
                let result = match h.completed(cookie) {
                    Ok(()) => len as i64,
                    Err((errno, _)) => -(errno as i64),
                };
                out.push(Completion { index, result });
                got += 1;
            }
            if got >= min || got >= max || self.flight.is_empty() {
                return Ok(());
            }
            match h.poll(self.limit) {
                Ok(Polled::Progress) => {}
                // The wait limit passed or a signal came; the runner decides what next.
                Ok(Polled::Idle) => return Ok(()),
                // The connection died: libnbd fails the commands in flight (ENOTCONN and the
                // like), which the next pass reaps as the I/Os' errors, as fio reports them.
                // Only if none is left to reap is the run's error the connection's.
                Err(e) if h.next_finished().is_none() => return Err(io::Error::other(e)),
                Err(_) => {}
            }
        }
    }

    fn set_wait_limit(&mut self, limit: Option<Duration>) {
        self.limit = limit;
    }
}

fn make() -> Box<dyn IoEngine> {
    Box::new(Nbd::default())
}

/// No local file is opened or laid out (`diskless`); the planner asks `remote` for the export.
pub const INFO: EngineInfo =
    EngineInfo { sync: false, diskless: true, remote: Some(remote), ..EngineInfo::base("nbd", make) };
