//! libibverbs (`libibverbs.so.1`, Debian's libibverbs1) and librdmacm (`librdmacm.so.1`,
//! Debian's librdmacm1): the RDMA verbs and the connection manager the `rdma` engine uses, as a
//! safe [`Endpoint`] over the C functions it needs. The signatures and structure layouts are
//! written by hand from rdma-core's `infiniband/verbs.h` and `rdma/rdma_cma.h` (verbs ABI
//! `IBVERBS_1.1`, connection manager `RDMACM_1.0`; the offsets were checked with `offsetof`
//! against rdma-core 44).
//!
//! Posting work requests and polling completions are inline functions in verbs.h: they call the
//! provider's entries in the device context's `ops` table. That table is part of the ABI (the
//! inline functions compile to exactly these loads), so the entries are read from it here at
//! their fixed offsets.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::Lib;

type Chan = *mut c_void;
type CmId = *mut c_void;
type Ctx = *mut c_void;
type Pd = *mut c_void;
type Cq = *mut c_void;
type Qp = *mut c_void;

/// `struct ibv_sge`.
#[repr(C)]
struct Sge {
    addr: u64,
    length: u32,
    lkey: u32,
}

/// `struct ibv_send_wr` (128 bytes): the fields up to `wr.rdma`, the rest of its unions kept
/// zero.
#[repr(C)]
struct SendWr {
    wr_id: u64,
    next: *mut SendWr,
    sg_list: *mut Sge,
    num_sge: c_int,
    opcode: c_int,
    send_flags: c_uint,
    imm_data: u32,
    remote_addr: u64,
    rkey: u32,
    _pad: u32,
    _rest: [u64; 9],
}

/// `struct ibv_recv_wr`.
#[repr(C)]
struct RecvWr {
    wr_id: u64,
    next: *mut RecvWr,
    sg_list: *mut Sge,
    num_sge: c_int,
    _pad: c_int,
}

/// `struct ibv_wc` (48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Wc {
    wr_id: u64,
    status: c_int,
    opcode: c_int,
    vendor_err: u32,
    byte_len: u32,
    imm_data: u32,
    qp_num: u32,
    src_qp: u32,
    wc_flags: c_uint,
    pkey_index: u16,
    slid: u16,
    sl: u8,
    dlid_path_bits: u8,
    _pad: u16,
}

/// `struct ibv_qp_init_attr` (64 bytes).
#[repr(C)]
struct QpInitAttr {
    qp_context: *mut c_void,
    send_cq: Cq,
    recv_cq: Cq,
    srq: *mut c_void,
    max_send_wr: u32,
    max_recv_wr: u32,
    max_send_sge: u32,
    max_recv_sge: u32,
    max_inline_data: u32,
    qp_type: c_int,
    sq_sig_all: c_int,
    _pad: c_int,
}

/// `struct rdma_conn_param` (24 bytes).
#[repr(C)]
struct ConnParam {
    private_data: *const c_void,
    private_data_len: u8,
    responder_resources: u8,
    initiator_depth: u8,
    flow_control: u8,
    retry_count: u8,
    rnr_retry_count: u8,
    srq: u8,
    _pad: u8,
    qp_num: u32,
    _pad2: u32,
}

/// The head of `struct ibv_mr`.
#[repr(C)]
struct Mr {
    context: Ctx,
    pd: Pd,
    addr: *mut c_void,
    length: usize,
    handle: u32,
    lkey: u32,
    rkey: u32,
}

/// The head of `struct rdma_cm_event`.
#[repr(C)]
struct CmEvent {
    id: CmId,
    listen_id: CmId,
    event: c_int,
    status: c_int,
}

/// Offsets into `struct ibv_context` of its `ops` entries `poll_cq`, `post_send`, `post_recv`.
const OPS_POLL_CQ: usize = 96;
const OPS_POST_SEND: usize = 208;
const OPS_POST_RECV: usize = 216;
/// Offsets into `struct rdma_cm_id` of `verbs` (the device context) and `qp`.
const ID_VERBS: usize = 0;
const ID_QP: usize = 24;

