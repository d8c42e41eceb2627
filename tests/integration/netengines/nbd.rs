//! `nbd` against nbdkit (a file plugin over a scratch file, on a UNIX socket or a loopback TCP
//! port).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{figures, run};
use crate::util::{fiox, json, scratch};

/// nbdkit serving a scratch file of `size` bytes (`file` plugin) on a UNIX socket, or read-only,
/// or with extra filters; killed on drop.
struct Nbdkit {
    dir: tempfile::TempDir,
    child: Option<Child>,
    sock: PathBuf,
}

impl Nbdkit {
    /// `None` (with the reason printed) when nbdkit or libnbd is missing here. Of `extra`, the
    /// switches (`-r`, `--filter=...`) go before the plugin, the `key=value` parameters after.
    fn start(size: u64, extra: &[&str]) -> Option<Nbdkit> {
        if Command::new("nbdkit").arg("--version").output().is_err() {
            crate::util::skips::skipped("nbdkit is not installed (scripts/test.sh installs it)");
            return None;
        }
        if !Path::new("/usr/lib/x86_64-linux-gnu/libnbd.so.0").exists() && !Path::new("/usr/lib/libnbd.so.0").exists() {
            crate::util::skips::skipped("libnbd.so.0 is not installed (package libnbd0)");
            return None;
        }
        let dir = scratch();
        let img = dir.path().join("disk.img");
        std::fs::File::create(&img).and_then(|f| f.set_len(size)).expect("the disk image");
        let sock = dir.path().join("sock");
        let child = Command::new("nbdkit")
            .args(["--foreground", "--exit-with-parent", "-U"])
            .arg(&sock)
            .args(extra.iter().filter(|a| a.starts_with('-')))
            .arg("file")
            .arg(&img)
            .args(extra.iter().filter(|a| !a.starts_with('-')))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nbdkit starts");
        let t0 = Instant::now();
        while !sock.exists() {
            assert!(t0.elapsed() < Duration::from_secs(10), "nbdkit did not create its socket");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Nbdkit { dir, child: Some(child), sock })
    }

    fn uri(&self) -> String {
        format!("--uri=nbd+unix:///?socket={}", self.sock.display())
    }

