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

fn run(fiox_run: bool, dir: &Path, args: &[&str]) -> Out {
    if fiox_run {
        fiox(dir, args)
    } else {
        fio_within(dir, args, 120)
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
