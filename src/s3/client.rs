//! The S3 requests `fiox s3 bench` makes: path-style URLs, AWS Signature V4 on every request
//! (fiox-engine's `sigv4`, the http engine's signer), one keep-alive connection per worker
//! (ureq, as the http engine), no retries: a benchmark reports what the server did.

use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fiox_engine::sigv4::{self, Signer};

/// Where and as whom.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// `host[:port]` as the `Host` header carries it (no default port).
    pub host: String,
    pub tls: bool,
    pub insecure: bool,
    pub key_id: String,
    pub secret: String,
    pub region: String,
}

/// One worker's connection.
pub struct Client {
    ep: Endpoint,
    timeout: Duration,
    agent: ureq::Agent,
    signer: Signer,
    /// Where answers' bodies that are not kept are read to: made once, since a fresh buffer
    /// per GET (zeroed, or mapped and unmapped at this size) cost more than the read.
    sink: Vec<u8>,
}

/// A finished request: its status, the time to the answer's first byte (headers read) and to
/// its last, and the body when asked for.
pub struct Done {
    pub status: u16,
    pub ttfb: Duration,
    pub total: Duration,
    pub body: Vec<u8>,
    pub bytes: u64,
    /// The `ETag` header (an uploaded part's, which completing the upload names).
    pub etag: Option<String>,
}

/// An S3 error answer in a line: `HTTP 403 SignatureDoesNotMatch: ...`.
pub fn describe(status: u16, body: &[u8]) -> String {
    match (tag(body, "Code"), tag(body, "Message")) {
        (Some(c), Some(m)) => format!("HTTP {status} {c}: {m}"),
        (Some(c), None) => format!("HTTP {status} {c}"),
        _ => format!("HTTP {status}"),
    }
}

/// The text of the first `<name>` element in an XML answer (S3's answers are flat enough).
pub fn tag(body: &[u8], name: &str) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let (open, close) = (format!("<{name}>"), format!("</{name}>"));
    let s = text.find(&open)? + open.len();
    let e = text[s..].find(&close)? + s;
    Some(text[s..e].to_string())
}

/// A transport failure in words a user acts on: refused, no answer in time, an untrusted
/// certificate (with the flags that change it), without ureq's type names.
pub fn transport(e: &ureq::Error, timeout: Duration) -> String {
    match e {
        ureq::Error::Timeout(_) => format!("no answer in {:.1} s (--timeout)", timeout.as_secs_f64()),
        ureq::Error::HostNotFound => "the host name does not resolve".into(),
        ureq::Error::ConnectionFailed => "cannot connect".into(),
        ureq::Error::Rustls(rustls::Error::InvalidCertificate(c)) => untrusted(c),
        ureq::Error::Rustls(r) => format!("TLS: {r}"),
        // rustls's refusals come wrapped in an I/O error.
        ureq::Error::Io(io) => match io.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) {
            Some(rustls::Error::InvalidCertificate(c)) => untrusted(c),
            _ => io.to_string(),
        },
        other => other.to_string(),
    }
}

fn untrusted(c: &rustls::CertificateError) -> String {
    format!("TLS: the server's certificate is not trusted ({c:?}); give --insecure to skip the check, or its CA in SSL_CERT_FILE")
}

/// The system's CA bundle as libcurl reads it (`SSL_CERT_FILE`, else Debian's), parsed once
/// per process and only for `--tls`: parsing it for each of a bench's connections cost more
/// CPU than their requests in a short run (the profile's largest user-space symbol).
fn system_roots() -> Option<&'static ureq::tls::RootCerts> {
    static ROOTS: std::sync::OnceLock<Option<ureq::tls::RootCerts>> = std::sync::OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let path = std::env::var("SSL_CERT_FILE").unwrap_or_else(|_| "/etc/ssl/certs/ca-certificates.crt".into());
            let pem = std::fs::read(path).ok()?;
            let certs: Vec<_> = ureq::tls::parse_pem(&pem)
                .filter_map(|i| match i {
                    Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                    _ => None,
                })
                .collect();
            Some(ureq::tls::RootCerts::new_with_certs(&certs))
        })
        .as_ref()
}

