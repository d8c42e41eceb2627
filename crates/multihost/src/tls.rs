//! TLS 1.3 (rustls, ring) between a coordinator and a standing `fiox --server`, authenticated
//! by a shared secret proven inside the session (see [`crate::auth`]), by mutual TLS with a
//! site CA, or both. Blocking, no async runtime: [`accept`] and [`connect`] take a connected
//! `TcpStream`, finish the handshake and the authentication within a deadline, and hand back a
//! [`Duplex`].
//!
//! After the TLS handshake the client sends `FXAUTH1`, a flags byte (bit 0: a proof follows)
//! and its proof; the server answers `FXAUTH1`, a status byte, then either a flags byte and its
//! own proof or a short message saying why it refused. The server sends its proof only once
//! the client's passed, and a refusal says why, so both sides can print a clear message.
//!
//! Sharing one TLS session between a reading and a writing thread: the rustls connection sits
//! in a mutex that is only ever held for memory work (decrypting bytes already received,
//! encrypting bytes to send), never across a blocking socket call. The reader blocks in
//! `recv` on its own handle of the socket without any lock, then takes the mutex to feed what
//! arrived to rustls; the writer encrypts under the mutex and sends under a second mutex that
//! orders the socket's writes. So a reader waiting for the peer never delays a write (no
//! polling, no read timeouts adding latency to clock probes and heartbeats), a writer stuck on
//! a full socket never stops the reader from draining the peer, and TLS records leave in the
//! order rustls made them. `close` shuts the socket down, which releases a blocked reader.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{AlertDescription, CertificateError, Connection, DigitallySignedStruct, SignatureScheme};
use sha2::{Digest, Sha256};

use crate::auth::{check_private, Role, Secret, EXPORTER_LABEL, PROOF_LEN};
pub use crate::auth::{Error, Result};
use crate::transport::Duplex;

/// Every handshake (TLS and authentication) ends within this unless told otherwise.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

const MAGIC: &[u8; 7] = b"FXAUTH1";
const HAS_PROOF: u8 = 1;
const STATUS_OK: u8 = 0;
const STATUS_REFUSED: u8 = 1;
const MAX_REFUSAL: usize = 512;

/// The credentials a server or a coordinator was given (`--auth-key`, `--tls-ca`,
/// `--tls-cert`, `--tls-key`, or the `FIOX_*` variables).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOpts {
    /// A shared-secret key file (`fiox --keygen`).
    pub auth_key: Option<PathBuf>,
    /// The site CA's certificate(s), PEM: peers' certificates must chain to it.
    pub ca: Option<PathBuf>,
    /// This side's certificate chain, PEM.
    pub cert: Option<PathBuf>,
    /// This side's private key, PEM, mode 0600.
    pub key: Option<PathBuf>,
}

impl TlsOpts {
    /// Whether no credential at all was given.
    pub fn is_empty(&self) -> bool {
        self.auth_key.is_none() && self.ca.is_none() && self.cert.is_none() && self.key.is_none()
    }

    fn own_cert(&self) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>> {
        match (&self.cert, &self.key) {
            (None, None) => Ok(None),
            (Some(c), Some(k)) => Ok(Some((load_certs(c, "--tls-cert")?, load_key(k)?))),
            (Some(_), None) => Err(Error::Config("--tls-cert needs --tls-key (the certificate's private key)".into())),
            (None, Some(_)) => Err(Error::Config("--tls-key needs --tls-cert (the key's certificate)".into())),
        }
    }

    fn secret(&self) -> Result<Option<Secret>> {
        self.auth_key.as_deref().map(Secret::load).transpose()
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server's TLS settings, built once and used for every connection.
#[derive(Clone)]
pub struct ServerConfig {
    tls: Arc<rustls::ServerConfig>,
    secret: Option<Secret>,
    mutual: bool,
    fingerprint: String,
    identity_file: Option<PathBuf>,
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl ServerConfig {
    /// The server's settings: a shared secret (`auth_key`), mutual TLS (`ca` with the server's
    /// own `cert` and `key` from that CA), or both. With a secret and no certificate of its
    /// own, the server's identity is a self-signed certificate kept beside the key file as
    /// `KEYFILE.server.pem` (made on first use, mode 0600), or made afresh in memory where that
    /// folder is read-only (a mounted secret): the proof, not the certificate, authenticates the
    /// server then.
    pub fn from_opts(o: &TlsOpts) -> Result<ServerConfig> {
        let secret = o.secret()?;
        if secret.is_none() && o.ca.is_none() {
            return Err(Error::Config(
                "a network server needs credentials: --auth-key=FILE (a shared secret; `fiox --keygen` \
                 writes one) or --tls-ca, --tls-cert and --tls-key (mutual TLS); without them fiox \
                 serves only loopback or a unix socket"
                    .into(),
            ));
        }
        let mut identity_file = None;
        let (chain, key) = match (o.own_cert()?, &secret) {
            (Some(ck), _) => ck,
            (None, Some(s)) => {
                let (ck, file) = self_signed_identity(s.path())?;
                identity_file = file;
                ck
            }
            (None, None) => {
                return Err(Error::Config(
                    "--tls-ca on a server needs --tls-cert and --tls-key: the server's own certificate \
                     from the site CA"
                        .into(),
                ))
            }
        };
        let fingerprint = fingerprint(&chain[0]);
        let p = provider();
        let builder = rustls::ServerConfig::builder_with_provider(p.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| Error::Config(format!("TLS: {e}")))?;
        let builder = match &o.ca {
            Some(ca) => {
                let roots = load_roots(ca)?;
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), p)
                    .build()
                    .map_err(|e| Error::Config(format!("--tls-ca {}: {e}", ca.display())))?;
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let mut tls = builder
            .with_single_cert(chain, key)
            .map_err(|e| Error::Config(format!("the server's certificate and key do not fit together: {e}")))?;
        // No resumption: every session is a full handshake, so mutual TLS re-checks the
        // client's certificate each time and nothing is sent after the handshake unasked.
        tls.send_tls13_tickets = 0;
        tls.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
        Ok(ServerConfig { tls: Arc::new(tls), secret, mutual: o.ca.is_some(), fingerprint, identity_file })
    }

    /// SHA-256 of the server's certificate (`sha256:…`), for its startup line and for users
    /// who want to compare it with what coordinators report.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// One line for the server's log: how it authenticates and who it is.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(s) = &self.secret {
            parts.push(format!("shared secret (key {})", s.key_id()));
        }
        if self.mutual {
            parts.push("client certificates from --tls-ca".to_string());
        }
        let mut line = format!(
            "TLS 1.3, clients authenticated by {}; server certificate {}",
            parts.join(" and "),
            self.fingerprint
        );
        if let Some(f) = &self.identity_file {
            line.push_str(&format!(" ({})", f.display()));
        }
        line
    }
}

/// A coordinator's TLS settings.
#[derive(Clone)]
pub struct ClientConfig {
    tls: Arc<rustls::ClientConfig>,
    secret: Option<Secret>,
    ca: bool,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig").field("secret", &self.secret).field("ca", &self.ca).finish()
    }
}

