//! `http`: fio's HTTP engine. Each block is one object on a WebDAV, Swift or S3 server: a write
//! is a PUT of the block, a read a GET of it, a trim a DELETE. The object's name is fio 3.33's,
//! the file's name followed by `_OFFSET_LENGTH` (`/bucket/obj_65536_4096`), and the URL is
//! `http[s]://` + `http_host` + that name, so job files written for fio run unchanged and find
//! the objects fio wrote. The engine is synchronous, as fio's is: one request at a time per
//! job, on one keep-alive connection (scale with `numjobs`).
//!
//! Authentication by `http_mode`: `s3` signs every request with AWS Signature Version 4
//! (`crate::sigv4`; the payload's SHA-256 is computed in the timed request, as fio does),
//! `swift` sends `x-auth-token` and, on writes, the body's MD5 as `etag`, and `webdav` sends
//! basic authentication when `http_user` and `http_pass` are both set.
//!
//! Where fio 3.33 sends the wrong request, fiox sends the right one (README, "Differences"):
//! - the `Host` header and the signed `host:` line are the same string: a default port
//!   (`:80` without TLS, `:443` with it) is left out of both, where fio signs it and libcurl
//!   drops it from the header (the server answers 403 SignatureDoesNotMatch);
//! - each request's method follows the I/O's direction (fio keeps sending DELETE for every
//!   write and read after the handle's first trim, and counts the answers as done);
//! - no `Expect: 100-continue`, so a PUT is one round trip (libcurl waits for the interim
//!   answer on every PUT);
//! - a GET answered 404, or with fewer or more bytes than the block, is an I/O error (fio
//!   counts a missing object as a block of zeros);
//! - the object's name is its own file's (fio 3.33 names every file's objects after the first
//!   file), the signed headers are sorted as SigV4 requires (fio's are not when SSE-C and a
//!   security token are both set), and Swift's reads and deletes carry no `etag: (null)`.
//!
//! A failed request completes with EIO (fio 3.37's errno), and `error_detail` gives the
//! runner the method, URL, status and the server's error code and message for its one-line
//! report; `continue_on_error` treats it as any other I/O error.
//!
//! The one clock read here is the wall clock for S3's `x-amz-date`, which is part of the
//! request, not a measurement.

use std::io::{self, Read};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use fiox_options::spec::{HttpMode, HttpOpts, Https};
use md5::Digest as _;

use crate::sigv4::{self, Signer};
use crate::{Ddir, EngineInfo, IoEngine, IoUnit, QueueStatus, RemoteFile, Setup};

/// How long the planner waits to connect to the server before any I/O.
const REACH_TIMEOUT: Duration = Duration::from_secs(5);
/// How much of an error answer's body is read for its code and message.
const ERROR_BODY_LIMIT: u64 = 64 << 10;

#[derive(Default)]
struct Http {
    state: Option<State>,
    /// The last failed request, described (method, URL, status, the server's code).
    error: Option<String>,
}

struct State {
    opts: HttpOpts,
    agent: ureq::Agent,
    /// `http://HOST` or `https://HOST`, HOST as `Host` sends it.
    base: String,
    /// `http_host` without a default port: the `Host` header and the signed `host:` line.
    host: String,
    /// Each file's name (`/bucket/key`): the objects' names start with it.
    files: Vec<String>,
    signer: Option<Signer>,
    /// SSE-C's three headers, computed once.
    sse: Vec<(&'static str, String)>,
    basic: Option<String>,
}

/// `http_host` as the `Host` header carries it: without the scheme's default port.
pub(crate) fn host_header(host: &str, tls: bool) -> &str {
    let default = if tls { ":443" } else { ":80" };
    host.strip_suffix(default).filter(|h| !h.is_empty() && !h.ends_with(':')).unwrap_or(host)
}

/// fio 3.33's object name for a block: `FILE_OFFSET_LENGTH`.
pub(crate) fn object_name(file: &str, offset: u64, len: u32) -> String {
    format!("{file}_{offset}_{len}")
}

/// The server's error code and message from an S3-style XML error body (`<Code>`,
/// `<Message>`), or the body's first line for other servers.
fn error_text(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find(&close)? + start;
        Some(text[start..end].trim().to_string())
    };
    match (tag("Code"), tag("Message")) {
        (Some(c), Some(m)) if !m.is_empty() => format!("{c}: {m}"),
        (Some(c), _) => c,
        _ => {
            let line = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('<')).unwrap_or("");
            line.chars().take(200).collect()
        }
    }
}

