//! `libiscsi` against tgtd, the Linux SCSI target framework's user-space daemon (package
//! tgt): each test starts its own on a loopback port, with its own management socket
//! (`tgtd -C N`, never the system's), LUNs backed by scratch files, and stops it at the end.
//! fio 3.33 with the libiscsi engine is a build of its own (Debian's leaves the engine out):
//! `$FIOX_FIO_EXT`, which scripts/test.sh sets (scripts/fio-ext.sh builds it).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::figures;
use crate::util::{fiox, json, scratch, Out};

const IQN: &str = "iqn.2016-02.com.fio:system:fio";

/// fio 3.33 built with the libiscsi engine, if there is one.
fn fio_ext() -> Option<PathBuf> {
    let p = std::env::var_os("FIOX_FIO_EXT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/fio-3.33-ext/fio-3.33/fio"));
    p.exists().then_some(p)
}

/// Runs fiox or, with `fiox_run` false, the libiscsi-enabled fio (killed after 120 s: fio
/// 3.33 retries a lost target forever).
fn run(fiox_run: bool, dir: &Path, args: &[&str]) -> Out {
    if fiox_run {
        return fiox(dir, args);
    }
    let fio = fio_ext().expect("checked by Tgtd::start");
    Out::from(Command::new("timeout").args(["-k", "5", "120"]).arg(fio).args(args).current_dir(dir).output().unwrap())
}

/// Whether libiscsi is installed (a skip recorded when not).
fn have_libiscsi() -> bool {
    let here =
        ["/usr/lib/x86_64-linux-gnu/libiscsi.so.7", "/usr/lib/libiscsi.so.7"].iter().any(|p| Path::new(p).exists());
    if !here {
        crate::util::skips::skipped("libiscsi.so.7 is not installed (package libiscsi7)");
    }
    here
}

/// A LUN to serve: its number, size in bytes, and whether it is read-only.
type Lun = (u32, u64, bool);

/// tgtd serving target [`IQN`] with `luns` on a loopback port; stopped on drop.
struct Tgtd {
    dir: tempfile::TempDir,
    child: Option<Child>,
    port: u16,
    control: u16,
}

impl Tgtd {
    /// `None` (with the reason recorded as a skip) when tgtd, libiscsi or the fio to compare
    /// with is missing. `admit` names the one initiator the target lets in (`None`: all).
    fn start(luns: &[Lun], admit: Option<&str>) -> Option<Tgtd> {
        if Command::new("tgtd").arg("--version").output().is_err() {
            crate::util::skips::skipped("tgtd is not installed (package tgt; scripts/test.sh installs it)");
            return None;
        }
        if !have_libiscsi() {
            return None;
        }
        if fio_ext().is_none() {
            crate::util::skips::skipped(
                "no fio 3.33 with the libiscsi engine (scripts/fio-ext.sh builds it; scripts/test.sh sets FIOX_FIO_EXT)",
            );
            return None;
        }
        let dir = scratch();
        let port = crate::util::free_port();
        // The management socket is /var/run/tgtd/socket.N (N below 32768): a number no other
        // daemon uses now (the system's own tgt uses 0).
        let mut control = port % 30000 + 1000;
        while Path::new(&format!("/var/run/tgtd/socket.{control}")).exists() {
            control = control % 30000 + 1001;
        }
        let log = std::fs::File::create(dir.path().join("tgtd.log")).unwrap();
        let child = Command::new("tgtd")
            .args(["-f", "-C", &control.to_string(), "--iscsi", &format!("portal=127.0.0.1:{port}")])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("tgtd starts");
        let t = Tgtd { dir, child: Some(child), port, control };
        let t0 = Instant::now();
        while t.adm(&["--op", "show", "--mode", "target"]).is_err() {
            assert!(t0.elapsed() < Duration::from_secs(10), "tgtd did not start: {}", t.log());
            std::thread::sleep(Duration::from_millis(50));
        }
        t.adm(&["--op", "new", "--mode", "target", "--tid", "1", "-T", IQN]).unwrap();
        for &(lun, size, ro) in luns {
            let img = t.image_path(lun);
            std::fs::File::create(&img).and_then(|f| f.set_len(size)).unwrap();
            let (l, b) = (lun.to_string(), img.display().to_string());
            t.adm(&["--op", "new", "--mode", "logicalunit", "--tid", "1", "--lun", &l, "-b", &b]).unwrap();
            if ro {
                t.adm(&[
                    "--op",
                    "update",
                    "--mode",
                    "logicalunit",
                    "--tid",
                    "1",
                    "--lun",
                    &l,
                    "--params",
                    "readonly=1",
                ])
                .unwrap();
            }
        }
        match admit {
            Some(name) => t.adm(&["--op", "bind", "--mode", "target", "--tid", "1", "--initiator-name", name]),
            None => t.adm(&["--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL"]),
        }
        .unwrap();
        Some(t)
    }

