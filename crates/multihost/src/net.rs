//! Where servers listen and coordinators connect: fio's `--server=` and `--client=` spellings
//! parsed into an [`Endpoint`], listeners and connections made into [`Duplex`]es.
//!
//! Plain TCP is allowed only on loopback, and a unix socket only with mode 0600 and a peer of
//! the same uid (or root), checked with SO_PEERCRED. Any other address takes TLS 1.3 with
//! credentials ([`crate::tls`]); [`accept_secure`] and [`connect_secure`] are where that is
//! decided, and a network address without credentials is refused with a message naming them.

use std::io;
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::tls;
use crate::transport::Duplex;

/// fio's port, kept so that firewall rules and manifests written for fio keep working.
pub const DEFAULT_PORT: u16 = 8765;

/// Where a server listens or a coordinator connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A host name or address (empty: every address of the family) and a port.
    Tcp {
        host: String,
        port: u16,
        v6: bool,
    },
    Unix(PathBuf),
    /// The process's standard input and output (`--server=stdio`, under ssh or `--rsh`).
    Stdio,
}

impl std::fmt::Display for Endpoint {
    /// As fio names a host in its messages and JSON: `host,port`, `sock:path`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Tcp { host, port, .. } => write!(f, "{host},{port}"),
            Endpoint::Unix(p) => write!(f, "sock:{}", p.display()),
            Endpoint::Stdio => f.write_str("stdio"),
        }
    }
}

fn port(s: &str, what: &str) -> Result<u16, String> {
    match s.parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(format!("{what}: bad port '{s}' (1 to 65535)")),
    }
}

/// fio's `--server[=ARGS]`: nothing (every IPv4 address, port 8765), `ip:HOST[,PORT]`,
/// `ip4:HOST[,PORT]`, `ip6:HOST[,PORT]`, `,PORT`, `HOST[,PORT]`, `sock:PATH`; and fiox's
/// `stdio`.
pub fn parse_server(arg: Option<&str>) -> Result<Endpoint, String> {
    let what = format!("--server={}", arg.unwrap_or(""));
    let Some(a) = arg.filter(|a| !a.is_empty()) else {
        return Ok(Endpoint::Tcp { host: String::new(), port: DEFAULT_PORT, v6: false });
    };
    if a == "stdio" {
        return Ok(Endpoint::Stdio);
    }
    parse_common(a, &what)
}

/// fio's `--client=HOST[,PORT]` (with the `ip:`, `ip4:`, `ip6:` and `sock:` prefixes), and
/// fiox's `HOST:PORT` and `[V6]:PORT` (for `--hosts`).
pub fn parse_client(a: &str) -> Result<Endpoint, String> {
    let what = format!("host '{a}'");
    if a.is_empty() {
        return Err("an empty host name".into());
    }
    if let Some(rest) = a.strip_prefix('[') {
        let (host, tail) = rest.split_once(']').ok_or_else(|| format!("{what}: missing ']'"))?;
        let p = match tail.strip_prefix(':').or_else(|| tail.strip_prefix(',')) {
            Some(p) => port(p, &what)?,
            None if tail.is_empty() => DEFAULT_PORT,
            None => return Err(format!("{what}: expected ':PORT' after ']'")),
        };
        return Ok(Endpoint::Tcp { host: host.into(), port: p, v6: true });
    }
    let ep = parse_common(a, &what)?;
    if let Endpoint::Tcp { host, .. } = &ep {
        if host.is_empty() {
            return Err(format!("{what}: no host name"));
        }
        // `host:port` (one colon, no comma, no prefix) is fiox's spelling for --hosts.
        if !a.contains(',') && !a.starts_with("ip") && host.matches(':').count() == 1 {
            let (h, p) = host.split_once(':').expect("one colon");
            return Ok(Endpoint::Tcp { host: h.into(), port: port(p, &what)?, v6: false });
        }
    }
    Ok(ep)
}

fn parse_common(a: &str, what: &str) -> Result<Endpoint, String> {
    if let Some(p) = a.strip_prefix("sock:") {
        if p.is_empty() {
            return Err(format!("{what}: sock: needs a path"));
        }
        return Ok(Endpoint::Unix(PathBuf::from(p)));
    }
    let (rest, v6) = if let Some(r) = a.strip_prefix("ip6:") {
        (r, true)
    } else if let Some(r) = a.strip_prefix("ip4:").or_else(|| a.strip_prefix("ip:")) {
        (r, false)
    } else {
        (a, false)
    };
    // The port follows the last comma (an IPv6 address has colons, never commas).
    let (host, p) = match rest.rsplit_once(',') {
        Some((h, p)) => (h, port(p, what)?),
        None => (rest, DEFAULT_PORT),
    };
    if !v6 && host.parse::<std::net::Ipv6Addr>().is_ok() {
        return Err(format!("{what}: an IPv6 address needs the ip6: prefix (ip6:{host},PORT), as in fio"));
    }
    Ok(Endpoint::Tcp { host: host.into(), port: p, v6 })
}

