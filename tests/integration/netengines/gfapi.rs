//! `gfapi` and `gfapi_async` against a one-brick GlusterFS volume that each test starts: a
//! glusterd of its own in a network namespace of its own (glusterd refuses a brick on a
//! loopback address, so the namespace's loopback gets 198.18.3.1, from the benchmarking range),
//! with its working and run directories and its command socket in the test's scratch folder,
//! and the brick a folder there too, so that the tests see what landed in each file. fio and
//! fiox run inside the namespace.
//!
//! libgfapi takes about 10 s to unmount a volume (fio's engine sleeps 2 s more after mounting),
//! so each run costs that much: the differential test runs its jobs side by side in one run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::job_figures;
use crate::util::{fio_bin, fiox_bin, json, scratch, Out};

const ADDR: &str = "198.18.3.1";
const VOLUME: &str = "fxv";

/// A glusterd with one started volume, in a network namespace; everything is killed and the
/// namespace removed on drop.
struct Gluster {
    ns: String,
    dir: tempfile::TempDir,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

fn ok(cmd: &mut Command) -> Result<(), String> {
    let o = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?}: {}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
    }
}

impl Gluster {
    /// `None` (the test counted as skipped, with the reason) when GlusterFS, libgfapi or
    /// network namespaces are missing here.
    fn start() -> Option<Gluster> {
        if Command::new("glusterd").arg("--version").output().is_err() {
            crate::util::skips::skipped("glusterd is not installed (scripts/test.sh installs glusterfs-server)");
            return None;
        }
        if !Path::new("/usr/lib/x86_64-linux-gnu/libgfapi.so.0").exists()
            && !Path::new("/usr/lib/libgfapi.so.0").exists()
        {
            crate::util::skips::skipped("libgfapi.so.0 is not installed (package libgfapi0)");
            return None;
        }
        if let Some(why) = crate::multihost::netns::unavailable() {
            crate::util::skips::skipped(&format!("the GlusterFS tests run glusterd in a network namespace: {why}"));
            return None;
        }
        let ns = format!("fxg{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let g = Gluster { ns, dir: scratch() };
        if let Err(e) = g.boot() {
            panic!("the GlusterFS volume did not start: {e}\nglusterd's log:\n{}", g.log());
        }
        Some(g)
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn boot(&self) -> Result<(), String> {
        ok(Command::new("ip").args(["netns", "add", &self.ns]))?;
        ok(Command::new("ip").args(["-n", &self.ns, "link", "set", "lo", "up"]))?;
        ok(Command::new("ip").args(["-n", &self.ns, "addr", "add", &format!("{ADDR}/32"), "dev", "lo"]))?;
        for d in ["wd", "run", "brick"] {
            std::fs::create_dir(self.path(d)).map_err(|e| e.to_string())?;
        }
        let vol = format!(
            "volume management\n    type mgmt/glusterd\n    option working-directory {}\n    option run-directory {}\n    option glusterd-sockfile {}\n    option transport-type socket\n    option transport.socket.listen-port 24007\n    option ping-timeout 0\n    option event-threads 1\nend-volume\n",
            self.path("wd").display(),
            self.path("run").display(),
            self.path("run/cli.socket").display()
        );
        std::fs::write(self.path("glusterd.vol"), vol).map_err(|e| e.to_string())?;
        // glusterd puts itself in the background once it listens.
        ok(self
            .exec("glusterd")
            .arg("-f")
            .arg(self.path("glusterd.vol"))
            .arg("-p")
            .arg(self.path("glusterd.pid"))
            .arg("-l")
            .arg(self.path("glusterd.log")))?;
        let t0 = Instant::now();
        while !self.path("run/cli.socket").exists() {
            if t0.elapsed() > Duration::from_secs(20) {
                return Err("glusterd made no command socket within 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let brick = format!("{ADDR}:{}", self.path("brick").display());
        // The socket exists a moment before glusterd answers on it.
        let t0 = Instant::now();
        loop {
            match ok(self.cli().args(["volume", "create", VOLUME, &brick, "force"])) {
                Ok(()) => break,
                Err(e) if t0.elapsed() > Duration::from_secs(20) => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
        ok(self.cli().args(["volume", "start", VOLUME]))
    }

    /// A command that runs inside the namespace.
    fn exec(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns]).arg(program).stdin(Stdio::null());
        c
    }

    fn cli(&self) -> Command {
        let mut c = self.exec("gluster");
        c.arg("--mode=script")
            .arg(format!("--glusterd-sock={}", self.path("run/cli.socket").display()))
            .arg(format!("--log-file={}", self.path("cli.log").display()));
        c
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.path("glusterd.log")).unwrap_or_default()
    }

    /// Runs fio (with a time limit) or fiox in the namespace, in `dir`.
    fn run(&self, fiox_run: bool, dir: &Path, args: &[&str]) -> Out {
        let mut c = if fiox_run {
            self.exec(fiox_bin())
        } else {
            let mut c = self.exec("timeout");
            c.args(["-k", "5", "180"]).arg(fio_bin());
            c
        };
        Out::from(c.args(args).current_dir(dir).output().expect("ip netns exec runs"))
    }

    /// A file on the brick, as the volume stores it.
    fn brick_file(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path("brick").join(name)).unwrap_or_else(|e| panic!("brick file {name}: {e}"))
    }
}

impl Drop for Gluster {
    fn drop(&mut self) {
        // glusterd and the brick's glusterfsd it started are the namespace's only processes;
        // each is killed by its PID.
        if let Ok(o) = Command::new("ip").args(["netns", "pids", &self.ns]).output() {
            for pid in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-KILL", pid]).status();
            }
        }
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).status();
    }
}

/// Ten jobs side by side, each on a file of its own, both engines: bytes and I/O counts per
/// direction and syncs agree with fio 3.33's, job by job, and the files on the brick have the
/// sizes the jobs gave them.
#[test]
fn gfapi_moves_what_fio_moves() {
    let Some(g) = Gluster::start() else { return };
    let d = scratch();
    let jobs: &[(&str, &str)] = &[
        ("w", "ioengine=gfapi\nrw=write\nbs=4k\nsize=2m\n"),
        ("rw", "ioengine=gfapi\nrw=randwrite\nbs=16k\nsize=2m\n"),
        // A read of a file that does not exist yet: it is laid out first, as fio does.
        ("r", "ioengine=gfapi\nrw=read\nbs=4k\nsize=1m\n"),
        ("v", "ioengine=gfapi\nrw=randwrite\nbs=4k\nsize=1m\nverify=crc32c\n"),
        ("fs", "ioengine=gfapi\nrw=write\nbs=64k\nsize=2m\nfsync=4\n"),
        ("aw", "ioengine=gfapi_async\niodepth=8\nrw=randwrite\nbs=4k\nsize=2m\n"),
        ("ar", "ioengine=gfapi_async\niodepth=8\nrw=randread\nbs=4k\nsize=1m\n"),
        ("av", "ioengine=gfapi_async\niodepth=8\nrw=write\nbs=8k\nsize=1m\nverify=md5\n"),
        ("arw", "ioengine=gfapi_async\niodepth=4\nrw=rw\nbs=4k\nsize=1m\nrwmixread=50\n"),
        ("s", "ioengine=gfapi\nrw=write\nbs=4k\nsize=256k\nsingle-instance=1\nfdatasync=8\n"),
    ];
    let mut outs = Vec::new();
    for fiox_run in [false, true] {
        let tool = if fiox_run { "fiox" } else { "fio" };
        // fio reads an engine's options only after its ioengine=, which each job's body starts with.
        let mut text = String::new();
        for (name, body) in jobs {
            text += &format!("[{name}]\nfilename={tool}-{name}\n{body}volume={VOLUME}\nbrick={ADDR}\n");
        }
        let file = d.path().join(format!("{tool}.fio"));
        std::fs::write(&file, text).unwrap();
        let out = g.run(fiox_run, d.path(), &["--output-format=json", file.to_str().unwrap()]);
        assert_eq!(out.code, 0, "{tool}: {}", out.stderr);
        if fiox_run {
            assert_eq!(out.stderr, "", "fiox: a clean run prints nothing on stderr");
        }
        outs.push(json(&out));
    }
    for (i, (name, body)) in jobs.iter().enumerate() {
        let (fio, ours) = (&outs[0]["jobs"][i], &outs[1]["jobs"][i]);
        assert_eq!(ours["jobname"], *name);
        assert_eq!(ours["error"].as_u64(), Some(0), "{name}");
        let (f, o) = (job_figures(fio), job_figures(ours));
        if *name == "arw" {
            // The split between reads and writes is the random generator's; the total is not.
            assert_eq!(o[0].1 + o[1].1, f[0].1 + f[1].1, "{name}: bytes, fiox (left) and fio (right)");
        } else {
            assert_eq!(o, f, "{name} ({body:?}): fiox (left) and fio (right)");
        }
        let size = body.lines().find_map(|l| l.strip_prefix("size=")).unwrap();
        let want: u64 = match size {
            "2m" => 2 << 20,
            "1m" => 1 << 20,
            _ => 256 << 10,
        };
        for tool in ["fio", "fiox"] {
            let len = std::fs::metadata(g.path("brick").join(format!("{tool}-{name}"))).unwrap().len();
            assert_eq!(len, want, "{tool}-{name} on the brick");
        }
    }
    // The laid-out file is data, not a hole.
    assert!(g.brick_file("fiox-r").iter().any(|&b| b != 0), "fiox-r was filled before it was read");
}

/// What one tool writes (with verification headers) the other reads back and verifies, each
/// engine both ways; plain bytes land in the brick's file where the job put them, and a trim
/// leaves zeros there.
#[test]
fn gfapi_data_crosses_between_fio_and_fiox() {
    let Some(g) = Gluster::start() else { return };
    let d = scratch();
    let (vol, brick) = (format!("--volume={VOLUME}"), format!("--brick={ADDR}"));
    for (writer_fiox, w_engine, r_engine, verify) in
        [(false, "gfapi", "gfapi_async", "crc32c"), (true, "gfapi_async", "gfapi", "md5")]
    {
        let v = format!("--verify={verify}");
        let file = format!("--filename=cross-{verify}");
        let base = ["--name=x", &file, "--bs=4k", "--size=2m", "--iodepth=8", &v];
        // fio reads an engine's options only after its --ioengine.
        let (we, re) = (format!("--ioengine={w_engine}"), format!("--ioengine={r_engine}"));
        let w = [&base[..], &[&we, &vol, &brick, "--rw=randwrite", "--do_verify=0"]].concat();
        let out = g.run(writer_fiox, d.path(), &w);
        assert_eq!(out.code, 0, "writing {w:?}: {}", out.stderr);
        let r = [&base[..], &[&re, &vol, &brick, "--rw=read", "--output-format=json"]].concat();
        let out = g.run(!writer_fiox, d.path(), &r);
        assert_eq!(out.code, 0, "reading back {r:?} (writer fiox: {writer_fiox}): {}", out.stderr);
        assert_eq!(json(&out)["jobs"][0]["read"]["io_bytes"].as_u64(), Some(2 << 20), "{r:?}");
    }
    // A pattern at 1 MiB of a 2 MiB file, then a trim of its second half.
    let p = ["--name=p", "--ioengine=gfapi", &vol, &brick, "--filename=plain", "--bs=64k"];
    let w = [&p[..], &["--rw=write", "--size=2m", "--buffer_pattern=0x5a"]].concat();
    let out = g.run(true, d.path(), &w);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let img = g.brick_file("plain");
    assert_eq!(img.len(), 2 << 20);
    assert!(img.iter().all(|&b| b == 0x5a), "the pattern is on the brick");
    // No size: the file's own (2 MiB) sizes the job, from the offset to its end.
    let t = [&p[..], &["--ioengine=gfapi_async", "--rw=trim", "--offset=1m", "--io_size=64k", "--output-format=json"]]
        .concat();
    let out = g.run(true, d.path(), &t);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(json(&out)["jobs"][0]["trim"]["io_bytes"].as_u64(), Some(64 << 10));
    let img = g.brick_file("plain");
    assert!(img[1 << 20..(1 << 20) + (64 << 10)].iter().all(|&b| b == 0), "the trimmed range reads zeros");
    assert!(img[..1 << 20].iter().all(|&b| b == 0x5a), "nothing before it was trimmed");
}

/// Each way of not reaching a volume: one line naming the volume and server (or the missing
/// option), exit 1, no report and no file, quickly; fio fails too.
#[test]
fn gfapi_refusals_are_one_clear_line() {
    let Some(g) = Gluster::start() else { return };
    let d = scratch();
    let cases: &[(&[&str], &str)] = &[
        (&["--brick=198.18.3.1"], "needs volume= and brick="),
        (&["--volume=fxv"], "needs volume= and brick="),
        (&["--volume=nosuch", "--brick=198.18.3.1"], "cannot mount volume=nosuch through brick=198.18.3.1"),
        (
            &["--volume=fxv", "--brick=no-such-host.invalid"],
            "cannot mount volume=fxv through brick=no-such-host.invalid",
        ),
    ];
    for engine in ["gfapi", "gfapi_async"] {
        for (opts, why) in cases {
            let e = format!("--ioengine={engine}");
            let a = [&["--name=r", &e, "--filename=refused", "--rw=write", "--bs=4k", "--size=64k"][..], opts].concat();
            let t0 = Instant::now();
            let out = g.run(true, d.path(), &a);
            assert_eq!(out.code, 1, "{a:?}: {}", out.stderr);
            assert!(t0.elapsed() < Duration::from_secs(10), "{a:?} took {:?}", t0.elapsed());
            assert_eq!(out.stderr.lines().count(), 1, "{a:?}: one line: {}", out.stderr);
            assert!(
                out.stderr.contains(why) && out.stderr.contains(&format!("ioengine={engine}")),
                "{a:?}: {}",
                out.stderr
            );
            assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
            assert_eq!(out.stdout, "", "{a:?}: no report");
        }
    }
    assert!(!g.path("brick/refused").exists(), "no file was made");
    // fio fails too.
    let fio = g.run(
        false,
        d.path(),
        &["--name=r", "--ioengine=gfapi", "--volume=nosuch", "--brick=198.18.3.1", "--rw=write", "--size=64k"],
    );
    assert_ne!(fio.code, 0, "fio: {}", fio.stderr);
}
