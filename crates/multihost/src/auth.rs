//! Credentials for the TLS transport and the shared-secret proof.
//!
//! A shared secret is 128 to 512 random bits kept in a file as hex digits (`fiox --keygen`
//! writes 256). It never crosses the wire: after the TLS 1.3 handshake each side sends
//! `HMAC-SHA256(secret, "fiox-auth-v1" || role || exporter)`, where `exporter` is 32 bytes of
//! the session's TLS exporter (label `EXPORTER-fiox-auth`, RFC 8446 §7.5). Both sessions' keys
//! feed the exporter, so a proof is worth nothing in another session (a recorded exchange
//! cannot be replayed), and a man in the middle, who holds two different sessions, cannot pass
//! one side's proof on to the other. The role (`client`/`server`) keeps one side's proof from
//! being reflected back as the other's.
//!
//! Files holding secrets (the key, `--tls-key`, the server's generated identity) are refused
//! when their mode gives group or others any access: a key readable by others is a key others
//! have, and refusing is the only way to make that visible.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// Everything the secure transports can fail with; the text is meant for users as it is.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad or missing credentials, files or options: nothing was sent.
    #[error("{0}")]
    Config(String),
    /// The peer could not be reached or went away.
    #[error("{0}")]
    Io(String),
    /// The peer did not answer within the handshake's bound.
    #[error("{0}")]
    Timeout(String),
    /// TLS itself failed: not TLS, no common ground, a certificate refused.
    #[error("{0}")]
    Handshake(String),
    /// TLS worked but authentication did not (a wrong or missing secret).
    #[error("{0}")]
    Refused(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// The HMAC's domain-separation prefix; a new version of the proof gets a new one.
pub const PROOF_CONTEXT: &[u8] = b"fiox-auth-v1";
/// The TLS exporter label the proof is bound to.
pub const EXPORTER_LABEL: &[u8] = b"EXPORTER-fiox-auth";
/// Bytes of exporter output and of a proof.
pub const PROOF_LEN: usize = 32;
/// Bytes of secret `fiox --keygen` writes.
pub const KEYGEN_BYTES: usize = 32;
/// Shortest secret accepted: 128 bits, so guessing stays out of reach.
const MIN_SECRET: usize = 16;
const MAX_SECRET: usize = 64;

/// Which end of a session computes a proof.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

impl Role {
    fn label(self) -> &'static [u8] {
        // Equal lengths, so "fiox-auth-v1" || role || exporter parses one way only.
        match self {
            Role::Client => b"client",
            Role::Server => b"server",
        }
    }
}

/// A shared secret read from a key file. `Debug` shows the key id, never the bytes.
#[derive(Clone)]
pub struct Secret {
    bytes: Vec<u8>,
    path: PathBuf,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({}, key {})", self.path.display(), self.key_id())
    }
}

impl Secret {
    /// Reads a key file: hex digits (surrounding white space ignored), mode 0600 or stricter.
    pub fn load(path: &Path) -> Result<Secret> {
        check_private(path, "auth key")?;
        let mut text = String::new();
        File::open(path)
            .and_then(|mut f| f.read_to_string(&mut text))
            .map_err(|e| Error::Config(format!("auth key {}: {e}", path.display())))?;
        let bytes = decode_hex(text.trim()).ok_or_else(|| {
            Error::Config(format!(
                "auth key {}: not a fiox key (expected {}..{} hex digits, as `fiox --keygen` writes)",
                path.display(),
                2 * MIN_SECRET,
                2 * MAX_SECRET
            ))
        })?;
        if !(MIN_SECRET..=MAX_SECRET).contains(&bytes.len()) {
            return Err(Error::Config(format!(
                "auth key {}: {} bits; a shared secret must have 128 to 512 bits (fiox --keygen writes 256)",
                path.display(),
                bytes.len() * 8
            )));
        }
        Ok(Secret { bytes, path: path.to_path_buf() })
    }

    /// A secret from bytes already in memory (tests, and callers with their own storage).
    pub fn from_bytes(bytes: &[u8]) -> Result<Secret> {
        if !(MIN_SECRET..=MAX_SECRET).contains(&bytes.len()) {
            return Err(Error::Config("a shared secret must have 128 to 512 bits".into()));
        }
        Ok(Secret { bytes: bytes.to_vec(), path: PathBuf::from("(memory)") })
    }

    /// The file it came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A name for the key that is safe to log: 8 hex digits of a hash of it, so two hosts'
    /// logs show whether they hold the same key without showing the key.
    pub fn key_id(&self) -> String {
        let h = Sha256::new().chain_update(b"fiox-key-id-v1").chain_update(&self.bytes).finalize();
        hex(&h[..4])
    }

    /// This role's proof for a session with this exporter value.
    pub fn proof(&self, role: Role, exporter: &[u8; PROOF_LEN]) -> [u8; PROOF_LEN] {
        self.mac(role, exporter).finalize().into_bytes().into()
    }

    /// Whether `proof` is the `role` side's proof for this session, compared in constant time.
    pub fn verify(&self, role: Role, exporter: &[u8; PROOF_LEN], proof: &[u8]) -> bool {
        self.mac(role, exporter).verify_slice(proof).is_ok()
    }

    fn mac(&self, role: Role, exporter: &[u8; PROOF_LEN]) -> Hmac<Sha256> {
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.bytes).expect("HMAC takes keys of any length");
        m.update(PROOF_CONTEXT);
        m.update(role.label());
        m.update(exporter);
        m
    }
}