/// The addresses a TCP endpoint stands for, in the family it asks for.
pub fn resolve(host: &str, port: u16, v6: bool) -> io::Result<Vec<SocketAddr>> {
    let host = if host.is_empty() {
        if v6 {
            "::"
        } else {
            "0.0.0.0"
        }
    } else {
        host
    };
    let addrs: Vec<SocketAddr> = (host, port).to_socket_addrs()?.filter(|a| a.is_ipv6() == v6).collect();
    if addrs.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("'{host}' has no IPv{} address", if v6 { 6 } else { 4 }),
        ));
    }
    Ok(addrs)
}

fn needs_tls(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{what}: not a loopback address; without TLS fiox speaks TCP only on loopback, and TLS needs credentials: --auth-key=FILE (a shared secret; `fiox --keygen` writes one) or --tls-ca, --tls-cert and --tls-key (mutual TLS); or use a loopback address or sock:PATH"
        ),
    )
}

/// Whether an address is the machine's own (plain TCP is allowed there).
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => a.is_loopback(),
        IpAddr::V6(a) => a.is_loopback() || a.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

/// A listening server socket.
pub enum Listener {
    Tcp(TcpListener),
    /// The socket and its path (removed when the listener is dropped).
    Unix(UnixListener, PathBuf),
}

/// A connection accepted, not yet authenticated.
pub enum Incoming {
    Tcp(TcpStream, SocketAddr),
    Unix(UnixStream),
}

impl Listener {
    /// Binds `ep`: TCP on loopback, on any address when the server has TLS credentials
    /// (`secured`), or a unix socket made 0600. A stale socket at the path is replaced; any
    /// other file there is left alone and refused. No host (`--server`, `--server=,PORT`)
    /// means every address, as in fio, when the server has credentials, and loopback when it
    /// has none, which is all it may listen on then.
    pub fn bind(ep: &Endpoint, secured: bool) -> io::Result<Listener> {
        match ep {
            Endpoint::Tcp { host, port, v6 } => {
                let host = match (host.is_empty() && !secured, v6) {
                    (true, false) => "127.0.0.1",
                    (true, true) => "::1",
                    (false, _) => host.as_str(),
                };
                let addrs = resolve(host, *port, *v6)?;
                if let Some(a) = addrs.iter().find(|a| !secured && !is_loopback(a.ip())) {
                    return Err(needs_tls(&format!("listening on {a}")));
                }
                Ok(Listener::Tcp(TcpListener::bind(&addrs[..])?))
            }
            Endpoint::Unix(path) => {
                if let Ok(m) = std::fs::symlink_metadata(path) {
                    if !m.file_type().is_socket() {
                        return Err(io::Error::new(
                            io::ErrorKind::AlreadyExists,
                            format!("{} exists and is not a socket; not replacing it", path.display()),
                        ));
                    }
                    std::fs::remove_file(path)?;
                }
                let l = UnixListener::bind(path)?;
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
                Ok(Listener::Unix(l, path.clone()))
            }
            Endpoint::Stdio => Err(io::Error::new(io::ErrorKind::InvalidInput, "stdio is not a socket to listen on")),
        }
    }

    /// Where the listener is, as a coordinator would name it.
    pub fn local(&self) -> String {
        match self {
            Listener::Tcp(l) => l.local_addr().map(|a| format!("{},{}", a.ip(), a.port())).unwrap_or_default(),
            Listener::Unix(_, p) => format!("sock:{}", p.display()),
        }
    }

    pub fn accept(&self) -> io::Result<Incoming> {
        match self {
            Listener::Tcp(l) => l.accept().map(|(s, a)| Incoming::Tcp(s, a)),
            Listener::Unix(l, _) => l.accept().map(|(s, _)| Incoming::Unix(s)),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A connected socket as a duplex: clones of it read and close, the socket itself writes.
/// TCP and unix sockets differ only in how a clone is made and how they shut down.
trait Socket: io::Read + io::Write + Send + Sized + 'static {
    fn try_clone(&self) -> io::Result<Self>;
    fn shutdown(&self, how: Shutdown) -> io::Result<()>;
}

impl Socket for TcpStream {
    fn try_clone(&self) -> io::Result<Self> {
        TcpStream::try_clone(self)
    }
    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        TcpStream::shutdown(self, how)
    }
}

impl Socket for UnixStream {
    fn try_clone(&self) -> io::Result<Self> {
        UnixStream::try_clone(self)
    }
    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        UnixStream::shutdown(self, how)
    }
}