impl ClientConfig {
    /// The coordinator's settings: with `ca` the server's certificate must chain to it and
    /// name the host; with only a secret any certificate is taken (its handshake signature is
    /// still checked) and the server's proof authenticates it. `cert`/`key` present a client
    /// certificate to servers that ask for one.
    pub fn from_opts(o: &TlsOpts) -> Result<ClientConfig> {
        let secret = o.secret()?;
        if secret.is_none() && o.ca.is_none() {
            return Err(Error::Config(
                "a TLS connection needs credentials: --auth-key=FILE (the servers' shared secret) or \
                 --tls-ca, --tls-cert and --tls-key (mutual TLS)"
                    .into(),
            ));
        }
        Self::build(o, secret)
    }

    /// A client that offers no credentials and trusts any server: only to see how a server
    /// refuses it (tests, diagnostics). Nothing it connects to is authenticated.
    pub fn unauthenticated() -> ClientConfig {
        Self::build(&TlsOpts::default(), None).expect("a configuration without files cannot fail")
    }

    fn build(o: &TlsOpts, secret: Option<Secret>) -> Result<ClientConfig> {
        let p = provider();
        let builder = rustls::ClientConfig::builder_with_provider(p.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| Error::Config(format!("TLS: {e}")))?;
        let builder = match &o.ca {
            Some(ca) => builder.with_root_certificates(load_roots(ca)?),
            None => builder.dangerous().with_custom_certificate_verifier(Arc::new(ProofVerifiesServer(p))),
        };
        let mut tls = match o.own_cert()? {
            Some((chain, key)) => builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| Error::Config(format!("--tls-cert and --tls-key do not fit together: {e}")))?,
            None => builder.with_no_client_auth(),
        };
        tls.resumption = rustls::client::Resumption::disabled();
        Ok(ClientConfig { tls: Arc::new(tls), secret, ca: o.ca.is_some() })
    }
}

/// Shared-secret mode without a CA: any server certificate is accepted here, because the
/// server's HMAC proof, bound to this very session, is what authenticates it (a man in the
/// middle cannot make that proof). The handshake signature is still verified, so the session
/// belongs to the holder of the certificate's key.
#[derive(Debug)]
struct ProofVerifiesServer(Arc<CryptoProvider>);