const RDMA_PS_TCP: c_int = 0x0106;
const IBV_QPT_RC: c_int = 2;
const IBV_WR_RDMA_WRITE: c_int = 0;
const IBV_WR_SEND: c_int = 2;
const IBV_WR_RDMA_READ: c_int = 4;
const IBV_SEND_SIGNALED: c_uint = 2;
const ACCESS_ALL: c_int = 1 | 2 | 4; // local write, remote write, remote read
/// `IBV_WC_WR_FLUSH_ERR`: the queue pair went to the error state (the peer disconnected).
pub(crate) const WC_FLUSHED: i32 = 5;

pub(crate) const EV_ADDR_RESOLVED: i32 = 0;
pub(crate) const EV_ROUTE_RESOLVED: i32 = 2;
pub(crate) const EV_CONNECT_REQUEST: i32 = 4;
pub(crate) const EV_ESTABLISHED: i32 = 9;
pub(crate) const EV_DISCONNECTED: i32 = 10;

type PollCq = unsafe extern "C" fn(Cq, c_int, *mut Wc) -> c_int;
type PostSend = unsafe extern "C" fn(Qp, *mut SendWr, *mut *mut SendWr) -> c_int;
type PostRecv = unsafe extern "C" fn(Qp, *mut RecvWr, *mut *mut RecvWr) -> c_int;

/// The functions of both libraries.
struct Rdma {
    create_event_channel: unsafe extern "C" fn() -> Chan,
    destroy_event_channel: unsafe extern "C" fn(Chan),
    create_id: unsafe extern "C" fn(Chan, *mut CmId, *mut c_void, c_int) -> c_int,
    destroy_id: unsafe extern "C" fn(CmId) -> c_int,
    resolve_addr: unsafe extern "C" fn(CmId, *const libc::sockaddr, *const libc::sockaddr, c_int) -> c_int,
    resolve_route: unsafe extern "C" fn(CmId, c_int) -> c_int,
    bind_addr: unsafe extern "C" fn(CmId, *const libc::sockaddr) -> c_int,
    listen: unsafe extern "C" fn(CmId, c_int) -> c_int,
    get_cm_event: unsafe extern "C" fn(Chan, *mut *mut CmEvent) -> c_int,
    ack_cm_event: unsafe extern "C" fn(*mut CmEvent) -> c_int,
    create_qp: unsafe extern "C" fn(CmId, Pd, *mut QpInitAttr) -> c_int,
    destroy_qp: unsafe extern "C" fn(CmId),
    connect: unsafe extern "C" fn(CmId, *mut ConnParam) -> c_int,
    accept: unsafe extern "C" fn(CmId, *mut ConnParam) -> c_int,
    reject: unsafe extern "C" fn(CmId, *const c_void, u8) -> c_int,
    disconnect: unsafe extern "C" fn(CmId) -> c_int,
    event_str: unsafe extern "C" fn(c_int) -> *const c_char,
    alloc_pd: unsafe extern "C" fn(Ctx) -> Pd,
    dealloc_pd: unsafe extern "C" fn(Pd) -> c_int,
    create_cq: unsafe extern "C" fn(Ctx, c_int, *mut c_void, *mut c_void, c_int) -> Cq,
    destroy_cq: unsafe extern "C" fn(Cq) -> c_int,
    reg_mr: unsafe extern "C" fn(Pd, *mut c_void, usize, c_int) -> *mut Mr,
    dereg_mr: unsafe extern "C" fn(*mut Mr) -> c_int,
    wc_status_str: unsafe extern "C" fn(c_int) -> *const c_char,
}

static RDMA: OnceLock<Result<Rdma, String>> = OnceLock::new();

/// Loads both libraries (once per process); the error says which is missing.
pub(crate) fn load() -> Result<(), String> {
    lib().map(|_| ())
}

fn lib() -> Result<&'static Rdma, String> {
    RDMA.get_or_init(open).as_ref().map_err(Clone::clone)
}

