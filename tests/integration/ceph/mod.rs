//! Ceph: fio's `rbd` and `rados` engines against a real single-node cluster (Debian's pacific
//! ceph-mon and ceph-osd on memstore, started by `scripts/ceph-cluster.sh`), fio 3.33 and fiox
//! on the same jobs (and, in `rgw`, a RADOS Gateway added to that cluster for the http engine
//! and `fiox ceph`'s rgw layer). One cluster serves the whole test run: the first test that needs it
//! starts it, and the script's watcher stops its daemons by their PIDs (and removes its
//! directory) once this test process has exited, also when it panics or is killed. Without
//! root, or when the packages cannot be installed, the tests that need a cluster say
//! "skipped: ..." with the reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::util::{self, free_port_pair, skip, Out};

pub(crate) struct Cluster {
    /// The cluster's configuration file: everything a client needs.
    pub conf: PathBuf,
}

static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();

/// The run's cluster, started on first use.
pub(crate) fn cluster() -> Result<&'static Cluster, String> {
    CLUSTER.get_or_init(start).as_ref().map_err(Clone::clone)
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn have(tool: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().is_ok_and(|o| o.status.success())
}

fn start() -> Result<Cluster, String> {
    if !is_root() {
        return Err("the Ceph tests need root (to start ceph-mon and ceph-osd)".into());
    }
    if !["ceph-mon", "ceph-osd", "ceph", "rados", "rbd"].iter().all(|t| have(t)) {
        // scripts/test.sh installs them; a plain `cargo test` as root does it here.
        let ok = Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends", "ceph-mon", "ceph-osd", "ceph-common"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok || !have("ceph-mon") {
            return Err(
                "ceph-mon, ceph-osd and ceph-common are not installed and apt-get could not install them".into()
            );
        }
    }
    let port = free_port_pair().ok_or("no two free adjacent TCP ports on 127.0.0.1 for the monitor")?;
    let dir = tempfile::Builder::new().prefix("fiox-ceph-").tempdir().map_err(|e| e.to_string())?.keep();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ceph-cluster.sh");
    let pid = std::process::id().to_string();
    let out = Command::new("timeout")
        .args(["-k", "5", "180"])
        .arg(&script)
        .arg("up")
        .arg(&dir)
        .args(["--until", &pid])
        .env("FIOX_CEPH_MON_PORT", port.to_string())
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !stdout.contains("READY") {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("the test cluster did not start: {}", err.lines().last().unwrap_or("")));
    }
    Ok(Cluster { conf: dir.join("ceph.conf") })
}

/// Held (shared) by every test while it uses the cluster, and exclusively by the one test that
/// stops the OSD, so that no other test sees the stall.
pub(crate) static SHARED: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Binds `$c` to the cluster for the rest of the test, holding `SHARED`: shared, or with `alone`
/// exclusively (no other test's operations on the cluster meanwhile). Without a cluster the
/// test skips, saying why.
macro_rules! cluster_or_skip {
    ($c:ident) => {
        let _shared = $crate::ceph::SHARED.read().unwrap_or_else(|e| e.into_inner());
        let $c = match $crate::ceph::cluster() {
            Ok(c) => c,
            Err(why) => $crate::util::skip!("{why}"),
        };
    };
    ($c:ident, alone) => {
        let _alone = $crate::ceph::SHARED.write().unwrap_or_else(|e| e.into_inner());
        let $c = match $crate::ceph::cluster() {
            Ok(c) => c,
            Err(why) => $crate::util::skip!("{why}"),
        };
    };
}

impl Cluster {
    /// A Ceph command-line tool (`rados`, `rbd`) against the cluster.
    pub(crate) fn tool(&self, tool: &str, args: &[&str]) -> Out {
        let o = Command::new("timeout")
            .args(["-k", "5", "60", tool, "-c"])
            .arg(&self.conf)
            .args(args)
            .output()
            .expect("cannot run a Ceph tool");
        Out::from(o)
    }

    /// A fresh image of `mib` MiB in pool `bench`, with a name no other test uses.
    pub(crate) fn image(&self, tag: &str, mib: u32) -> String {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!("{tag}-{}", N.fetch_add(1, Ordering::Relaxed));
        let o = self.tool("rbd", &["create", &format!("bench/{name}"), "--size", &format!("{mib}M")]);
        assert_eq!(o.code, 0, "rbd create: {}", o.stderr);
        name
    }

    /// The written extents of an image (`rbd diff`), as (offset, length) pairs.
    pub(crate) fn extents(&self, image: &str) -> Vec<(u64, u64)> {
        let o = self.tool("rbd", &["diff", "--format", "json", &format!("bench/{image}")]);
        assert_eq!(o.code, 0, "rbd diff: {}", o.stderr);
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        let mut out: Vec<(u64, u64)> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["offset"].as_u64().unwrap(), e["length"].as_u64().unwrap()))
            .collect();
        out.sort();
        // Adjacent extents merged, so that the answer does not depend on object boundaries.
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (off, len) in out {
            match merged.last_mut() {
                Some((o, l)) if *o + *l == off => *l += len,
                _ => merged.push((off, len)),
            }
        }
        merged
    }

    /// The pool's objects whose names start with `prefix`, with their sizes.
    fn objects(&self, prefix: &str) -> BTreeMap<String, u64> {
        let o = self.tool("rados", &["-p", "bench", "ls"]);
        assert_eq!(o.code, 0, "rados ls: {}", o.stderr);
        let mut out = BTreeMap::new();
        for name in o.stdout.lines().filter(|n| n.starts_with(prefix)) {
            let s = self.tool("rados", &["-p", "bench", "stat", name]);
            assert_eq!(s.code, 0, "rados stat {name}: {}", s.stderr);
            let size = s.stdout.trim().rsplit(' ').next().unwrap().parse().unwrap();
            out.insert(name.to_string(), size);
        }
        out
    }

    /// The pool's object names (no sizes: one `rados ls`).
    fn names(&self) -> std::collections::BTreeSet<String> {
        let o = self.tool("rados", &["-p", "bench", "ls"]);
        assert_eq!(o.code, 0, "rados ls: {}", o.stderr);
        o.stdout.lines().map(str::to_string).collect()
    }

    fn remove_objects(&self, prefix: &str) {
        for name in self.objects(prefix).keys() {
            self.tool("rados", &["-p", "bench", "rm", name]);
        }
    }
}

/// Runs fio (`fiox_run` false) or fiox with the cluster's configuration in CEPH_CONF, bounded
/// in time (fio waits forever on a cluster that stopped answering).
pub(crate) fn run(fiox_run: bool, c: &Cluster, args: &[&str]) -> Out {
    let bin = if fiox_run { util::fiox_bin() } else { util::fio_bin() };
    let dir = util::scratch();
    let o = Command::new("timeout")
        .args(["-k", "5", "120"])
        .arg(bin)
        .args(args)
        .env("CEPH_CONF", &c.conf)
        .current_dir(dir.path())
        .output()
        .expect("cannot run");
    let out = Out::from(o);
    // Neither tool may leave a local file behind but fio's verify state (both save it).
    let local: Vec<String> = util::listing(dir.path()).into_iter().filter(|f| !f.ends_with("-verify.state")).collect();
    assert!(local.is_empty(), "a local file was made: {local:?}");
    out
}

