//! `net` and `netsplice`: the job's I/O goes over a socket to another job (fio's or fiox's) on
//! this or another machine. A job that writes sends, a job that reads receives; which end
//! connects is the `listen` option's business (TCP and UNIX sockets: the listening end waits
//! for one connection; UDP: the reader binds the port and the writer sends to it).
//! `netsplice` moves the data between the buffer and a TCP or UNIX socket through a pipe
//! (vmsplice + splice) instead of send/recv.
//!
//! The peer is `hostname` and `port` (`protocol` tcp, tcpv6, udp, udpv6 or unix, for which
//! `hostname` or `filename` is the socket's path), or `filename=host,port[,protocol]`; the
//! options resolve that before the engine starts.
//!
//! Interoperation with fio 3.33, measured with strace: a UDP sender first sends an 8-byte
//! "open" datagram (`link` and the big-endian number 0x98), then one datagram per I/O, and
//! ends with an 8-byte "close" datagram (`knil`, 0x89 little-endian), which is how the
//! receiver knows the stream is over; the receiver waits for the open datagram before its
//! first I/O and stops at the close one, which is not counted. fio's TCP sender appends the
//! same close message to its stream before closing; a TCP receiver stops when the job's size
//! has been received or the sender closes. fiox's TCP receiver waits for full blocks
//! (MSG_WAITALL), where fio's counts each short read as an I/O of its own.
//!
//! Clones of a `numjobs` job use consecutive ports from `port`, on both ends. A multicast group
//! as `hostname` makes a UDP sender set IP_MULTICAST_TTL (`ttl`) and, with `interface`,
//! IP_MULTICAST_IF (the same calls as fio's), and a receiver join the group.
//!
//! With `pingpong=1` every sent block waits for the peer to send it back, and the receiver
//! returns every block it gets: the latency is the round trip.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs, UdpSocket};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};

use crate::{sys, Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

/// fio's "open" datagram: `link` then 0x98, both big-endian.
const OPEN_MSG: [u8; 8] = *b"link\0\0\0\x98";
/// fio's "close" message: the same magic and 0x89, little-endian.
const CLOSE_MSG: [u8; 8] = *b"knil\x89\0\0\0";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Proto {
    Tcp,
    Udp,
    Unix,
}

enum Sock {
    /// A listening socket whose connection is accepted at the first I/O.
    TcpListener(TcpListener),
    UnixListener(UnixListener),
    Stream(OwnedFd),
    Udp(UdpSocket),
}

#[derive(Default)]
pub struct Net {
    splice: bool,
    proto: Option<Proto>,
    sock: Option<Sock>,
    /// UDP receiver: the sender's open datagram has arrived (and the socket is connected to it).
    opened: bool,
    /// UDP receiver of a multicast group: never connected to the sender, because a connected
    /// socket takes the sender's route's address as its own and stops matching the group.
    multicast: bool,
    /// The peer closed the stream (end of file, or UDP's close datagram).
    ended: bool,
    sender: bool,
    pingpong: bool,
    nodelay: bool,
    window: Option<u32>,
    mss: Option<u32>,
    pipe: Option<(OwnedFd, OwnedFd)>,
}

/// What a net job needs, checked when the run is planned.
fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let o = &spec.engine.net;
    let engine = spec.ioengine;
    if spec.rw.reads() && spec.rw.writes() || spec.rw.trims() {
        return Err(format!(
            "ioengine {engine}: rw={} is not possible: a {engine} job either receives (a read mode) or sends (a write mode)",
            spec.rw.name()
        ));
    }
    let udp = o.protocol.starts_with("udp");
    if o.listen && udp {
        return Err(format!(
            "ioengine {engine}: listen is for TCP and UNIX sockets; a UDP receiver is a read job without listen"
        ));
    }
    if engine == "netsplice" && udp {
        return Err(
            "ioengine netsplice moves data with splice, which UDP sockets do not take; use ioengine=net for UDP"
                .to_string(),
        );
    }
    if o.protocol == "unix" {
        if o.hostname.as_deref().is_none_or(str::is_empty) {
            return Err(format!(
                "ioengine {engine} with protocol=unix needs the socket's path as filename= or hostname="
            ));
        }
        return Ok(());
    }
    if o.port.is_none() {
        return Err(format!("ioengine {engine} needs port= (or filename=host,port[,protocol])"));
    }
    let connects = if udp { spec.rw.writes() } else { !o.listen };
    if connects && o.hostname.as_deref().is_none_or(str::is_empty) {
        return Err(format!("ioengine {engine} needs hostname= (or filename=host,port[,protocol]) to reach its peer"));
    }
    Ok(())
}