/// The system's CA certificates, as libcurl (fio's TLS) trusts them: `SSL_CERT_FILE`, or
/// Debian's bundle.
fn system_roots() -> io::Result<Vec<ureq::tls::Certificate<'static>>> {
    let path = std::env::var("SSL_CERT_FILE").unwrap_or_else(|_| "/etc/ssl/certs/ca-certificates.crt".to_string());
    let pem = std::fs::read(&path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("https=on: cannot read the CA certificates in {path}: {e} (set SSL_CERT_FILE, or https=insecure)"),
        )
    })?;
    let certs: Vec<_> = ureq::tls::parse_pem(&pem)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
            _ => None,
        })
        .collect();
    if certs.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("https=on: no certificate in {path}")));
    }
    Ok(certs)
}

fn agent(o: &HttpOpts) -> io::Result<ureq::Agent> {
    let mut tls = ureq::tls::TlsConfig::builder()
        .provider(ureq::tls::TlsProvider::Rustls)
        .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()));
    tls = match o.https {
        Https::Insecure => tls.disable_verification(true),
        Https::On => tls.root_certs(ureq::tls::RootCerts::new_with_certs(&system_roots()?)),
        Https::Off => tls,
    };
    let timeout = Duration::from_micros(o.timeout_us);
    let config = ureq::Agent::config_builder()
        // Statuses are the engine's to judge: an error answer's body names the cause.
        .http_status_as_error(false)
        .https_only(o.https != Https::Off)
        .tls_config(tls.build())
        .timeout_per_call(Some(timeout))
        .timeout_connect(Some(timeout.min(REACH_TIMEOUT * 2)))
        .user_agent(concat!("fiox/", env!("CARGO_PKG_VERSION")))
        .max_idle_connections_per_host(1)
        .build();
    Ok(config.into())
}

impl State {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The headers that authenticate a request of `method` on `path` with payload `body`.
    fn auth_headers(&mut self, method: &str, path: &str, body: &[u8]) -> Vec<(&'static str, String)> {
        let mut h: Vec<(&'static str, String)> = Vec::new();
        match self.opts.mode {
            HttpMode::S3 => {
                let hash = if body.is_empty() { sigv4::EMPTY_SHA256.to_string() } else { sigv4::payload_hash(body) };
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0);
                h.push(("x-amz-content-sha256", hash));
                h.push(("x-amz-date", sigv4::amz_date(now)));
                h.extend(self.sse.iter().cloned());
                if let Some(t) = &self.opts.security_token {
                    h.push(("x-amz-security-token", t.clone()));
                }
                // fio sends (and signs) the storage class on every request.
                h.push(("x-amz-storage-class", self.opts.storage_class.clone()));
                let mut signed: Vec<(&str, &str)> = vec![("host", self.host.as_str())];
                signed.extend(h.iter().map(|(k, v)| (*k, v.as_str())));
                let amz_date = h[1].1.clone();
                let req = sigv4::Request { method, path, query: &[], headers: &signed, payload_hash: &h[0].1 };
                let auth = self.signer.as_mut().expect("s3 mode has a signer").sign(&req, &amz_date).authorization;
                h.push(("authorization", auth));
            }
            HttpMode::Swift => {
                if method == "PUT" {
                    h.push(("etag", sigv4::hex(&md5::Md5::digest(body))));
                }
                h.push(("x-auth-token", self.opts.swift_auth_token.clone()));
            }
            HttpMode::Webdav => {
                if let Some(b) = &self.basic {
                    h.push(("authorization", b.clone()));
                }
            }
        }
        h
    }

