//! The `http` engine's options (`https`, `http_*`) resolved into [`HttpOpts`], with fio 3.33's
//! defaults. The engine reads only this struct.

use super::Merged;
use crate::error::Result;
use crate::value::Value;

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

/// A string option's value, or its default from the table.
fn text(m: &Merged<'_>, name: &str) -> Result<String> {
    Ok(match m.one(name)? {
        Some(Value::Str(s)) => s,
        _ => String::new(),
    })
}

fn nonempty(m: &Merged<'_>, name: &str) -> Option<String> {
    m.string(name).filter(|s| !s.is_empty())
}

/// Resolves the http options of a job of engine `ioengine`.
pub(super) fn resolve(m: &Merged<'_>, ioengine: &str) -> Result<HttpOpts> {
    let o = HttpOpts {
        https: match m.choice("https")? {
            "on" => Https::On,
            "insecure" => Https::Insecure,
            _ => Https::Off,
        },
        host: text(m, "http_host")?,
        user: nonempty(m, "http_user"),
        pass: nonempty(m, "http_pass"),
        mode: match m.choice("http_mode")? {
            "s3" => HttpMode::S3,
            "swift" => HttpMode::Swift,
            _ => HttpMode::Webdav,
        },
        s3_key: text(m, "http_s3_key")?,
        s3_keyid: text(m, "http_s3_keyid")?,
        s3_region: text(m, "http_s3_region")?,
        sse_customer_key: nonempty(m, "http_s3_sse_customer_key"),
        sse_customer_algorithm: text(m, "http_s3_sse_customer_algorithm")?,
        storage_class: text(m, "http_s3_storage_class")?,
        security_token: nonempty(m, "http_s3_security_token"),
        swift_auth_token: text(m, "http_swift_auth_token")?,
        verbose: m.u32("http_verbose", 0)?,
        timeout_us: m.time("http_timeout")?,
    };
    // Read even when unset, so that every row of the table is used (only `block` is taken).
    let _ = m.choice("http_object_mode")?;
    if ioengine != "http" {
        for fiox_only in ["http_timeout", "http_s3_security_token", "http_object_mode"] {
            if m.is_set(fiox_only) {
                return Err(m.job_err(format!("{fiox_only}= is for ioengine=http, not {ioengine}")));
            }
        }
        return Ok(o);
    }
    if o.host.is_empty() {
        return Err(m.job_err("http_host= is empty: give the server's host[:port]".into()));
    }
    if o.timeout_us == 0 {
        return Err(m.job_err("http_timeout=0 would fail every request at once".into()));
    }
    if o.mode == HttpMode::S3 && o.s3_region.is_empty() {
        return Err(m.job_err("http_s3_region= is empty: S3 signatures name the region (us-east-1 by default)".into()));
    }
    Ok(o)
}