    /// tgtadm on this daemon's management socket.
    fn adm(&self, args: &[&str]) -> Result<(), String> {
        let out = Command::new("tgtadm")
            .args(["-C", &self.control.to_string(), "--lld", "iscsi"])
            .args(args)
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("tgtadm {args:?}: {}", String::from_utf8_lossy(&out.stderr)))
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("tgtd.log")).unwrap_or_default()
    }

    /// Makes the target ask for CHAP: an account bound to it (tgtd's incoming user).
    fn require_chap(&self, user: &str, password: &str) {
        self.adm(&["--op", "new", "--mode", "account", "--user", user, "--password", password]).unwrap();
        self.adm(&["--op", "bind", "--mode", "account", "--tid", "1", "--user", user]).unwrap();
    }

    /// `--filename=` for `lun` with CHAP credentials in the URL (`user%password@host`).
    fn filename_as(&self, user: &str, password: &str, lun: u32) -> String {
        self.filename(lun).replacen("iscsi\\://", &format!("iscsi\\://{user}%{password}@"), 1)
    }

    fn image_path(&self, lun: u32) -> PathBuf {
        self.dir.path().join(format!("lun{lun}.img"))
    }

    fn image(&self, lun: u32) -> Vec<u8> {
        std::fs::read(self.image_path(lun)).unwrap()
    }

    /// `--filename=` for `lun` of target `iqn`, with fio's escaped colons.
    fn filename_of(&self, iqn: &str, lun: u32) -> String {
        format!("--filename=iscsi\\://127.0.0.1\\:{}/{}/{lun}", self.port, iqn.replace(':', "\\:"))
    }

    fn filename(&self, lun: u32) -> String {
        self.filename_of(IQN, lun)
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
            // Its management socket and lock, which a killed tgtd leaves behind.
            for f in [format!("socket.{}", self.control), format!("socket.{}.lock", self.control)] {
                let _ = std::fs::remove_file(Path::new("/var/run/tgtd").join(f));
            }
        }
    }
}

impl Drop for Tgtd {
    fn drop(&mut self) {
        self.kill();
    }
}