/// error, and per direction io_bytes and total_ios, of the first job. A mixed random job's
/// split between reads and writes follows each tool's random generator (fiox does not
/// reproduce fio's), so there only the sums over both are kept.
fn figures(out: &Out) -> (i64, [(u64, u64); 3]) {
    let j = &util::json(out)["jobs"][0];
    let d = |k: &str| (j[k]["io_bytes"].as_u64().unwrap(), j[k]["total_ios"].as_u64().unwrap());
    let [r, w, t] = [d("read"), d("write"), d("trim")];
    let dirs = if j["job options"]["rw"] == "randrw" { [(r.0 + w.0, r.1 + w.1), (0, 0), t] } else { [r, w, t] };
    (j["error"].as_i64().unwrap(), dirs)
}

#[test]
fn enghelp_as_fio() {
    for e in ["rbd", "rados"] {
        let want = util::fio(Path::new("/"), &[&format!("--enghelp={e}")]);
        let got = util::fiox(Path::new("/"), &[&format!("--enghelp={e}")]);
        assert_eq!(got.code, 0);
        assert_eq!(got.stdout, want.stdout, "--enghelp={e}");
    }
}

#[test]
fn binary_names_no_ceph_library() {
    let o = Command::new("ldd").arg(util::fiox_bin()).output().expect("ldd");
    let libs = String::from_utf8_lossy(&o.stdout);
    assert!(!libs.contains("librados") && !libs.contains("librbd"), "{libs}");
}

/// Without the libraries (hidden in a private mount namespace), a Ceph job is refused before
/// any I/O with one line naming the library and its Debian package; other engines still run.
#[test]
fn missing_library_is_one_line() {
    if !is_root() || !have("unshare") {
        skip!("hiding the Ceph libraries needs root and unshare");
    }
    let dir = util::scratch();
    for (engine, lib, package) in [("rbd", "librbd.so.1", "librbd1"), ("rados", "librados.so.2", "librados2")] {
        let path = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"]
            .iter()
            .map(|d| format!("{d}/{lib}"))
            .find(|p| Path::new(p).exists());
        let Some(path) = path else { skip!("{lib} is not installed here") };
        let job = format!(
            "{} --name=j --ioengine={engine} --pool=bench --rbdname=img --size=1m --conf=/nonexistent",
            util::fiox_bin().display()
        );
        let job =
            if engine == "rbd" { job.replace(" --conf=/nonexistent", "") } else { job.replace(" --rbdname=img", "") };
        let script = format!(
            "mount --bind /dev/null {path} && {job}; echo rc=$?; {} --name=p --size=64k --filename=f --output-format=terse >/dev/null && echo psync-ok",
            util::fiox_bin().display()
        );
        let o = Command::new("unshare").args(["-m", "sh", "-c", &script]).current_dir(dir.path()).output().unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stdout.contains("rc=1") && stdout.contains("psync-ok"), "{engine}: {stdout} {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{engine}: {stderr}");
        assert!(stderr.contains(lib) && stderr.contains(package), "{engine}: {stderr}");
    }
}

/// fio's rbd engine and fiox's on fresh images: the same error, bytes and I/O counts, and for
/// writes the same written extents (`rbd diff`), over several rw modes, sizes, block sizes,
/// depths and offsets.
#[test]
fn rbd_matches_fio() {
    cluster_or_skip!(c);
    let cases: &[&[&str]] = &[
        &["--rw=write", "--bs=4k", "--iodepth=1", "--size=2m"],
        &["--rw=write", "--bs=64k", "--iodepth=16", "--size=16m", "--offset=8m"],
        &["--rw=randwrite", "--bs=16k", "--iodepth=8", "--size=8m"],
        &["--rw=randwrite", "--bs=4k", "--iodepth=1", "--size=4m", "--fsync=16", "--direct=1"],
        &["--rw=randrw", "--bs=8k", "--iodepth=8", "--size=4m", "--randrepeat=1"],
        // Partial-object discards are order-sensitive in librbd (one that reaches the object's
        // current end truncates it, one in the middle is skipped), so depth 1 for those and
        // whole 4 MiB objects at depth 2.
        &["--rw=trim", "--bs=1m", "--iodepth=1", "--size=4m", "--offset=4m"],
        &["--rw=trim", "--bs=4m", "--iodepth=2", "--size=8m", "--offset=4m"],
    ];
    for case in cases {
        let mut seen = Vec::new();
        for fiox_run in [false, true] {
            let image = c.image("rbd", 64);
            // The same 24 MiB written first on both images, so trims and reads find data.
            let pre = run(
                fiox_run,
                c,
                &[
                    "--name=pre",
                    "--ioengine=rbd",
                    "--pool=bench",
                    &format!("--rbdname={image}"),
                    "--rw=write",
                    "--bs=1m",
                    "--size=24m",
                    "--iodepth=4",
                    "--output-format=json",
                ],
            );
            assert_eq!(pre.code, 0, "{}", pre.stderr);
            let mut args = vec!["--name=r", "--ioengine=rbd", "--pool=bench", "--output-format=json"];
            let rbdname = format!("--rbdname={image}");
            args.push(&rbdname);
            args.extend_from_slice(case);
            let out = run(fiox_run, c, &args);
            assert_eq!(out.code, 0, "{} {case:?}: {}", if fiox_run { "fiox" } else { "fio" }, out.stderr);
            if fiox_run {
                assert!(out.stderr.is_empty(), "{case:?}: {}", out.stderr);
            }
            let j = &util::json(&out)["jobs"][0];
            seen.push((figures(&out), j["sync"]["total_ios"].as_u64(), c.extents(&image)));
        }
        assert_eq!(seen[0].0, seen[1].0, "{case:?}: error and (bytes, ios) per direction, fio then fiox");
        assert_eq!(seen[0].2, seen[1].2, "{case:?}: written extents, fio then fiox");
        // At iodepth 1 only: deeper, fio 3.33's rbd engine reports more syncs than it was asked
        // for (252 and 408 for these 64 at depths 4 and 8; fiox: 63 at every depth).
        if case.iter().any(|a| a.starts_with("--fsync")) {
            assert_eq!(seen[0].1, seen[1].1, "{case:?}: flushes");
        }
    }
}

