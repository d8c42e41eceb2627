//! The options of fio's `http` engine (WebDAV, Swift and S3 over HTTP), in the order fio 3.33's
//! `--enghelp=http` lists them and with its words, then the two fio 3.41 added and fiox's own.
//! What they resolve to is `spec::http::HttpOpts`.

use crate::table::{Category as C, Choice, Kind as K, OptDef as O, TimeUnit};

const HTTP: &[&str] = &["http"];

#[rustfmt::skip]
pub(super) static DEFS: &[O] = &[
    O::new("https", K::Choice(HTTPS), C::Engine, "Enable https").def("off").engines(HTTP),
    O::new("http_host", K::Str, C::Engine, "Hostname (S3 bucket)").def("localhost").engines(HTTP),
    O::new("http_user", K::Str, C::Engine, "HTTP user name").engines(HTTP),
    O::new("http_pass", K::Str, C::Engine, "HTTP password").engines(HTTP),
    O::new("http_s3_key", K::Str, C::Engine, "S3 secret key").def("").engines(HTTP),
    O::new("http_s3_keyid", K::Str, C::Engine, "S3 key id").def("").engines(HTTP),
    O::new("http_swift_auth_token", K::Str, C::Engine, "OpenStack Swift auth token").def("").engines(HTTP),
    O::new("http_s3_region", K::Str, C::Engine, "S3 region").def("us-east-1").engines(HTTP),
    O::new("http_s3_sse_customer_key", K::Str, C::Engine, "S3 SSE Customer Key").def("").engines(HTTP),
    O::new("http_s3_sse_customer_algorithm", K::Str, C::Engine, "S3 SSE Customer Algorithm").def("AES256").engines(HTTP),
    O::new("http_s3_storage_class", K::Str, C::Engine, "S3 Storage Class").def("STANDARD").engines(HTTP),
    O::new("http_mode", K::Choice(MODES), C::Engine, "Whether to use WebDAV, Swift, or S3").def("webdav").engines(HTTP),
    O::new("http_verbose", K::Int { min: 0, max: 2 }, C::Engine, "increase http engine verbosity").def("0").engines(HTTP),
    // fio 3.41's: accepted by the engine but left out of its --enghelp, which stays 3.33's.
    O::new("http_s3_security_token", K::Str, C::Engine, "S3 session (STS) security token, sent and signed as x-amz-security-token (fio 3.41)").extra_engines(HTTP),
    O::new("http_object_mode", K::Choice(OBJECT_MODES), C::Engine, "One object per block, or one object per file read with ranges (fio 3.41)").def("block").extra_engines(HTTP).only(&["block"]),
    // fiox's own: a general row (not the engine's), refused with any other engine.
    O::new("http_timeout", K::Time { unit: TimeUnit::Sec }, C::Engine, "fiox: how long one HTTP request (connect, send, answer) may take before it fails the I/O (http; fio waits for ever)").def("60"),
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