    /// Does one request; `Err(description)` when it failed.
    fn request(&mut self, ddir: Ddir, path: &str, buf: &mut [u8]) -> Result<(), String> {
        let method = match ddir {
            Ddir::Write => "PUT",
            Ddir::Read => "GET",
            _ => "DELETE",
        };
        let body: &[u8] = if ddir == Ddir::Write { buf } else { &[] };
        let headers = self.auth_headers(method, path, body);
        let url = self.url(path);
        let fail = |what: String| format!("{method} {url}: {what}");
        let result = match ddir {
            Ddir::Write => {
                let mut r = self.agent.put(&url).header("host", &self.host);
                for (k, v) in &headers {
                    r = r.header(*k, v);
                }
                r.send(body)
            }
            Ddir::Read => {
                let mut r = self.agent.get(&url).header("host", &self.host);
                for (k, v) in &headers {
                    r = r.header(*k, v);
                }
                r.call()
            }
            _ => {
                let mut r = self.agent.delete(&url).header("host", &self.host);
                for (k, v) in &headers {
                    r = r.header(*k, v);
                }
                r.call()
            }
        };
        let mut resp = result.map_err(|e| fail(transport_error(&e)))?;
        let status = resp.status().as_u16();
        if self.opts.verbose > 0 {
            eprintln!("fiox: http: {method} {url} -> {status}");
            if self.opts.verbose > 1 {
                for (k, v) in resp.headers() {
                    eprintln!("fiox: http:   {k}: {}", String::from_utf8_lossy(v.as_bytes()));
                }
            }
        }
        let ok = match ddir {
            Ddir::Write => (200..=204).contains(&status),
            Ddir::Read => status == 200,
            _ => matches!(status, 200 | 202 | 204 | 404),
        };
        if !ok {
            let mut text = Vec::new();
            let _ = resp.body_mut().as_reader().take(ERROR_BODY_LIMIT).read_to_end(&mut text);
            let code = error_text(&text);
            let reason = resp.status().canonical_reason().unwrap_or("");
            let what = match (code.is_empty(), status) {
                (true, 404) if ddir == Ddir::Read => format!("HTTP 404 {reason}: the object does not exist"),
                (true, _) => format!("HTTP {status} {reason}"),
                (false, _) => format!("HTTP {status} {code}"),
            };
            return Err(fail(what));
        }
        match ddir {
            Ddir::Read => {
                let want = buf.len();
                let mut reader = resp.body_mut().as_reader();
                let mut got = 0;
                while got < want {
                    match reader.read(&mut buf[got..]) {
                        Ok(0) => break,
                        Ok(n) => got += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(fail(format!("reading the answer: {e}"))),
                    }
                }
                let mut extra = [0u8; 1];
                let more = got == want && matches!(reader.read(&mut extra), Ok(n) if n > 0);
                if got < want || more {
                    let size = resp.body().content_length().map_or_else(
                        || if more { format!("more than {want}") } else { got.to_string() },
                        |n| n.to_string(),
                    );
                    return Err(fail(format!("the object has {size} bytes, the block {want}")));
                }
            }
            _ => {
                // Drain the answer so that the connection can be reused.
                let _ = io::copy(&mut resp.body_mut().as_reader().take(ERROR_BODY_LIMIT), &mut io::sink());
            }
        }
        Ok(())
    }
}

/// A transport failure in a few words (refused, timed out, TLS), without ureq's type names.
fn transport_error(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Io(io) => match io.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) {
            Some(rustls::Error::InvalidCertificate(c)) => untrusted(c),
            _ => io.to_string(),
        },
        ureq::Error::Timeout(t) => format!("no answer in time ({t}; http_timeout)"),
        ureq::Error::HostNotFound => "the host name does not resolve".into(),
        ureq::Error::ConnectionFailed => "cannot connect".into(),
        ureq::Error::Rustls(rustls::Error::InvalidCertificate(c)) => untrusted(c),
        ureq::Error::Rustls(r) => format!("TLS: {r}"),
        other => other.to_string(),
    }
}

/// A certificate rustls refused (ureq hands it over inside an I/O error), and what to do.
fn untrusted(c: &rustls::CertificateError) -> String {
    format!("TLS: the server's certificate is not trusted ({c:?}); https=insecure skips the check, or give its CA in SSL_CERT_FILE")
}