/// fio's rados engine and fiox's: the same error, bytes and I/O counts, and the same objects
/// with the same sizes left in the pool, over nrfiles, block sizes, depths and rw modes.
#[test]
fn rados_matches_fio() {
    cluster_or_skip!(c);
    let cases: &[(&str, &[&str])] = &[
        ("ra1", &["--rw=write", "--bs=64k", "--iodepth=8", "--size=8m", "--nrfiles=4"]),
        ("ra2", &["--rw=randwrite", "--bs=4k", "--iodepth=16", "--size=2m", "--nrfiles=2"]),
        ("ra3", &["--rw=write", "--bs=1m", "--iodepth=1", "--size=3m"]),
        ("ra7", &["--rw=write", "--bs=256k", "--iodepth=2", "--size=4m", "--nrfiles=2", "--offset=1m"]),
        ("ra4", &["--rw=read", "--bs=64k", "--iodepth=4", "--size=4m", "--nrfiles=4"]),
        ("ra5", &["--rw=randread", "--bs=16k", "--iodepth=8", "--size=3m", "--nrfiles=3"]),
        ("ra6", &["--rw=randrw", "--bs=8k", "--iodepth=4", "--size=1m", "--nrfiles=2", "--randrepeat=1"]),
    ];
    let conf = format!("--conf={}", c.conf.display());
    for (name, case) in cases {
        let mut seen = Vec::new();
        for fiox_run in [false, true] {
            c.remove_objects(&format!("{name}."));
            let job = format!("--name={name}");
            let mut args = vec![job.as_str(), "--ioengine=rados", "--pool=bench", &conf, "--output-format=json"];
            args.extend_from_slice(case);
            let out = run(fiox_run, c, &args);
            assert_eq!(out.code, 0, "{case:?}: {}", out.stderr);
            if fiox_run {
                assert!(out.stderr.is_empty(), "{case:?}: {}", out.stderr);
            }
            seen.push((figures(&out), c.objects(&format!("{name}."))));
        }
        c.remove_objects(&format!("{name}."));
        assert_eq!(seen[0].0, seen[1].0, "{case:?}: error and (bytes, ios) per direction, fio then fiox");
        if case.contains(&"--rw=randrw") {
            // Sizes follow the highest offset written, which the random split decides.
            let names = |m: &BTreeMap<String, u64>| m.keys().cloned().collect::<Vec<_>>();
            assert_eq!(names(&seen[0].1), names(&seen[1].1), "{case:?}: objects left, fio then fiox");
        } else {
            assert_eq!(seen[0].1, seen[1].1, "{case:?}: objects and sizes left, fio then fiox");
        }
        assert!(!seen[0].1.is_empty());
    }
    // touch_objects=0 with a job that only reads objects that do not exist: fio 3.33 never
    // reads a completion's result and counts 64 KiB read; fiox reports the error as fio
    // reports any I/O error, and no object is made.
    c.remove_objects("rt.");
    let args = ["--name=rt", "--ioengine=rados", "--pool=bench", &conf, "--rw=read", "--size=64k", "--touch_objects=0"];
    let fio = run(false, c, &args);
    assert_eq!(fio.code, 0, "{}", fio.stderr);
    assert!(fio.stdout.contains("io=64.0KiB"), "{}", fio.stdout);
    let out = run(true, c, &args);
    assert_eq!(out.code, 1);
    // fio's two lines: the failed I/O, then the job's end (fio's `pid=N, err=` line).
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stderr);
    assert_eq!(lines[0], "fiox: io_u error on file rt.0.0: No such file or directory: read offset=0, buflen=4096");
    assert!(
        lines[1].starts_with("fiox: pid=")
            && lines[1].ends_with(", err=2, func=io_u error, error=No such file or directory"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("err= 2 (func=io_u error, error=No such file or directory)"), "{}", out.stdout);
    assert!(c.objects("rt.").is_empty());
}

/// Data written by fiox verifies in fio (verify=crc32c, verify_only) and the other way
/// round, on an image and on objects.
#[test]
fn verify_across_tools() {
    cluster_or_skip!(c);
    let conf = format!("--conf={}", c.conf.display());
    for (writer_fiox, reader_fiox) in [(true, false), (false, true)] {
        let image = c.image("ver", 32);
        let rbdname = format!("--rbdname={image}");
        let rbd: Vec<&str> = vec!["--name=v", "--ioengine=rbd", "--pool=bench", &rbdname, "--size=8m", "--bs=16k"];
        let name = if writer_fiox { "vx" } else { "vf" };
        let job = format!("--name={name}");
        let rados: Vec<&str> =
            vec![&job, "--ioengine=rados", "--pool=bench", &conf, "--size=4m", "--nrfiles=2", "--bs=32k"];
        for base in [rbd, rados] {
            let mut w = base.clone();
            w.extend_from_slice(&["--rw=randwrite", "--iodepth=8", "--verify=crc32c", "--do_verify=0"]);
            let out = run(writer_fiox, c, &w);
            assert_eq!(out.code, 0, "writer: {}", out.stderr);
            let mut r = base.clone();
            r.extend_from_slice(&[
                "--rw=randwrite",
                "--iodepth=8",
                "--verify=crc32c",
                "--verify_only",
                "--output-format=json",
            ]);
            let out = run(reader_fiox, c, &r);
            assert_eq!(
                out.code,
                0,
                "reader ({}): {} {}",
                if reader_fiox { "fiox" } else { "fio" },
                out.stdout,
                out.stderr
            );
            let j = &util::json(&out)["jobs"][0];
            assert_eq!(j["error"], 0, "{}", out.stdout);
            assert!(j["read"]["io_bytes"].as_u64().unwrap() > 0, "{}", out.stdout);
        }
        c.remove_objects(&format!("{name}."));
    }
}

/// What cannot work is one line naming what is missing, exit status 1, no I/O and no hang.
#[test]
fn errors_are_one_clear_line() {
    cluster_or_skip!(c);
    let dir = util::scratch();
    // A monitor that never answers: a port nothing listens on, 3 s to give up.
    let dead_conf = dir.path().join("dead.conf");
    let port = free_port_pair().unwrap();
    std::fs::write(
        &dead_conf,
        format!("[global]\nmon host = 127.0.0.1:{port}\nauth client required = none\nclient mount timeout = 3\nlog file = /dev/null\n"),
    )
    .unwrap();
    let image = c.image("err", 16);
    let conf = format!("--conf={}", c.conf.display());
    let dead = format!("--conf={}", dead_conf.display());
    let rbdname = format!("--rbdname={image}");
    let cases: Vec<(Vec<&str>, Option<&Path>, Vec<&str>)> = vec![
        (vec!["--ioengine=rbd", "--pool=nosuch", &rbdname], None, vec!["pool 'nosuch' does not exist", "bench"]),
        (
            vec!["--ioengine=rbd", "--pool=bench", "--rbdname=nosuch"],
            None,
            vec!["image 'nosuch' not found", image.as_str()],
        ),
        (vec!["--ioengine=rbd", "--pool=bench"], None, vec!["rbdname="]),
        (vec!["--ioengine=rbd", "--pool=bench", &rbdname, "--size=1g"], None, vec!["exceeds the rbd image"]),
        (
            vec!["--ioengine=rbd", "--pool=bench", &rbdname],
            Some(&dead_conf),
            vec!["no answer from the monitors", "dead.conf", "3 s"],
        ),
        (
            vec!["--ioengine=rbd", "--pool=bench", &rbdname],
            Some(Path::new("/nonexistent.conf")),
            vec!["/nonexistent.conf"],
        ),
        (vec!["--ioengine=rados", "--pool=nosuch", &conf, "--size=1m"], None, vec!["pool 'nosuch' does not exist"]),
        (
            vec!["--ioengine=rados", "--pool=bench", "--conf=/nonexistent.conf", "--size=1m"],
            None,
            vec!["/nonexistent.conf"],
        ),
        (
            vec!["--ioengine=rados", "--pool=bench", &dead, "--size=1m"],
            None,
            vec!["no answer from the monitors", "127.0.0.1"],
        ),
    ];
    for (args, ceph_conf, want) in cases {
        let t0 = Instant::now();
        let mut cmd = Command::new("timeout");
        cmd.args(["-k", "5", "60"]).arg(util::fiox_bin()).arg("--name=e").arg("--rw=write").args(&args);
        cmd.env("CEPH_CONF", ceph_conf.unwrap_or(&c.conf)).current_dir(dir.path());
        let o = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(t0.elapsed() < Duration::from_secs(30), "{args:?} took {:?}", t0.elapsed());
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        for w in want {
            assert!(stderr.contains(w), "{args:?}: wanted '{w}' in: {stderr}");
        }
        assert!(o.stdout.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&o.stdout));
    }
    // Nothing was written to the image by any of these.
    assert!(c.extents(&image).is_empty());
}