impl ServerCertVerifier for ProofVerifiesServer {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        // Only TLS 1.3 is offered, so rustls never asks.
        Err(rustls::Error::PeerIncompatible(rustls::PeerIncompatible::Tls13RequiredForQuic))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The server side of one connection: TLS handshake, then the client's authentication, all
/// within `timeout`. A peer that does not start TLS (a fio client, a plaintext fiox) is told
/// apart and refused without a handshake. The error says what the peer did, naming it; the
/// caller logs it.
pub fn accept(stream: TcpStream, cfg: &ServerConfig, timeout: Duration) -> Result<Duplex> {
    let peer = peer_name(&stream);
    let deadline = Instant::now() + timeout;
    no_delay(&stream, &peer)?;
    sniff_tls(&stream, &peer, deadline)?;
    let conn = rustls::ServerConnection::new(cfg.tls.clone()).map_err(|e| Error::Config(format!("TLS: {e}")))?;
    let mut s = Session { conn: Connection::Server(conn), sock: stream, deadline, peer, side: Role::Server };
    s.handshake()?;
    let mut identity = Vec::new();
    if let Some(der) = s.conn.peer_certificates().and_then(|c| c.first()) {
        identity.push(format!("certificate {}", cert_label(der)));
    }
    let mut head = [0u8; 8];
    s.read_exact(&mut head, "authentication")?;
    if &head[..7] != MAGIC {
        return Err(s.refuse("the client did not start fiox authentication (not a fiox coordinator?)"));
    }
    let offered = head[7] & HAS_PROOF != 0;
    let mut proof = [0u8; PROOF_LEN];
    if offered {
        s.read_exact(&mut proof, "authentication")?;
    }
    let mut reply = MAGIC.to_vec();
    match (&cfg.secret, offered) {
        (Some(secret), true) => {
            let exporter = s.exporter()?;
            if !secret.verify(Role::Client, &exporter, &proof) {
                return Err(s.refuse("wrong shared secret: the client's proof does not match this server's --auth-key"));
            }
            identity.push(format!("key {}", secret.key_id()));
            reply.extend_from_slice(&[STATUS_OK, HAS_PROOF]);
            reply.extend_from_slice(&secret.proof(Role::Server, &exporter));
        }
        (Some(_), false) => {
            return Err(s.refuse("no shared secret offered: this server requires --auth-key (the same key file)"));
        }
        // Mutual TLS alone: the certificate was checked in the handshake.
        (None, _) => reply.extend_from_slice(&[STATUS_OK, 0]),
    }
    s.write_all(&reply, "authentication")?;
    let identity = identity.join(", ");
    s.into_duplex(Some(identity))
}

/// The coordinator side: TLS handshake with `host` (the name or address the user gave; with
/// a CA the server's certificate must name it), then authentication, within `timeout`.
pub fn connect(stream: TcpStream, host: &str, cfg: &ClientConfig, timeout: Duration) -> Result<Duplex> {
    let peer = peer_name(&stream);
    let deadline = Instant::now() + timeout;
    no_delay(&stream, &peer)?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let name = match ServerName::try_from(bare.to_string()) {
        Ok(n) => n,
        // With the shared secret alone no name is checked (the proof authenticates), so a host
        // name TLS cannot carry (`h_1`) is no reason to refuse.
        Err(_) if !cfg.ca => ServerName::try_from("fiox-server").expect("a valid DNS name"),
        Err(_) => return Err(Error::Config(format!("{host}: not a host name or address TLS can check"))),
    };
    let conn = rustls::ClientConnection::new(cfg.tls.clone(), name).map_err(|e| Error::Config(format!("TLS: {e}")))?;
    let mut s = Session { conn: Connection::Client(conn), sock: stream, deadline, peer, side: Role::Client };
    s.handshake()?;
    let server_cert = s.conn.peer_certificates().and_then(|c| c.first()).map(cert_label);
    let exporter = s.exporter()?;
    let mut hello = MAGIC.to_vec();
    match &cfg.secret {
        Some(secret) => {
            hello.push(HAS_PROOF);
            hello.extend_from_slice(&secret.proof(Role::Client, &exporter));
        }
        None => hello.push(0),
    }
    s.write_all(&hello, "authentication")?;
    let mut head = [0u8; 8];
    s.read_exact(&mut head, "authentication")?;
    if &head[..7] != MAGIC {
        return Err(Error::Handshake(format!(
            "{}: answered authentication with something else: not a fiox server?",
            s.peer
        )));
    }
    if head[7] == STATUS_REFUSED {
        let mut len = [0u8; 2];
        s.read_exact(&mut len, "authentication")?;
        let mut msg = vec![0u8; usize::from(u16::from_le_bytes(len)).min(MAX_REFUSAL)];
        s.read_exact(&mut msg, "authentication")?;
        return Err(Error::Refused(format!("{} refused authentication: {}", s.peer, String::from_utf8_lossy(&msg))));
    }
    if head[7] != STATUS_OK {
        return Err(Error::Handshake(format!("{}: unknown authentication status {}", s.peer, head[7])));
    }
    let mut flags = [0u8; 1];
    s.read_exact(&mut flags, "authentication")?;
    let mut identity = Vec::new();
    if let Some(c) = server_cert {
        identity.push(format!("certificate {c}"));
    }
    match (&cfg.secret, flags[0] & HAS_PROOF != 0) {
        (Some(secret), true) => {
            let mut proof = [0u8; PROOF_LEN];
            s.read_exact(&mut proof, "authentication")?;
            if !secret.verify(Role::Server, &exporter, &proof) {
                return Err(Error::Refused(format!(
                    "{} failed to prove the shared secret: its --auth-key differs from ours ({}), or it is not \
                     the server meant",
                    s.peer,
                    secret.path().display()
                )));
            }
            identity.push(format!("key {}", secret.key_id()));
        }
        // Trust through the CA alone when the server has no secret.
        (Some(_), false) if cfg.ca => {}
        (Some(_), false) => {
            return Err(Error::Refused(format!(
                "{} did not prove the shared secret (a server without --auth-key, and no --tls-ca here to check \
                 its certificate)",
                s.peer
            )))
        }
        (None, _) => {}
    }
    s.into_duplex(Some(identity.join(", ")))
}

/// Waits for the first bytes and refuses a peer that does not start with a TLS handshake
/// record, saying what it looks like.
fn sniff_tls(stream: &TcpStream, peer: &str, deadline: Instant) -> Result<()> {
    let mut first = [0u8; 4];
    let n = loop {
        set_timeouts(stream, deadline, peer, "the TLS handshake")?;
        match stream.peek(&mut first) {
            Ok(n) => break n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error(e, peer, "the TLS handshake")),
        }
    };
    if n == 0 {
        return Err(Error::Handshake(format!("{peer} closed the connection before sending anything")));
    }
    // A TLS record of type handshake (22) opens every ClientHello.
    if first[0] == 22 {
        return Ok(());
    }
    let bytes = first[..n].iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ");
    // fio's frames start with its protocol version (u16, little-endian) and the command (PROBE
    // is 10).
    let what = if n >= 4 && first[2] == 10 && first[3] == 0 && first[1] == 0 {
        format!("a fio client (fio --client, protocol version {})", first[0])
    } else {
        "a plaintext client (fio --client, or a fiox coordinator without TLS?)".to_string()
    };
    Err(Error::Handshake(format!(
        "{peer} does not speak TLS (first bytes {bytes}): {what}; this port takes TLS 1.3 only"
    )))
}

