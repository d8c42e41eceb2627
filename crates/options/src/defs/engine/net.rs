//! net and netsplice (TCP, UDP and UNIX sockets), and rdma, which shares their `hostname` and
//! `port`.

use crate::error::Result;
use crate::spec::{Arg, JobSpec};
use crate::table::{Category as C, Choice, Kind as K, OptDef as O};

const BOOL: K = K::Bool;

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    // net, netsplice (hostname and port also rdma)
    O::new("hostname", K::Str, C::Engine, "Host to send to (net) or connect to (rdma)").engines(&["net", "netsplice", "rdma"]).to(hostname),
    O::new("bindname", K::Str, C::Engine, "Local address to bind to").def("").engines(&["rdma"]).to(|s, v| Ok(s.engine.rdma.bindname = v.text())),
    O::new("port", K::Int { min: 1, max: 65535 }, C::Engine, "TCP or UDP port").engines(&["net", "netsplice", "rdma"]).to(port),
    O::new("verb", K::Choice(RDMA_VERBS), C::Engine, "RDMA operation").def("write").engines(&["rdma"]).to(|s, v| Ok(s.engine.rdma.verb = v.choice())),
    O::new("protocol", K::Choice(PROTOCOLS), C::Engine, "Network protocol").alias(&["proto"]).def("tcp").engines(&["net", "netsplice"]).to(|s, v| Ok(s.engine.net.protocol = v.choice())),
    O::new("nodelay", BOOL, C::Engine, "Set TCP_NODELAY on TCP connections").def("0").engines(&["net", "netsplice"]).to(|s, v| Ok(s.engine.net.nodelay = v.flag())),
    O::new("listen", K::Flag, C::Engine, "Wait for the other end: accept a TCP connection or bind the UDP port").def("0").engines(&["net", "netsplice"]).to(|s, v| Ok(s.engine.net.listen = v.flag())),
    O::new("pingpong", K::Flag, C::Engine, "Each I/O waits for the other end's answer").def("0").engines(&["net", "netsplice"]).to(|s, v| Ok(s.engine.net.pingpong = v.flag())),
    O::new("interface", K::Str, C::Engine, "Interface address for UDP multicast").engines(&["net", "netsplice"]).to(|s, v| Ok(s.engine.net.interface = v.written())),
    O::new("ttl", K::Int { min: 0, max: 255 }, C::Engine, "Time to live of outgoing UDP multicast datagrams").def("1").engines(&["net", "netsplice"]).to(|s, v| Ok(s.engine.net.ttl = v.u32()?)),
    O::new("window_size", K::Int { min: 0, max: i32::MAX as i64 }, C::Engine, "Socket buffer size (SO_SNDBUF and SO_RCVBUF)").engines(&["net", "netsplice"]).to(|s, v| Ok(s.engine.net.window_size = Some(v.int() as u32))),
    O::new("mss", K::Int { min: 0, max: i32::MAX as i64 }, C::Engine, "TCP maximum segment size (TCP_MAXSEG)").engines(&["net", "netsplice"]).to(|s, v| Ok(s.engine.net.mss = Some(v.int() as u32))),
];

/// net's and netsplice's options. fio's net engines also take the peer as
/// `filename=host,port[,protocol]` (a rule of `JobSpec::resolve` fills these in from it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetOpts {
    pub hostname: Option<String>,
    pub port: Option<u16>,
    pub protocol: &'static str,
    pub nodelay: bool,
    pub listen: bool,
    pub pingpong: bool,
    pub interface: Option<String>,
    pub ttl: u32,
    pub window_size: Option<u32>,
    pub mss: Option<u32>,
}

/// rdma's options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RdmaOpts {
    pub hostname: Option<String>,
    pub port: Option<u16>,
    pub bindname: String,
    pub verb: &'static str,
}

fn hostname(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    (s.engine.net.hostname, s.engine.rdma.hostname) = (v.written(), v.written());
    Ok(())
}

fn port(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let port = Some(v.int() as u16);
    (s.engine.net.port, s.engine.rdma.port) = (port, port);
    Ok(())
}

static RDMA_VERBS: &[Choice] = &[
    Choice { word: "write", help: "RDMA write" },
    Choice { word: "read", help: "RDMA read" },
    Choice { word: "send", help: "Send" },
    Choice { word: "recv", help: "Receive" },
];

static PROTOCOLS: &[Choice] = &[
    Choice { word: "tcp", help: "TCP over IPv4" },
    Choice { word: "tcpv6", help: "TCP over IPv6" },
    Choice { word: "udp", help: "UDP over IPv4" },
    Choice { word: "udpv6", help: "UDP over IPv6" },
    Choice { word: "unix", help: "A UNIX domain stream socket" },
];

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("ioengine=net hostname=h port=9 protocol=udp nodelay=1 listen pingpong interface=i ttl=3 window_size=8 mss=9", |s| {
                let o = &s.engine.net;
                o.hostname.as_deref() == Some("h")
                    && o.port == Some(9)
                    && o.protocol == "udp"
                    && o.nodelay
                    && o.listen
                    && o.pingpong
                    && o.interface.as_deref() == Some("i")
                    && o.ttl == 3
                    && o.window_size == Some(8)
                    && o.mss == Some(9)
            }),
            ("ioengine=net filename=h,7,udp", |s| {
                s.engine.net.hostname.as_deref() == Some("h") && s.engine.net.port == Some(7) && s.engine.net.protocol == "udp"
            }),
            ("ioengine=rdma hostname=h port=9 bindname=b verb=read", |s| {
                let o = &s.engine.rdma;
                o.hostname.as_deref() == Some("h") && o.port == Some(9) && o.bindname == "b" && o.verb == "read"
            }),
            ("", |s| s.engine.net.protocol == "tcp" && s.engine.net.ttl == 1 && s.engine.rdma.verb == "write"),
        ]);
    }
}
