//! `libiscsi`: iSCSI LUNs through libiscsi's initiator, as fio 3.33's libiscsi engine. Each of
//! the job's files is a LUN named by a URL, `iscsi://host[:port]/target-iqn/lun` (each ':'
//! written `\:` in `filename=`, fio's file separator), as large as the target says; `initiator=`
//! is the iSCSI name the job logs in with (fio's default `iqn.2019-04.org.fio:fio`). Each job
//! logs in to each of its LUNs on its own connection. Reads and writes are READ(16) and
//! WRITE(16) in whole blocks, and syncs (`fsync=` and friends) SYNCHRONIZE CACHE(16), all
//! libiscsi's asynchronous commands, up to `iodepth` in flight; the job thread polls the
//! sockets and lets libiscsi run. Trims fail with EINVAL, as in fio (it sends no UNMAP).
//!
//! libiscsi is loaded at run time (`dl/iscsi.rs`): on a machine without it a job is refused
//! before any I/O, naming the library and its package. An unreachable or refusing target, a
//! missing LUN, and block sizes or offsets that are not whole blocks of the LUN stop the run
//! while it is planned, with the URL and the reason on one line.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use crate::dl::iscsi::Session;
use crate::dl::Op;
use crate::{Completion, EngineInfo, IoEngine, IoUnit, QueueStatus, RemoteFile};
use fiox_options::spec::SizeSpec;

/// How long a login (and the first command) may take. A target answers in milliseconds; one
/// that accepts the connection and then says nothing must not hold the run.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The job's LUNs, each with its size. Logs in once to look, so that a missing library, an
/// unreachable or refusing target, a missing LUN, or I/O sizes the LUN cannot take stop the
/// run before any I/O.
fn remote(spec: &fiox_options::JobSpec, _clone: u32, names: &[String]) -> Result<Vec<RemoteFile>, String> {
    names
        .iter()
        .map(|n| {
            let s = Session::connect(n, &spec.engine.libiscsi.initiator, CONNECT_TIMEOUT)?;
            whole_blocks(spec, &crate::dl::iscsi::without_password(n), s.block_size())?;
            Ok(RemoteFile { name: n.clone(), size: Some(s.size()), written: None, facts: None })
        })
        .collect()
}

/// Every block size and offset the job can issue is a whole number of the LUN's blocks: a
/// SCSI command addresses blocks. fio 3.33 fails the job's first such I/O (error -1); fiox
/// says so before any I/O.
fn whole_blocks(spec: &fiox_options::JobSpec, url: &str, block: u64) -> Result<(), String> {
    let dirs = [spec.rw.reads() || spec.verify.is_some(), spec.rw.writes(), spec.rw.trims()];
    let mut sizes: Vec<(&str, u64)> = Vec::new();
    for d in (0..3).filter(|&d| dirs[d]) {
        match (&spec.bsrange[d], spec.bssplit[d].is_empty()) {
            (Some((lo, hi)), _) => sizes.extend([("bsrange", *lo), ("bsrange", *hi)]),
            (None, false) => sizes.extend(spec.bssplit[d].iter().map(|e| ("bssplit", e.0))),
            (None, true) => sizes.push(("bs", spec.bs[d])),
        }
    }
    if let SizeSpec::Bytes(b) = spec.offset {
        sizes.push(("offset", b));
    }
    if let SizeSpec::Bytes(b) = spec.offset_increment {
        sizes.push(("offset_increment", b));
    }
    if spec.bs_unaligned && spec.bsrange.iter().any(Option::is_some) {
        return Err(format!(
            "ioengine=libiscsi: bs_unaligned=1 issues sizes that are not whole blocks of filename={url} ({block} bytes each)"
        ));
    }
    match sizes.into_iter().find(|&(_, v)| v % block != 0) {
        Some((name, v)) => Err(format!(
            "ioengine=libiscsi: {name}={v} is not a multiple of the block size of filename={url} ({block} bytes): SCSI commands address whole blocks"
        )),
        None => Ok(()),
    }
}

#[derive(Default)]
struct Libiscsi {
    /// One session per file, in file-index order.
    sessions: Vec<Session>,
    /// The length of each unit's command in flight (libiscsi answers with a status only; the
    /// runner counts bytes).
    lens: Vec<u32>,
    /// Why each unit's last command failed, in the target's words, until the runner asks.
    why: Vec<Option<String>>,
    /// Finished commands not yet handed to the runner (it may ask for fewer than are done).
    ready: VecDeque<Completion>,
    limit: Option<Duration>,
}

