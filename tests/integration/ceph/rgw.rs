//! The RADOS Gateway on the test cluster (`scripts/ceph-cluster.sh rgw`, started on first use):
//! fio's `http` engine in its `s3` and `swift` modes, fio 3.33 (built with the engine,
//! `$FIOX_FIO_EXT`) beside fiox on the same jobs, and `fiox ceph`'s rgw layer. What the
//! gateway stored is read with `radosgw-admin` and its request counters (`perf dump` on its
//! admin socket), never through fiox's own S3 client.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::{have, Cluster};
use crate::util::{self, free_port, skip, Out};

const KEY: &str = "fioxrgwkey";
const SECRET: &str = "fioxrgwsecret0123456789";
const SWIFT_KEY: &str = "fioxswiftsecret";

struct Rgw {
    port: u16,
    /// The cluster's folder: the gateway's admin socket is in its `run/`.
    dir: PathBuf,
}

static RGW: OnceLock<Result<Rgw, String>> = OnceLock::new();

/// The tests here read the gateway's request counters before and after: one at a time.
static ONE: Mutex<()> = Mutex::new(());

fn rgw(c: &Cluster) -> Result<&'static Rgw, String> {
    RGW.get_or_init(|| start(c)).as_ref().map_err(Clone::clone)
}

fn start(c: &Cluster) -> Result<Rgw, String> {
    if !have("radosgw") {
        // scripts/test.sh installs it; a plain `cargo test` as root does it here.
        let ok = Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends", "radosgw"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok || !have("radosgw") {
            return Err("radosgw is not installed and apt-get could not install it".into());
        }
    }
    let dir = c.conf.parent().expect("the configuration is in the cluster's folder").to_path_buf();
    let port = free_port();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ceph-cluster.sh");
    let out = Command::new("timeout")
        .args(["-k", "5", "120"])
        .arg(&script)
        .arg("rgw")
        .arg(&dir)
        .env("FIOX_CEPH_RGW_PORT", port.to_string())
        .env("FIOX_CEPH_RGW_KEY", KEY)
        .env("FIOX_CEPH_RGW_SECRET", SECRET)
        .env("FIOX_CEPH_RGW_SWIFT_KEY", SWIFT_KEY)
        .output()
        .map_err(|e| e.to_string())?;
    if !String::from_utf8_lossy(&out.stdout).contains("RGW http://") {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("the test cluster's radosgw did not start: {}", err.lines().last().unwrap_or("")));
    }
    Ok(Rgw { port, dir })
}

/// Binds `$g` to the gateway (and `$c` to its cluster), one test at a time; skips, saying why,
/// when either cannot start.
macro_rules! rgw_or_skip {
    ($c:ident, $g:ident) => {
        cluster_or_skip!($c);
        let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
        let $g = match rgw($c) {
            Ok(g) => g,
            Err(why) => skip!("{why}"),
        };
    };
}

impl Rgw {
    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn agent() -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into()
    }

    /// A Swift token for `fiox:swift` (radosgw's `/auth/1.0`).
    fn token(&self) -> String {
        let r = Self::agent()
            .get(&format!("http://{}/auth/1.0", self.host()))
            .header("x-auth-user", "fiox:swift")
            .header("x-auth-key", SWIFT_KEY)
            .call()
            .expect("swift auth");
        assert_eq!(r.status().as_u16(), 204, "swift auth");
        r.headers()["x-auth-token"].to_str().unwrap().to_string()
    }

    /// A new container (a bucket of user `fiox`, so S3 sees it too), made through Swift.
    fn container(&self, name: &str) {
        let r = Self::agent()
            .put(&format!("http://{}/swift/v1/{name}", self.host()))
            .header("x-auth-token", &self.token())
            .send_empty()
            .expect("swift put container");
        assert!([201, 202].contains(&r.status().as_u16()), "container {name}: {}", r.status());
    }

    /// The gateway's request counters (S3 requests: `put`, `put_b`, `get`, `get_b`, ...).
    fn counters(&self, c: &Cluster) -> BTreeMap<String, u64> {
        let run = self.dir.join("run");
        let sock = util::listing(&run)
            .into_iter()
            .find(|f| f.starts_with("client.rgw.a.") && f.ends_with(".asok"))
            .expect("the gateway's admin socket");
        let o = c.tool("ceph", &["--admin-daemon", run.join(sock).to_str().unwrap(), "perf", "dump"]);
        assert_eq!(o.code, 0, "perf dump: {}", o.stderr);
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        v["rgw"].as_object().unwrap().iter().filter_map(|(k, v)| v.as_u64().map(|n| (k.clone(), n))).collect()
    }
}