/// A multicast sender's settings: `ttl` (fio's default 1 keeps datagrams on the local network)
/// and, where given, the interface to send from, named by its address.
fn multicast_sender(u: &UdpSocket, interface: Option<&str>, ttl: u32, v6: bool) -> io::Result<()> {
    if v6 {
        return sys::set_sockopt(u.as_raw_fd(), libc::IPPROTO_IPV6, libc::IPV6_MULTICAST_HOPS, ttl as i32);
    }
    u.set_multicast_ttl_v4(ttl)?;
    if let Some(ifa) = interface {
        let addr = interface_v4(ifa)?;
        // IP_MULTICAST_IF takes a struct in_addr: four bytes in network order.
        sys::set_sockopt(u.as_raw_fd(), libc::IPPROTO_IP, libc::IP_MULTICAST_IF, i32::from_ne_bytes(addr.octets()))
            .map_err(|e| with_context(e, format!("cannot send multicast from interface {ifa}")))?;
    }
    Ok(())
}

/// Joins a multicast group to receive its datagrams.
fn join_group(u: &UdpSocket, group: std::net::IpAddr, interface: Option<&str>) -> io::Result<()> {
    let r = match group {
        std::net::IpAddr::V4(g) => {
            let ifa = match interface {
                Some(i) => interface_v4(i)?,
                None => std::net::Ipv4Addr::UNSPECIFIED,
            };
            u.join_multicast_v4(&g, &ifa)
        }
        std::net::IpAddr::V6(g) => u.join_multicast_v6(&g, 0),
    };
    r.map_err(|e| with_context(e, format!("cannot join multicast group {group}")))
}

fn interface_v4(ifa: &str) -> io::Result<std::net::Ipv4Addr> {
    ifa.parse().map_err(|_| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("interface={ifa}: give the interface's IPv4 address"))
    })
}

/// The addresses `host:port` stands for, of the protocol's family.
fn resolve(host: &str, port: u16, v6: bool) -> io::Result<Vec<SocketAddr>> {
    let addrs: Vec<SocketAddr> = (host, port).to_socket_addrs()?.filter(|a| a.is_ipv6() == v6).collect();
    if addrs.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("hostname={host} has no {} address", if v6 { "IPv6" } else { "IPv4" }),
        ));
    }
    Ok(addrs)
}

fn with_context(e: io::Error, what: String) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

impl Net {
    fn stream_fd(&self) -> RawFd {
        match &self.sock {
            Some(Sock::Stream(fd)) => fd.as_raw_fd(),
            Some(Sock::Udp(u)) => u.as_raw_fd(),
            _ => -1,
        }
    }

