//! Ceph, continued (on the one-node cluster of `ceph/mod.rs`): the run manifest of rbd and rados jobs
//! checked against Ceph's own tools (`ceph fsid`, `rbd info`, `rbd diff`, `rados ls`/`stat`),
//! and the shared client and image handle, counted as TCP connections to the monitor.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::{run, Cluster};
use crate::util;
use crate::util::skip;

/// The `fiox.ceph[0]` entry of a JSON report.
fn entry(out: &util::Out) -> serde_json::Value {
    util::json(out)["fiox"]["ceph"][0].clone()
}

/// The rbd manifest against `ceph fsid`, `rbd info` and `rbd diff`: versions, fsid,
/// configuration file, client, pool, image geometry and features, librbd's cache setting (the
/// test configuration turns it off; librbd's default is on), the share of I/Os crossing an
/// object boundary (the seed's 4,096,000-byte "4M" I/Os), the never-written share of a read
/// range and the exclusive lock's owners; the normal output's `fiox ceph` lines.
#[test]
fn rbd_manifest_matches_ceph_tools() {
    cluster_or_skip!(c);
    let img = c.image("manifest", 64);
    let rbdname = format!("--rbdname={img}");
    // Ten 4,096,000-byte writes from 0: nine of them straddle a 4 MiB object boundary.
    let w = run(
        true,
        c,
        &[
            "--name=mw",
            "--ioengine=rbd",
            "--pool=bench",
            &rbdname,
            "--rw=write",
            "--bs=4096000",
            "--size=40960000",
            "--iodepth=4",
            "--output-format=json",
        ],
    );
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert!(w.stderr.is_empty(), "{}", w.stderr);
    let m = entry(&w);
    let fsid = c.tool("ceph", &["fsid"]);
    assert_eq!(m["fsid"], fsid.stdout.trim(), "{m}");
    assert_eq!(m["conf"], c.conf.display().to_string());
    assert_eq!(m["client"], "client.admin");
    assert_eq!(m["pool"], "bench");
    assert_eq!(m["engine"], "rbd");
    assert!(m["rados_version"].as_str().unwrap().starts_with("3."), "{m}");
    assert!(m["rbd_version"].as_str().unwrap().starts_with("1."), "{m}");
    let info = c.tool("rbd", &["info", "--format", "json", &format!("bench/{img}")]);
    let info: serde_json::Value = serde_json::from_str(&info.stdout).unwrap();
    let i = &m["image"];
    assert_eq!(i["name"], img);
    for key in ["size", "order", "object_size", "block_name_prefix"] {
        assert_eq!(i[key], info[key], "{key}: {i} vs rbd info {info}");
    }
    assert_eq!(i["feature_names"], info["features"], "{i} vs rbd info {info}");
    if info.get("stripe_unit").is_some() {
        assert_eq!(i["stripe_unit"], info["stripe_unit"]);
        assert_eq!(i["stripe_count"], info["stripe_count"]);
    } else {
        // Without the striping feature an image is one object per stripe.
        assert_eq!(i["stripe_unit"], info["object_size"]);
        assert_eq!(i["stripe_count"], 1);
    }
    assert_eq!(m["rbd_cache"]["rbd_cache"], "false", "the test configuration's [client] rbd cache = false: {m}");
    let object = info["object_size"].as_u64().unwrap();
    let crossing = (0..10u64).filter(|k| (k * 4096000) % object + 4096000 > object).count();
    assert_eq!(crossing, 9);
    let share = m["object_crossing_share"]["write"].as_f64().unwrap();
    assert!((share - crossing as f64 / 10.0).abs() < 1e-9, "{m}");
    assert!(m.get("unwritten_read_share").is_none(), "a write job: {m}");
    // The image has the exclusive-lock feature: nobody holds the lock between runs.
    assert!(info["features"].as_array().unwrap().iter().any(|f| f == "exclusive-lock"));
    assert_eq!(m["lock_owners_before"], serde_json::json!([]), "{m}");
    assert_eq!(m["lock_owners_after"], serde_json::json!([]), "{m}");

    // A read of the whole image: the never-written share is what rbd diff leaves uncovered.
    let r = run(
        true,
        c,
        &[
            "--name=mr",
            "--ioengine=rbd",
            "--pool=bench",
            &rbdname,
            "--rw=read",
            "--bs=1m",
            "--io_size=4m",
            "--direct=1",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let written: u64 = c.extents(&img).iter().map(|e| e.1).sum();
    let expected = 1.0 - written as f64 / (64u64 << 20) as f64;
    let normal = &r.stdout;
    let line = normal.lines().find(|l| l.starts_with("fiox ceph: mr (rbd)")).unwrap_or_else(|| panic!("{normal}"));
    assert!(line.contains(fsid.stdout.trim()) && line.contains("pool bench"), "{line}");
    assert!(normal.contains(&format!("  image {img}: 67108864 bytes, order 22")), "{normal}");
    // direct=1 turns librbd's cache off whatever the configuration says (as fio does).
    assert!(normal.contains("  rbd_cache=false"), "{normal}");
    let shown = format!("read range never written: {:.1}%", expected * 100.0);
    assert!(normal.contains(&shown), "{shown} in {normal}");
    assert!(normal.contains("read I/Os crossing an object boundary: 0.0%"), "{normal}");
    // The planner's warning says the same share, rounded up.
    assert!(r.stderr.is_empty() || r.stderr.contains("never written"), "{}", r.stderr);
    c.tool("rbd", &["rm", &format!("bench/{img}")]);
}

/// The rados manifest: the job's objects, how many existed before, were created and are left
/// (with their bytes), checked against `rados ls` and `rados stat`; a second run on the same
/// objects creates none.
#[test]
fn rados_manifest_counts_objects() {
    cluster_or_skip!(c);
    let name = format!("mo{}", std::process::id());
    let job = format!("--name={name}");
    let conf = format!("--conf={}", c.conf.display());
    let args = |rw: &str| {
        vec![
            job.clone(),
            "--ioengine=rados".into(),
            "--pool=bench".into(),
            conf.clone(),
            "--size=256k".into(),
            "--nrfiles=4".into(),
            "--bs=64k".into(),
            format!("--rw={rw}"),
            "--output-format=json".into(),
        ]
    };
    let w = args("write");
    let w = run(true, c, &w.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(w.code, 0, "{}", w.stderr);
    let m = entry(&w);
    assert_eq!(m["engine"], "rados");
    assert_eq!(m["rbd_version"], "");
    assert!(m.get("image").is_none() && m.get("rbd_cache").is_none(), "{m}");
    let listed: Vec<String> = c
        .tool("rados", &["-p", "bench", "ls"])
        .stdout
        .lines()
        .filter(|l| l.starts_with(&format!("{name}.")))
        .map(str::to_string)
        .collect();
    assert_eq!(listed.len(), 4, "{listed:?}");
    let mut bytes = 0;
    for o in &listed {
        let s = c.tool("rados", &["-p", "bench", "stat", o]);
        bytes += s.stdout.trim().rsplit(' ').next().unwrap().parse::<u64>().unwrap();
    }
    let o = &m["objects"];
    assert_eq!(
        (o["named"].as_u64(), o["existed_before"].as_u64(), o["created"].as_u64(), o["removed"].as_u64()),
        (Some(4), Some(0), Some(4), Some(0)),
        "{m}"
    );
    assert_eq!(o["left"].as_u64(), Some(listed.len() as u64));
    assert_eq!(o["left_bytes"].as_u64(), Some(bytes));
    assert_eq!(bytes, 256 << 10);
    let r = args("read");
    let r = run(true, c, &r.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let o = &entry(&r)["objects"];
    assert_eq!((o["existed_before"].as_u64(), o["created"].as_u64(), o["left"].as_u64()), (Some(4), Some(0), Some(4)));
    for o in &listed {
        c.tool("rados", &["-p", "bench", "rm", o]);
    }
}

/// TCP connections the process `pid` holds to the monitor (one per librados client).
fn mon_connections(c: &Cluster, pid: u32) -> usize {
    let conf = std::fs::read_to_string(&c.conf).unwrap();
    let mon = conf.lines().find_map(|l| l.strip_prefix("mon host = ")).unwrap().trim().to_string();
    // `[v2:127.0.0.1:P,v1:127.0.0.1:Q]` or `127.0.0.1:P`: every port the monitor listens on.
    let ports: Vec<String> =
        mon.split(',').filter_map(|a| a.trim_end_matches(']').rsplit(':').next().map(str::to_string)).collect();
    let o = Command::new("ss").args(["-Htnp", "state", "established"]).output().unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains(&format!("pid={pid},")))
        .filter(|l| {
            let peer = l.split_whitespace().nth(3).unwrap_or("");
            ports.iter().any(|p| peer.ends_with(&format!(":{p}")))
        })
        .count()
}

/// Two jobs' librados clients counted while they run: two monitor connections each with their
/// own client (fio's way), one with `ceph_shared_client=1` (rados) or `rbd_shared_handle=1`
/// (rbd). Shared or not, the same job writes the same bytes in the same places.
#[test]
fn shared_client_is_one_connection() {
    cluster_or_skip!(c);
    let img = c.image("shared", 64);
    let rbdname = format!("--rbdname={img}");
    let conf = format!("--conf={}", c.conf.display());
    let obj = format!("--name=sh{}", std::process::id());
    let cases: Vec<(Vec<&str>, usize)> = vec![
        (vec!["--name=s", "--ioengine=rbd", "--pool=bench", &rbdname], 2),
        (vec!["--name=s", "--ioengine=rbd", "--pool=bench", &rbdname, "--rbd_shared_handle=1"], 1),
        (vec![&obj, "--ioengine=rados", "--pool=bench", &conf, "--size=1m", "--ceph_shared_client=1"], 1),
    ];
    for (args, want) in cases {
        let child = Command::new(util::fiox_bin())
            .args(&args)
            .args(["--rw=randwrite", "--bs=4k", "--iodepth=2", "--numjobs=2", "--time_based", "--runtime=2"])
            .env("CEPH_CONF", &c.conf)
            .current_dir(util::scratch().path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1200));
        let n = mon_connections(c, child.id());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(n, want, "{args:?}: monitor connections while both jobs ran");
    }
    // Same bytes: two clones writing their own halves, with and without a shared handle.
    let mut diffs = Vec::new();
    for shared in ["0", "1"] {
        let img = c.image("shared", 64);
        let o = run(
            true,
            c,
            &[
                "--name=b",
                "--ioengine=rbd",
                "--pool=bench",
                &format!("--rbdname={img}"),
                &format!("--rbd_shared_handle={shared}"),
                "--rw=write",
                "--bs=64k",
                "--size=8m",
                "--offset_increment=16m",
                "--numjobs=2",
                "--group_reporting",
                "--output-format=json",
            ],
        );
        assert_eq!(o.code, 0, "{}", o.stderr);
        let j = &util::json(&o)["jobs"][0]["write"];
        diffs.push((j["io_bytes"].as_u64(), j["total_ios"].as_u64(), c.extents(&img)));
        c.tool("rbd", &["rm", &format!("bench/{img}")]);
    }
    assert_eq!(diffs[0], diffs[1]);
    assert_eq!(diffs[0].0, Some(16 << 20));
    c.tool("rbd", &["rm", &format!("bench/{img}")]);
    let name = obj.trim_start_matches("--name=").to_string();
    for o in c.tool("rados", &["-p", "bench", "ls"]).stdout.lines().filter(|l| l.starts_with(&format!("{name}."))) {
        c.tool("rados", &["-p", "bench", "rm", o]);
    }
}

/// What the dir: layer's test set up, taken down in reverse order also when it fails: the
/// mount, the loop device, the rbd-fuse mount and the image.
struct BlockStack<'a> {
    c: &'a Cluster,
    image: String,
    fuse: Option<std::path::PathBuf>,
    loopdev: Option<String>,
    mnt: Option<std::path::PathBuf>,
}

impl Drop for BlockStack<'_> {
    fn drop(&mut self) {
        if let Some(m) = &self.mnt {
            let _ = Command::new("umount").arg(m).status();
        }
        if let Some(l) = &self.loopdev {
            let _ = Command::new("losetup").args(["-d", l]).status();
        }
        if let Some(f) = &self.fuse {
            let _ = Command::new("umount").arg(f).status();
        }
        self.c.tool("rbd", &["rm", &format!("bench/{}", self.image)]);
    }
}