/// The objects in `bucket` with their sizes, as radosgw-admin lists them.
fn objects(c: &Cluster, bucket: &str) -> Vec<(String, u64)> {
    let o = c.tool("radosgw-admin", &["bucket", "list", "--bucket", bucket]);
    assert_eq!(o.code, 0, "bucket list {bucket}: {}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let mut out: Vec<(String, u64)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap().to_string(), e["meta"]["size"].as_u64().unwrap()))
        .collect();
    out.sort();
    out
}

/// Every bucket's name.
fn buckets(c: &Cluster) -> Vec<String> {
    let o = c.tool("radosgw-admin", &["bucket", "list"]);
    assert_eq!(o.code, 0, "bucket list: {}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap()
}

fn remove_bucket(c: &Cluster, bucket: &str) {
    c.tool("radosgw-admin", &["bucket", "rm", "--bucket", bucket, "--purge-objects"]);
}

/// fio 3.33 built with its http engine (scripts/fio-ext.sh; scripts/test.sh exports its path).
fn fio_ext() -> Option<PathBuf> {
    let p = std::env::var_os("FIOX_FIO_EXT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/fio-3.33-ext/fio-3.33/fio"));
    p.exists().then_some(p)
}

fn run(bin: &Path, args: &[String]) -> Out {
    let dir = util::scratch();
    let o = Command::new("timeout").args(["-k", "5", "120"]).arg(bin).args(args).current_dir(dir.path()).output();
    Out::from(o.expect("cannot run"))
}

/// (error, io_bytes, total_ios) of the first job, per direction: read, write, trim.
fn figures(out: &Out) -> Vec<(i64, u64, u64)> {
    let j = &util::json(out)["jobs"][0];
    ["read", "write", "trim"]
        .iter()
        .map(|d| {
            (j["error"].as_i64().unwrap(), j[d]["io_bytes"].as_u64().unwrap(), j[d]["total_ios"].as_u64().unwrap())
        })
        .collect()
}

/// fio's http engine in s3 and swift modes against radosgw: fio 3.33 and fiox write, read and
/// delete the same 16 objects of 64 KiB, each tool in a bucket of its own. Both report the same
/// bytes and I/Os, the gateway stores the same object names and sizes for both (radosgw-admin),
/// its S3 counters see every request fiox reports, and the deletes leave both buckets empty.
#[test]
fn http_engine_on_radosgw_matches_fio() {
    rgw_or_skip!(c, g);
    let Some(fio) = fio_ext() else {
        skip!("fio 3.33 with the http engine is missing (scripts/fio-ext.sh builds it; $FIOX_FIO_EXT)")
    };
    let token = g.token();
    let pid = std::process::id();
    for mode in ["s3", "swift"] {
        let mut stored = Vec::new();
        for (name, bin) in [("fio", fio.clone()), ("fiox", util::fiox_bin())] {
            let bucket = format!("http-{mode}-{name}-{pid}");
            g.container(&bucket);
            let file = if mode == "s3" { format!("/{bucket}/obj") } else { format!("/swift/v1/{bucket}/obj") };
            let mut base: Vec<String> = vec![
                "--name=rgw".into(),
                "--ioengine=http".into(),
                format!("--http_mode={mode}"),
                format!("--http_host={}", g.host()),
                format!("--filename={file}"),
                "--bs=64k".into(),
                "--size=1m".into(),
                "--output-format=json".into(),
            ];
            if mode == "s3" {
                base.extend([format!("--http_s3_keyid={KEY}"), format!("--http_s3_key={SECRET}")]);
            } else {
                base.push(format!("--http_swift_auth_token={token}"));
            }
            let mut phases = Vec::new();
            for rw in ["write", "read", "trim"] {
                let before = g.counters(c);
                let mut args = base.clone();
                args.push(format!("--rw={rw}"));
                let o = run(&bin, &args);
                assert_eq!(o.code, 0, "{name} {mode} {rw}: {}", o.stderr);
                let f = figures(&o);
                if mode == "s3" {
                    // The gateway counts S3 GETs and PUTs (not Swift's, nor deletes).
                    let after = g.counters(c);
                    let d = |k: &str| after[k] - before[k];
                    let (ios, bytes) = match rw {
                        "write" => (d("put"), d("put_b")),
                        // radosgw 16.2's get_b falls one byte short per GET (seen here on
                        // every size): the bytes it sent are get_b + get.
                        "read" => (d("get"), d("get_b") + d("get")),
                        _ => (0, 0),
                    };
                    let dir = if rw == "read" { 0 } else { 1 };
                    if rw != "trim" {
                        assert_eq!((ios, bytes), (f[dir].2, f[dir].1), "{name} {mode} {rw}: the gateway's counters");
                    }
                }
                phases.push(f);
                if rw == "write" {
                    stored.push(objects(c, &bucket));
                }
            }
            assert!(objects(c, &bucket).is_empty(), "{name} {mode}: the deletes left objects");
            remove_bucket(c, &bucket);
            assert_eq!(phases[0][1], (0, 1 << 20, 16), "{name} {mode} write");
            assert_eq!(phases[1][0], (0, 1 << 20, 16), "{name} {mode} read");
            assert_eq!(phases[2][2], (0, 1 << 20, 16), "{name} {mode} trim");
            if name == "fiox" {
                assert_eq!(stored[0], stored[1], "{mode}: fio's objects and fiox's");
            }
        }
        let want: Vec<(String, u64)> = (0..16).map(|i| (format!("obj_{}_65536", i * 65536), 65536)).collect();
        let mut sorted = want.clone();
        sorted.sort();
        assert_eq!(stored[0], sorted, "{mode}: object names and sizes");
    }
}

/// `fiox ceph --rgw-host`: S3 PUT and GET rows per size beside the other layers' (the same
/// columns), figures the gateway's own counters agree with, warp's equivalent commands, and
/// nothing left behind but what was there before (a bucket of someone else's is untouched).
#[test]
fn ceph_rgw_layer() {
    rgw_or_skip!(c, g);
    let pid = std::process::id();
    let other = format!("not-fiox-{pid}");
    g.container(&other);
    let dir = util::scratch();
    let out = dir.path().join("res");
    let before = g.counters(c);
    let o = Command::new("timeout")
        .args(["-k", "5", "180"])
        .arg(util::fiox_bin())
        .args(["ceph", "-c"])
        .arg(&c.conf)
        .args(["-p", "bench", "--layers", "rados,rgw", "--rgw-host", &g.host(), "--access-key", KEY])
        .args(["--secret-key", SECRET, "--threads", "4", "--runtime", "1", "--sizes", "4k,64k"])
        .args(["--image-size", "1m", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let o = Out::from(o);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    let after = g.counters(c);
    let rows: Vec<&str> = o.stdout.lines().filter(|l| l.starts_with("RGW ")).collect();
    assert_eq!(rows.len(), 4, "{}", o.stdout);
    for r in &rows {
        assert_eq!(r.matches(" ms").count(), 4, "every row has mean, p50, p99 and max: {r}");
    }
    assert!(o.stdout.lines().any(|l| l.starts_with("RADOS ")), "{}", o.stdout);
    assert!(o.stdout.contains("S3 through the RADOS Gateway at 127.0.0.1:"), "{}", o.stdout);
    assert!(o.stdout.contains("256 objects of 4 KiB uploaded before"), "{}", o.stdout);
    assert!(o.stdout.contains("16 objects of 64 KiB uploaded before"), "{}", o.stdout);
    // The reports' figures are the gateway's: every PUT (measured or uploading GET's objects)
    // and every GET, with their bytes.
    let report = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(out.join(name)).unwrap()).unwrap()
    };
    let (mut puts, mut put_b, mut gets, mut get_b) = (0, 0, 0, 0);
    for (size, bs, objects) in [("4k", 4096, 256), ("64k", 65536, 16)] {
        let p = &report(&format!("rgw-put-{size}.json"))["jobs"][0]["write"];
        let r = &report(&format!("rgw-get-{size}.json"))["jobs"][0]["read"];
        assert!(p["total_ios"].as_u64().unwrap() > 0 && r["total_ios"].as_u64().unwrap() > 0);
        assert_eq!(p["io_bytes"].as_u64().unwrap(), p["total_ios"].as_u64().unwrap() * bs);
        assert_eq!(r["io_bytes"].as_u64().unwrap(), r["total_ios"].as_u64().unwrap() * bs);
        puts += p["total_ios"].as_u64().unwrap() + objects;
        put_b += p["io_bytes"].as_u64().unwrap() + objects * bs;
        gets += r["total_ios"].as_u64().unwrap();
        get_b += r["io_bytes"].as_u64().unwrap();
    }
    let d = |k: &str| after[k] - before[k];
    // get_b + get: radosgw 16.2 counts one byte fewer than it sends per GET.
    let seen = (d("put"), d("put_b"), d("get"), d("get_b") + d("get"));
    assert_eq!(seen, (puts, put_b, gets, get_b), "the gateway's counters");
    let cmds = std::fs::read_to_string(out.join("commands.txt")).unwrap();
    assert!(
        cmds.lines().any(|l| l.starts_with(&format!("warp get --host {} --bucket fiox-ceph-", g.host()))
            && l.ends_with("--concurrent 4 --obj.size 4KiB --duration 1s --objects 256")),
        "{cmds}"
    );
    // Nothing of fiox's is left, and the bucket it did not make is still there.
    let left = buckets(c);
    assert!(!left.iter().any(|b| b.starts_with("fiox-ceph-")), "{left:?}");
    assert!(left.contains(&other), "{left:?}");
    remove_bucket(c, &other);
    // The rgw layer needs the gateway's address, and says so before anything runs.
    let bad = util::fiox(dir.path(), &["ceph", "-p", "bench", "--layers", "rgw", "--out", "x"]);
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("layer rgw needs the gateway's S3 endpoint: --rgw-host HOST:PORT"), "{}", bad.stderr);
    assert!(!dir.path().join("x").exists());
}