#[test]
fn libiscsi_moves_what_fio_moves() {
    let Some(srv) = Tgtd::start(&[(1, 16 << 20, false), (2, 1 << 20, true)], None) else { return };
    let d = scratch();
    let f = srv.filename(1);
    let f = f.as_str();
    let jobs: &[&[&str]] = &[
        &["--rw=read", "--bs=4k"],
        &["--rw=write", "--bs=4k", "--size=4m"],
        &["--rw=randwrite", "--bs=16k", "--size=4m"],
        &["--rw=randread", "--bs=4k", "--size=2m", "--offset=8m"],
        // Past the LUN's end: both stop there (4 MiB of the 8).
        &["--rw=read", "--bs=64k", "--size=8m", "--offset=12m"],
        &["--rw=randwrite", "--bs=4k", "--size=2m", "--verify=crc32c"],
        &["--rw=write", "--bs=8k", "--size=1m", "--verify=md5", "--verify_backlog=16"],
        &["--rw=write", "--bs=64k", "--size=4m", "--fsync=4"],
        &["--rw=write", "--bs=4k", "--size=1m", "--fdatasync=8"],
    ];
    // Syncs count as fio counts them at depth 1; at a deeper queue fio 3.33 issues one again
    // while one is in flight (as with nbd), fiox once per fsync= writes.
    let n = |depth: &str| if depth == "--iodepth=1" { 4 } else { 3 };
    super::same_figures(d.path(), &["--name=n", "--ioengine=libiscsi", f], jobs, run, n);
    // A mixed job: the split is the random generator's, the total is not.
    let a = ["--name=n", "--ioengine=libiscsi", f, "--rw=randrw", "--bs=4k", "--size=4m", "--iodepth=8"];
    let a = [&a[..], &["--output-format=json"]].concat();
    let (fio, ours) = (run(false, d.path(), &a), run(true, d.path(), &a));
    assert_eq!((fio.code, ours.code), (0, 0), "{a:?}: {} / {}", fio.stderr, ours.stderr);
    let total = |f: &[(String, u64, u64)]| (f[0].1 + f[1].1, f[0].2 + f[1].2);
    assert_eq!(total(&figures(&ours)), total(&figures(&fio)), "{a:?}: fiox (left) and fio (right)");
    // What fails fails alike: a trim (fio's engine has none: EINVAL on the first), and a write
    // to a read-only LUN (the target's DATA PROTECT, which fio reports as error 1).
    let ro = srv.filename(2);
    for (file, rw, errno) in [(f, "--rw=trim", 22), (ro.as_str(), "--rw=write", 1)] {
        let a = ["--name=e", "--ioengine=libiscsi", file, rw, "--bs=64k", "--size=256k", "--output-format=json"];
        let (fio, ours) = (run(false, d.path(), &a), run(true, d.path(), &a));
        assert_eq!((fio.code, ours.code), (1, 1), "{a:?}: {} / {}", fio.stderr, ours.stderr);
        for out in [&fio, &ours] {
            assert_eq!(json(out)["jobs"][0]["error"].as_u64(), Some(errno), "{a:?}: {}", out.stdout);
        }
        assert_eq!(figures(&ours), figures(&fio), "{a:?}: fiox (left) and fio (right)");
        assert!(errno != 1 || ours.stderr.contains("DATA PROTECT"), "the sense data is named: {}", ours.stderr);
    }
    assert!(srv.image(2).iter().all(|&b| b == 0), "the read-only LUN is unchanged");
}

