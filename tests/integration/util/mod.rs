//! Helpers: run fiox or fio in a scratch directory and capture what they print.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub mod skips;
pub(crate) use skips::skip;

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn fiox_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fiox"))
}

/// A finished process as text (exit status -1 when a signal ended it).
impl From<std::process::Output> for Out {
    fn from(o: std::process::Output) -> Out {
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

fn run(cmd: &mut Command) -> Out {
    Out::from(cmd.output().expect("cannot start the program"))
}

/// Runs fiox with `args` in `dir`.
pub fn fiox(dir: &Path, args: &[&str]) -> Out {
    run(Command::new(fiox_bin()).args(args).current_dir(dir))
}

/// The real fio. The differential tests need it; `scripts/test.sh` installs it.
pub fn fio_bin() -> PathBuf {
    let p = PathBuf::from("/usr/bin/fio");
    assert!(p.exists(), "fio 3.33 is not installed: run the tests with scripts/test.sh, which installs Debian's fio");
    p
}

/// Runs fio with `args` in `dir`, killed after 10 minutes: fio 3.33 can deadlock (seen here: a
/// job process with compressed logs waiting on a futex forever), and a hung run must fail its
/// test, not the whole suite's time limit.
pub fn fio(dir: &Path, args: &[&str]) -> Out {
    fio_within(dir, args, 600)
}

/// fio with a time limit in seconds (exit status 124 or 137 when it ran out).
pub fn fio_within(dir: &Path, args: &[&str], secs: u32) -> Out {
    let limit = secs.to_string();
    run(Command::new("timeout").args(["-k", "5", &limit]).arg(fio_bin()).args(args).current_dir(dir))
}

/// fio, run again when a run hangs (fio 3.33's own deadlock, see [`fio`]), up to three times.
pub fn fio_unhung(dir: &Path, args: &[&str], secs: u32) -> Out {
    let mut out = fio_within(dir, args, secs);
    for _ in 0..2 {
        if out.code != 124 && out.code != 137 && out.code != -1 {
            break;
        }
        out = fio_within(dir, args, secs);
    }
    out
}

/// Runs fiox or, if `fiox_run` is false, fio, with `args` in `dir`.
pub fn tool(fiox_run: bool, dir: &Path, args: &[&str]) -> Out {
    if fiox_run {
        fiox(dir, args)
    } else {
        fio(dir, args)
    }
}

/// The first JSON document of a run's standard output: fio may print lines before it, and the
/// normal output may follow it.
pub fn json(out: &Out) -> serde_json::Value {
    let text = &out.stdout[out.stdout.find('{').expect("a JSON document")..];
    serde_json::Deserializer::from_str(text).into_iter().next().expect("a JSON document").unwrap()
}

pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("fiox-test-").tempdir().expect("cannot make a scratch directory")
}

/// Names of the entries in a directory, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// The repository's test data folder.
pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// A loop device over a scratch file, detached when dropped (also when the test fails).
pub struct LoopDev {
    pub path: PathBuf,
    _backing: tempfile::TempDir,
}

impl LoopDev {
    /// A zero-filled device of `size` bytes; `Err` says why one cannot be made here.
    pub fn new(size: u64) -> Result<LoopDev, String> {
        Self::with_sector_size(size, 512)
    }

    /// The same with another logical block size.
    pub fn with_sector_size(size: u64, sector: u32) -> Result<LoopDev, String> {
        let dir = scratch();
        let img = dir.path().join("loop.img");
        std::fs::File::create(&img).and_then(|f| f.set_len(size)).map_err(|e| e.to_string())?;
        let out = Command::new("losetup")
            .args(["--find", "--show", "--sector-size", &sector.to_string(), img.to_str().unwrap()])
            .output()
            .map_err(|e| format!("losetup: {e}"))?;
        if !out.status.success() {
            return Err(format!("losetup failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Ok(LoopDev { path, _backing: dir })
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
    }
}

/// A blkio cgroup that throttles a device's reads, removed when dropped.
pub struct Throttle {
    pub dir: std::path::PathBuf,
    rule: &'static str,
    majmin: String,
}

impl Throttle {
    /// `rule` is the blkio file (`blkio.throttle.read_iops_device`, `..._bps_device`).
    pub fn new(dev: &std::path::Path, rule: &'static str, value: u64) -> Result<Throttle, String> {
        use std::os::unix::fs::MetadataExt;
        let rdev = std::fs::metadata(dev).map_err(|e| e.to_string())?.rdev();
        let (major, minor) = (((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff), (rdev & 0xff) | ((rdev >> 12) & !0xff));
        let dir = std::path::PathBuf::from(format!(
            "/sys/fs/cgroup/blkio/fiox-test-{}-{}",
            std::process::id(),
            dev.display().to_string().replace('/', "_")
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("no blkio cgroup: {e}"))?;
        let t = Throttle { dir, rule, majmin: format!("{major}:{minor}") };
        std::fs::write(t.dir.join(rule), format!("{} {value}", t.majmin)).map_err(|e| e.to_string())?;
        Ok(t)
    }

    /// Changes the limit (0: none).
    pub fn set(&self, value: u64) {
        let _ = std::fs::write(self.dir.join(self.rule), format!("{} {value}", self.majmin));
    }

    /// Lets the device run at full speed again.
    pub fn lift(&self) {
        let _ = std::fs::write(self.dir.join(self.rule), format!("{} 0", self.majmin));
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        self.lift();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A loopback TCP port free now (the kernel's pick). Another process may take it before the
/// test binds it; the tests that start servers wait for them to listen.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A port `p` such that `p` and `p + 1` are both free now (for a job with two clones, which
/// count ports up from `port`, and for Ceph's monitor pair).
pub fn free_port_pair() -> Option<u16> {
    for _ in 0..50 {
        let a = std::net::TcpListener::bind("127.0.0.1:0").ok()?;
        let p = a.local_addr().ok()?.port();
        if p < 65535 && std::net::TcpListener::bind(("127.0.0.1", p + 1)).is_ok() {
            return Some(p);
        }
    }
    None
}

/// Whether something listens on TCP `port` (any local address), read from /proc/net/tcp so
/// that asking does not take a connection from the listener.
pub fn listening(port: u16) -> bool {
    let want = format!(":{port:04X} ");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3 && format!("{} ", cols[1]).ends_with(&want) && cols[3] == "0A"
            })
        })
    })
}

/// Waits until a connection to TCP `port` on 127.0.0.1 succeeds (10 s at most; the test fails
/// after that). The connection is closed at once: a server sees one that never spoke.
pub fn wait_listening(port: u16) {
    let until = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "nothing listens on port {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The lines strace prints for the system calls named in `calls` (comma-separated) that fiox
/// (`fiox_run`) or fio make on `args` in `dir`, every thread and process followed. Under load
/// strace may split a call into `<unfinished ...>` and `<... resumed>` lines; both are kept.
/// strace is required like fio (`scripts/test.sh` installs both), so its absence fails the test.
pub fn strace(fiox_run: bool, dir: &Path, calls: &str, args: &[&str]) -> Vec<String> {
    let bin = if fiox_run { fiox_bin() } else { fio_bin() };
    let log = dir.join("strace.log");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-e", &format!("trace={calls}"), "-o"])
        .arg(&log)
        .arg(bin)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("strace runs (scripts/test.sh installs it)");
    assert!(out.status.success(), "strace {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    std::fs::read_to_string(&log).unwrap().lines().map(String::from).collect()
}