/// Refuses a secret-holding file that group or others may access in any way, naming the file
/// and its mode; also refuses what is not a regular file.
pub fn check_private(path: &Path, what: &str) -> Result<()> {
    // Follows symbolic links: a Kubernetes secret volume links each key to a file whose mode
    // (`defaultMode`) is what matters.
    let meta = std::fs::metadata(path).map_err(|e| Error::Config(format!("{what} {}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(Error::Config(format!("{what} {}: not a regular file", path.display())));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(Error::Config(format!(
            "{what} {} has mode {mode:04o}: group or others may read it, so it is refused; \
             chmod 600 {}",
            path.display(),
            path.display()
        )));
    }
    Ok(())
}

/// `fiox --keygen[=FILE]`: a new 256-bit secret in FILE, created with mode 0600 (never over an
/// existing file), or on standard output for `-`. Returns the line to print for a file.
pub fn keygen(path: &Path) -> Result<Option<String>> {
    let mut bytes = [0u8; KEYGEN_BYTES];
    random(&mut bytes)?;
    let text = format!("{}\n", hex(&bytes));
    if path == Path::new("-") {
        std::io::stdout().write_all(text.as_bytes()).map_err(|e| Error::Io(format!("--keygen: {e}")))?;
        return Ok(None);
    }
    write_private(path, text.as_bytes()).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => {
            Error::Config(format!("--keygen: {} exists; fiox never overwrites a key (remove it first)", path.display()))
        }
        _ => Error::Config(format!("--keygen: cannot create {}: {e}", path.display())),
    })?;
    let id = Secret { bytes: bytes.to_vec(), path: path.to_path_buf() }.key_id();
    Ok(Some(format!(
        "fiox: wrote a 256-bit key (id {id}) to {} with mode 0600; give the same file to servers and \
         coordinators with --auth-key={}",
        path.display(),
        path.display()
    )))
}

/// Creates a new file with mode 0600 (never an existing one) holding `data`.
pub(crate) fn write_private(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let mut f = OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    f.write_all(data)?;
    f.sync_all()
}

/// Fills `buf` from the operating system's random source, through the TLS provider's own.
pub(crate) fn random(buf: &mut [u8]) -> Result<()> {
    rustls::crypto::ring::default_provider()
        .secure_random
        .fill(buf)
        .map_err(|_| Error::Io("the system's random number source failed".into()))
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_file(dir: &Path, text: &str, mode: u32) -> PathBuf {
        let p = dir.join("k");
        let _ = std::fs::remove_file(&p);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn proofs_depend_on_key_role_and_session() {
        let a = Secret::from_bytes(&[7; 32]).unwrap();
        let b = Secret::from_bytes(&[8; 32]).unwrap();
        let (s1, s2) = ([1; PROOF_LEN], [2; PROOF_LEN]);
        let p = a.proof(Role::Client, &s1);
        assert!(a.verify(Role::Client, &s1, &p));
        assert!(!a.verify(Role::Server, &s1, &p), "a client's proof must not pass as the server's");
        assert!(!a.verify(Role::Client, &s2, &p), "a proof must not pass in another session");
        assert!(!b.verify(Role::Client, &s1, &p), "another key must not accept it");
        assert!(!a.verify(Role::Client, &s1, &p[..31]), "a truncated proof must fail");
    }

    #[test]
    fn hmac_matches_rfc4231_case_2() {
        // RFC 4231 test case 2 through the same HMAC type, to pin the construction.
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(b"Jefe").unwrap();
        m.update(b"what do ya want for nothing?");
        assert_eq!(hex(&m.finalize().into_bytes()), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    #[test]
    fn key_files() {
        let dir = tempfile::tempdir().unwrap();
        let good = "0123456789abcdef".repeat(4);
        let s = Secret::load(&key_file(dir.path(), &format!("{good}\n"), 0o600)).unwrap();
        assert_eq!(s.key_id().len(), 8);
        assert!(!format!("{s:?}").contains(&good), "Debug must not show the key");
        let e = Secret::load(&key_file(dir.path(), &good, 0o644)).unwrap_err().to_string();
        assert!(e.contains("has mode 0644") && e.contains("chmod 600"), "{e}");
        let e = Secret::load(&key_file(dir.path(), &good, 0o640)).unwrap_err().to_string();
        assert!(e.contains("has mode 0640"), "{e}");
        let e = Secret::load(&key_file(dir.path(), "not hex", 0o600)).unwrap_err().to_string();
        assert!(e.contains("not a fiox key"), "{e}");
        let e = Secret::load(&key_file(dir.path(), "abcd", 0o400)).unwrap_err().to_string();
        assert!(e.contains("16 bits"), "{e}");
    }

    #[test]
    fn keygen_writes_0600_and_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fiox.key");
        let note = keygen(&p).unwrap().unwrap();
        assert!(note.contains("256-bit") && note.contains("--auth-key="), "{note}");
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.trim().len(), 64);
        assert!(Secret::load(&p).is_ok());
        let e = keygen(&p).unwrap_err().to_string();
        assert!(e.contains("exists") && e.contains("never overwrites"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
        let p2 = dir.path().join("other.key");
        keygen(&p2).unwrap();
        assert_ne!(std::fs::read_to_string(&p2).unwrap(), text, "two keys must differ");
    }
}