/// What one tool writes (with verification headers) the other reads back and verifies, at
/// depth 1 and 8; and the bytes land in the LUN's backing file where they belong.
#[test]
fn libiscsi_data_crosses_between_fio_and_fiox() {
    let Some(srv) = Tgtd::start(&[(1, 8 << 20, false), (3, 4 << 20, false)], None) else { return };
    let d = scratch();
    let f = srv.filename(1);
    let plan = [(false, "crc32c", "1"), (true, "crc32c", "8"), (false, "md5", "8"), (true, "crc32c", "1")];
    super::verify_across(d.path(), &["--name=x", "--ioengine=libiscsi", &f], &plan, run);
    // Plain bytes, two LUNs in one job (fio's ':' list): fiox writes a pattern at 1 MiB of
    // each; the backing files have it there and only there.
    let two = format!("{}:{}", srv.filename(1), srv.filename(3).trim_start_matches("--filename="));
    let a = ["--name=p", "--ioengine=libiscsi", &two, "--rw=write", "--bs=64k", "--size=128k", "--offset=1m"];
    let out = fiox(d.path(), &[&a[..], &["--buffer_pattern=0x5a", "--iodepth=4"]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    for lun in [1, 3] {
        let img = srv.image(lun);
        assert!(img[1 << 20..(1 << 20) + (64 << 10)].iter().all(|&b| b == 0x5a), "LUN {lun}: the pattern at 1 MiB");
        assert_ne!(img[(1 << 20) - 1], 0x5a, "LUN {lun}: nothing before it");
        assert_ne!(img[(1 << 20) + (64 << 10)], 0x5a, "LUN {lun}: nothing after it");
    }
}

/// Each way of not getting a LUN: one line naming the URL and the reason, exit 1, no report,
/// quickly; fio fails too (for sizes or offsets that are not whole blocks, at the job's first
/// I/O, with error -1).
#[test]
fn libiscsi_refusals_are_one_clear_line() {
    let Some(srv) = Tgtd::start(&[(1, 1 << 20, false)], None) else { return };
    let picky = Tgtd::start(&[(1, 1 << 20, false)], Some("iqn.2020-01.test:allowed")).unwrap();
    let d = scratch();
    let closed = crate::util::free_port();
    let bad = format!("--filename=iscsi\\://127.0.0.1\\:{closed}/{}/1", IQN.replace(':', "\\:"));
    let cases: Vec<(String, &str, &str)> = vec![
        (bad, "--rw=read", "Connection refused"),
        (srv.filename_of("iqn.2016-02.com.fio:system:nope", 1), "--rw=read", "Target not found"),
        (srv.filename(7), "--rw=read", "LOGICAL_UNIT_NOT_SUPPORTED"),
        // LUN 0 is tgtd's controller, which has no capacity.
        (srv.filename(0), "--rw=read", "cannot read the capacity of LUN 0"),
        (picky.filename(1), "--rw=read", "Target not found"),
        (srv.filename(1).trim_end_matches("/1").to_string(), "--rw=read", "not an iSCSI URL"),
        ("--filename=/tmp/not-iscsi".into(), "--rw=read", "not an iSCSI URL"),
        (srv.filename(1), "--bs=1000", "bs=1000 is not a multiple of the block size"),
        (srv.filename(1), "--offset=100", "offset=100 is not a multiple of the block size"),
    ];
    for (file, arg, why) in &cases {
        let a = ["--name=r", "--ioengine=libiscsi", file, arg, "--size=64k"];
        let t0 = Instant::now();
        let out = fiox(d.path(), &a);
        assert_eq!(out.code, 1, "{a:?}: {}", out.stderr);
        assert!(t0.elapsed() < Duration::from_secs(10), "{a:?} took {:?}", t0.elapsed());
        assert_eq!(out.stderr.lines().count(), 1, "{a:?}: one line: {}", out.stderr);
        assert!(out.stderr.contains(why), "{a:?}: {}", out.stderr);
        let url = file.trim_start_matches("--filename=").replace('\\', "");
        assert!(out.stderr.contains(&format!("filename={url}")), "{a:?}: names the URL: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert_eq!(out.stdout, "", "{a:?}: no report");
        let fio = run(false, d.path(), &a);
        assert_ne!(fio.code, 0, "fio {a:?}: {}", fio.stderr);
    }
    // The initiator the target admits gets in, with either tool.
    let a =
        ["--name=i", "--ioengine=libiscsi", &picky.filename(1), "--rw=read", "--initiator=iqn.2020-01.test:allowed"];
    for fiox_run in [false, true] {
        let out = run(fiox_run, d.path(), &[&a[..], &["--output-format=json"]].concat());
        assert_eq!(out.code, 0, "fiox {fiox_run}: {}", out.stderr);
        assert_eq!(json(&out)["jobs"][0]["read"]["io_bytes"].as_u64(), Some(1 << 20));
    }
}

/// CHAP: a target with an account bound to it lets fiox in with the account named in the URL
/// (`iscsi://user%password@host/...`; fio 3.33 fails the login); a wrong password, or none,
/// ends the run with one line naming the URL (the password hidden) and the login's failure,
/// exit 1, as fio fails too.
#[test]
fn libiscsi_chap_credentials_in_the_url() {
    let Some(srv) = Tgtd::start(&[(1, 1 << 20, false)], None) else { return };
    srv.require_chap("fioxuser", "s3cret-pass12");
    let d = scratch();
    let good = srv.filename_as("fioxuser", "s3cret-pass12", 1);
    let a = ["--name=c", "--ioengine=libiscsi", &good, "--rw=read", "--bs=64k", "--output-format=json"];
    let out = fiox(d.path(), &a);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(json(&out)["jobs"][0]["read"]["io_bytes"].as_u64(), Some(1 << 20));
    // fio 3.33's engine does not log in with the URL's credentials (measured: the right
    // password fails as the wrong one does), so fiox does better here.
    let fio = run(false, d.path(), &a);
    assert!(fio.code != 0 && fio.stderr.contains("Authentication failure"), "fio: {}", fio.stderr);
    for file in [srv.filename_as("fioxuser", "wrong-pass1234", 1), srv.filename(1)] {
        let a = ["--name=c", "--ioengine=libiscsi", &file, "--rw=read", "--bs=64k"];
        let t0 = Instant::now();
        let out = fiox(d.path(), &a);
        assert_eq!(out.code, 1, "{a:?}: {}", out.stderr);
        assert!(t0.elapsed() < Duration::from_secs(10), "{a:?} took {:?}", t0.elapsed());
        assert_eq!(out.stderr.lines().count(), 1, "{a:?}: one line: {}", out.stderr);
        let url = file.trim_start_matches("--filename=").replace('\\', "").replace("wrong-pass1234", "***");
        assert!(out.stderr.contains(&format!("filename={url}")), "{a:?}: names the URL: {}", out.stderr);
        assert!(!out.stderr.contains("wrong-pass"), "{a:?}: the password is not shown: {}", out.stderr);
        assert!(out.stderr.to_lowercase().contains("log in"), "{a:?}: says the login failed: {}", out.stderr);
        assert_eq!(out.stdout, "", "{a:?}: no report");
        let fio = run(false, d.path(), &a);
        assert_ne!(fio.code, 0, "fio {a:?}: {}", fio.stderr);
        eprintln!("{a:?}: fiox: {}fio: {}", out.stderr, fio.stderr.lines().next().unwrap_or(""));
    }
}

/// A server that accepts the connection and then says nothing: fiox gives up after its login
/// timeout (15 s) with one line.
#[test]
fn libiscsi_silent_server_does_not_hang() {
    if !have_libiscsi() {
        return;
    }
    super::silent_server_gives_up(
        |port| {
            let file = format!("--filename=iscsi\\://127.0.0.1\\:{port}/iqn.2020-01.test\\:x/1");
            vec!["--name=s".into(), "--ioengine=libiscsi".into(), file, "--rw=read".into(), "--bs=4k".into()]
        },
        "no answer within 15 s",
    );
}

/// The target going away mid-run fails the job at once (the commands in flight cancelled),
/// with its report, not at the end of its runtime. (fio 3.33 tries to reconnect for ever, and
/// its job is killed as stuck after 300 s: not compared.)
#[test]
fn libiscsi_target_dying_mid_run_fails_the_job() {
    let Some(mut srv) = Tgtd::start(&[(1, 16 << 20, false)], None) else { return };
    let d = scratch();
    let f = srv.filename(1);
    let a = ["--name=k", "--ioengine=libiscsi", &f, "--rw=randread", "--bs=4k", "--iodepth=8", "--time_based"];
    let a = [&a[..], &["--runtime=30", "--output-format=json"]].concat();
    let t0 = Instant::now();
    let out = std::thread::scope(|s| {
        let h = s.spawn(|| fiox(d.path(), &a));
        std::thread::sleep(Duration::from_millis(1500));
        srv.kill();
        h.join().unwrap()
    });
    assert!(t0.elapsed() < Duration::from_secs(15), "took {:?}", t0.elapsed());
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    assert_ne!(json(&out)["jobs"][0]["error"].as_u64(), Some(0), "the job's error");
}

#[test]
fn libiscsi_enghelp_is_fios() {
    if fio_ext().is_none() {
        crate::util::skip!("no fio 3.33 with the libiscsi engine (scripts/fio-ext.sh builds it)");
    }
    let d = scratch();
    let fio = run(false, d.path(), &["--enghelp=libiscsi"]);
    let ours = fiox(d.path(), &["--enghelp=libiscsi"]);
    assert_eq!(ours.stdout, fio.stdout);
}