/// A connection during its handshake: single-threaded, every socket call bounded by the
/// deadline.
struct Session {
    conn: Connection,
    sock: TcpStream,
    deadline: Instant,
    peer: String,
    side: Role,
}

impl Session {
    fn handshake(&mut self) -> Result<()> {
        while self.conn.is_handshaking() {
            self.flush("the TLS handshake")?;
            if !self.conn.is_handshaking() {
                break;
            }
            self.fill("the TLS handshake")?;
        }
        // The client's Finished (and anything else queued) goes out before authentication.
        self.flush("the TLS handshake")
    }

    /// Sends what rustls has queued.
    fn flush(&mut self, stage: &str) -> Result<()> {
        while self.conn.wants_write() {
            set_timeouts(&self.sock, self.deadline, &self.peer, stage)?;
            match self.conn.write_tls(&mut self.sock) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error(e, &self.peer, stage)),
            }
        }
        Ok(())
    }

    /// Reads once from the socket into rustls and processes it.
    fn fill(&mut self, stage: &str) -> Result<()> {
        set_timeouts(&self.sock, self.deadline, &self.peer, stage)?;
        let n = match self.conn.read_tls(&mut self.sock) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(io_error(e, &self.peer, stage)),
        };
        if n == 0 {
            let what = if self.conn.is_handshaking() && self.side == Role::Client {
                format!("{}: peer closed during TLS handshake: a fio server or a non-fiox service?", self.peer)
            } else {
                format!("{}: peer closed the connection during {stage}", self.peer)
            };
            return Err(Error::Handshake(what));
        }
        if let Err(e) = self.conn.process_new_packets() {
            // rustls queued an alert telling the peer why; send it before giving up.
            let _ = self.flush(stage);
            return Err(tls_error(&e, self.side, &self.peer));
        }
        Ok(())
    }

    fn read_exact(&mut self, buf: &mut [u8], stage: &str) -> Result<()> {
        let mut got = 0;
        while got < buf.len() {
            match self.conn.reader().read(&mut buf[got..]) {
                Ok(0) => {
                    return Err(Error::Handshake(format!("{}: peer closed the connection during {stage}", self.peer)))
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.fill(stage)?,
                Err(_) => {
                    return Err(Error::Handshake(format!("{}: peer closed the connection during {stage}", self.peer)))
                }
            }
        }
        Ok(())
    }

    fn write_all(&mut self, data: &[u8], stage: &str) -> Result<()> {
        self.conn.writer().write_all(data).map_err(|e| io_error(e, &self.peer, stage))?;
        self.flush(stage)
    }

    fn exporter(&self) -> Result<[u8; PROOF_LEN]> {
        let mut out = [0u8; PROOF_LEN];
        self.conn
            .export_keying_material(&mut out, EXPORTER_LABEL, None)
            .map_err(|e| Error::Handshake(format!("{}: TLS exporter: {e}", self.peer)))?;
        Ok(out)
    }

    /// Tells the client why it is refused, then returns the server's own error.
    fn refuse(&mut self, why: &str) -> Error {
        let mut msg = MAGIC.to_vec();
        msg.push(STATUS_REFUSED);
        let text = &why.as_bytes()[..why.len().min(MAX_REFUSAL)];
        msg.extend_from_slice(&(text.len() as u16).to_le_bytes());
        msg.extend_from_slice(text);
        let _ = self.write_all(&msg, "authentication");
        self.conn.send_close_notify();
        let _ = self.flush("authentication");
        Error::Refused(format!("{}: authentication failed: {why}", self.peer))
    }

    fn into_duplex(self, identity: Option<String>) -> Result<Duplex> {
        let Session { conn, sock, peer, .. } = self;
        let clone = |s: &TcpStream| s.try_clone().map_err(|e| Error::Io(format!("{peer}: {e}")));
        sock.set_read_timeout(None)
            .and_then(|()| sock.set_write_timeout(None))
            .map_err(|e| Error::Io(format!("{peer}: {e}")))?;
        let shared = Arc::new(Shared {
            conn: Mutex::new(conn),
            send: Mutex::new(clone(&sock)?),
            closed: AtomicBool::new(false),
            sock: clone(&sock)?,
        });
        let reader = TlsReader { shared: shared.clone(), sock, pending: Vec::new(), eof: false };
        let writer = TlsWriter { shared: shared.clone() };
        let close = move || shared.close();
        Ok(Duplex { reader: Box::new(reader), writer: Box::new(writer), peer, identity, close: Box::new(close) })
    }
}

/// One TLS session shared by a [`Duplex`]'s halves (see the module comment for the locking).
struct Shared {
    conn: Mutex<Connection>,
    /// The socket's sending side; held while sending, so records leave in order.
    send: Mutex<TcpStream>,
    /// For `shutdown`, which needs no lock.
    sock: TcpStream,
    closed: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere must not make the connection unusable for closing.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    /// Sends everything rustls has queued; blocks on the socket with only the send lock held.
    fn flush(&self) -> io::Result<()> {
        loop {
            {
                let mut sock = lock(&self.send);
                self.drain(&mut sock)?;
            }
            // Re-check after letting go: a reader that found the send lock busy left its bytes
            // (an alert, a key update) for the holder to send.
            if !lock(&self.conn).wants_write() {
                return Ok(());
            }
        }
    }