fn open() -> Result<Rdma, String> {
    let verbs = Lib::open(c"libibverbs.so.1", "libibverbs1", "rdma")?;
    let cm = Lib::open(c"librdmacm.so.1", "librdmacm1", "rdma")?;
    let v = c"IBVERBS_1.1";
    // SAFETY: every field's type is the signature verbs.h or rdma_cma.h gives the named function
    // (at the named symbol version for libibverbs, which also keeps 1.0 variants).
    unsafe {
        Ok(Rdma {
            create_event_channel: cm.get(c"rdma_create_event_channel")?,
            destroy_event_channel: cm.get(c"rdma_destroy_event_channel")?,
            create_id: cm.get(c"rdma_create_id")?,
            destroy_id: cm.get(c"rdma_destroy_id")?,
            resolve_addr: cm.get(c"rdma_resolve_addr")?,
            resolve_route: cm.get(c"rdma_resolve_route")?,
            bind_addr: cm.get(c"rdma_bind_addr")?,
            listen: cm.get(c"rdma_listen")?,
            get_cm_event: cm.get(c"rdma_get_cm_event")?,
            ack_cm_event: cm.get(c"rdma_ack_cm_event")?,
            create_qp: cm.get(c"rdma_create_qp")?,
            destroy_qp: cm.get(c"rdma_destroy_qp")?,
            connect: cm.get(c"rdma_connect")?,
            accept: cm.get(c"rdma_accept")?,
            reject: cm.get(c"rdma_reject")?,
            disconnect: cm.get(c"rdma_disconnect")?,
            event_str: cm.get(c"rdma_event_str")?,
            alloc_pd: verbs.get_version(c"ibv_alloc_pd", v)?,
            dealloc_pd: verbs.get_version(c"ibv_dealloc_pd", v)?,
            create_cq: verbs.get_version(c"ibv_create_cq", v)?,
            destroy_cq: verbs.get_version(c"ibv_destroy_cq", v)?,
            reg_mr: verbs.get_version(c"ibv_reg_mr", v)?,
            dereg_mr: verbs.get_version(c"ibv_dereg_mr", v)?,
            wc_status_str: verbs.get_version(c"ibv_wc_status_str", v)?,
        })
    }
}