/// The job's objects live on the server: checks the names and that the server can be
/// reached (a TCP connection, no request), so that a wrong host or port stops the run before
/// any I/O with one line.
fn remote(spec: &fiox_options::JobSpec, _clone: u32, listed: &[String]) -> Result<Vec<RemoteFile>, String> {
    let o = &spec.engine.http;
    for name in listed {
        if !name.starts_with('/') {
            return Err(format!(
                "ioengine=http: filename '{name}' must start with '/' (/bucket/key for path-style S3, /key for a virtual-hosted http_host, /collection/name for WebDAV)"
            ));
        }
    }
    if o.mode == HttpMode::S3 && (o.s3_keyid.is_empty() || o.s3_key.is_empty()) {
        return Err("ioengine=http with http_mode=s3 needs http_s3_keyid= and http_s3_key=".into());
    }
    let tls = o.https != Https::Off;
    let hostport = if o.host.starts_with('[') {
        if o.host.contains("]:") {
            o.host.clone()
        } else {
            format!("{}:{}", o.host, if tls { 443 } else { 80 })
        }
    } else if o.host.contains(':') {
        o.host.clone()
    } else {
        format!("{}:{}", o.host, if tls { 443 } else { 80 })
    };
    use std::net::ToSocketAddrs;
    let addrs: Vec<_> = hostport
        .to_socket_addrs()
        .map_err(|e| format!("ioengine=http: http_host={}: cannot resolve it: {e}", o.host))?
        .collect();
    let mut last = None;
    for a in &addrs {
        match std::net::TcpStream::connect_timeout(a, REACH_TIMEOUT) {
            Ok(_) => {
                last = None;
                break;
            }
            Err(e) => last = Some(format!("{a}: {e}")),
        }
    }
    if let Some(e) = last {
        return Err(format!("ioengine=http: cannot connect to http_host={} ({e})", o.host));
    }
    Ok(listed.iter().map(|n| RemoteFile { name: n.clone(), size: None, written: None, facts: None }).collect())
}

impl IoEngine for Http {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        let o = setup.opts.http.clone();
        let tls = o.https != Https::Off;
        let host = host_header(&o.host, tls).to_string();
        let base = format!("{}://{host}", if tls { "https" } else { "http" });
        let signer = (o.mode == HttpMode::S3).then(|| Signer::new(&o.s3_keyid, &o.s3_key, &o.s3_region, "s3"));
        let mut sse = Vec::new();
        if let (HttpMode::S3, Some(key)) = (o.mode, &o.sse_customer_key) {
            // fio: the key's first 32 bytes, zero-padded, base64, and the base64 MD5 of them.
            let mut raw = [0u8; 32];
            let n = key.len().min(32);
            raw[..n].copy_from_slice(&key.as_bytes()[..n]);
            let b64 = base64::engine::general_purpose::STANDARD;
            sse.push(("x-amz-server-side-encryption-customer-algorithm", o.sse_customer_algorithm.clone()));
            sse.push(("x-amz-server-side-encryption-customer-key", b64.encode(raw)));
            sse.push(("x-amz-server-side-encryption-customer-key-md5", b64.encode(md5::Md5::digest(raw))));
        }
        let basic = match (o.mode, &o.user, &o.pass) {
            (HttpMode::Webdav, Some(u), Some(p)) => {
                Some(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))))
            }
            _ => None,
        };
        let files = setup.paths.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        self.state = Some(State { agent: agent(&o)?, opts: o, base, host, files, signer, sse, basic });
        Ok(())
    }

    fn queue(&mut self, _index: u32, io: &IoUnit) -> io::Result<QueueStatus> {
        let state = self.state.as_mut().expect("init ran");
        if !matches!(io.ddir, Ddir::Read | Ddir::Write | Ddir::Trim) {
            self.error = Some("ioengine=http does reads (GET), writes (PUT) and trims (DELETE) only".into());
            return Ok(QueueStatus::Completed(-(libc::EINVAL as i64)));
        }
        let file = state.files.get(io.file_index as usize).map_or("", String::as_str);
        let path = sigv4::uri_encode(&object_name(file, io.offset, io.len), true);
        let len = io.len as usize;
        let mut none = [0u8; 0];
        let buf: &mut [u8] = if matches!(io.ddir, Ddir::Read | Ddir::Write) {
            // SAFETY: the queue hands an engine a unit whose buffer holds at least `len` bytes
            // and which nothing else touches until this call has returned.
            unsafe { std::slice::from_raw_parts_mut(io.buf, len) }
        } else {
            &mut none
        };
        let result = match state.request(io.ddir, &path, buf) {
            Ok(()) => io.len as i64,
            Err(what) => {
                self.error = Some(what);
                -(libc::EIO as i64)
            }
        };
        Ok(QueueStatus::Completed(result))
    }

    fn error_detail(&mut self, _index: u32) -> Option<crate::ErrorDetail> {
        self.error.take().map(crate::ErrorDetail::Inline)
    }
}