/// `fiox rbd bench` beside Debian's `rbd bench` (16.2.15) on fresh images: the same header
/// line, ceil(io_total / io_size) ops, the summary's layout, the same written extents for
/// the sequential patterns and aligned ones inside the image for the random one; the same
/// messages and exit statuses for bad arguments.
#[test]
fn rbd_bench_matches_rbd() {
    cluster_or_skip!(c);
    let conf = c.conf.display().to_string();
    let summary = |s: &str| {
        let l = s.lines().find(|l| l.starts_with("elapsed:")).unwrap_or_else(|| panic!("no summary in {s}"));
        let f: Vec<&str> = l.split("   ").collect();
        assert_eq!(f.len(), 4, "{l}");
        assert!(f[0].strip_prefix("elapsed: ").unwrap().parse::<u64>().is_ok(), "{l}");
        assert!(f[2].strip_prefix("ops/sec: ").unwrap().parse::<f64>().is_ok(), "{l}");
        let bytes = f[3].strip_prefix("bytes/sec: ").unwrap();
        assert!(bytes.ends_with("B/s") && bytes.contains(' '), "{l}");
        f[1].to_string()
    };
    for (pattern, extra) in [
        ("seq", &[][..]),
        ("full-seq", &[][..]),
        ("rand", &[][..]),
        ("seq", &["--io-type", "rw", "--rw-mix-read", "70"][..]),
    ] {
        let mut seen = Vec::new();
        for fiox_run in [false, true] {
            let image = c.image("rbdb", 64);
            let mut cmd = if fiox_run {
                let mut c = Command::new(util::fiox_bin());
                c.arg("rbd");
                c
            } else {
                Command::new("rbd")
            };
            cmd.args(["-c", &conf, "bench", "--io-size", "64K", "--io-threads", "4", "--io-total", "16M"]);
            cmd.args(["--io-pattern", pattern]);
            if extra.is_empty() {
                cmd.args(["--io-type", "write"]);
            }
            cmd.args(extra).arg(format!("bench/{image}"));
            let o = cmd.output().unwrap();
            let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
            assert_eq!(
                o.status.code(),
                Some(0),
                "{pattern} {extra:?}: {stdout} {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let header = stdout.lines().next().unwrap().to_string();
            let rows = stdout.lines().nth(1).unwrap().to_string();
            seen.push((
                header,
                rows,
                summary(&stdout),
                c.extents(&image),
                stdout.lines().filter(|l| l.starts_with("read_ops:") || l.starts_with("write_ops:")).count(),
            ));
        }
        assert_eq!(seen[0].0, seen[1].0, "{pattern} {extra:?}: header");
        assert_eq!(seen[0].1, seen[1].1, "{pattern} {extra:?}: column titles");
        assert_eq!(seen[0].2, "ops: 256");
        assert_eq!(seen[0].2, seen[1].2, "{pattern} {extra:?}: ops");
        assert_eq!(seen[0].4, seen[1].4, "{pattern} {extra:?}: read/write lines");
        if !extra.is_empty() {
            continue;
        }
        if pattern == "rand" {
            for (off, len) in &seen[1].3 {
                assert!(off % 65536 == 0 && len % 65536 == 0 && off + len <= 64 << 20, "{:?}", seen[1].3);
            }
        } else {
            assert_eq!(seen[0].3, seen[1].3, "{pattern}: written extents, rbd bench then fiox");
        }
    }
    // Bad arguments: the same message and exit status.
    let image = c.image("rbdb", 16);
    let spec = format!("bench/{image}");
    let bad: &[&[&str]] = &[
        &["--io-type", "write", "--io-size", "0"],
        &["--io-type", "write", "--io-threads", "0"],
        &["--io-size", "4K"],
        &["--io-type", "write", "--io-size", "32M"],
    ];
    for args in bad {
        let mut outs = Vec::new();
        for fiox_run in [false, true] {
            let mut cmd = if fiox_run {
                let mut c = Command::new(util::fiox_bin());
                c.arg("rbd");
                c
            } else {
                Command::new("rbd")
            };
            let o = cmd.args(["-c", &conf, "bench"]).args(*args).arg(&spec).output().unwrap();
            outs.push((o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), o.stdout.is_empty()));
        }
        assert_eq!(outs[0], outs[1], "{args:?}");
    }
}