fn text(p: *const c_char) -> String {
    if p.is_null() {
        return "unknown".into();
    }
    // SAFETY: the libraries return NUL-terminated static strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The connection manager's name of event `e` (`RDMA_CM_EVENT_REJECTED`).
pub(crate) fn event_name(e: i32) -> String {
    match lib() {
        // SAFETY: rdma_event_str takes any value and returns a static string.
        Ok(l) => text(unsafe { (l.event_str)(e) }),
        Err(_) => e.to_string(),
    }
}

/// The verbs' name of completion status `s`.
pub(crate) fn status_name(s: i32) -> String {
    match lib() {
        // SAFETY: ibv_wc_status_str takes any value and returns a static string.
        Ok(l) => text(unsafe { (l.wc_status_str)(s) }),
        Err(_) => s.to_string(),
    }
}

fn errno_text() -> String {
    std::io::Error::last_os_error().to_string()
}

/// A socket address as the C library takes it.
fn sockaddr(a: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data; all zeros is a valid (unspecified) value.
    let mut s: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match a {
        SocketAddr::V4(v4) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: v4.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(v4.ip().octets()) },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than sockaddr_in and suitably aligned.
            unsafe { std::ptr::write((&mut s as *mut libc::sockaddr_storage).cast(), sin) };
            (s, std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        SocketAddr::V6(v6) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: v6.port().to_be(),
                sin6_flowinfo: 0,
                sin6_addr: libc::in6_addr { s6_addr: v6.ip().octets() },
                sin6_scope_id: v6.scope_id(),
            };
            // SAFETY: as above, for sockaddr_in6.
            unsafe { std::ptr::write((&mut s as *mut libc::sockaddr_storage).cast(), sin6) };
            (s, std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

/// One connection-manager event: its type, status and the id it is about.
pub(crate) struct Event {
    pub kind: i32,
    pub status: i32,
    id: CmId,
}

/// A registered memory region: its address range and keys.
#[derive(Clone, Copy)]
pub(crate) struct Region {
    mr: *mut Mr,
    pub addr: u64,
    pub len: usize,
    pub lkey: u32,
    pub rkey: u32,
}

/// A finished work request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Done {
    pub wr_id: u64,
    pub status: i32,
    pub byte_len: u32,
}

/// What a work request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Send,
    Write,
    Read,
}

/// One RDMA endpoint: its event channel and connection-manager id, and once connected (or a
/// connection accepted) the protection domain, completion queue and reliable-connected queue
/// pair, and the memory it registered. Everything is released when it is dropped.
pub(crate) struct Endpoint {
    lib: &'static Rdma,
    chan: Chan,
    /// The listening id (server) or the connection's id (client).
    id: CmId,
    /// The accepted connection's id (server).
    conn: CmId,
    pd: Pd,
    cq: Cq,
    qp: Qp,
    poll_cq: Option<PollCq>,
    post_send: Option<PostSend>,
    post_recv: Option<PostRecv>,
    regions: Vec<Region>,
    connected: bool,
}

// SAFETY: the endpoint's objects are used by one thread at a time (the job's worker); the
// libraries allow their use from any thread.
unsafe impl Send for Endpoint {}

impl Endpoint {
    fn new() -> Result<Endpoint, String> {
        let lib = lib()?;
        // SAFETY: no arguments; returns a channel or null.
        let chan = unsafe { (lib.create_event_channel)() };
        if chan.is_null() {
            return Err(format!("cannot open the RDMA connection manager (/dev/infiniband/rdma_cm): {}", errno_text()));
        }
        let mut ep = Endpoint {
            lib,
            chan,
            id: std::ptr::null_mut(),
            conn: std::ptr::null_mut(),
            pd: std::ptr::null_mut(),
            cq: std::ptr::null_mut(),
            qp: std::ptr::null_mut(),
            poll_cq: None,
            post_send: None,
            post_recv: None,
            regions: Vec::new(),
            connected: false,
        };
        // SAFETY: a live channel; the id is written on success.
        if unsafe { (lib.create_id)(chan, &mut ep.id, std::ptr::null_mut(), RDMA_PS_TCP) } != 0 {
            return Err(format!("cannot create an RDMA connection id: {}", errno_text()));
        }
        Ok(ep)
    }

    /// Binds to `addr` and listens for one connection.
    pub(crate) fn listen(addr: SocketAddr) -> Result<Endpoint, String> {
        let ep = Endpoint::new()?;
        let (s, _) = sockaddr(&addr);
        // SAFETY: a live id and a valid socket address.
        if unsafe { (ep.lib.bind_addr)(ep.id, (&s as *const libc::sockaddr_storage).cast()) } != 0 {
            let e = std::io::Error::last_os_error();
            if matches!(e.raw_os_error(), Some(libc::EADDRINUSE | libc::EADDRNOTAVAIL)) {
                // fio gives every clone of a job the same port, so a second server clone
                // (numjobs>1) lands here, as fio's does.
                return Err(format!(
                    "port={} is taken on {} (another server listens there; the clones of a job \
                     share its port, so only one of them can serve): {e}",
                    addr.port(),
                    addr.ip()
                ));
            }
            return Err(format!("cannot bind to {addr}: {e}"));
        }
        // SAFETY: a bound id.
        if unsafe { (ep.lib.listen)(ep.id, 1) } != 0 {
            return Err(format!("cannot listen on {addr}: {}", errno_text()));
        }
        Ok(ep)
    }

    /// The next connection-manager event, or `None` when `timeout` passed first.
    pub(crate) fn event(&self, timeout: Duration) -> Result<Option<Event>, String> {
        // SAFETY: `struct rdma_event_channel` starts with its file descriptor.
        let fd = unsafe { *(self.chan as *const c_int) };
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        let ms = timeout.as_millis().min(c_int::MAX as u128) as c_int;
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                return Ok(None);
            }
            return Err(format!("waiting for the RDMA connection manager: {e}"));
        }
        if n == 0 {
            return Ok(None);
        }
        let mut ev: *mut CmEvent = std::ptr::null_mut();
        // SAFETY: a live channel with an event ready; the event is written on success.
        if unsafe { (self.lib.get_cm_event)(self.chan, &mut ev) } != 0 {
            return Err(format!("reading an RDMA connection manager event: {}", errno_text()));
        }
        // SAFETY: a valid event until it is acknowledged, just after this copy.
        let out = unsafe { Event { kind: (*ev).event, status: (*ev).status, id: (*ev).id } };
        // SAFETY: the event came from rdma_get_cm_event and is acknowledged once.
        unsafe { (self.lib.ack_cm_event)(ev) };
        Ok(Some(out))
    }

    /// Waits until an event comes (up to `timeout`) and checks that it is `want`.
    fn expect(&self, want: i32, timeout: Duration, what: &str) -> Result<Event, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("{what}: no answer within {} s", timeout.as_secs()));
            }
            if let Some(ev) = self.event(left)? {
                if ev.kind == want {
                    return Ok(ev);
                }
                return Err(format!(
                    "{what}: {} (status {}) instead of {}",
                    event_name(ev.kind),
                    ev.status,
                    event_name(want)
                ));
            }
        }
    }

    /// Connects to `peer` (from `bind` when given): resolves the address and the route, sets
    /// up the queue pair for `depth` I/Os and connects.
    pub(crate) fn connect(peer: SocketAddr, bind: Option<SocketAddr>, depth: u32) -> Result<Endpoint, String> {
        let mut ep = Endpoint::new()?;
        let (dst, _) = sockaddr(&peer);
        let src = bind.map(|b| sockaddr(&b).0);
        let srcp = src.as_ref().map_or(std::ptr::null(), |s| (s as *const libc::sockaddr_storage).cast());
        // SAFETY: a live id, valid addresses (the source may be null).
        if unsafe { (ep.lib.resolve_addr)(ep.id, srcp, (&dst as *const libc::sockaddr_storage).cast(), 2000) } != 0 {
            return Err(format!("cannot resolve {peer} to an RDMA device: {}", errno_text()));
        }
        ep.expect(EV_ADDR_RESOLVED, Duration::from_secs(5), &format!("resolving {peer}"))?;
        // SAFETY: an id whose address is resolved.
        if unsafe { (ep.lib.resolve_route)(ep.id, 2000) } != 0 {
            return Err(format!("cannot find a route to {peer}: {}", errno_text()));
        }
        ep.expect(EV_ROUTE_RESOLVED, Duration::from_secs(5), &format!("finding a route to {peer}"))?;
        ep.make_qp(ep.id, depth)?;
        let mut param = conn_param(depth);
        // SAFETY: an id with a queue pair and a valid parameter block.
        if unsafe { (ep.lib.connect)(ep.id, &mut param) } != 0 {
            return Err(format!("cannot connect to {peer}: {}", errno_text()));
        }
        match ep.expect(EV_ESTABLISHED, Duration::from_secs(10), &format!("connecting to {peer}")) {
            Ok(_) => {}
            Err(e) if e.contains("REJECTED") => {
                return Err(format!(
                    "{peer} refused the connection (nothing listens on port {}, or the peer rejected it)",
                    peer.port()
                ))
            }
            Err(e) if e.contains("UNREACHABLE") => return Err(format!("{peer} is unreachable over RDMA ({e})")),
            Err(e) if e.contains("no answer") => {
                return Err(format!("{peer} did not answer the connection request within 10 s (no RDMA peer there?)"))
            }
            Err(e) => return Err(e),
        }
        ep.connected = true;
        Ok(ep)
    }

    /// Waits (without limit, in slices, so that a signal is noticed) for a connection request
    /// and sets up its queue pair for `depth` I/Os; [`Endpoint::accept`] completes it.
    pub(crate) fn take_request(&mut self, depth: u32) -> Result<(), String> {
        loop {
            if let Some(ev) = self.event(Duration::from_secs(1))? {
                if ev.kind == EV_CONNECT_REQUEST {
                    self.conn = ev.id;
                    return self.make_qp(ev.id, depth);
                }
            }
        }
    }

    /// Accepts the connection request taken (receives may be posted before this).
    pub(crate) fn accept(&mut self, depth: u32) -> Result<(), String> {
        let mut param = conn_param(depth);
        // SAFETY: the request's id with its queue pair, and a valid parameter block.
        if unsafe { (self.lib.accept)(self.conn, &mut param) } != 0 {
            return Err(format!("cannot accept the connection: {}", errno_text()));
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err("accepting the connection: no answer within 10 s".to_string());
            }
            let Some(ev) = self.event(left)? else { continue };
            match ev.kind {
                EV_ESTABLISHED => break,
                // Another client (a clone of a numjobs>1 client: they all connect to the one
                // port) asks while this one is accepted: the endpoint serves one connection,
                // so the other is turned away at once rather than left waiting.
                // SAFETY: the id came with this connection request and is used once.
                EV_CONNECT_REQUEST => unsafe {
                    (self.lib.reject)(ev.id, std::ptr::null(), 0);
                },
                k => {
                    return Err(format!(
                        "accepting the connection: {} (status {}) instead of {}",
                        event_name(k),
                        ev.status,
                        event_name(EV_ESTABLISHED)
                    ))
                }
            }
        }
        self.connected = true;
        Ok(())
    }

    fn make_qp(&mut self, id: CmId, depth: u32) -> Result<(), String> {
        // SAFETY: `id` is a live cm id bound to a device: its `verbs` field is that device's
        // context.
        let ctx = unsafe { *(id as *const u8).add(ID_VERBS).cast::<Ctx>() };
        if ctx.is_null() {
            return Err("the RDMA connection has no device".into());
        }
        // SAFETY: a live device context.
        self.pd = unsafe { (self.lib.alloc_pd)(ctx) };
        if self.pd.is_null() {
            return Err(format!("cannot allocate an RDMA protection domain: {}", errno_text()));
        }
        let wrs = depth + 8;
        // SAFETY: a live context; no completion channel.
        self.cq =
            unsafe { (self.lib.create_cq)(ctx, (2 * wrs) as c_int, std::ptr::null_mut(), std::ptr::null_mut(), 0) };
        if self.cq.is_null() {
            return Err(format!("cannot create an RDMA completion queue: {}", errno_text()));
        }
        let mut attr = QpInitAttr {
            qp_context: std::ptr::null_mut(),
            send_cq: self.cq,
            recv_cq: self.cq,
            srq: std::ptr::null_mut(),
            max_send_wr: wrs,
            max_recv_wr: wrs,
            max_send_sge: 1,
            max_recv_sge: 1,
            max_inline_data: 0,
            qp_type: IBV_QPT_RC,
            sq_sig_all: 1,
            _pad: 0,
        };
        // SAFETY: a live id, protection domain and a valid attribute block.
        if unsafe { (self.lib.create_qp)(id, self.pd, &mut attr) } != 0 {
            return Err(format!("cannot create an RDMA queue pair: {}", errno_text()));
        }
        // SAFETY: rdma_create_qp stored the queue pair in the id; the context's ops table holds
        // the provider's entries at the ABI's offsets (see the module's documentation).
        unsafe {
            self.qp = *(id as *const u8).add(ID_QP).cast::<Qp>();
            let ops = ctx as *const u8;
            self.poll_cq = *ops.add(OPS_POLL_CQ).cast::<Option<PollCq>>();
            self.post_send = *ops.add(OPS_POST_SEND).cast::<Option<PostSend>>();
            self.post_recv = *ops.add(OPS_POST_RECV).cast::<Option<PostRecv>>();
        }
        if self.qp.is_null() || self.poll_cq.is_none() || self.post_send.is_none() || self.post_recv.is_none() {
            return Err("the RDMA device's provider lacks post/poll entries".into());
        }
        Ok(())
    }

    /// Registers `len` bytes at `addr` for local and remote reads and writes.
    ///
    /// # Safety
    /// The memory must stay allocated while the endpoint lives.
    pub(crate) unsafe fn register(&mut self, addr: *mut u8, len: usize) -> Result<Region, String> {
        // SAFETY: a live protection domain; the memory is the caller's promise.
        let mr = unsafe { (self.lib.reg_mr)(self.pd, addr.cast(), len, ACCESS_ALL) };
        if mr.is_null() {
            return Err(format!("cannot register {len} bytes of memory for RDMA: {}", errno_text()));
        }
        // SAFETY: a registered region's head.
        let (lkey, rkey) = unsafe { ((*mr).lkey, (*mr).rkey) };
        let r = Region { mr, addr: addr as u64, len, lkey, rkey };
        self.regions.push(r);
        Ok(r)
    }

    /// Posts a receive into `len` bytes at `addr` of region `r`.
    pub(crate) fn post_recv(&self, wr_id: u64, r: &Region, addr: u64, len: u32) -> Result<(), String> {
        assert!(addr >= r.addr && addr + len as u64 <= r.addr + r.len as u64);
        let mut sge = Sge { addr, length: len, lkey: r.lkey };
        let mut wr = RecvWr { wr_id, next: std::ptr::null_mut(), sg_list: &mut sge, num_sge: 1, _pad: 0 };
        let mut bad = std::ptr::null_mut();
        // SAFETY: a live queue pair; the work request and its list are valid for the call (the
        // provider copies them); the memory is inside a registered region.
        let rc = unsafe { (self.post_recv.expect("a queue pair"))(self.qp, &mut wr, &mut bad) };
        if rc != 0 {
            return Err(format!("cannot post an RDMA receive: {}", std::io::Error::from_raw_os_error(rc)));
        }
        Ok(())
    }

    /// Posts `op` of `len` bytes at `addr` of region `r` (to `remote`'s address and key for
    /// RDMA writes and reads).
    pub(crate) fn post(
        &self,
        wr_id: u64,
        op: Op,
        r: &Region,
        addr: u64,
        len: u32,
        remote: (u64, u32),
    ) -> Result<(), i32> {
        assert!(addr >= r.addr && addr + len as u64 <= r.addr + r.len as u64);
        let mut sge = Sge { addr, length: len, lkey: r.lkey };
        let opcode = match op {
            Op::Send => IBV_WR_SEND,
            Op::Write => IBV_WR_RDMA_WRITE,
            Op::Read => IBV_WR_RDMA_READ,
        };
        let mut wr = SendWr {
            wr_id,
            next: std::ptr::null_mut(),
            sg_list: &mut sge,
            num_sge: 1,
            opcode,
            send_flags: IBV_SEND_SIGNALED,
            imm_data: 0,
            remote_addr: remote.0,
            rkey: remote.1,
            _pad: 0,
            _rest: [0; 9],
        };
        let mut bad = std::ptr::null_mut();
        // SAFETY: as in post_recv.
        let rc = unsafe { (self.post_send.expect("a queue pair"))(self.qp, &mut wr, &mut bad) };
        if rc != 0 {
            return Err(rc);
        }
        Ok(())
    }

    /// Collects up to `max` finished work requests without waiting.
    pub(crate) fn poll(&self, max: usize, out: &mut Vec<Done>) -> Result<usize, String> {
        let mut wc = [Wc::default(); 16];
        let n = max.min(wc.len()) as c_int;
        // SAFETY: a live completion queue and room for `n` entries.
        let got = unsafe { (self.poll_cq.expect("a queue pair"))(self.cq, n, wc.as_mut_ptr()) };
        if got < 0 {
            return Err("polling the RDMA completion queue failed".into());
        }
        for w in &wc[..got as usize] {
            out.push(Done { wr_id: w.wr_id, status: w.status, byte_len: w.byte_len });
        }
        Ok(got as usize)
    }

    /// Whether the peer has disconnected (an event waiting says so).
    /// Whether the peer has disconnected. A server's later connection requests (another clone
    /// of a numjobs>1 client) are rejected here, so that they end at once.
    pub(crate) fn disconnected(&self) -> bool {
        match self.event(Duration::ZERO) {
            Ok(Some(ev)) if ev.kind == EV_CONNECT_REQUEST => {
                // SAFETY: the id came with this connection request and is used once.
                unsafe { (self.lib.reject)(ev.id, std::ptr::null(), 0) };
                false
            }
            Ok(Some(ev)) => ev.kind == EV_DISCONNECTED,
            _ => false,
        }
    }
}

