//! The options of fio's `http` engine (WebDAV, Swift and S3 over HTTP), in the order fio 3.33's
//! `--enghelp=http` lists them and with its words, then the two fio 3.41 added and fiox's own.
//! They bind into [`HttpOpts`]; [`rules`] holds what spans them.

use crate::table::{Category as C, Choice, Kind as K, OptDef as O, TimeUnit};

const HTTP: &[&str] = &["http"];

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    O::new("https", K::Choice(HTTPS), C::Engine, "Enable https").def("off").engines(HTTP).to(|s, v| Ok(s.engine.http.https = match v.choice() { "on" => Https::On, "insecure" => Https::Insecure, _ => Https::Off })),
    O::new("http_host", K::Str, C::Engine, "Hostname (S3 bucket)").def("localhost").engines(HTTP).to(|s, v| Ok(s.engine.http.host = v.text())),
    O::new("http_user", K::Str, C::Engine, "HTTP user name").engines(HTTP).to(|s, v| Ok(s.engine.http.user = v.trimmed())),
    O::new("http_pass", K::Str, C::Engine, "HTTP password").engines(HTTP).to(|s, v| Ok(s.engine.http.pass = v.written().filter(|p| !p.is_empty()))),
    O::new("http_s3_key", K::Str, C::Engine, "S3 secret key").def("").engines(HTTP).to(|s, v| Ok(s.engine.http.s3_key = v.text())),
    O::new("http_s3_keyid", K::Str, C::Engine, "S3 key id").def("").engines(HTTP).to(|s, v| Ok(s.engine.http.s3_keyid = v.text())),
    O::new("http_swift_auth_token", K::Str, C::Engine, "OpenStack Swift auth token").def("").engines(HTTP).to(|s, v| Ok(s.engine.http.swift_auth_token = v.text())),
    O::new("http_s3_region", K::Str, C::Engine, "S3 region").def("us-east-1").engines(HTTP).to(|s, v| Ok(s.engine.http.s3_region = v.text())),
    O::new("http_s3_sse_customer_key", K::Str, C::Engine, "S3 SSE Customer Key").def("").engines(HTTP).to(|s, v| Ok(s.engine.http.sse_customer_key = v.written().filter(|k| !k.is_empty()))),
    O::new("http_s3_sse_customer_algorithm", K::Str, C::Engine, "S3 SSE Customer Algorithm").def("AES256").engines(HTTP).to(|s, v| Ok(s.engine.http.sse_customer_algorithm = v.text())),
    O::new("http_s3_storage_class", K::Str, C::Engine, "S3 Storage Class").def("STANDARD").engines(HTTP).to(|s, v| Ok(s.engine.http.storage_class = v.text())),
    O::new("http_mode", K::Choice(MODES), C::Engine, "Whether to use WebDAV, Swift, or S3").def("webdav").engines(HTTP).to(|s, v| Ok(s.engine.http.mode = match v.choice() { "s3" => HttpMode::S3, "swift" => HttpMode::Swift, _ => HttpMode::Webdav })),
    O::new("http_verbose", K::Int { min: 0, max: 2 }, C::Engine, "increase http engine verbosity").def("0").engines(HTTP).to(|s, v| Ok(s.engine.http.verbose = v.u32()?)),
    // fio 3.41's: accepted by the engine but left out of its --enghelp, which stays 3.33's.
    O::new("http_s3_security_token", K::Str, C::Engine, "S3 session (STS) security token, sent and signed as x-amz-security-token (fio 3.41)").extra_engines(HTTP).to(|s, v| Ok(s.engine.http.security_token = v.written().filter(|t| !t.is_empty()))),
    O::new("http_object_mode", K::Choice(OBJECT_MODES), C::Engine, "One object per block, or one object per file read with ranges (fio 3.41)").def("block").extra_engines(HTTP).only(&["block"]).to(|_, v| { let _ = v.choice(); Ok(()) }),
    // fiox's own: a general row (not the engine's), refused with any other engine.
    O::new("http_timeout", K::Time { unit: TimeUnit::Sec }, C::Engine, "fiox: how long one HTTP request (connect, send, answer) may take before it fails the I/O (http; fio waits for ever)").def("60").to(|s, v| Ok(s.engine.http.timeout_us = v.time())),
];

