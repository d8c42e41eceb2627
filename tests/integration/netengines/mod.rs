//! Engines that talk to a storage service, each against a real server the test starts: `nbd`
//! against nbdkit, `gfapi`/`gfapi_async` against a one-brick GlusterFS volume, `libiscsi`
//! against tgtd, `nfs` against NFS-Ganesha. fio 3.33 (Debian's, built with libnbd and libgfapi;
//! for libiscsi and nfs a build of its own, `$FIOX_FIO_EXT` from `scripts/fio-ext.sh`) runs the
//! same jobs; what must agree is compared
//! (bytes and I/O counts per direction, the data each tool wrote as the other reads it), and
//! an unreachable, refusing or dying server must end the run with one clear line and exit 1,
//! never a panic or a hang.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::{fio_within, fiox, json, Out};

mod gfapi;
mod iscsi;
mod nbd;
mod nfs;

/// A loopback TCP listener that accepts connections and never answers (for 25 s), and a fiox job
/// against its port must give up by the engine's own timeout (15 s) with one line containing
/// `says`, exit 1. `job` gets the port and returns the job's arguments.
fn silent_server_gives_up(job: impl Fn(u16) -> Vec<String>, says: &str) {
    let d = crate::util::scratch();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        listener.set_nonblocking(true).unwrap();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(25) {
            if let Ok(c) = listener.accept() {
                conns.push(c);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let args = job(port);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let t0 = Instant::now();
    let out = fiox(d.path(), &args);
    let took = t0.elapsed();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(out.stderr.contains(says), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    drop(held);
}

/// A host the network cannot reach (fiox run in a network namespace of its own, with no
/// route but loopback's) and, for gfapi, a host where nothing listens: each engine ends at
/// once with one line naming its option and the host, exit 1, no report. (rdma's are tested
/// in the guest, over soft-RoCE; the other engines' refused connections with their servers.)
#[test]
fn unreachable_hosts_are_one_clear_line() {
    if std::process::Command::new("unshare").arg("--version").output().is_err() {
        crate::util::skip!("unshare is not installed (package util-linux)");
    }
    let d = crate::util::scratch();
    let lib = |names: &[&str]| names.iter().any(|n| Path::new(&format!("/usr/lib/x86_64-linux-gnu/{n}")).exists());
    // (library, options, what the line names, what it says)
    let cases: &[(&str, &[&str], &str, &str)] = &[
        (
            "libgfapi.so.0",
            &["--ioengine=gfapi", "--volume=fxv", "--brick=192.0.2.1", "--filename=f"],
            "volume=fxv through brick=192.0.2.1",
            "not connected",
        ),
        // Nothing listens on glusterd's port.
        (
            "libgfapi.so.0",
            &["--ioengine=gfapi", "--volume=fxv", "--brick=127.0.0.1", "--filename=f"],
            "volume=fxv through brick=127.0.0.1",
            "is glusterd running on 127.0.0.1",
        ),
        (
            "libnbd.so.0",
            &["--ioengine=nbd", "--uri=nbd://192.0.2.1:10809/"],
            "uri=nbd://192.0.2.1:10809/",
            "unreachable",
        ),
        (
            "libiscsi.so.7",
            &["--ioengine=libiscsi", "--filename=iscsi\\://192.0.2.1\\:3260/iqn.2020-01.test\\:x/1"],
            "filename=iscsi://192.0.2.1:3260/iqn.2020-01.test:x/1",
            "unreachable",
        ),
        (
            "libnfs.so.13",
            &["--ioengine=nfs", "--nfs_url=nfs://192.0.2.1/x", "--filename=f"],
            "nfs_url=nfs://192.0.2.1/x",
            "unreachable",
        ),
    ];
    for (library, opts, names, why) in cases {
        if !lib(&[library]) {
            crate::util::skips::skipped(&format!("{library} is not installed"));
            continue;
        }
        let a = [&["--name=u", "--rw=read", "--bs=4k", "--size=64k"][..], opts].concat();
        let t0 = Instant::now();
        // Only loopback is up in the namespace: nothing listens there, nothing else is reachable.
        let o = std::process::Command::new("unshare")
            .args(["-n", "sh", "-c", "ip link set lo up && exec \"$0\" \"$@\""])
            .arg(crate::util::fiox_bin())
            .args(&a)
            .current_dir(d.path())
            .output()
            .unwrap();
        let out = Out::from(o);
        assert_eq!(out.code, 1, "{a:?}: {}", out.stderr);
        assert!(t0.elapsed() < Duration::from_secs(20), "{a:?} took {:?}", t0.elapsed());
        assert_eq!(out.stderr.lines().count(), 1, "{a:?}: one line: {}", out.stderr);
        assert!(out.stderr.contains(names), "{a:?}: names {names}: {}", out.stderr);
        assert!(out.stderr.to_lowercase().contains(why), "{a:?}: says {why}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{a:?}: no report");
        eprintln!("{}", out.stderr.trim_end());
    }
}

fn run(fiox_run: bool, dir: &Path, args: &[&str]) -> Out {
    if fiox_run {
        fiox(dir, args)
    } else {
        fio_within(dir, args, 120)
    }
}

/// Runs each of `jobs` (after `base`: name, engine, target) at iodepth 1 and 8 under fio (`run`
/// with false) and fiox: both succeed, fiox says nothing on stderr, and the first `n` figures
/// (read, write, trim, sync; `n` of the depth) agree.
fn same_figures(
    dir: &Path,
    base: &[&str],
    jobs: &[&[&str]],
    run: impl Fn(bool, &Path, &[&str]) -> Out,
    n: impl Fn(&str) -> usize,
) {
    for job in jobs {
        for depth in ["--iodepth=1", "--iodepth=8"] {
            let a = [base, &[depth, "--output-format=json"], job].concat();
            let fio = run(false, dir, &a);
            assert_eq!(fio.code, 0, "fio {a:?}: {}", fio.stderr);
            let ours = run(true, dir, &a);
            assert_eq!(ours.code, 0, "fiox {a:?}: {}", ours.stderr);
            assert_eq!(ours.stderr, "", "fiox {a:?}: a clean run prints nothing on stderr");
            let n = n(depth);
            assert_eq!(figures(&ours)[..n], figures(&fio)[..n], "{a:?}: fiox (left) and fio (right)");
        }
    }
}

/// For each `(writer is fiox, verify, depth)` of `plan`: one tool writes 4 MiB at 2 MiB with
/// verification headers (after `base`: name, engine, target), the other reads them back and
/// verifies them.
fn verify_across(dir: &Path, base: &[&str], plan: &[(bool, &str, &str)], run: impl Fn(bool, &Path, &[&str]) -> Out) {
    for &(writer_fiox, verify, depth) in plan {
        let v = format!("--verify={verify}");
        let q = format!("--iodepth={depth}");
        let common = [base, &["--bs=4k", "--size=4m", "--offset=2m", &v, &q]].concat();
        let w = [&common[..], &["--rw=randwrite", "--do_verify=0", "--output-format=json"]].concat();
        let out = run(writer_fiox, dir, &w);
        assert_eq!(out.code, 0, "writing {w:?}: {}", out.stderr);
        let r = [&common[..], &["--rw=read", "--output-format=json"]].concat();
        let out = run(!writer_fiox, dir, &r);
        assert_eq!(out.code, 0, "reading back {r:?} (writer fiox: {writer_fiox}): {}", out.stderr);
        assert_eq!(json(&out)["jobs"][0]["read"]["io_bytes"].as_u64(), Some(4 << 20), "{r:?}");
    }
}

/// `(io_bytes, total_ios)` of each direction, and the sync count, of a run's first job.
fn figures(out: &Out) -> Vec<(String, u64, u64)> {
    job_figures(&json(out)["jobs"][0])
}

/// `(io_bytes, total_ios)` of each direction, and the sync count, of one job's JSON.
fn job_figures(j: &serde_json::Value) -> Vec<(String, u64, u64)> {
    let mut v: Vec<(String, u64, u64)> = ["read", "write", "trim"]
        .iter()
        .map(|d| (d.to_string(), j[d]["io_bytes"].as_u64().unwrap(), j[d]["total_ios"].as_u64().unwrap()))
        .collect();
    v.push(("sync".into(), 0, j["sync"]["total_ios"].as_u64().unwrap_or(0)));
    v
}