impl Libiscsi {
    /// Moves what the sessions finished to `ready`.
    fn collect(&mut self) {
        for s in &mut self.sessions {
            for d in s.take_done() {
                let index = d.tag as u32;
                let result = match d.result {
                    Ok(()) => self.lens[index as usize] as i64,
                    Err((errno, why)) => {
                        self.why[index as usize] = Some(why);
                        -(errno as i64)
                    }
                };
                self.ready.push_back(Completion { index, result });
            }
        }
    }

    /// Waits (at most `limit`) for any session with commands in flight, and lets libiscsi
    /// act. `Ok(false)`: nothing happened before the limit, or a signal came.
    fn wait(&mut self) -> io::Result<bool> {
        let busy: Vec<usize> = (0..self.sessions.len()).filter(|&i| self.sessions[i].in_flight() > 0).collect();
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(busy.len());
        let mut whom = Vec::with_capacity(busy.len());
        for &i in &busy {
            if let Some(p) = self.sessions[i].wants() {
                fds.push(p);
                whom.push(i);
            }
        }
        let ms = self.limit.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as i32);
        if fds.is_empty() {
            // libiscsi wants nothing of any socket now: look again in 100 ms, as it advises.
            std::thread::sleep(Duration::from_millis(100).min(self.limit.unwrap_or(Duration::MAX)));
            for &i in &busy {
                self.sessions[i].serve(0).map_err(io::Error::other)?;
            }
            return Ok(true);
        }
        // SAFETY: `fds` is a live array of `fds.len()` pollfds.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return if e.raw_os_error() == Some(libc::EINTR) { Ok(false) } else { Err(e) };
        }
        if r == 0 {
            return Ok(false);
        }
        for (p, &i) in fds.iter().zip(&whom) {
            if p.revents != 0 {
                // A broken connection: libiscsi fails the commands in flight (their callbacks
                // run), which are then reaped as those I/Os' errors, as fio reports them. Only
                // if none finished is the run's error the connection's.
                if let Err(e) = self.sessions[i].serve(p.revents) {
                    self.collect();
                    if self.ready.is_empty() {
                        return Err(io::Error::other(format!("libiscsi: {e}")));
                    }
                }
            }
        }
        Ok(true)
    }
}

impl IoEngine for Libiscsi {
    fn init(&mut self, setup: &crate::Setup<'_>) -> io::Result<()> {
        for path in setup.paths {
            let url = path.to_string_lossy();
            let s =
                Session::connect(&url, &setup.opts.libiscsi.initiator, CONNECT_TIMEOUT).map_err(io::Error::other)?;
            self.sessions.push(s);
        }
        self.lens = vec![0; setup.depth as usize];
        self.why = vec![None; setup.depth as usize];
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let Some(op) = Op::of(io.ddir) else { return Ok(QueueStatus::Completed(-(libc::EINVAL as i64))) };
        let s = self
            .sessions
            .get_mut(io.file_index as usize)
            .ok_or_else(|| io::Error::other(format!("libiscsi: no session for file {}", io.file_index)))?;
        // SAFETY: for reads and writes the unit's buffer holds at least `len` bytes and is left
        // alone by everyone else until this unit's completion is reaped (the IoQueue's rule),
        // which happens only after libiscsi reported the command done.
        match unsafe { s.start(op, index as u64, io.buf, io.len, io.offset) } {
            Ok(()) => {
                self.lens[index as usize] = io.len;
                Ok(QueueStatus::Queued)
            }
            Err((errno, why)) => {
                self.why[index as usize] = Some(why);
                Ok(QueueStatus::Completed(-(errno as i64)))
            }
        }
    }

    fn commit(&mut self) -> io::Result<u32> {
        // libiscsi sends each command from `iscsi_service` as the socket takes it; the wait in
        // `getevents` drives it.
        Ok(0)
    }

    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let mut got = 0u32;
        loop {
            self.collect();
            while got < max {
                let Some(c) = self.ready.pop_front() else { break };
                out.push(c);
                got += 1;
            }
            let in_flight = self.sessions.iter().any(|s| s.in_flight() > 0);
            if got >= min || got >= max || (!in_flight && self.ready.is_empty()) {
                return Ok(());
            }
            if !self.wait()? {
                // The wait limit passed or a signal came; the runner decides what next.
                return Ok(());
            }
        }
    }

    fn set_wait_limit(&mut self, limit: Option<Duration>) {
        self.limit = limit;
    }

    fn error_detail(&mut self, index: u32) -> Option<crate::ErrorDetail> {
        self.why.get_mut(index as usize).and_then(Option::take).map(crate::ErrorDetail::Inline)
    }
}

fn make() -> Box<dyn IoEngine> {
    Box::new(Libiscsi::default())
}

/// No local file is opened or laid out (`diskless`); the planner asks `remote` for the LUNs.
pub const INFO: EngineInfo =
    EngineInfo { sync: false, diskless: true, remote: Some(remote), ..EngineInfo::base("libiscsi", make) };