    /// The reader's flush: sends queued bytes unless someone is already sending, in which
    /// case that sender's re-check picks them up.
    fn try_flush(&self) -> io::Result<()> {
        loop {
            match self.send.try_lock() {
                Ok(mut sock) => self.drain(&mut sock)?,
                Err(std::sync::TryLockError::Poisoned(p)) => self.drain(&mut p.into_inner())?,
                Err(std::sync::TryLockError::WouldBlock) => return Ok(()),
            }
            if !lock(&self.conn).wants_write() {
                return Ok(());
            }
        }
    }

    fn drain(&self, sock: &mut TcpStream) -> io::Result<()> {
        loop {
            let mut out = Vec::new();
            {
                let mut c = lock(&self.conn);
                while c.wants_write() {
                    c.write_tls(&mut out)?;
                }
            }
            if out.is_empty() {
                return Ok(());
            }
            sock.write_all(&out)?;
        }
    }

    fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        // Tell the peer this is a clean end, if that can be done at once; a writer blocked on
        // a full socket must not hold up closing.
        let _ = self.sock.set_write_timeout(Some(Duration::from_millis(200)));
        if let Ok(mut c) = self.conn.try_lock() {
            c.send_close_notify();
        }
        let _ = self.try_flush();
        let _ = self.sock.shutdown(Shutdown::Both);
    }
}

struct TlsReader {
    shared: Arc<Shared>,
    sock: TcpStream,
    /// Bytes received but not yet taken by rustls (it takes more only once its plaintext was
    /// read).
    pending: Vec<u8>,
    eof: bool,
}

impl Read for TlsReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            let (result, wants_write) = {
                let mut c = lock(&self.shared.conn);
                while !self.pending.is_empty() && c.wants_read() {
                    let n = c.read_tls(&mut &self.pending[..])?;
                    self.pending.drain(..n);
                    if let Err(e) = c.process_new_packets() {
                        drop(c);
                        let _ = self.shared.try_flush();
                        return Err(io::Error::new(io::ErrorKind::InvalidData, describe(&e, None)));
                    }
                }
                if self.eof && self.pending.is_empty() {
                    // Tells rustls the socket ended.
                    let _ = c.read_tls(&mut io::empty());
                    let _ = c.process_new_packets();
                }
                let r = c.reader().read(out);
                (r, c.wants_write())
            };
            if wants_write {
                self.shared.try_flush()?;
            }
            match result {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) if self.shared.closed.load(Ordering::SeqCst) => return Ok(0),
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the peer closed the connection without ending TLS (it died, or its host did)",
                    ))
                }
                Err(e) => return Err(e),
            }
            if self.eof {
                return Ok(0);
            }
            let mut buf = [0u8; 16 << 10];
            let n = loop {
                match (&self.sock).read(&mut buf) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) if self.shared.closed.load(Ordering::SeqCst) => break 0,
                    r => break r?,
                }
            };
            if n == 0 {
                self.eof = true;
            } else {
                self.pending.extend_from_slice(&buf[..n]);
            }
        }
    }
}

struct TlsWriter {
    shared: Arc<Shared>,
}

impl Write for TlsWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.shared.closed.load(Ordering::SeqCst) {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the connection was closed"));
        }
        // rustls takes at most its buffer limit; after a flush it has room again.
        for _ in 0..2 {
            let n = lock(&self.shared.conn).writer().write(buf)?;
            self.shared.flush()?;
            if n > 0 {
                return Ok(n);
            }
        }
        Err(io::Error::new(io::ErrorKind::WriteZero, "TLS send buffer stayed full"))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.shared.flush()
    }
}

/// Small messages (the handshake's flights, heartbeats, clock probes) go out at once: with
/// Nagle's algorithm a second small write waits for the peer's delayed ACK, 40 ms here, which
/// made each handshake take 44 ms instead of 0.6 ms (loopback, release build).
fn no_delay(s: &TcpStream, peer: &str) -> Result<()> {
    s.set_nodelay(true).map_err(|e| Error::Io(format!("{peer}: TCP_NODELAY: {e}")))
}

fn peer_name(s: &TcpStream) -> String {
    s.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "peer".into())
}

/// Bounds the next socket call by what is left of the deadline.
fn set_timeouts(s: &TcpStream, deadline: Instant, peer: &str, stage: &str) -> Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(Error::Timeout(format!("{peer}: no answer within the time allowed for {stage}")));
    }
    s.set_read_timeout(Some(left))
        .and_then(|()| s.set_write_timeout(Some(left)))
        .map_err(|e| Error::Io(format!("{peer}: {e}")))
}

fn io_error(e: io::Error, peer: &str, stage: &str) -> Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            Error::Timeout(format!("{peer}: no answer within the time allowed for {stage}"))
        }
        _ => match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
            Some(t) => Error::Handshake(format!("{peer}: {}", describe(t, None))),
            None => Error::Io(format!("{peer}: {stage}: {e}")),
        },
    }
}

fn tls_error(e: &rustls::Error, side: Role, peer: &str) -> Error {
    Error::Handshake(format!("{peer}: TLS handshake failed: {}", describe(e, Some(side))))
}