    fn image(&self) -> Vec<u8> {
        std::fs::read(self.dir.path().join("disk.img")).expect("the disk image")
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Nbdkit {
    fn drop(&mut self) {
        self.kill();
    }
}

#[test]
fn nbd_moves_what_fio_moves() {
    let Some(srv) = Nbdkit::start(16 << 20, &[]) else { return };
    let d = scratch();
    let uri = srv.uri();
    let uri = uri.as_str();
    let jobs: &[&[&str]] = &[
        &["--rw=read", "--bs=4k"],
        &["--rw=write", "--bs=4k", "--size=4m"],
        &["--rw=randwrite", "--bs=16k", "--size=4m"],
        &["--rw=randread", "--bs=4k", "--size=2m", "--offset=8m"],
        &["--rw=trim", "--bs=64k", "--size=4m"],
        &["--rw=randtrim", "--bs=64k", "--size=4m"],
        &["--rw=randwrite", "--bs=4k", "--size=2m", "--verify=crc32c"],
        &["--rw=write", "--bs=8k", "--size=1m", "--verify=md5", "--verify_backlog=16"],
    ];
    super::same_figures(d.path(), &["--name=n", "--ioengine=nbd", uri], jobs, run, |_| 4);
    // A mixed job: the split between reads and writes is the random generator's (and differs
    // from fio's on every engine), the total is not. Flushes (fsync=) count as fio counts them
    // at depth 1; at a deeper queue fio 3.33 issues a flush again while one is in flight (as
    // with io_uring), fiox once per fsync= writes (as fio with libaio).
    for a in [
        &["--rw=randrw", "--bs=4k", "--size=4m", "--iodepth=8"][..],
        &["--rw=write", "--bs=64k", "--size=4m", "--fsync=4", "--iodepth=1"][..],
    ] {
        let a = [&["--name=n", "--ioengine=nbd", uri, "--output-format=json"][..], a].concat();
        let (fio, ours) = (run(false, d.path(), &a), run(true, d.path(), &a));
        assert_eq!((fio.code, ours.code), (0, 0), "{a:?}: {} / {}", fio.stderr, ours.stderr);
        let total = |f: &[(String, u64, u64)]| (f[0].1 + f[1].1, f[0].2 + f[1].2, f[3].2);
        assert_eq!(total(&figures(&ours)), total(&figures(&fio)), "{a:?}: fiox (left) and fio (right)");
    }
}

/// What one tool writes through the export (with verification headers) the other reads back
/// and verifies, at depth 1 and 8; and the bytes land in the server's file where they belong.
#[test]
fn nbd_data_crosses_between_fio_and_fiox() {
    let Some(srv) = Nbdkit::start(8 << 20, &[]) else { return };
    let d = scratch();
    let uri = srv.uri();
    let uri = uri.as_str();
    let plan = [(false, "crc32c", "1"), (true, "crc32c", "8"), (false, "md5", "8"), (true, "sha256", "1")];
    super::verify_across(d.path(), &["--name=x", "--ioengine=nbd", uri], &plan, run);
    // Plain bytes: fiox writes a pattern at 1 MiB; the server's file has it there and only there.
    let out = fiox(
        d.path(),
        &[
            "--name=p",
            "--ioengine=nbd",
            uri,
            "--rw=write",
            "--bs=64k",
            "--size=64k",
            "--offset=1m",
            "--buffer_pattern=0x5a",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let img = srv.image();
    assert!(img[1 << 20..(1 << 20) + (64 << 10)].iter().all(|&b| b == 0x5a), "the pattern landed at 1 MiB");
    assert_ne!(img[(1 << 20) - 1], 0x5a, "nothing before it");
}

/// Each way of not getting an export: one line naming the URI (or the missing option), exit 1,
/// no I/O, quickly; fio fails too.
#[test]
fn nbd_refusals_are_one_clear_line() {
    let Some(srv) = Nbdkit::start(1 << 20, &[]) else { return };
    let d = scratch();
    let deny = Nbdkit::start(1 << 20, &["--filter=ip", "deny=all"]).unwrap();
    let strict = Nbdkit::start(1 << 20, &["--filter=exportname", "exportname-strict=true", "exportname=good"]).unwrap();
    let ro = Nbdkit::start(1 << 20, &["-r"]).unwrap();
    // A TCP port nobody listens on: bound, then released.
    let closed = crate::util::free_port();
    let gone = d.path().join("no-such-socket");
    let cases: Vec<(String, &str, &str)> = vec![
        (String::new(), "--rw=read", "needs uri="),
        (format!("--uri=nbd+unix:///?socket={}", gone.display()), "--rw=read", "No such file or directory"),
        (format!("--uri=nbd://127.0.0.1:{closed}/"), "--rw=read", "Connection refused"),
        // libnbd's own reason for a server that drops the connection at once depends on when
        // the drop is seen ("server disconnected", or a state-machine error under load); fiox's
        // part of the line is what is promised.
        (deny.uri(), "--rw=read", "cannot connect to uri="),
        (format!("--uri=nbd+unix:///bad?socket={}", strict.sock.display()), "--rw=read", "no export named 'bad'"),
        (ro.uri(), "--rw=write", "read-only"),
        ("--uri=http://127.0.0.1/".to_string(), "--rw=read", "unknown NBD URI scheme"),
        (srv.uri(), "--offset=1000k", "exceeds the nbd export (1048576 bytes)"),
    ];
    for (uri, rw, why) in &cases {
        let mut a = vec!["--name=r", "--ioengine=nbd", rw, "--bs=4k", "--size=64k"];
        if !uri.is_empty() {
            a.push(uri.as_str());
        }
        let t0 = Instant::now();
        let out = fiox(d.path(), &a);
        assert_eq!(out.code, 1, "{a:?}: {}", out.stderr);
        assert!(t0.elapsed() < Duration::from_secs(10), "{a:?} took {:?}", t0.elapsed());
        assert_eq!(out.stderr.lines().count(), 1, "{a:?}: one line: {}", out.stderr);
        assert!(out.stderr.contains(why), "{a:?}: {}", out.stderr);
        let names_uri = uri.is_empty() || why.starts_with("exceeds");
        assert!(names_uri || out.stderr.contains(uri.trim_start_matches("--uri=")), "{a:?}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert_eq!(out.stdout, "", "{a:?}: no report");
        // fio fails too, but for a region past the export's end, where it does nothing and
        // exits 0.
        let fio = run(false, d.path(), &a);
        assert_eq!(fio.code == 0, why.starts_with("exceeds"), "fio {a:?}");
    }
    // The read-only refusal happens before any I/O: the export is unchanged.
    assert!(ro.image().iter().all(|&b| b == 0));
    drop(srv);
}

/// A server that accepts the connection and then says nothing: fiox gives up after its
/// connection timeout (15 s) with one line; fio 3.33 would wait forever.
#[test]
fn nbd_silent_server_does_not_hang() {
    if Nbdkit::start(1 << 20, &[]).is_none() {
        return;
    }
    super::silent_server_gives_up(
        |port| {
            vec![
                "--name=s".into(),
                "--ioengine=nbd".into(),
                format!("--uri=nbd://127.0.0.1:{port}/"),
                "--rw=read".into(),
                "--bs=4k".into(),
            ]
        },
        "did not complete the NBD handshake within 15 s",
    );
}

/// The server going away mid-run fails the job as in fio (ESHUTDOWN on the I/Os in flight)
/// within moments, not at the end of its runtime.
#[test]
fn nbd_server_dying_mid_run_fails_the_job() {
    for fiox_run in [false, true] {
        let Some(mut srv) = Nbdkit::start(16 << 20, &[]) else { return };
        let d = scratch();
        let uri = srv.uri();
        let uri = uri.as_str();
        let a = ["--name=k", "--ioengine=nbd", uri, "--rw=randread", "--bs=4k", "--iodepth=8", "--time_based"];
        let a = [&a[..], &["--runtime=30", "--output-format=json"]].concat();
        let t0 = Instant::now();
        let child = std::thread::scope(|s| {
            let h = s.spawn(|| run(fiox_run, d.path(), &a));
            std::thread::sleep(Duration::from_millis(1500));
            srv.kill();
            h.join().unwrap()
        });
        assert!(t0.elapsed() < Duration::from_secs(15), "fiox {fiox_run}: took {:?}", t0.elapsed());
        assert_eq!(child.code, 1, "fiox {fiox_run}: {}", child.stderr);
        assert!(!child.stderr.contains("panicked"), "{}", child.stderr);
        assert!(child.stdout.contains('{'), "fiox {fiox_run}: a report: {} {}", child.stdout, child.stderr);
        assert_ne!(json(&child)["jobs"][0]["error"].as_u64(), Some(0), "fiox {fiox_run}: the job's error");
    }
}

#[test]
fn nbd_enghelp_is_fios() {
    let d = scratch();
    let fio = run(false, d.path(), &["--enghelp=nbd"]);
    let ours = fiox(d.path(), &["--enghelp=nbd"]);
    assert_eq!(ours.stdout, fio.stdout);
}