    fn tune(&self, fd: RawFd) -> io::Result<()> {
        if let Some(w) = self.window {
            sys::set_sockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, w as i32)?;
            sys::set_sockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, w as i32)?;
        }
        if self.proto == Some(Proto::Tcp) {
            if self.nodelay {
                sys::set_sockopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)?;
            }
            if let Some(m) = self.mss {
                sys::set_sockopt(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, m as i32)?;
            }
        }
        Ok(())
    }

    /// Accepts the connection a listening job waits for (at its first I/O, so that its start
    /// is not held up), or, as a UDP receiver, waits for the sender's open datagram.
    fn connect_lazily(&mut self) -> io::Result<()> {
        let accepted: Option<OwnedFd> = match &self.sock {
            Some(Sock::TcpListener(l)) => Some(l.accept().map_err(|e| with_context(e, "accept".into()))?.0.into()),
            Some(Sock::UnixListener(l)) => Some(l.accept().map_err(|e| with_context(e, "accept".into()))?.0.into()),
            _ => None,
        };
        if let Some(fd) = accepted {
            self.tune(fd.as_raw_fd())?;
            self.sock = Some(Sock::Stream(fd));
        }
        if let (Some(Sock::Udp(u)), false, false) = (&self.sock, self.sender, self.opened) {
            let mut msg = [0u8; 8];
            loop {
                let (n, from) = u.recv_from(&mut msg)?;
                if n == 8 && msg == OPEN_MSG {
                    // Replies (pingpong) and nothing else go to this sender.
                    if !self.multicast {
                        u.connect(from)?;
                    }
                    break;
                }
            }
            self.opened = true;
        }
        Ok(())
    }

    fn send_all(&self, fd: RawFd, buf: *mut u8, len: usize) -> i64 {
        let mut done = 0;
        while done < len {
            let n = if self.splice {
                self.splice_out(fd, buf, done, len)
            } else {
                // SAFETY: `done < len`: the rest of the unit's buffer, which nothing writes
                // while the engine holds the unit.
                unsafe { sys::send(fd, buf.add(done), len - done) }
            };
            if n <= 0 {
                return if n < 0 { n } else { -(libc::EIO as i64) };
            }
            done += n as usize;
            if self.proto == Some(Proto::Udp) {
                // One datagram per I/O.
                break;
            }
        }
        done as i64
    }

    /// netsplice: the rest of the buffer into the pipe (what fits), then from the pipe to the
    /// socket. Returns the bytes sent.
    fn splice_out(&self, fd: RawFd, buf: *mut u8, done: usize, len: usize) -> i64 {
        let (r, w) = self.pipe.as_ref().map(|(r, w)| (r.as_raw_fd(), w.as_raw_fd())).expect("started");
        // SAFETY: `done < len` within the unit's buffer; the pipe's references to these pages
        // are spliced to the socket before this returns.
        let n = unsafe { sys::vmsplice(w, buf.add(done), len - done, 0) };
        if n <= 0 {
            return n;
        }
        let mut left = n as usize;
        while left > 0 {
            let m = sys::splice(r, None, fd, None, left, libc::SPLICE_F_MORE);
            if m <= 0 {
                return if m < 0 { m } else { -(libc::EIO as i64) };
            }
            left -= m as usize;
        }
        n
    }

    /// Receives one I/O: a full block from a stream (less only when the peer closes), one
    /// datagram from UDP. 0 means the peer is done (and sets `ended`).
    fn recv_block(&mut self, fd: RawFd, buf: *mut u8, len: usize) -> i64 {
        if self.proto == Some(Proto::Udp) {
            // SAFETY: the unit's buffer holds `len` bytes, untouched by anyone else while the
            // engine holds the unit.
            let n = unsafe { sys::recv(fd, buf, len, 0) };
            // SAFETY: `n` bytes were just written to the buffer.
            if n == 8 && unsafe { std::slice::from_raw_parts(buf, 8) } == CLOSE_MSG {
                self.ended = true;
                return 0;
            }
            return n;
        }
        let mut done = 0usize;
        while done < len {
            let n = if self.splice {
                self.splice_in(fd, buf, done, len)
            } else {
                // SAFETY: `done < len`, within the unit's buffer, as above.
                unsafe { sys::recv(fd, buf.add(done), len - done, libc::MSG_WAITALL) }
            };
            if n < 0 {
                if n == -(libc::EINTR as i64) {
                    continue;
                }
                return n;
            }
            if n == 0 {
                self.ended = true;
                break;
            }
            done += n as usize;
        }
        done as i64
    }

    /// netsplice: from the socket into the pipe, then out of the pipe into the buffer.
    fn splice_in(&self, fd: RawFd, buf: *mut u8, done: usize, len: usize) -> i64 {
        let (r, w) = self.pipe.as_ref().map(|(r, w)| (r.as_raw_fd(), w.as_raw_fd())).expect("started");
        let n = sys::splice(fd, None, w, None, (len - done).min(65536), 0);
        if n <= 0 {
            return n;
        }
        let mut got = 0usize;
        while got < n as usize {
            // SAFETY: `done + n <= len`, within the unit's buffer.
            let m = unsafe { sys::vmsplice(r, buf.add(done + got), n as usize - got, 0) };
            if m <= 0 {
                return if m < 0 { m } else { -(libc::EIO as i64) };
            }
            got += m as usize;
        }
        n
    }
}