/// A rustls error in words a user can act on. `side` is this end, when known.
fn describe(e: &rustls::Error, side: Option<Role>) -> String {
    use rustls::Error as E;
    let other = match side {
        Some(Role::Client) => "the server",
        Some(Role::Server) => "the client",
        None => "the peer",
    };
    let ours = match side {
        Some(Role::Server) => "the server's certificate",
        _ => "our certificate",
    };
    match e {
        E::AlertReceived(AlertDescription::CertificateExpired) => {
            format!("{other} refused {ours}: it has expired (--tls-cert)")
        }
        E::AlertReceived(AlertDescription::UnknownCA) => {
            format!("{other} refused {ours}: not signed by a CA it trusts (unknown CA; check --tls-ca on both sides)")
        }
        E::AlertReceived(AlertDescription::CertificateRequired) => {
            format!("{other} requires a client certificate: give --tls-cert and --tls-key from the CA in its --tls-ca")
        }
        E::AlertReceived(AlertDescription::BadCertificate) => format!("{other} refused {ours} (bad certificate)"),
        E::AlertReceived(AlertDescription::DecryptError) => {
            format!("{other} could not verify the handshake (decrypt error): a replayed or tampered handshake?")
        }
        E::AlertReceived(AlertDescription::ProtocolVersion) => format!("{other} does not speak TLS 1.3"),
        E::AlertReceived(a) => format!("{other} ended the handshake with the alert '{a:?}'"),
        E::InvalidCertificate(c) => {
            let whose = match side {
                Some(Role::Server) => "the client's certificate",
                Some(Role::Client) => "the server's certificate",
                None => "the peer's certificate",
            };
            match c {
                CertificateError::Expired => format!("{whose} has expired"),
                CertificateError::ExpiredContext { not_after, .. } => {
                    format!("{whose} expired on {}", utc(not_after.as_secs()))
                }
                CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                    format!("{whose} is not valid yet (check the clocks)")
                }
                CertificateError::UnknownIssuer => {
                    format!("{whose} is not signed by the CA in --tls-ca (unknown CA)")
                }
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                    format!("{whose} does not name the host connected to (its subject alternative names)")
                }
                CertificateError::BadSignature => format!("{whose} has a bad signature"),
                other => format!("{whose} was refused: {other:?}"),
            }
        }
        E::NoCertificatesPresented => match side {
            Some(Role::Server) => {
                "the client presented no certificate; this server requires one from the CA in its --tls-ca".into()
            }
            _ => "the peer presented no certificate".into(),
        },
        E::DecryptError => "a handshake message failed to decrypt: a replayed or tampered handshake?".into(),
        E::InvalidMessage(_) | E::InappropriateMessage { .. } | E::InappropriateHandshakeMessage { .. } => match side {
            Some(Role::Client) => "the server does not speak TLS: a fio server or a non-fiox service?".into(),
            _ => format!("{other} broke the TLS protocol ({e})"),
        },
        E::PeerIncompatible(p) => format!("{other} has no TLS 1.3 settings in common with us ({p:?})"),
        other_err => other_err.to_string(),
    }
}