fn socket_duplex<S: Socket>(s: S, peer: String, identity: Option<String>) -> io::Result<Duplex> {
    let reader = s.try_clone()?;
    let closer = s.try_clone()?;
    Ok(Duplex {
        reader: Box::new(reader),
        writer: Box::new(s),
        peer,
        identity,
        close: Box::new(move || {
            let _ = closer.shutdown(Shutdown::Both);
        }),
    })
}

/// Plain TCP (loopback only; the callers check), without Nagle's delay on small frames.
pub fn tcp_duplex(s: TcpStream, peer: String, identity: Option<String>) -> io::Result<Duplex> {
    s.set_nodelay(true)?;
    socket_duplex(s, peer, identity)
}

/// The peer of a unix socket may connect if it runs as this process's user or as root.
pub fn check_peer_uid(s: &UnixStream) -> io::Result<String> {
    let cred = rustix::net::sockopt::socket_peercred(s)?;
    let (theirs, ours) = (cred.uid.as_raw(), rustix::process::getuid().as_raw());
    if theirs == ours || theirs == 0 {
        Ok(format!("uid {theirs}"))
    } else {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("peer uid {theirs} is neither this server's uid {ours} nor root"),
        ))
    }
}

/// The server's accept path, where authentication happens: a TLS client when the server has
/// credentials (`tls`; identity: the key's id or the certificate's subject), a plain loopback
/// TCP peer (identity `loopback`), or a unix-socket peer of the same uid or root; everything
/// else is refused. The caller has already told a TLS client (`is_tls`) from a plain one by its
/// first bytes.
pub fn accept_secure(incoming: Incoming, is_tls: bool, tls: Option<&tls::ServerConfig>) -> io::Result<Duplex> {
    match incoming {
        Incoming::Tcp(s, addr) => {
            if is_tls {
                let Some(cfg) = tls else {
                    let _ = s.shutdown(Shutdown::Both);
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!("{addr}: a TLS client, but this server has no credentials (--auth-key or --tls-ca/--tls-cert/--tls-key)"),
                    ));
                };
                return tls::accept(s, cfg, tls::HANDSHAKE_TIMEOUT).map_err(auth_io);
            }
            if !is_loopback(addr.ip()) {
                let _ = s.shutdown(Shutdown::Both);
                return Err(needs_tls(&format!("a plaintext connection from {addr}")));
            }
            tcp_duplex(s, format!("{},{}", addr.ip(), addr.port()), Some("loopback".into()))
        }
        Incoming::Unix(s) => {
            let who = check_peer_uid(&s)?;
            socket_duplex(s, "unix socket".into(), Some(who))
        }
    }
}

/// The secure transports' errors as I/O errors, keeping "timed out" recognisable.
fn auth_io(e: crate::auth::Error) -> io::Error {
    let kind = match &e {
        crate::auth::Error::Timeout(_) => io::ErrorKind::TimedOut,
        crate::auth::Error::Refused(_) | crate::auth::Error::Config(_) => io::ErrorKind::PermissionDenied,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, e.to_string())
}

/// The coordinator's connect path, where the server is authenticated: TLS to a non-loopback
/// address when given credentials (`tls`), plain TCP to a loopback address, or a unix socket;
/// a network address without credentials is refused. `timeout` bounds the connect (the
/// kernel's own would be about two minutes) and, separately, the TLS handshake.
pub fn connect_secure(ep: &Endpoint, timeout: Duration, tls: Option<&tls::ClientConfig>) -> io::Result<Duplex> {
    match ep {
        Endpoint::Tcp { host, port, v6 } => {
            let addrs = resolve(host, *port, *v6)?;
            let remote = addrs.iter().any(|a| !is_loopback(a.ip()));
            if remote && tls.is_none() {
                let a = addrs.iter().find(|a| !is_loopback(a.ip())).expect("one is remote");
                return Err(needs_tls(&format!("connecting to {a}")));
            }
            let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
            for a in &addrs {
                match TcpStream::connect_timeout(a, timeout) {
                    Ok(s) => {
                        return match tls {
                            Some(cfg) if remote => {
                                let bound = timeout.max(Duration::from_secs(2));
                                tls::connect(s, host, cfg, bound).map_err(auth_io).map(|mut d| {
                                    d.peer = ep.to_string();
                                    d
                                })
                            }
                            _ => tcp_duplex(s, ep.to_string(), Some("loopback".into())),
                        }
                    }
                    Err(e) => last = e,
                }
            }
            Err(last)
        }
        Endpoint::Unix(path) => {
            let s = UnixStream::connect(path)?;
            socket_duplex(s, ep.to_string(), Some(socket_owner(path)))
        }
        Endpoint::Stdio => Err(io::Error::new(io::ErrorKind::InvalidInput, "stdio is a server transport")),
    }
}

