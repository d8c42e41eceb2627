//! The one shape every transport produces, so that framing, the handshake and the run protocol
//! never know whether they talk over loopback TCP, a unix socket, ssh's pipes or TLS.

use std::io::{Read, Write};

/// A connected, bidirectional byte stream, split into halves so that one thread can block
/// reading frames while another writes (heartbeats, stop requests). `close` ends the stream
/// from either side's point of view (shuts a socket down, kills an ssh child), which is how a
/// reader blocked in `read` is released when a peer is declared dead.
pub struct Duplex {
    /// Bytes from the peer.
    pub reader: Box<dyn Read + Send>,
    /// Bytes to the peer.
    pub writer: Box<dyn Write + Send>,
    /// The peer as users name it in messages (`127.0.0.1,8765`, `ssh://root@h1`, `sock:/p`).
    pub peer: String,
    /// Who the peer proved to be, for the server's session log (`loopback`, `uid 0`, a key
    /// fingerprint, a certificate subject, an ssh user); `None` before authentication.
    pub identity: Option<String>,
    /// Ends the stream; idempotent.
    pub close: Box<dyn FnMut() + Send>,
}

impl std::fmt::Debug for Duplex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Duplex").field("peer", &self.peer).field("identity", &self.identity).finish_non_exhaustive()
    }
}
