//! `rdma`: the job's I/O crosses an RDMA reliable connection (InfiniBand, RoCE, iWARP; the
//! kernel's soft-RoCE `rdma_rxe` in the tests) to another job, fio's or fiox's. libibverbs and
//! librdmacm are loaded at run time (`dl/rdma.rs`).
//!
//! The job with `hostname` is the client: it connects to `hostname`:`port` (from `bindname`
//! when given) and drives the I/O with its `verb`: `write` and `read` are RDMA writes into and
//! reads from the server's buffers, which the server's CPU never sees; `send` sends each block
//! as a message the server receives. The job without `hostname` is the server: it listens on
//! `port` and follows the client's verb. Each side counts its I/O in its own job's direction.
//!
//! The exchange, as observed between two fio 3.33 processes (a receiver posted in place of one
//! of them dumped what it got), and as fiox does it so that either end may be fio:
//! - no private data in the connection request;
//! - the client sends one 8208-byte message: a 16-byte head (its verb: 1 write, 2 read, 3
//!   send; the number of buffers; the block size; 0), then 512 slots of 16 bytes (address,
//!   remote key, length), the first `iodepth` filled, all big-endian;
//! - the server answers with the same message about its own buffers, verb 0;
//! - `write`/`read`: the client writes or reads the server's buffers and, when done, sends its
//!   first message again, which ends the server's job; `send`: each block is one message, and
//!   the server's job ends when it has received its size (or the client disconnects).
//!
//! A passive server (write, read) moves no data itself: its wait for the client's closing
//! message is its one I/O, of no bytes and with no latency sample, as fio reports it.
//!
//! fio gives every clone of a job (`numjobs`) the same port, and so does fiox: a second server
//! clone cannot listen there and fails, and a server turns away the connection requests that
//! come once it serves a client (further client clones), so that they fail at once.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::dl::rdma::{self as ib, Endpoint, Op, Region};
use crate::{Completion, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

/// The buffer-list message: a 16-byte head and 512 slots of 16 bytes.
const SLOTS: usize = 512;
const MSG_LEN: usize = 16 + SLOTS * 16;
/// Work-request ids of the control messages (data I/Os use their unit's index).
const CTRL_RECV: u64 = u64::MAX - 1;
const CTRL_SEND: u64 = u64::MAX - 2;
/// How long a control message may take.
const CTRL_WAIT: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verb {
    Write = 1,
    Read = 2,
    Send = 3,
}

impl Verb {
    fn from_code(c: u32) -> Option<Verb> {
        match c {
            1 => Some(Verb::Write),
            2 => Some(Verb::Read),
            3 => Some(Verb::Send),
            _ => None,
        }
    }
}

/// One slot of the list: a buffer's address, remote key and length.
type Slot = (u64, u32, u32);

fn encode(verb: u32, block: u32, slots: &[Slot], out: &mut [u8]) {
    out.fill(0);
    out[0..4].copy_from_slice(&verb.to_be_bytes());
    out[4..8].copy_from_slice(&(slots.len() as u32).to_be_bytes());
    out[8..12].copy_from_slice(&block.to_be_bytes());
    for (i, (addr, key, len)) in slots.iter().take(SLOTS).enumerate() {
        let s = &mut out[16 + i * 16..32 + i * 16];
        s[0..8].copy_from_slice(&addr.to_be_bytes());
        s[8..12].copy_from_slice(&key.to_be_bytes());
        s[12..16].copy_from_slice(&len.to_be_bytes());
    }
}

fn decode(msg: &[u8]) -> Result<(u32, Vec<Slot>), String> {
    if msg.len() < 16 {
        return Err(format!("the peer's buffer list is {} bytes, too short", msg.len()));
    }
    let word = |at: usize| u32::from_be_bytes(msg[at..at + 4].try_into().unwrap());
    let n = word(4) as usize;
    if n > SLOTS || msg.len() < 16 + n * 16 {
        return Err(format!("the peer's buffer list names {n} buffers in {} bytes", msg.len()));
    }
    let slots = (0..n)
        .map(|i| {
            let s = &msg[16 + i * 16..32 + i * 16];
            (u64::from_be_bytes(s[0..8].try_into().unwrap()), word(24 + i * 16), word(28 + i * 16))
        })
        .collect();
    Ok((word(0), slots))
}

/// The control messages' memory: one to send, one to receive.
struct Ctrl {
    mem: Box<[u8]>,
    region: Option<Region>,
}

impl Ctrl {
    fn new() -> Ctrl {
        Ctrl { mem: vec![0u8; 2 * MSG_LEN].into_boxed_slice(), region: None }
    }
    fn send_addr(&self) -> u64 {
        self.mem.as_ptr() as u64
    }
    fn recv_addr(&self) -> u64 {
        self.mem.as_ptr() as u64 + MSG_LEN as u64
    }
}

#[derive(Default)]
pub struct Rdma {
    ep: Option<Endpoint>,
    server: bool,
    /// The client's verb, or (server) the one the client announced.
    verb: Option<Verb>,
    ctrl: Option<Ctrl>,
    pool: Option<Region>,
    units: Vec<(u64, usize)>,
    depth: u32,
    /// The peer's buffers, and the next one to use.
    remote: Vec<Slot>,
    next: usize,
    /// Control completions that came while another was awaited.
    ctrl_done: Vec<(u64, u32)>,
    /// Units whose work request is out.
    busy: u32,
    /// Per unit: the length of its I/O in flight.
    lens: Vec<u32>,
    /// Per unit: the completion status that failed it.
    failed: Vec<Option<i32>>,
    /// The peer has ended the exchange.
    ended: bool,
    /// A passive server got the client's closing message: that wait is its one I/O, as fio
    /// counts it (taken once by `end_counts`).
    closing_io: bool,
    wait_limit: Option<Duration>,
    port: u16,
    bind: Option<SocketAddr>,
    peer: Option<SocketAddr>,
}

fn resolve(host: &str, port: u16, what: &str) -> io::Result<SocketAddr> {
    (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{what}={host} has no address")))
}

fn fail(msg: String) -> io::Error {
    io::Error::other(format!("ioengine=rdma: {msg}"))
}

impl Rdma {
    fn ep(&self) -> &Endpoint {
        self.ep.as_ref().expect("an RDMA endpoint")
    }

    /// This side's buffers as the list advertises them.
    fn slots(&self) -> Vec<Slot> {
        let key = self.pool.map_or(0, |r| r.rkey);
        self.units.iter().map(|&(a, l)| (a, key, l as u32)).collect()
    }

    /// Registers the unit buffers and the control messages with the endpoint's device.
    fn register(&mut self) -> io::Result<()> {
        let mut ctrl = Ctrl::new();
        let ep = self.ep.as_mut().expect("an RDMA endpoint");
        let (base, end) = (self.units[0].0, self.units.last().map(|&(a, l)| a + l as u64).unwrap());
        // SAFETY: the unit buffers belong to the queue's pool, which outlives the engine's use
        // of them (the queue drops the engine first); the control memory is owned by `self`
        // and never reallocated.
        unsafe {
            self.pool = Some(ep.register(base as *mut u8, (end - base) as usize).map_err(fail)?);
            ctrl.region = Some(ep.register(ctrl.mem.as_mut_ptr(), ctrl.mem.len()).map_err(fail)?);
        }
        self.ctrl = Some(ctrl);
        Ok(())
    }

    fn post_ctrl_recv(&self) -> io::Result<()> {
        let c = self.ctrl.as_ref().unwrap();
        self.ep().post_recv(CTRL_RECV, c.region.as_ref().unwrap(), c.recv_addr(), MSG_LEN as u32).map_err(fail)
    }

    /// Sends this side's buffer list under `verb` and waits until it is delivered.
    fn send_list(&mut self, verb: u32) -> io::Result<()> {
        let slots = self.slots();
        let block = self.units.first().map_or(0, |u| u.1 as u32);
        let c = self.ctrl.as_mut().unwrap();
        encode(verb, block, &slots, &mut c.mem[..MSG_LEN]);
        let c = self.ctrl.as_ref().unwrap();
        self.ep()
            .post(CTRL_SEND, Op::Send, c.region.as_ref().unwrap(), c.send_addr(), MSG_LEN as u32, (0, 0))
            .map_err(|e| fail(format!("cannot send the buffer list: {}", io::Error::from_raw_os_error(e))))?;
        self.wait_ctrl(CTRL_SEND, "sending the buffer list").map(|_| ())
    }

    /// Waits for control work request `id` to finish; returns its length. The other control
    /// request's completion, when it comes first, is kept for its own wait.
    fn wait_ctrl(&mut self, id: u64, what: &str) -> io::Result<u32> {
        let deadline = Instant::now() + CTRL_WAIT;
        let mut out = Vec::new();
        loop {
            if let Some(at) = self.ctrl_done.iter().position(|&(w, _)| w == id) {
                return Ok(self.ctrl_done.swap_remove(at).1);
            }
            out.clear();
            self.ep().poll(16, &mut out).map_err(fail)?;
            for d in &out {
                if d.status != 0 {
                    return Err(fail(format!("{what}: {} (status {})", ib::status_name(d.status), d.status)));
                }
                self.ctrl_done.push((d.wr_id, d.byte_len));
            }
            if out.is_empty() {
                if Instant::now() > deadline {
                    return Err(fail(format!("{what}: the peer did not answer within {} s", CTRL_WAIT.as_secs())));
                }
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    /// The client's start: connect, exchange the buffer lists.
    fn start_client(&mut self) -> io::Result<()> {
        let peer = self.peer.unwrap();
        self.ep = Some(Endpoint::connect(peer, self.bind, self.depth).map_err(fail)?);
        self.register()?;
        self.post_ctrl_recv()?;
        self.send_list(self.verb.unwrap() as u32)?;
        self.wait_ctrl(CTRL_RECV, "waiting for the server's buffer list")?;
        let c = self.ctrl.as_ref().unwrap();
        let (_, slots) = decode(&c.mem[MSG_LEN..]).map_err(fail)?;
        if slots.is_empty() {
            return Err(fail("the server offered no buffers".into()));
        }
        self.remote = slots;
        Ok(())
    }

    /// The server's start, at its first I/O: take the connection, learn the client's verb,
    /// answer with its own buffers.
    fn start_server(&mut self) -> io::Result<()> {
        let depth = self.depth;
        self.ep.as_mut().unwrap().take_request(depth).map_err(fail)?;
        self.register()?;
        self.post_ctrl_recv()?;
        self.ep.as_mut().unwrap().accept(depth).map_err(fail)?;
        self.wait_ctrl(CTRL_RECV, "waiting for the client's buffer list")?;
        let (code, _) = decode(&self.ctrl.as_ref().unwrap().mem[MSG_LEN..]).map_err(fail)?;
        let verb = Verb::from_code(code)
            .ok_or_else(|| fail(format!("the client asks for verb {code}, which is not write, read or send")))?;
        self.verb = Some(verb);
        if verb == Verb::Send {
            // Every unit buffer waits for a block before the client may send one.
            for i in 0..self.units.len() {
                self.repost(i)?;
            }
        } else {
            // The client's closing message.
            self.post_ctrl_recv()?;
        }
        self.send_list(0)
    }

    fn repost(&self, i: usize) -> io::Result<()> {
        let (addr, len) = self.units[i];
        self.ep().post_recv(i as u64, self.pool.as_ref().unwrap(), addr, len as u32).map_err(fail)
    }

    /// The server's I/O: the next block the client sends, or (write, read) the client's end.
    fn serve(&mut self) -> io::Result<QueueStatus> {
        let mut out = Vec::new();
        let mut idle = 0u32;
        loop {
            out.clear();
            self.ep().poll(1, &mut out).map_err(fail)?;
            if let Some(d) = out.first().copied() {
                if d.status == ib::WC_FLUSHED {
                    self.ended = true;
                    return Ok(QueueStatus::Completed(0));
                }
                if d.status != 0 {
                    return Err(fail(format!("receive failed: {} (status {})", ib::status_name(d.status), d.status)));
                }
                if d.wr_id == CTRL_RECV || d.wr_id == CTRL_SEND {
                    if d.wr_id == CTRL_RECV {
                        self.ended = true;
                        self.closing_io = true;
                        return Ok(QueueStatus::Completed(0));
                    }
                    continue;
                }
                self.repost(d.wr_id as usize)?;
                return Ok(QueueStatus::Completed(d.byte_len as i64));
            }
            idle += 1;
            if idle % 2000 == 0 && self.ep().disconnected() {
                self.ended = true;
                return Ok(QueueStatus::Completed(0));
            }
            std::thread::sleep(Duration::from_micros(if idle < 100 { 5 } else { 100 }));
        }
    }
}

impl IoEngine for Rdma {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        let o = &setup.opts.rdma;
        self.depth = setup.depth.max(1);
        self.units = setup.buffers.regions().map(|(p, l)| (p as u64, l)).collect();
        self.failed = vec![None; self.units.len()];
        self.lens = vec![0; self.units.len()];
        let port = o.port.ok_or_else(|| fail("needs port=".into()))?;
        self.port = port;
        if !o.bindname.is_empty() {
            self.bind = Some(resolve(&o.bindname, 0, "bindname")?);
        }
        match o.hostname.as_deref().filter(|h| !h.is_empty()) {
            Some(host) => {
                self.verb = Some(match o.verb {
                    "read" => Verb::Read,
                    "send" => Verb::Send,
                    "write" => Verb::Write,
                    v => {
                        return Err(fail(format!(
                            "verb={v} is the receiving side's; a client (hostname=) uses write, read or send"
                        )))
                    }
                });
                self.peer = Some(resolve(host, port, "hostname")?);
                self.start_client()?;
            }
            None => {
                self.server = true;
                let addr = match self.bind {
                    Some(b) => SocketAddr::new(b.ip(), port),
                    None => SocketAddr::from(([0, 0, 0, 0], port)),
                };
                self.ep = Some(Endpoint::listen(addr).map_err(fail)?);
            }
        }
        Ok(())
    }

    fn queue(&mut self, index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        if self.server {
            if self.ctrl.is_none() {
                self.start_server()?;
            }
            if self.ended {
                return Ok(QueueStatus::Completed(0));
            }
            return self.serve();
        }
        let slot = self.remote[self.next % self.remote.len()];
        if io.len > slot.2 {
            return Err(fail(format!("bs={} is larger than the server's buffers ({} bytes)", io.len, slot.2)));
        }
        let op = match self.verb.unwrap() {
            Verb::Write => Op::Write,
            Verb::Read => Op::Read,
            Verb::Send => Op::Send,
        };
        let pool = self.pool.unwrap();
        match self.ep().post(index as u64, op, &pool, io.buf as u64, io.len, (slot.0, slot.1)) {
            Ok(()) => {
                self.next += 1;
                self.busy += 1;
                self.failed[index as usize] = None;
                self.lens[index as usize] = io.len;
                Ok(QueueStatus::Queued)
            }
            Err(e) if e == libc::ENOMEM && self.busy > 0 => Ok(QueueStatus::Busy),
            Err(e) => Ok(QueueStatus::Completed(-(e as i64))),
        }
    }

    fn getevents(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let start = Instant::now();
        let mut got = 0;
        let mut done = Vec::new();
        let mut idle = 0u32;
        while got < max {
            done.clear();
            self.ep().poll((max - got) as usize, &mut done).map_err(fail)?;
            for d in &done {
                if d.wr_id >= CTRL_SEND {
                    continue;
                }
                self.busy = self.busy.saturating_sub(1);
                let result = if d.status == 0 {
                    // Only a read's completion carries a length; the others moved the block whole.
                    self.lens[d.wr_id as usize] as i64
                } else {
                    self.failed[d.wr_id as usize] = Some(d.status);
                    -(libc::EIO as i64)
                };
                out.push(Completion { index: d.wr_id as u32, result });
                got += 1;
            }
            if got >= min {
                break;
            }
            if self.wait_limit.is_some_and(|l| start.elapsed() >= l) {
                break;
            }
            idle += 1;
            std::thread::sleep(Duration::from_micros(if idle < 100 { 2 } else { 50 }));
        }
        Ok(())
    }

    fn set_wait_limit(&mut self, limit: Option<Duration>) {
        self.wait_limit = limit;
    }

    fn peer_done(&self) -> bool {
        self.ended
    }

    fn end_counts(&mut self) -> bool {
        std::mem::take(&mut self.closing_io)
    }

    fn error_detail(&mut self, index: u32) -> Option<crate::ErrorDetail> {
        let s = self.failed.get_mut(index as usize)?.take()?;
        Some(crate::ErrorDetail::Inline(format!("RDMA completion status {s}: {}", ib::status_name(s))))
    }
}

impl Drop for Rdma {
    fn drop(&mut self) {
        // A write or read client tells the server it is done with its first message again.
        let closing = !self.server && self.ctrl.is_some() && matches!(self.verb, Some(Verb::Write | Verb::Read));
        if closing && self.busy == 0 {
            let _ = self.send_list(self.verb.unwrap() as u32);
        }
    }
}

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let mut devs: Vec<String> = std::fs::read_dir("/sys/class/infiniband")
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    devs.sort();
    if devs.is_empty() {
        return Err("ioengine rdma needs an RDMA device (/sys/class/infiniband is empty or missing on this machine)"
            .to_string());
    }
    ib::load()?;
    let o = &spec.engine.rdma;
    if o.port.is_none() {
        return Err("ioengine=rdma needs port= (the same on the client and the server)".to_string());
    }
    if o.hostname.as_deref().is_some_and(|h| !h.is_empty()) && o.verb == "recv" {
        return Err("ioengine=rdma: verb=recv is the receiving side's; a client (hostname=) uses write, read or send"
            .to_string());
    }
    Ok(())
}

pub const INFO: EngineInfo = EngineInfo {
    sync: false,
    diskless: true,
    network: true,
    preflight: Some(preflight),
    ..EngineInfo::base("rdma", || Box::<Rdma>::default())
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_list_round_trips_in_fios_layout() {
        let mut msg = vec![0u8; MSG_LEN];
        encode(1, 16384, &[(0x5607_371e_1580, 0xa9a, 16384), (0x5607_371e_5580, 0xb31, 16384)], &mut msg);
        assert_eq!(msg.len(), 8208);
        assert_eq!(&msg[..16], &[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0x40, 0, 0, 0, 0, 0]);
        assert_eq!(&msg[16..32], &[0, 0, 0x56, 0x07, 0x37, 0x1e, 0x15, 0x80, 0, 0, 0x0a, 0x9a, 0, 0, 0x40, 0]);
        let (verb, slots) = decode(&msg).unwrap();
        assert_eq!(verb, 1);
        assert_eq!(slots, vec![(0x5607_371e_1580, 0xa9a, 16384), (0x5607_371e_5580, 0xb31, 16384)]);
        assert!(decode(&msg[..8]).is_err());
        msg[7] = 0xff;
        msg[6] = 0xff;
        assert!(decode(&msg).is_err(), "more buffers than the message holds");
    }
}