/// Seconds since the epoch as `YYYY-MM-DD HH:MM:SS UTC` (proleptic Gregorian calendar).
fn utc(secs: u64) -> String {
    let (days, rem) = (secs / 86400, secs % 86400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// `sha256:` and the hex digest of a certificate.
pub fn fingerprint(der: &CertificateDer<'_>) -> String {
    format!("sha256:{}", crate::auth::hex(&Sha256::digest(der.as_ref())))
}

/// How a certificate is named in logs: its subject's common name, if any, and a short
/// fingerprint.
fn cert_label(der: &CertificateDer<'_>) -> String {
    let fp = fingerprint(der);
    let short = &fp[..7 + 16];
    match subject_cn(der.as_ref()) {
        Some(cn) => format!("CN={cn} ({short})"),
        None => short.to_string(),
    }
}

/// The subject's common name (OID 2.5.4.3) of a DER certificate that rustls already checked;
/// `None` for anything unexpected.
fn subject_cn(der: &[u8]) -> Option<String> {
    /// One DER element: (tag, contents, rest).
    fn tlv(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
        let (&tag, b) = b.split_first()?;
        let (&l0, mut b) = b.split_first()?;
        let len = if l0 < 0x80 {
            usize::from(l0)
        } else {
            let n = usize::from(l0 & 0x7f);
            if n == 0 || n > 4 || b.len() < n {
                return None;
            }
            let v = b[..n].iter().fold(0usize, |a, &x| (a << 8) | usize::from(x));
            b = &b[n..];
            v
        };
        (b.len() >= len).then(|| (tag, &b[..len], &b[len..]))
    }
    let (_, cert, _) = tlv(der)?;
    let (_, mut tbs, _) = tlv(cert)?;
    // [0] version (optional), serial, signature algorithm, issuer, validity, subject.
    if tbs.first() == Some(&0xa0) {
        tbs = tlv(tbs)?.2;
    }
    for _ in 0..4 {
        tbs = tlv(tbs)?.2;
    }
    let (_, mut subject, _) = tlv(tbs)?;
    while !subject.is_empty() {
        let (_, set, rest) = tlv(subject)?;
        subject = rest;
        let (_, attr, _) = tlv(set)?;
        let (_, oid, value) = tlv(attr)?;
        if oid == [0x55, 0x04, 0x03] {
            let (_, text, _) = tlv(value)?;
            return Some(String::from_utf8_lossy(text).into_owned());
        }
    }
    None
}

fn load_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs: Vec<_> = CertificateDer::pem_file_iter(path)
        .map_err(|e| Error::Config(format!("{what} {}: {e}", path.display())))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::Config(format!("{what} {}: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(Error::Config(format!("{what} {}: no PEM certificate in it", path.display())));
    }
    Ok(certs)
}

fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    check_private(path, "TLS key")?;
    PrivateKeyDer::from_pem_file(path).map_err(|e| Error::Config(format!("TLS key {}: {e}", path.display())))
}

fn load_roots(path: &Path) -> Result<rustls::RootCertStore> {
    let mut roots = rustls::RootCertStore::empty();
    for c in load_certs(path, "--tls-ca")? {
        roots.add(c).map_err(|e| Error::Config(format!("--tls-ca {}: {e}", path.display())))?;
    }
    Ok(roots)
}

type Identity = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

/// The shared-secret server's own certificate: loaded from `KEYFILE.server.pem`, or made
/// with rcgen and stored there (mode 0600); made in memory only when that cannot be written.
fn self_signed_identity(key_file: &Path) -> Result<(Identity, Option<PathBuf>)> {
    let mut name = key_file.as_os_str().to_owned();
    name.push(".server.pem");
    let file = PathBuf::from(name);
    if file.exists() {
        check_private(&file, "server identity")?;
        let certs = load_certs(&file, "server identity")?;
        let key = PrivateKeyDer::from_pem_file(&file)
            .map_err(|e| Error::Config(format!("server identity {}: {e}", file.display())))?;
        return Ok(((certs, key), Some(file)));
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
    let mut names = vec!["fiox-server".to_string()];
    if !host.is_empty() && ServerName::try_from(host.clone()).is_ok() {
        names.insert(0, host);
    }
    let fail = |e: rcgen::Error| Error::Config(format!("cannot make the server's certificate: {e}"));
    let cn = format!("fiox server {}", names[0]);
    let mut params = rcgen::CertificateParams::new(names).map_err(fail)?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(rcgen::DnType::CommonName, cn);
    let signing_key = rcgen::KeyPair::generate().map_err(fail)?;
    let cert = params.self_signed(&signing_key).map_err(fail)?;
    let pem = format!("{}{}", cert.pem(), signing_key.serialize_pem());
    // Written aside and linked into place, so that servers started together on one key (a
    // launcher's) never read another's half-written file: the first link wins and the others
    // load the winner's.
    let mut tmp = file.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let stored = crate::auth::write_private(&tmp, pem.as_bytes()).is_ok() && {
        let linked = std::fs::hard_link(&tmp, &file);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return self_signed_identity(key_file),
            Err(_) => false,
        }
    };
    let key = PrivateKeyDer::try_from(signing_key.serialize_der())
        .map_err(|e| Error::Config(format!("cannot make the server's certificate: {e}")))?;
    Ok(((vec![cert.der().clone()], key), stored.then_some(file)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_735_689_599), "2024-12-31 23:59:59 UTC");
    }

    #[test]
    fn subject_common_name() {
        let mut p = rcgen::CertificateParams::new(vec!["h1".to_string()]).unwrap();
        p.distinguished_name.push(rcgen::DnType::OrganizationName, "Site");
        p.distinguished_name.push(rcgen::DnType::CommonName, "coordinator-1");
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = p.self_signed(&key).unwrap();
        assert_eq!(subject_cn(cert.der()).as_deref(), Some("coordinator-1"));
        assert!(cert_label(cert.der()).starts_with("CN=coordinator-1 (sha256:"));
        assert_eq!(subject_cn(&cert.der()[..40]), None);
    }

    fn key(dir: &Path, name: &str) -> PathBuf {
        let p = dir.join(name);
        crate::auth::keygen(&p).unwrap();
        p
    }

    /// A connected pair over loopback: (server side, client side).
    fn pair(server: &TlsOpts, client: &TlsOpts) -> (Result<Duplex>, Result<Duplex>) {
        pair_named(server, client, "127.0.0.1")
    }

    fn pair_named(server: &TlsOpts, client: &TlsOpts, host: &str) -> (Result<Duplex>, Result<Duplex>) {
        let s = ServerConfig::from_opts(server).unwrap();
        let c = ClientConfig::from_opts(client).unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let t = std::thread::spawn(move || accept(l.accept().unwrap().0, &s, HANDSHAKE_TIMEOUT));
        let cl = connect(TcpStream::connect(addr).unwrap(), host, &c, HANDSHAKE_TIMEOUT);
        (t.join().unwrap(), cl)
    }

    /// Both halves of both ends busy at once with more than the sockets and rustls buffer:
    /// every byte arrives, in order, and neither side deadlocks on the shared session.
    #[test]
    fn duplex_streams_both_ways_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let o = TlsOpts { auth_key: Some(key(dir.path(), "k")), ..Default::default() };
        let (s, c) = pair(&o, &o);
        let (s, c) = (s.unwrap(), c.unwrap());
        assert!(s.identity.as_deref().unwrap().starts_with("key "), "{:?}", s.identity);
        assert!(c.identity.as_deref().unwrap().starts_with("certificate CN=fiox server "), "{:?}", c.identity);
        const N: usize = 8 << 20;
        let pattern = |seed: u8| (0..N).map(move |i| (i as u8).wrapping_mul(31).wrapping_add(seed));
        let mut threads = Vec::new();
        for (d, seed_out, seed_in) in [(s, 1u8, 2u8), (c, 2, 1)] {
            let Duplex { mut reader, mut writer, close, .. } = d;
            threads.push(std::thread::spawn(move || {
                let data: Vec<u8> = pattern(seed_out).collect();
                for chunk in data.chunks(100_000) {
                    writer.write_all(chunk).unwrap();
                }
                writer.flush().unwrap();
                (close, writer)
            }));
            threads.push(std::thread::spawn(move || {
                let mut got = vec![0u8; N];
                reader.read_exact(&mut got).unwrap();
                assert!(got.iter().copied().eq(pattern(seed_in)), "bytes changed on the way");
                drop(reader);
                (Box::new(|| {}) as Box<dyn FnMut() + Send>, Box::new(io::sink()) as Box<dyn Write + Send>)
            }));
        }
        let mut closes: Vec<_> = threads.into_iter().map(|t| t.join().unwrap().0).collect();
        for c in &mut closes {
            c();
        }
    }

    /// Figures for the report, not a check (`cargo test --release -p fiox-multihost -- --ignored
    /// --nocapture figures`): handshake time, the round trip of a small message written while
    /// a reader thread is blocked (the coordinator's pattern), next to plain TCP doing the same,
    /// and one-way throughput.
    #[test]
    #[ignore]
    fn figures() {
        let dir = tempfile::tempdir().unwrap();
        let o = TlsOpts { auth_key: Some(key(dir.path(), "k")), ..Default::default() };
        let t = Instant::now();
        let n = 20;
        for _ in 0..n {
            let (s, c) = pair(&o, &o);
            drop((s.unwrap(), c.unwrap()));
        }
        println!("handshake + auth (and config load): {:.2} ms each", t.elapsed().as_secs_f64() * 1e3 / n as f64);
        let rtt = |mut server: Duplex, client: Duplex| {
            std::thread::spawn(move || {
                let mut b = [0u8; 64];
                while server.reader.read_exact(&mut b).is_ok() {
                    server.writer.write_all(&b).unwrap();
                }
            });
            let Duplex { mut reader, mut writer, .. } = client;
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let mut b = [0u8; 64];
                while reader.read_exact(&mut b).is_ok() {
                    tx.send(Instant::now()).unwrap();
                }
            });
            let mut v = Vec::new();
            for _ in 0..2000 {
                // The reader thread is blocked in read while this write happens.
                std::thread::sleep(Duration::from_micros(200));
                let t0 = Instant::now();
                writer.write_all(&[7u8; 64]).unwrap();
                v.push(rx.recv().unwrap().duration_since(t0).as_micros() as u64);
            }
            v.sort_unstable();
            (v[v.len() / 2], v[v.len() * 99 / 100], v[v.len() - 1])
        };
        let (s, c) = pair(&o, &o);
        let tls = rtt(s.unwrap(), c.unwrap());
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let b = l.accept().unwrap().0;
        let plain = |s: TcpStream| Duplex {
            reader: Box::new(s.try_clone().unwrap()),
            writer: Box::new(s),
            peer: String::new(),
            identity: None,
            close: Box::new(|| {}),
        };
        let tcp = rtt(plain(b), plain(a));
        println!("64-byte round trip, reader thread blocked: TLS p50 {} us p99 {} us max {} us; plain TCP p50 {} us p99 {} us max {} us", tls.0, tls.1, tls.2, tcp.0, tcp.1, tcp.2);
        let (s, c) = pair(&o, &o);
        let (mut s, mut c) = (s.unwrap(), c.unwrap());
        let total = 256usize << 20;
        let t = Instant::now();
        let w = std::thread::spawn(move || {
            let buf = vec![1u8; 1 << 20];
            for _ in 0..total >> 20 {
                c.writer.write_all(&buf).unwrap();
            }
            c
        });
        let mut buf = vec![0u8; 1 << 20];
        let mut got = 0;
        while got < total {
            got += s.reader.read(&mut buf).unwrap();
        }
        w.join().unwrap();
        println!("one-way throughput: {:.0} MiB/s", total as f64 / (1 << 20) as f64 / t.elapsed().as_secs_f64());
    }

    #[test]
    fn close_releases_a_blocked_reader() {
        let dir = tempfile::tempdir().unwrap();
        let o = TlsOpts { auth_key: Some(key(dir.path(), "k")), ..Default::default() };
        let (s, c) = pair(&o, &o);
        let (s, mut c) = (s.unwrap(), c.unwrap());
        let Duplex { mut reader, close, .. } = s;
        let t = std::thread::spawn(move || reader.read(&mut [0u8; 16]));
        std::thread::sleep(Duration::from_millis(100));
        let mut close = close;
        close();
        assert_eq!(t.join().unwrap().unwrap(), 0, "a local close reads as the end of the stream");
        // The peer saw a clean TLS end (close_notify), not a crash.
        assert_eq!(c.reader.read(&mut [0u8; 16]).unwrap(), 0);
        (c.close)();
    }

    /// With the secret alone no name is checked, so a host name TLS cannot carry still works.
    #[test]
    fn secret_mode_takes_any_host_name() {
        let dir = tempfile::tempdir().unwrap();
        let o = TlsOpts { auth_key: Some(key(dir.path(), "k")), ..Default::default() };
        let (s, c) = pair_named(&o, &o, "host_with_underscore");
        assert!(s.is_ok() && c.is_ok());
    }

    #[test]
    fn wrong_secret_is_refused_on_both_sides() {
        let dir = tempfile::tempdir().unwrap();
        let s = TlsOpts { auth_key: Some(key(dir.path(), "a")), ..Default::default() };
        let c = TlsOpts { auth_key: Some(key(dir.path(), "b")), ..Default::default() };
        let (s, c) = pair(&s, &c);
        let (se, ce) = (s.unwrap_err().to_string(), c.unwrap_err().to_string());
        assert!(se.contains("wrong shared secret"), "{se}");
        assert!(ce.contains("refused authentication: wrong shared secret"), "{ce}");
        assert!(dir.path().join("a.server.pem").exists(), "the server's identity is kept beside its key");
    }
}