/// Launcher mode's address: `join:HOST:PORT` (`[V6]:PORT` too) for a server, `HOST:PORT` for
/// the coordinator's `--join`; a TCP address with its port, nothing else.
pub fn parse_join(a: &str, what: &str) -> Result<Endpoint, String> {
    if a.is_empty() || a.starts_with("sock:") {
        return Err(format!("{what}: needs HOST:PORT (a TCP address and port)"));
    }
    let bare_v6 = a.starts_with('[');
    if !bare_v6 && !a.contains([':', ',']) {
        return Err(format!("{what}: needs a port (HOST:PORT)"));
    }
    match parse_client(a) {
        Ok(Endpoint::Tcp { host, port, v6 }) => Ok(Endpoint::Tcp { host, port, v6 }),
        Ok(_) => Err(format!("{what}: needs HOST:PORT (a TCP address and port)")),
        Err(e) => Err(format!("{what}: {e}")),
    }
}

/// Launcher mode, the server's side (`--server=join:HOST:PORT`): dials the coordinator,
/// retrying while it is not listening yet (a launcher starts both at once) until `within` has
/// passed, and secures the connection with a standing server's roles: TLS server, the
/// coordinator proving itself as a TLS client does, plain TCP only to a loopback address.
/// Also returns this end's address (the server's `$clientuid`).
pub fn join_dial(ep: &Endpoint, within: Duration, tls: Option<&tls::ServerConfig>) -> io::Result<(Duplex, IpAddr)> {
    let Endpoint::Tcp { host, port, v6 } = ep else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "join needs a TCP address"));
    };
    let addrs = resolve(host, *port, *v6)?;
    if let Some(a) = addrs.iter().find(|a| !is_loopback(a.ip())) {
        if tls.is_none() {
            return Err(needs_tls(&format!("joining {a}")));
        }
    }
    let deadline = std::time::Instant::now() + within;
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    loop {
        for a in &addrs {
            let left = deadline.saturating_duration_since(std::time::Instant::now()).max(Duration::from_millis(10));
            match TcpStream::connect_timeout(a, left) {
                Ok(s) => {
                    let local = s.local_addr()?.ip();
                    let peer = format!("{},{}", a.ip(), a.port());
                    let d = match tls {
                        Some(cfg) if !is_loopback(a.ip()) => {
                            let mut d = tls::accept(s, cfg, tls::HANDSHAKE_TIMEOUT).map_err(auth_io)?;
                            d.peer = peer;
                            d
                        }
                        _ => tcp_duplex(s, peer, Some("loopback".into()))?,
                    };
                    return Ok((d, local));
                }
                Err(e) => last = e,
            }
        }
        if std::time::Instant::now() >= deadline {
            let kind =
                if last.kind() == io::ErrorKind::ConnectionRefused { io::ErrorKind::TimedOut } else { last.kind() };
            return Err(io::Error::new(
                kind,
                format!("no coordinator at {ep} within {} ms: {last}", within.as_millis()),
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Launcher mode, the coordinator's side: a server that dialled the `--join` listener,
/// secured as [`connect_secure`] secures a connection it makes: TLS client (the server proving
/// itself first) to a non-loopback peer, which needs credentials here, plain TCP on loopback.
pub fn join_accept(s: TcpStream, addr: SocketAddr, tls: Option<&tls::ClientConfig>) -> io::Result<Duplex> {
    let peer = format!("{},{}", addr.ip(), addr.port());
    if is_loopback(addr.ip()) {
        return tcp_duplex(s, peer, Some("loopback".into()));
    }
    let Some(cfg) = tls else {
        let _ = s.shutdown(Shutdown::Both);
        return Err(needs_tls(&format!("a server joining from {addr}")));
    };
    let mut d = tls::connect(s, &addr.ip().to_string(), cfg, tls::HANDSHAKE_TIMEOUT).map_err(auth_io)?;
    d.peer = peer;
    Ok(d)
}

fn socket_owner(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).map(|m| format!("socket owned by uid {}", m.uid())).unwrap_or_default()
}

/// The server's standard streams as a duplex (`--server=stdio`); closing exits the reader by
/// closing nothing it could reopen, so the caller ends the process after the session.
pub fn stdio_duplex() -> Duplex {
    Duplex {
        reader: Box::new(io::stdin()),
        writer: Box::new(io::stdout()),
        peer: "stdio".into(),
        identity: Some("stdio (the launching transport authenticated the user)".into()),
        close: Box::new(|| {}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(h: &str, p: u16, v6: bool) -> Endpoint {
        Endpoint::Tcp { host: h.into(), port: p, v6 }
    }

    #[test]
    fn fio_server_spellings() {
        assert_eq!(parse_server(None), Ok(tcp("", 8765, false)));
        assert_eq!(parse_server(Some("ip:127.0.0.1,4444")), Ok(tcp("127.0.0.1", 4444, false)));
        assert_eq!(parse_server(Some("ip4:localhost")), Ok(tcp("localhost", 8765, false)));
        assert_eq!(parse_server(Some("ip6:::1,4444")), Ok(tcp("::1", 4444, true)));
        assert_eq!(parse_server(Some(",4444")), Ok(tcp("", 4444, false)));
        assert_eq!(parse_server(Some("1.2.3.4")), Ok(tcp("1.2.3.4", 8765, false)));
        assert_eq!(parse_server(Some("sock:/tmp/f.sock")), Ok(Endpoint::Unix("/tmp/f.sock".into())));
        assert_eq!(parse_server(Some("stdio")), Ok(Endpoint::Stdio));
        assert!(parse_server(Some("ip:h,0")).unwrap_err().contains("bad port"));
        assert!(parse_server(Some("::1")).unwrap_err().contains("ip6:"));
        assert!(parse_server(Some("sock:")).is_err());
    }

    #[test]
    fn client_spellings() {
        assert_eq!(parse_client("h1"), Ok(tcp("h1", 8765, false)));
        assert_eq!(parse_client("h1,9000"), Ok(tcp("h1", 9000, false)));
        assert_eq!(parse_client("h1:9000"), Ok(tcp("h1", 9000, false)));
        assert_eq!(parse_client("[::1]:9000"), Ok(tcp("::1", 9000, true)));
        assert_eq!(parse_client("ip6:::1,9000"), Ok(tcp("::1", 9000, true)));
        assert!(parse_client("").is_err());
        assert!(parse_client(",9000").is_err());
        assert_eq!(tcp("h", 1, false).to_string(), "h,1");
    }

    #[test]
    fn join_spellings() {
        assert_eq!(parse_join("198.18.1.1:9000", "j"), Ok(tcp("198.18.1.1", 9000, false)));
        assert_eq!(parse_join("[::1]:9000", "j"), Ok(tcp("::1", 9000, true)));
        assert_eq!(parse_join("h,9000", "j"), Ok(tcp("h", 9000, false)));
        assert!(parse_join("h", "j").unwrap_err().contains("needs a port"));
        assert!(parse_join("h:0", "j").unwrap_err().contains("bad port"));
        assert!(parse_join("sock:/x", "j").is_err());
        assert!(parse_join("", "j").is_err());
        let e = join_dial(&tcp("192.0.2.1", 9, false), Duration::from_millis(10), None).err().unwrap().to_string();
        assert!(e.contains("TLS") && e.contains("joining"), "{e}");
    }

    #[test]
    fn non_loopback_needs_tls() {
        let e = Listener::bind(&tcp("0.0.0.0", 0, false), false).err().unwrap().to_string();
        assert!(e.contains("--auth-key") && e.contains("TLS"), "{e}");
        assert!(Listener::bind(&tcp("0.0.0.0", 0, false), true).is_ok());
        let e = connect_secure(&tcp("192.0.2.1", 9, false), Duration::from_millis(10), None).err().unwrap().to_string();
        assert!(e.contains("TLS"), "{e}");
    }

    #[test]
    fn unix_socket_is_private_and_checks_the_peer() {
        let dir = std::env::temp_dir().join(format!("fiox-mh-net-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.sock");
        let l = Listener::bind(&Endpoint::Unix(path.clone()), false).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let c = std::thread::spawn({
            let p = path.clone();
            move || connect_secure(&Endpoint::Unix(p), Duration::from_secs(1), None).map(|d| d.peer)
        });
        let d = accept_secure(l.accept().unwrap(), false, None).unwrap();
        assert!(d.identity.unwrap().starts_with("uid "));
        assert!(c.join().unwrap().unwrap().starts_with("sock:"));
        drop(l);
        assert!(!path.exists());
        std::fs::remove_dir(&dir).unwrap();
    }
}