impl IoEngine for Net {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        let o = &setup.opts.net;
        let (proto, v6) = match o.protocol {
            "tcpv6" => (Proto::Tcp, true),
            "udp" => (Proto::Udp, false),
            "udpv6" => (Proto::Udp, true),
            "unix" => (Proto::Unix, false),
            _ => (Proto::Tcp, false),
        };
        self.proto = Some(proto);
        self.sender = setup.writes;
        self.pingpong = o.pingpong;
        self.nodelay = o.nodelay;
        self.window = o.window_size;
        self.mss = o.mss;
        if self.splice {
            self.pipe = Some(sys::pipe()?);
        }
        let host = o.hostname.clone().unwrap_or_default();
        // With numjobs, each clone takes the next port up, on both ends, as fio's do.
        let port = o.port.unwrap_or(0).saturating_add(setup.clone.min(u16::MAX as u32) as u16);
        let peer = || format!("{host}:{port}");
        self.sock = Some(match proto {
            Proto::Unix if o.listen => {
                let _ = std::fs::remove_file(&host);
                Sock::UnixListener(
                    UnixListener::bind(&host).map_err(|e| with_context(e, format!("cannot listen on {host}")))?,
                )
            }
            Proto::Unix => Sock::Stream(
                UnixStream::connect(&host).map_err(|e| with_context(e, format!("cannot connect to {host}")))?.into(),
            ),
            Proto::Tcp if o.listen => {
                let any = if v6 { "[::]" } else { "0.0.0.0" };
                let addr = if host.is_empty() { format!("{any}:{port}") } else { peer() };
                let l = TcpListener::bind(addr.as_str())
                    .map_err(|e| with_context(e, format!("cannot listen on {addr}")))?;
                self.tune(l.as_raw_fd())?;
                Sock::TcpListener(l)
            }
            Proto::Tcp => {
                let addrs = resolve(&host, port, v6)?;
                let s = TcpStream::connect(&addrs[..])
                    .map_err(|e| with_context(e, format!("cannot connect to {}", peer())))?;
                self.tune(s.as_raw_fd())?;
                Sock::Stream(s.into())
            }
            Proto::Udp if self.sender => {
                let addrs = resolve(&host, port, v6)?;
                let u = UdpSocket::bind(if v6 { "[::]:0" } else { "0.0.0.0:0" })?;
                if addrs.iter().any(|a| a.ip().is_multicast()) {
                    multicast_sender(&u, o.interface.as_deref(), o.ttl, v6)?;
                }
                u.connect(&addrs[..]).map_err(|e| with_context(e, format!("cannot reach {}", peer())))?;
                if let Some(w) = self.window {
                    sys::set_sockopt(u.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, w as i32)?;
                }
                Sock::Udp(u)
            }
            Proto::Udp => {
                let any = if v6 { "[::]" } else { "0.0.0.0" };
                let u = UdpSocket::bind(format!("{any}:{port}"))
                    .map_err(|e| with_context(e, format!("cannot bind UDP port {port}")))?;
                // A multicast hostname: the reader joins the group (on `interface`, else on the
                // interface the kernel picks).
                if let Ok(group) = host.parse::<std::net::IpAddr>() {
                    if group.is_multicast() {
                        join_group(&u, group, o.interface.as_deref())?;
                        self.multicast = true;
                    }
                }
                if let Some(w) = self.window {
                    sys::set_sockopt(u.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, w as i32)?;
                }
                Sock::Udp(u)
            }
        });
        if proto == Proto::Udp && self.sender {
            let fd = self.stream_fd();
            let mut msg = OPEN_MSG;
            // SAFETY: an 8-byte array on the stack.
            let r = unsafe { sys::send(fd, msg.as_mut_ptr(), msg.len()) };
            if r < 0 {
                return Err(io::Error::from_raw_os_error((-r) as i32));
            }
        }
        Ok(())
    }

    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        if self.ended {
            return Ok(QueueStatus::Completed(0));
        }
        self.connect_lazily()?;
        let fd = self.stream_fd();
        let len = io.len as usize;
        let result = match io.ddir {
            Ddir::SyncRange => unreachable!("the queue does ranged syncs itself"),
            Ddir::Write => {
                let n = self.send_all(fd, io.buf, len);
                if n > 0 && self.pingpong {
                    let back = self.recv_block(fd, io.buf, n as usize);
                    if back < 0 {
                        back
                    } else {
                        n
                    }
                } else {
                    n
                }
            }
            Ddir::Read => {
                let n = self.recv_block(fd, io.buf, len);
                if n > 0 && self.pingpong {
                    let sent = self.send_all(fd, io.buf, n as usize);
                    if sent < 0 {
                        sent
                    } else {
                        n
                    }
                } else {
                    n
                }
            }
            // Nothing to sync on a socket, as in fio.
            Ddir::Sync | Ddir::DataSync => 0,
            Ddir::Trim => -(libc::EINVAL as i64),
        };
        Ok(QueueStatus::Completed(result))
    }

    fn peer_done(&self) -> bool {
        self.ended
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        // Tell the receiver the stream is over, as fio's senders do (UDP receivers need it; a
        // TCP receiver sees the connection close as well).
        if self.sender {
            let fd = self.stream_fd();
            if fd >= 0 {
                let mut msg = CLOSE_MSG;
                // SAFETY: an 8-byte array on the stack.
                let _ = unsafe { sys::send(fd, msg.as_mut_ptr(), msg.len()) };
            }
        }
    }
}

pub const NET: EngineInfo = EngineInfo {
    diskless: true,
    network: true,
    preflight: Some(preflight),
    ..EngineInfo::base("net", || Box::<Net>::default())
};
pub const NETSPLICE: EngineInfo = EngineInfo {
    diskless: true,
    network: true,
    preflight: Some(preflight),
    ..EngineInfo::base("netsplice", || {
        let mut n = Net::default();
        n.splice = true;
        Box::new(n)
    })
};