fn make() -> Box<dyn IoEngine> {
    Box::<Http>::default()
}

pub const INFO: EngineInfo = EngineInfo { diskless: true, remote: Some(remote), ..EngineInfo::base("http", make) };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_ports_leave_the_host() {
        assert_eq!(host_header("s3.example.com:443", true), "s3.example.com");
        assert_eq!(host_header("s3.example.com:443", false), "s3.example.com:443");
        assert_eq!(host_header("127.0.0.1:80", false), "127.0.0.1");
        assert_eq!(host_header("127.0.0.1:8080", false), "127.0.0.1:8080");
        assert_eq!(host_header("[::1]:80", false), "[::1]");
        assert_eq!(host_header("localhost", false), "localhost");
    }

    #[test]
    fn objects_are_named_as_fio_names_them() {
        assert_eq!(object_name("/bucket/obj", 65536, 4096), "/bucket/obj_65536_4096");
    }

    #[test]
    fn error_bodies_give_code_and_message() {
        let xml = b"<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match.</Message></Error>";
        assert_eq!(error_text(xml), "SignatureDoesNotMatch: The request signature we calculated does not match.");
        assert_eq!(error_text(b"<Error><Code>NoSuchBucket</Code></Error>"), "NoSuchBucket");
        assert_eq!(error_text(b"<html>\n<h1>Forbidden</h1>"), "");
        assert_eq!(error_text(b"Not Found\n"), "Not Found");
    }

    /// fio 3.33's S3 requests as a capture server recorded them (testdata/http): the same
    /// inputs (host, path, payload hash, date, credentials) give the signature fio sent, so the
    /// canonical request is fio's. Recorded with `http_host=127.0.0.1:18901`, keyid `AKID`,
    /// secret `SECRET`, region us-east-1.
    #[test]
    fn signatures_match_fio_3_33() {
        let log = include_str!("../../testdata/http/fio-3.33-s3.jsonl");
        let mut checked = 0;
        for line in log.lines().filter(|l| !l.is_empty()) {
            let v: Recorded = parse_recorded(line);
            let header = |n: &str| v.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(n)).map(|(_, v)| v.as_str());
            let hash = header("x-amz-content-sha256").unwrap();
            let date = header("x-amz-date").unwrap();
            let signed = [
                ("host", header("host").unwrap()),
                ("x-amz-content-sha256", hash),
                ("x-amz-date", date),
                ("x-amz-storage-class", header("x-amz-storage-class").unwrap()),
            ];
            let req =
                sigv4::Request { method: &v.method, path: &v.path, query: &[], headers: &signed, payload_hash: hash };
            let mut s = Signer::new("AKID", "SECRET", "us-east-1", "s3");
            let ours = s.sign(&req, date);
            let theirs = header("authorization").unwrap();
            assert!(theirs.ends_with(&format!("Signature={}", ours.signature)), "{line}\nours: {}", ours.authorization);
            checked += 1;
        }
        assert!(checked >= 3);
    }

    struct Recorded {
        method: String,
        path: String,
        headers: Vec<(String, String)>,
    }

    /// The capture's lines are JSON objects; the engine crate has no JSON parser, and these
    /// lines need only their string fields.
    fn parse_recorded(line: &str) -> Recorded {
        let strings: Vec<String> = line.split('"').skip(1).step_by(2).map(str::to_string).collect();
        let at = |key: &str| strings.iter().position(|s| s == key).map(|i| strings[i + 1].clone()).unwrap();
        let hstart = strings.iter().position(|s| s == "headers").unwrap() + 1;
        let hend = strings.iter().position(|s| s == "body").unwrap_or(strings.len());
        let headers = strings[hstart..hend].chunks(2).map(|c| (c[0].clone(), c[1].clone())).collect();
        Recorded { method: at("method"), path: at("path"), headers }
    }
}