fn sh(cmd: &mut Command) -> String {
    let o =
        Command::new("timeout").args(["-k", "5", "60"]).arg(cmd.get_program()).args(cmd.get_args()).output().unwrap();
    assert!(o.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// `fiox ceph --layers dir:PATH` on a file system on Ceph, as the seed's block layer: an image
/// exposed as a file by rbd-fuse, a loop device over it, ext4 on that, mounted. The rows are
/// fio's libaio runs on a file fiox made there (their reports saved, the footnote naming the
/// file system and device), the data reached the image, and the file is gone afterwards.
#[test]
fn ceph_dir_layer_on_rbd_fuse() {
    cluster_or_skip!(c);
    let have = |t: &str| {
        Command::new("sh").args(["-c", &format!("command -v {t}")]).output().is_ok_and(|o| o.status.success())
    };
    if !have("rbd-fuse") {
        let _ = Command::new("apt-get")
            .args(["install", "-y", "-qq", "rbd-fuse"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output();
    }
    if !have("rbd-fuse") || !have("mkfs.ext4") || !Path::new("/dev/fuse").exists() {
        skip!("rbd-fuse (Debian package rbd-fuse), mkfs.ext4 or /dev/fuse is missing");
    }
    let scratch = util::scratch();
    let mut stack = BlockStack { c, image: c.image("dirlayer", 64), fuse: None, loopdev: None, mnt: None };
    let fuse = scratch.path().join("fuse");
    let mnt = scratch.path().join("mnt");
    std::fs::create_dir_all(&fuse).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    // rbd-fuse serves the image as a file from a daemon of its own (stopped by unmounting it).
    let st = Command::new("timeout")
        .args(["-k", "5", "60", "rbd-fuse", "-c"])
        .arg(&c.conf)
        .args(["-p", "bench", "-r", &stack.image])
        .arg(&fuse)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "rbd-fuse: {st}");
    stack.fuse = Some(fuse.clone());
    let loopdev = sh(Command::new("losetup").args(["-f", "--show"]).arg(fuse.join(&stack.image)));
    stack.loopdev = Some(loopdev.clone());
    sh(Command::new("mkfs.ext4").args(["-q", &loopdev]));
    sh(Command::new("mount").arg(&loopdev).arg(&mnt));
    stack.mnt = Some(mnt.clone());
    let before: u64 = c.extents(&stack.image).iter().map(|e| e.1).sum();
    let out = scratch.path().join("out");
    let o = Command::new("timeout")
        .args(["-k", "5", "120"])
        .arg(util::fiox_bin())
        .args(["ceph", "-p", "bench", "-c"])
        .arg(&c.conf)
        .args(["--layers", &format!("dir:{}", mnt.display()), "--sizes", "4k", "--workloads", "randwrite,read"])
        .args(["--threads", "4", "--runtime", "1", "--image-size", "8M", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    for w in ["randwrite", "read"] {
        let row = stdout.lines().find(|l| l.starts_with("BLOCK") && l.contains(&format!(" {w} ")));
        assert!(row.is_some_and(|r| r.contains("fio libaio (dir)") && r.contains("4 KiB")), "{w}: {stdout}");
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(format!("dir-{w}-4k.json"))).unwrap()).unwrap();
        assert_eq!(j["jobs"][0]["job options"]["ioengine"], "libaio", "{j}");
        assert_eq!(j["jobs"][0]["job options"]["direct"], "1", "{j}");
    }
    let foot = format!("ext4 on {loopdev}, mounted at {}", mnt.canonicalize().unwrap().display());
    assert!(stdout.contains(&foot), "{foot}: {stdout}");
    // The loop device caches its backing file (losetup's default): the footnote says so.
    assert!(stdout.contains(&format!("{loopdev} reads ")) && stdout.contains("through the page cache"), "{stdout}");
    let cmds = std::fs::read_to_string(out.join("commands.txt")).unwrap();
    assert!(cmds.contains(&format!("--filename={}/fiox-ceph-", mnt.display())), "{cmds}");
    // Only what fiox made is gone: the file system's own directory stays.
    assert_eq!(util::listing(&mnt), vec!["lost+found".to_string()], "fiox's file was left behind");
    // The writes went through ext4 and the loop device into the image.
    sh(&mut Command::new("sync"));
    let after: u64 = c.extents(&stack.image).iter().map(|e| e.1).sum();
    assert!(after > before, "the image's written extents did not grow: {before} -> {after}");
}

/// The dir: layer's bad input is refused before anything runs (no cluster needed): no
/// directory, a path that is not one, two dir: layers.
#[test]
fn ceph_dir_layer_bad_input() {
    let dir = util::scratch();
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    let not_dir = format!("dir:{}", file.display());
    let two = format!("dir:{0},dir:{0}", dir.path().display());
    for (layers, said) in [
        ("dir:", "needs a directory"),
        (not_dir.as_str(), "is not a directory"),
        (two.as_str(), "one dir: layer at most"),
    ] {
        let o = util::fiox(dir.path(), &["ceph", "-p", "bench", "--layers", layers, "--out", "o"]);
        assert_eq!(o.code, 1, "{layers}: {}", o.stderr);
        assert!(o.stderr.contains(said) && o.stderr.lines().count() == 1, "{layers}: {}", o.stderr);
        assert!(!dir.path().join("o").exists(), "{layers}: a results folder was made");
    }
}

/// `conf=` with the rbd engine (a fiox extension; fio's rbd engine has none): the file named is
/// the one read, over `$CEPH_CONF`, and one that does not exist is named in the refusal.
/// `--enghelp=rbd` stays fio's (`ceph::enghelp_as_fio`).
#[test]
fn rbd_takes_conf() {
    cluster_or_skip!(c);
    let img = c.image("conf", 16);
    let dir = util::scratch();
    let rbd = |conf: &Path| {
        let o = Command::new(util::fiox_bin())
            .args(["--name=c", "--ioengine=rbd", "--pool=bench", &format!("--rbdname={img}"), "--rw=write"])
            .args(["--bs=64k", "--size=1m", "--output-format=json", &format!("--conf={}", conf.display())])
            .env("CEPH_CONF", "/nonexistent/ceph.conf")
            .current_dir(dir.path())
            .output()
            .unwrap();
        util::Out::from(o)
    };
    let o = rbd(&c.conf);
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    assert_eq!(util::json(&o)["jobs"][0]["write"]["io_bytes"].as_u64(), Some(1 << 20));
    assert_eq!(entry(&o)["conf"], c.conf.display().to_string());
    let o = rbd(Path::new("/nonexistent/other.conf"));
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(o.stderr.contains("/nonexistent/other.conf"), "{}", o.stderr);
    assert_eq!(c.extents(&img), vec![(0, 1 << 20)], "only the first run wrote");
}