impl Client {
    pub fn new(ep: &Endpoint, timeout: Duration) -> Client {
        let mut tls = ureq::tls::TlsConfig::builder()
            .provider(ureq::tls::TlsProvider::Rustls)
            .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()));
        if ep.insecure {
            tls = tls.disable_verification(true);
        } else if let (true, Some(roots)) = (ep.tls, system_roots()) {
            tls = tls.root_certs(roots.clone());
        }
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .tls_config(tls.build())
            .timeout_per_call(Some(timeout))
            .max_redirects(0)
            .user_agent(concat!("fiox/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Client {
            signer: Signer::new(&ep.key_id, &ep.secret, &ep.region, "s3"),
            ep: ep.clone(),
            agent,
            timeout,
            sink: vec![0u8; 64 << 10],
        }
    }

    /// `method` on `/bucket[/key]` with `query` pairs and `body`; `keep` keeps the answer's
    /// body (error answers' bodies are always kept, up to 64 KiB).
    pub fn call(
        &mut self,
        method: &str,
        path: &str,
        query: &[(&str, &str)],
        body: &[u8],
        keep: bool,
    ) -> Result<Done, String> {
        let path = sigv4::uri_encode(path, true);
        let hash = if body.is_empty() { sigv4::EMPTY_SHA256.to_string() } else { sigv4::payload_hash(body) };
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let date = sigv4::amz_date(now);
        let headers = [("host", self.ep.host.as_str()), ("x-amz-content-sha256", &hash), ("x-amz-date", &date)];
        let req = sigv4::Request { method, path: &path, query, headers: &headers, payload_hash: &hash };
        let auth = self.signer.sign(&req, &date).authorization;
        let mut url = format!("{}://{}{path}", if self.ep.tls { "https" } else { "http" }, self.ep.host);
        if !query.is_empty() {
            let q: Vec<String> = query
                .iter()
                .map(|(k, v)| format!("{}={}", sigv4::uri_encode(k, false), sigv4::uri_encode(v, false)))
                .collect();
            url.push('?');
            url.push_str(&q.join("&"));
        }
        let t0 = Instant::now();
        let builder = ureq::http::Request::builder()
            .method(method)
            .uri(&url)
            .header("host", &self.ep.host)
            .header("x-amz-content-sha256", &hash)
            .header("x-amz-date", &date)
            .header("authorization", auth);
        // A PUT or POST always carries a length (S3 wants `Content-Length: 0` on an empty one).
        let result = if body.is_empty() && !matches!(method, "PUT" | "POST") {
            self.agent.run(builder.body(()).map_err(|e| e.to_string())?)
        } else {
            self.agent.run(builder.body(body).map_err(|e| e.to_string())?)
        };
        let mut resp = result.map_err(|e| format!("{method} {url}: {}", transport(&e, self.timeout)))?;
        let ttfb = t0.elapsed();
        let status = resp.status().as_u16();
        let etag = resp.headers().get("etag").and_then(|v| v.to_str().ok()).map(str::to_string);
        let ok = (200..300).contains(&status);
        let mut kept = Vec::new();
        let mut bytes = 0u64;
        let mut reader = resp.body_mut().as_reader();
        if keep || !ok {
            let limit = if ok { u64::MAX } else { 64 << 10 };
            reader.take(limit).read_to_end(&mut kept).map_err(|e| format!("{method} {url}: {e}"))?;
            bytes = kept.len() as u64;
        } else {
            loop {
                match reader.read(&mut self.sink) {
                    Ok(0) => break,
                    Ok(n) => bytes += n as u64,
                    Err(e) => return Err(format!("{method} {url}: {e}")),
                }
            }
        }
        Ok(Done { status, ttfb, total: t0.elapsed(), body: kept, bytes, etag })
    }
}