/// `fiox rados bench SECONDS write` makes the real tool's objects: Debian's `rados bench seq`
/// reads and verifies them, and `rados cleanup` removes as many objects as fiox wrote; the
/// output has pacific's lines.
#[test]
fn rados_bench_write_is_read_by_rados() {
    cluster_or_skip!(c);
    let conf = c.conf.display().to_string();
    let w = Command::new(util::fiox_bin())
        .args(["rados", "-c", &conf, "-p", "bench", "bench", "2", "write", "-t", "4", "-b", "64K", "--no-cleanup"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&w.stdout).into_owned();
    assert_eq!(w.status.code(), Some(0), "{out} {}", String::from_utf8_lossy(&w.stderr));
    assert!(w.stderr.is_empty(), "{}", String::from_utf8_lossy(&w.stderr));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "hints = 1");
    assert_eq!(
        lines[1],
        "Maintaining 4 concurrent writes of 65536 bytes to objects of size 65536 for up to 2 seconds or 0 objects"
    );
    assert!(lines[2].starts_with("Object prefix: benchmark_data_"), "{out}");
    assert_eq!(lines[3], "  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)");
    // Row 0 comes after the first submissions, as the real tool's status thread prints it.
    assert_eq!(lines[4], "    0       4         4         0         0         0           -           0");
    // Summary labels are padded to 24 columns.
    let value = |label: &str| -> String {
        let l = lines.iter().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no {label} in {out}"));
        l[24..].to_string()
    };
    let writes: u64 = value("Total writes made:").parse().unwrap();
    assert!(writes > 0);
    assert_eq!(value("Write size:"), "65536");
    for label in
        ["Total time run:", "Bandwidth (MB/sec):", "Average Latency(s):", "Stddev Latency(s):", "Min latency(s):"]
    {
        assert!(value(label).parse::<f64>().is_ok(), "{label} in {out}");
    }
    assert_eq!(c.objects("benchmark_last_metadata").get("benchmark_last_metadata"), Some(&24));
    let s = c.tool("rados", &["-p", "bench", "bench", "2", "seq", "-t", "4"]);
    assert_eq!(s.code, 0, "{} {}", s.stdout, s.stderr);
    assert!(!s.stderr.contains("is not correct") && !s.stdout.contains("is not correct"), "{}", s.stderr);
    let r = c.tool("rados", &["-p", "bench", "cleanup"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(&format!("Removed {writes} objects")), "{}", r.stdout);
    // Without --no-cleanup fiox removes its own objects and metadata.
    let w = Command::new(util::fiox_bin())
        .args(["rados", "-c", &conf, "-p", "bench", "bench", "1", "write", "-t", "2", "-b", "16K"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&w.stdout).into_owned();
    assert_eq!(w.status.code(), Some(0), "{out}");
    assert!(out.contains("Cleaning up (deleting benchmark objects)\nRemoved "), "{out}");
    // (Other tests' bench objects come and go meanwhile: only this run's prefix counts.)
    let prefix = format!("benchmark_data_{}", summary_prefix(&out));
    assert!(!c.names().iter().any(|n| n.starts_with(&prefix)), "{prefix} objects left");
}

/// `fiox TOOL ARGS` (`rados`, `rbd`) against the cluster, bounded in time.
pub(crate) fn fiox_tool(c: &Cluster, tool: &str, args: &[&str]) -> Out {
    let o = Command::new("timeout")
        .args(["-k", "5", "60"])
        .arg(util::fiox_bin())
        .args([tool, "-c"])
        .arg(&c.conf)
        .args(args)
        .output()
        .expect("cannot run fiox");
    Out::from(o)
}

/// A summary value of rados bench's text output (labels padded to `width` columns).
fn summary_value(out: &str, label: &str, width: usize) -> String {
    let l = out.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no {label} in {out}"));
    l[width..].to_string()
}

/// The host and pid part of a write run's object prefix (`Object prefix: benchmark_data_H_P`).
fn summary_prefix(out: &str) -> String {
    let l = out.lines().find(|l| l.starts_with("Object prefix: ")).unwrap_or_else(|| panic!("no prefix in {out}"));
    l["Object prefix: benchmark_data_".len()..].to_string()
}

/// The keys of the JSON object on the line after `hints = 1`, and of its first `datas` entry.
fn json_keys(out: &str) -> (Vec<String>, Vec<String>) {
    let line = out.lines().nth(1).unwrap_or_else(|| panic!("no JSON line in {out}"));
    let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    (keys(&v), keys(&v["datas"][0]))
}

/// Interoperable bench data both ways: Debian's `rados bench write --no-cleanup` read back and
/// verified by `fiox rados bench seq|rand`, fiox's writes (op size below the object size,
/// `--max-objects`) read back by the real seq/rand; each tool's `cleanup` removes exactly the
/// other's objects and metadata. `-f json` has the real tool's keys; fiox's own report has
/// percentiles; bad arguments give the real tool's messages and statuses.
#[test]
fn rados_bench_read_and_cleanup_interop() {
    cluster_or_skip!(c);
    // Real writes, fiox reads.
    let w = c.tool(
        "rados",
        &["-p", "bench", "bench", "1", "write", "-t", "4", "-b", "64K", "--no-cleanup", "--run-name", "ia"],
    );
    assert_eq!(w.code, 0, "{}", w.stderr);
    let writes: u64 = summary_value(&w.stdout, "Total writes made:", 24).parse().unwrap();
    let seq = fiox_tool(c, "rados", &["-p", "bench", "bench", "30", "seq", "-t", "4", "--run-name", "ia"]);
    assert_eq!(seq.code, 0, "{} {}", seq.stdout, seq.stderr);
    assert!(seq.stderr.is_empty(), "{}", seq.stderr);
    assert!(
        seq.stdout
            .starts_with("hints = 1\n  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)\n"),
        "{}",
        seq.stdout
    );
    assert_eq!(summary_value(&seq.stdout, "Total reads made:", 22), writes.to_string(), "seq reads every op written");
    assert_eq!(summary_value(&seq.stdout, "Read size:", 22), "65536");
    for label in ["Bandwidth (MB/sec):", "Average Latency(s):", "Max latency(s):", "Min latency(s):"] {
        assert!(summary_value(&seq.stdout, label, 22).parse::<f64>().is_ok(), "{label}: {}", seq.stdout);
    }
    let rand = fiox_tool(
        c,
        "rados",
        &["-p", "bench", "bench", "1", "rand", "-t", "4", "--run-name", "ia", "--output-format=json"],
    );
    assert_eq!(rand.code, 0, "{} {}", rand.stdout, rand.stderr);
    assert!(rand.stderr.is_empty(), "{}", rand.stderr);
    let j: serde_json::Value = serde_json::from_str(&rand.stdout).expect("fiox's report is pure JSON");
    let reads = j["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!(reads > 0);
    assert_eq!(j["jobs"][0]["read"]["clat_ns"]["N"].as_u64(), Some(reads));
    assert!(j["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap() > 0);
    assert!(j["fiox"]["latency_s"]["read"]["p50"].as_f64().unwrap() > 0.0);
    assert_eq!(j["fiox"]["summary"]["total_reads_made"], reads.to_string());
    // fiox's -f json against the real tool's, on the same data (values differ, keys do not).
    let real = c.tool("rados", &["-p", "bench", "bench", "1", "seq", "-t", "2", "--run-name", "ia", "-f", "json"]);
    let ours =
        fiox_tool(c, "rados", &["-p", "bench", "bench", "1", "seq", "-t", "2", "--run-name", "ia", "-f", "json"]);
    assert_eq!((real.code, ours.code), (0, 0), "{} {}", real.stderr, ours.stderr);
    assert_eq!(json_keys(&real.stdout), json_keys(&ours.stdout), "seq -f json keys, rados then fiox");
    // fiox's cleanup removes exactly the real run's objects and metadata.
    let before = c.names();
    let cl = fiox_tool(c, "rados", &["-p", "bench", "cleanup", "--run-name", "ia"]);
    assert_eq!(cl.code, 0, "{}", cl.stderr);
    assert_eq!(cl.stdout, format!("Removed {writes} objects\n"));
    let after = c.names();
    // (Other tests make and remove their own objects meanwhile: only bench objects count.)
    let prefix = format!("benchmark_data_{}", summary_prefix(&w.stdout));
    let ours = |n: &&String| n.starts_with(&format!("{prefix}_object")) || *n == "ia";
    assert_eq!(before.iter().filter(ours).count() as u64, writes + 1, "the real run's objects and metadata");
    assert!(!after.iter().any(|n| n.starts_with(&prefix) || n == "ia"));

    // fiox writes (16 KiB ops into 64 KiB objects, at most 20 objects), the real tool reads.
    let fw = fiox_tool(
        c,
        "rados",
        &[
            "-p",
            "bench",
            "bench",
            "10",
            "write",
            "-t",
            "4",
            "-b",
            "16K",
            "-O",
            "64K",
            "--max-objects",
            "20",
            "--no-cleanup",
            "--run-name",
            "ib",
        ],
    );
    assert_eq!(fw.code, 0, "{} {}", fw.stdout, fw.stderr);
    assert_eq!(summary_value(&fw.stdout, "Total writes made:", 24), "80");
    let objs = c.objects(&format!("benchmark_data_{}", summary_prefix(&fw.stdout)));
    assert_eq!(objs.len(), 20, "{objs:?}");
    assert!(objs.values().all(|&s| s == 65536), "{objs:?}");
    assert_eq!(c.objects("ib").get("ib"), Some(&24));
    for test in ["seq", "rand"] {
        let r = c.tool("rados", &["-p", "bench", "bench", "1", test, "-t", "4", "--run-name", "ib"]);
        assert_eq!(r.code, 0, "{test}: {} {}", r.stdout, r.stderr);
        assert!(!r.stderr.contains("is not correct"), "{test}: {}", r.stderr);
        if test == "seq" {
            assert_eq!(summary_value(&r.stdout, "Total reads made:", 22), "80");
        }
    }
    let rc = c.tool("rados", &["-p", "bench", "cleanup", "--run-name", "ib"]);
    assert_eq!(rc.code, 0, "{}", rc.stderr);
    assert_eq!(rc.stdout, "Removed 20 objects\n");
    // (Other tests' bench objects come and go meanwhile: only this run's prefix counts.)
    let fprefix = format!("benchmark_data_{}_", summary_prefix(&fw.stdout));
    assert!(c.names().iter().all(|n| !n.starts_with(&fprefix) && n != "ib"));

    // Write -f json: the real tool's keys. (With its cleanup, pacific's write prints the
    // cleanup lines into the unfinished JSON and never ends it; hence --no-cleanup.)
    let mut seen = Vec::new();
    for fiox_run in [false, true] {
        let args = [
            "-p",
            "bench",
            "bench",
            "1",
            "write",
            "-t",
            "2",
            "-b",
            "4K",
            "-f",
            "json",
            "--no-cleanup",
            "--run-name",
            "ic",
        ];
        let out = if fiox_run { fiox_tool(c, "rados", &args) } else { c.tool("rados", &args) };
        assert_eq!(out.code, 0, "{}", out.stderr);
        let keys = json_keys(&out.stdout);
        let cl = c.tool("rados", &["-p", "bench", "cleanup", "--run-name", "ic"]);
        assert_eq!(cl.code, 0, "{}", cl.stderr);
        seen.push(keys);
    }
    assert_eq!(seen[0], seen[1], "write -f json keys, rados then fiox");
    // Both runs' objects went with their cleanup (other tests' may be there meanwhile).
    assert!(!c.names().contains("ic"));

    // Bad arguments and a read without data: the real tool's messages and statuses.
    let cases: &[&[&str]] = &[
        &["bench", "1", "seq", "--run-name", "nosuch"],
        &["bench", "1", "rand", "-b", "4K"],
        &["cleanup", "--prefix", "foo"],
        &["bench", "5x", "write"],
        &["bench", "1", "write", "-t", "0"],
    ];
    for args in cases {
        let mut full = vec!["-p", "bench"];
        full.extend_from_slice(args);
        let real = c.tool("rados", &full);
        let ours = fiox_tool(c, "rados", &full);
        assert_eq!((real.code, &real.stdout, &real.stderr), (ours.code, &ours.stdout, &ours.stderr), "{args:?}");
        assert_ne!(ours.code, 0);
    }
}

/// Seed 003 in one command: `fiox ceph` runs rados bench, rbd bench and fio's rbd engine on the
/// cluster, prints one table with p50/p99 for every run and the footnotes, keeps each run's own
/// output and a fio-layout report per run (read by `fiox compare` and `fiox plot`), and leaves
/// nothing behind: no bench object, no metadata object, no image.
#[test]
fn ceph_seed_in_one_command() {
    cluster_or_skip!(c);
    let dir = util::scratch();
    let out = dir.path().join("res");
    let child = Command::new("timeout")
        .args(["-k", "5", "120"])
        .arg(util::fiox_bin())
        .args(["ceph", "-c"])
        .arg(&c.conf)
        .args(["-p", "bench", "--threads", "4", "--runtime", "1", "--sizes", "64k,4000k", "--image-size", "32M"])
        .args(["--io-total", "8M", "--workloads", "randread,randwrite", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("layer  tool"), "{stdout}");
    for col in ["IOPS", "MiB/s", "MB/s", "lat avg", "p50", "p99", "max"] {
        assert!(lines[0].contains(col), "{col}: {}", lines[0]);
    }
    let rows: Vec<&str> = lines.iter().copied().filter(|l| l.starts_with("RADOS ") || l.starts_with("RBD ")).collect();
    // 3 rados runs, 2 sizes x 4 rbd bench runs, 2 sizes x 2 fio runs.
    assert_eq!(rows.len(), 3 + 8 + 4, "{stdout}");
    for r in &rows {
        assert_eq!(r.matches(" ms").count(), 4, "every row has mean, p50, p99 and max: {r}");
    }
    assert!(stdout.contains("cross a 4 MiB object boundary"), "{stdout}");
    assert!(stdout.contains("rbd_cache=false"), "{stdout}");
    assert!(stdout.contains("[1] Units: MiB/s"), "{stdout}");
    // The rados rows are the native output's figures.
    let native = std::fs::read_to_string(out.join("native/rados-bench-write.txt")).unwrap();
    let writes = summary_value(&native, "Total writes made:", 24);
    let rados_write = rows.iter().find(|r| r.starts_with("RADOS") && r.contains(" write ")).unwrap();
    assert!(rados_write.split_whitespace().any(|w| w == writes), "{rados_write} vs {writes}");
    for f in [
        "table.txt",
        "commands.txt",
        "native/rados-cleanup.txt",
        "native/rbd-bench-read-rand-64k.txt",
        "fio-rbd-randwrite-4000k.json",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let cmds = std::fs::read_to_string(out.join("commands.txt")).unwrap();
    assert!(cmds.lines().any(|l| l.starts_with("rados -p bench bench 1 write -t 4 -b 4000K --no-cleanup")), "{cmds}");
    assert!(cmds.lines().any(|l| l.starts_with("rbd bench --io-type read --io-size 64K")), "{cmds}");
    assert!(cmds.lines().any(|l| l.starts_with("fio --name=fio-rbd-randread-64k --ioengine=rbd")), "{cmds}");
    // Nothing left behind: the run's image, metadata object and bench objects are gone.
    let prefix = summary_prefix(&native);
    let names = c.names();
    assert!(!names.iter().any(|n| n.starts_with(&format!("benchmark_data_{prefix}_"))), "bench objects left");
    assert!(!names.iter().any(|n| n.starts_with("fiox-ceph-")), "metadata object left: {names:?}");
    let images = c.tool("rbd", &["ls", "bench"]);
    assert!(!images.stdout.contains("fiox-ceph-"), "image left: {}", images.stdout);
    // The folder reads as results.
    let cmp = util::fiox(dir.path(), &["compare", out.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(cmp.code, 0, "{}", cmp.stderr);
    assert!(cmp.stdout.contains("rados-bench-write") && cmp.stdout.contains("fio-rbd-randread-64k"), "{}", cmp.stdout);
    let plot =
        util::fiox(dir.path(), &["plot", out.to_str().unwrap(), "--out", dir.path().join("plot").to_str().unwrap()]);
    assert_eq!(plot.code, 0, "{}", plot.stderr);
    assert!(dir.path().join("plot/index.html").is_file());
    // fio's layer as the seed ran it: one client per job, and the footnote says what that costs.
    let out2 = dir.path().join("res2");
    let o = Command::new(util::fiox_bin())
        .args(["ceph", "-c"])
        .arg(&c.conf)
        .args(["-p", "bench", "--threads", "3", "--runtime", "1", "--sizes", "64k", "--image-size", "16M"])
        .args(["--layers", "fio-rbd", "--workloads", "randwrite", "--fio-numjobs", "--out"])
        .arg(&out2)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text} {}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("numjobs=3 iodepth=1") && text.contains("exclusive-lock"), "{text}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out2.join("fio-rbd-randwrite-64k.json")).unwrap()).unwrap();
    assert_eq!(j["jobs"][0]["job options"]["numjobs"], "3", "{j}");
    // A results folder that is not empty is refused before anything runs.
    let again = util::fiox(dir.path(), &["ceph", "-p", "bench", "--out", out.to_str().unwrap()]);
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("is not empty"), "{}", again.stderr);
}

/// The OSD stopped (SIGSTOP) until dropped (SIGCONT), also when the test fails.
struct Stopped(i32);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-CONT", &self.0.to_string()]).status();
    }
}

/// A cluster that stalls mid-run (its OSD stopped with SIGSTOP) does not hang fiox: SIGTERM or
/// SIGINT ends `fiox rbd bench`, `fiox rados bench` and an rbd job within 5 s of the signal,
/// with what completed reported and the stall named. (fio 3.33 waits forever there.)
#[test]
fn stalled_cluster_ends_on_signal() {
    cluster_or_skip!(c, alone);
    let conf = c.conf.display().to_string();
    let osd: i32 =
        std::fs::read_to_string(c.conf.parent().unwrap().join("run/osd.0.pid")).unwrap().trim().parse().unwrap();
    let img1 = c.image("stall", 64);
    let img2 = c.image("stall", 64);
    let spec = format!("bench/{img1}");
    let rbdname = format!("--rbdname={img2}");
    let cases: Vec<(Vec<&str>, &str, &str, &str)> = vec![
        (
            vec![
                "rbd",
                "-c",
                &conf,
                "bench",
                "--io-type",
                "write",
                "--io-size",
                "4K",
                "--io-threads",
                "8",
                "--io-total",
                "10G",
                &spec,
            ],
            "TERM",
            "elapsed: ",
            "interrupted by SIGTERM",
        ),
        (
            vec![
                "rados",
                "-c",
                &conf,
                "-p",
                "bench",
                "bench",
                "60",
                "write",
                "-t",
                "8",
                "-b",
                "64K",
                "--run-name",
                "stall",
            ],
            "INT",
            "Total writes made:",
            "cleanup --prefix benchmark_data_",
        ),
        (
            vec![
                "--name=s",
                "--ioengine=rbd",
                "--pool=bench",
                &rbdname,
                "--rw=randwrite",
                "--bs=4k",
                "--iodepth=8",
                "--time_based",
                "--runtime=60",
                "--ceph_stall_warn=1",
            ],
            "TERM",
            "WRITE: bw=",
            "no I/O completed",
        ),
    ];
    for (args, sig, partial, named) in cases {
        let child = Command::new(util::fiox_bin())
            .args(&args)
            .env("CEPH_CONF", &c.conf)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(2000));
        let stopped = Stopped(osd);
        assert!(Command::new("kill").args(["-STOP", &osd.to_string()]).status().unwrap().success());
        std::thread::sleep(Duration::from_millis(1500));
        let t0 = Instant::now();
        assert!(Command::new("kill").args([&format!("-{sig}"), &child.id().to_string()]).status().unwrap().success());
        let o = child.wait_with_output().unwrap();
        let took = t0.elapsed();
        drop(stopped);
        let stdout = String::from_utf8_lossy(&o.stdout);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(took < Duration::from_secs(5), "{args:?}: {took:?} after SIG{sig}");
        assert_ne!(o.status.code(), Some(0), "{args:?}");
        assert!(o.status.code().is_some(), "{args:?}: killed by the signal, no report");
        assert!(stdout.contains(partial), "{args:?}: {stdout}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
        if args.contains(&"--ceph_stall_warn=1") {
            // The stall watchdog spoke before the signal: the oldest I/O's age and the
            // monitors' view of the cluster.
            let told = stderr.lines().find(|l| l.starts_with("fiox: watchdog: job 's': no rbd I/O completed for "));
            assert!(told.is_some_and(|l| l.contains("the oldest issued")), "{stderr}");
            assert!(
                stderr.contains("fiox: watchdog: job 's': cluster health (from the monitors): HEALTH_"),
                "{stderr}"
            );
        }
        // The cluster answers again before the next case.
        let t = Instant::now();
        while c.tool("rados", &["-p", "bench", "stat", "rbd_directory"]).code != 0 {
            assert!(t.elapsed() < Duration::from_secs(30), "the cluster did not come back");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    // What the interrupted rados bench left, removed by the command it named.
    let host: String =
        std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().chars().take(29).collect();
    let _ = c.tool(
        "rados",
        &["-p", "bench", "cleanup", "--run-name", "stall", "--prefix", &format!("benchmark_data_{host}")],
    );
}

/// Ceph's failures named, none hanging (reference/ceph.md 9.3), beyond the engines' cases in
/// `errors_are_one_clear_line`: a cephx configuration without its keyring, no configuration
/// at all, the benches' wrong pool and missing image (with the real tools' exit statuses), an
/// object past the OSD's object size limit (fio counts that write as done), and reads of an
/// image's never-written ranges (a warning with the share).
#[test]
fn failures_named() {
    cluster_or_skip!(c);
    let dir = util::scratch();
    let conf = c.conf.display().to_string();
    let image = c.image("fail", 16);
    let rbdname = format!("--rbdname={image}");
    // cephx required, keyring missing.
    let text = std::fs::read_to_string(&c.conf)
        .unwrap()
        .replace("auth client required = none", "auth client required = cephx\nkeyring = /nonexistent/keyring");
    let kr = dir.path().join("cephx.conf");
    std::fs::write(&kr, text).unwrap();
    let t0 = Instant::now();
    let o = Command::new(util::fiox_bin())
        .args(["--name=k", "--ioengine=rbd", "--pool=bench", &rbdname, "--rw=read"])
        .env("CEPH_CONF", &kr)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no keyring") && stderr.contains("/nonexistent/keyring"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(t0.elapsed() < Duration::from_secs(10));
    // No configuration anywhere librados looks (unless this machine has /etc/ceph/ceph.conf).
    if !Path::new("/etc/ceph/ceph.conf").exists() {
        let o = Command::new(util::fiox_bin())
            .args(["rados", "-p", "bench", "bench", "1", "write"])
            .env_remove("CEPH_CONF")
            .env("HOME", dir.path())
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("no Ceph configuration found (searched /etc/ceph/ceph.conf"), "{stderr}");
    }
    // The benches: a wrong pool and a missing image, named, with the real tools' statuses.
    let real = c.tool("rados", &["-p", "nosuch", "bench", "1", "write"]);
    let ours = fiox_tool(c, "rados", &["-p", "nosuch", "bench", "1", "write"]);
    assert_eq!(real.code, ours.code);
    assert_eq!(ours.stderr, "error opening pool nosuch: pool 'nosuch' does not exist (pools: bench)\n");
    let real = c.tool("rbd", &["bench", "--io-type", "write", "bench/nosuch"]);
    let ours = Command::new(util::fiox_bin())
        .args(["rbd", "-c", &conf, "bench", "--io-type", "write", "bench/nosuch"])
        .output()
        .unwrap();
    assert_eq!(Some(real.code), ours.status.code());
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert!(stderr.contains("image 'nosuch' not found in pool 'bench' (images: "), "{stderr}");
    // An object past osd_max_object_size (128 MiB): one write at 200 MiB. fio 3.33 never reads
    // the completion's result and reports success; fiox reports EFBIG as fio reports an I/O
    // error.
    let big = ["--name=big", "--ioengine=rados", "--pool=bench", "--rw=write", "--size=256m", "--offset=200m"];
    let mut args: Vec<&str> = big.to_vec();
    let confopt = format!("--conf={conf}");
    args.extend_from_slice(&[&confopt, "--bs=64k", "--io_size=64k", "--touch_objects=0", "--output-format=json"]);
    let fio = run(false, c, &args);
    let fiox = run(true, c, &args);
    assert_eq!(fio.code, 0, "{}", fio.stderr);
    assert_eq!(util::json(&fio)["jobs"][0]["error"], 0);
    assert_eq!(fiox.code, 1);
    assert_eq!(util::json(&fiox)["jobs"][0]["error"], 27, "{}", fiox.stdout);
    assert!(fiox.stderr.contains("File too large"), "{}", fiox.stderr);
    let warnings = util::json(&fiox)["fiox"]["warnings"].to_string();
    assert!(warnings.contains("osd_max_object_size") && warnings.contains("raise nrfiles"), "{warnings}");
    c.remove_objects("big.");
    // Reads of a fresh (never-written) image: the JSON's fiox warnings say so, with the share;
    // rbd bench says it on stderr.
    let out = run(
        true,
        c,
        &[
            "--name=uw",
            "--ioengine=rbd",
            "--pool=bench",
            &rbdname,
            "--rw=randread",
            "--size=4m",
            "--output-format=json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let warnings = util::json(&out)["fiox"]["warnings"].to_string();
    assert!(warnings.contains("100% of the read range of rbd") && warnings.contains("never written"), "{warnings}");
    let o = Command::new(util::fiox_bin())
        .args(["rbd", "-c", &conf, "bench", "--io-type", "read", "--io-total", "1M", &format!("bench/{image}")])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("100% of image") && stderr.contains("never written"), "{stderr}");
}

/// fiox's own Ceph options (general rows of the option table, so `--enghelp` stays fio's):
/// `namespace=` puts a rados job's objects and finds an rbd job's image in a RADOS namespace
/// (also `fiox rbd bench pool/ns/image`), `ceph_connect_timeout=` bounds the wait for monitors
/// that do not answer; both are refused with other engines.
#[test]
fn fiox_ceph_options() {
    cluster_or_skip!(c);
    let conf = c.conf.display().to_string();
    let ns = "fxns";
    let o = c.tool("rbd", &["namespace", "create", &format!("bench/{ns}")]);
    assert!(o.code == 0 || o.stderr.contains("exists"), "{}", o.stderr);
    let o = c.tool("rbd", &["create", &format!("bench/{ns}/nimg"), "--size", "16M"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let confopt = format!("--conf={conf}");
    let nsopt = format!("--namespace={ns}");
    let out = run(
        true,
        c,
        &["--name=nso", "--ioengine=rados", "--pool=bench", &confopt, &nsopt, "--rw=write", "--size=256k", "--bs=64k"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let in_ns = c.tool("rados", &["-p", "bench", "-N", ns, "ls"]);
    assert!(in_ns.stdout.lines().any(|l| l == "nso.0.0"), "{}", in_ns.stdout);
    assert!(!c.names().contains("nso.0.0"), "the object went to the default namespace");
    c.tool("rados", &["-p", "bench", "-N", ns, "rm", "nso.0.0"]);
    let out = run(
        true,
        c,
        &[
            "--name=nsr",
            "--ioengine=rbd",
            "--pool=bench",
            &nsopt,
            "--rbdname=nimg",
            "--rw=write",
            "--size=1m",
            "--bs=64k",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let diff = c.tool("rbd", &["diff", "--format", "json", &format!("bench/{ns}/nimg")]);
    assert!(diff.stdout.contains("\"offset\":0"), "{}", diff.stdout);
    // rbd bench with a namespace in the image spec: the real tool's header.
    let spec = format!("bench/{ns}/nimg");
    let args = ["bench", "--io-type", "write", "--io-total", "1M", "--io-size", "64K", &spec];
    let real = c.tool("rbd", &args);
    let ours = Command::new(util::fiox_bin()).args(["rbd", "-c", &conf]).args(args).output().unwrap();
    assert_eq!((real.code, ours.status.code()), (0, Some(0)), "{}", String::from_utf8_lossy(&ours.stderr));
    assert_eq!(real.stdout.lines().next(), String::from_utf8_lossy(&ours.stdout).lines().next());
    c.tool("rbd", &["rm", &spec]);
    // A monitor that never answers, 2 s allowed (the configuration says 30).
    let dir = util::scratch();
    let dead = dir.path().join("dead.conf");
    let port = free_port_pair().unwrap();
    std::fs::write(
        &dead,
        format!("[global]\nmon host = 127.0.0.1:{port}\nclient mount timeout = 30\nlog file = /dev/null\n"),
    )
    .unwrap();
    let t0 = Instant::now();
    let o = Command::new(util::fiox_bin())
        .args(["--name=d", "--ioengine=rbd", "--pool=bench", "--rbdname=x", "--ceph_connect_timeout=2"])
        .env("CEPH_CONF", &dead)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("within 2 s (ceph_connect_timeout)"), "{stderr}");
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    // Other engines refuse them before any I/O.
    let o = util::fiox(dir.path(), &["--name=x", "--ioengine=null", "--size=1m", "--namespace=a"]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("namespace= is for ioengine=rbd and ioengine=rados, not null"), "{}", o.stderr);
}

mod bench_opts;
mod manifest;
mod osd_ops;
mod rgw;