fn conn_param(depth: u32) -> ConnParam {
    let rd = depth.clamp(1, 16) as u8;
    ConnParam {
        private_data: std::ptr::null(),
        private_data_len: 0,
        responder_resources: rd,
        initiator_depth: rd,
        flow_control: 1,
        retry_count: 7,
        // 7: retry without limit while the receiver has no receive posted.
        rnr_retry_count: 7,
        srq: 0,
        _pad: 0,
        qp_num: 0,
        _pad2: 0,
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let lib = self.lib;
        let id = if self.conn.is_null() { self.id } else { self.conn };
        // SAFETY: each object is released once, in reverse order of creation; null ones were
        // never made.
        unsafe {
            if self.connected {
                (lib.disconnect)(id);
                // The peer's answer, so that it is not left waiting for its timeout.
                let _ = self.expect(EV_DISCONNECTED, Duration::from_millis(500), "disconnecting");
            }
            if !self.qp.is_null() {
                (lib.destroy_qp)(id);
            }
            for r in self.regions.drain(..) {
                (lib.dereg_mr)(r.mr);
            }
            if !self.cq.is_null() {
                (lib.destroy_cq)(self.cq);
            }
            if !self.pd.is_null() {
                (lib.dealloc_pd)(self.pd);
            }
            if !self.conn.is_null() {
                (lib.destroy_id)(self.conn);
            }
            if !self.id.is_null() {
                (lib.destroy_id)(self.id);
            }
            (lib.destroy_event_channel)(self.chan);
        }
    }
}