static HTTPS: &[Choice] = &[
    Choice { word: "off", help: "No HTTPS" },
    Choice { word: "on", help: "Enable HTTPS" },
    Choice { word: "insecure", help: "Enable HTTPS, disable peer verification" },
];

static MODES: &[Choice] = &[
    Choice { word: "webdav", help: "WebDAV server" },
    Choice { word: "s3", help: "S3 storage backend" },
    Choice { word: "swift", help: "OpenStack Swift storage" },
];

static OBJECT_MODES: &[Choice] = &[
    Choice { word: "block", help: "One object per block, named FILE_OFFSET_LENGTH" },
    Choice { word: "range", help: "One object per file, read with Range requests" },
];

/// How requests are authenticated (`http_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HttpMode {
    /// Plain PUT/GET/DELETE, with basic authentication when `http_user` and `http_pass` are set.
    #[default]
    Webdav,
    /// AWS Signature Version 4 in the Authorization header.
    S3,
    /// OpenStack Swift: `x-auth-token`, and an `etag` (MD5) on writes.
    Swift,
}

/// Whether and how TLS is used (`https`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Https {
    #[default]
    Off,
    On,
    /// TLS without checking the server's certificate or name.
    Insecure,
}

/// The options of fio's `http` engine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HttpOpts {
    pub https: Https,
    /// `host[:port]`, the URL's authority (and, for virtual-hosted S3, the bucket's host name).
    pub host: String,
    pub user: Option<String>,
    pub pass: Option<String>,
    pub mode: HttpMode,
    pub s3_key: String,
    pub s3_keyid: String,
    pub s3_region: String,
    /// SSE-C: the customer key (fio uses its first 32 bytes) and algorithm; no key, no SSE-C.
    pub sse_customer_key: Option<String>,
    pub sse_customer_algorithm: String,
    pub storage_class: String,
    /// fio 3.41: an STS session token, sent and signed as `x-amz-security-token`.
    pub security_token: Option<String>,
    pub swift_auth_token: String,
    /// 1: one line per request on stderr; 2: also the response headers.
    pub verbose: u32,
    /// fiox: how long one request may take, microseconds (`http_timeout`).
    pub timeout_us: u64,
}

/// The rules between the http options and the job's engine: fiox's and fio 3.41's options
/// belong to ioengine=http, and an http job needs a host, a timeout and (for S3) a region.
pub(crate) fn rules(o: &HttpOpts, is_set: impl Fn(&str) -> bool, ioengine: &str) -> std::result::Result<(), String> {
    if ioengine != "http" {
        for fiox_only in ["http_timeout", "http_s3_security_token", "http_object_mode"] {
            if is_set(fiox_only) {
                return Err(format!("{fiox_only}= is for ioengine=http, not {ioengine}"));
            }
        }
        return Ok(());
    }
    if o.host.is_empty() {
        return Err("http_host= is empty: give the server's host[:port]".into());
    }
    if o.timeout_us == 0 {
        return Err("http_timeout=0 would fail every request at once".into());
    }
    if o.mode == HttpMode::S3 && o.s3_region.is_empty() {
        return Err("http_s3_region= is empty: S3 signatures name the region (us-east-1 by default)".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{HttpMode, Https};
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("ioengine=http https=insecure http_host=h:9000 http_mode=s3 http_s3_keyid=k http_s3_key=s http_verbose=2", |s| {
                let o = &s.engine.http;
                o.https == Https::Insecure && o.host == "h:9000" && o.mode == HttpMode::S3 && o.s3_keyid == "k" && o.s3_key == "s" && o.verbose == 2
            }),
            ("ioengine=http", |s| {
                let o = &s.engine.http;
                o.host == "localhost" && o.mode == HttpMode::Webdav && o.s3_region == "us-east-1" && o.timeout_us == 60_000_000 && o.user.is_none()
            }),
        ]);
    }
}
