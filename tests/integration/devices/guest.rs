//! Runs fio and fiox inside a throw-away qemu guest with emulated devices (`scripts/vm/guest.sh`):
//! the devices fio drives that this machine lacks (NVMe passthrough, SCSI generic, zoned and
//! persistent-memory devices). A [`Batch`] collects several runs and boots one guest for all
//! of them, as a boot costs seconds of emulated CPU; each run writes its output, exit status
//! and I/O log to a directory shared with the guest, which [`Results`] reads back.
//!
//! Nothing measured in a guest is a performance figure: the CPU is emulated.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::Out;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/vm/guest.sh")
}

/// Whether guests can be booted here: `scripts/vm/guest.sh setup` has what it needs (qemu, the
/// kernel cache; it installs them where it may, as scripts/test.sh does first). Where it cannot,
/// the guest tests are counted as skipped (and fail under `FIOX_REQUIRE_ALL=1`, since
/// scripts/test.sh sets the guest up).
pub fn available() -> bool {
    match Command::new(script()).arg("setup").output() {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            crate::util::skips::skipped(&format!(
                "no guest can be booted here: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
            false
        }
        Err(e) => {
            crate::util::skips::skipped(&format!("cannot run scripts/vm/guest.sh: {e}"));
            false
        }
    }
}

/// Which tool a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Fio,
    Fiox,
}

impl Tool {
    fn tag(self) -> &'static str {
        match self {
            Tool::Fio => "fio",
            Tool::Fiox => "fiox",
        }
    }
}

/// Runs to make in one guest, in order.
pub struct Batch {
    devices: &'static str,
    dir: tempfile::TempDir,
    lines: String,
    /// The fio that [`Tool::Fio`] runs: fio 3.33 unless [`Batch::fio`] names another.
    fio: Option<PathBuf>,
}

/// Quotes a word for sh.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl Batch {
    /// A batch for a guest with these device sets (see scripts/vm/guest.sh).
    pub fn new(devices: &'static str) -> Batch {
        let dir = tempfile::Builder::new().prefix("fiox-guest-test-").tempdir().expect("a scratch directory");
        Batch { devices, dir, lines: String::new(), fio: None }
    }

    /// Runs `fio` for [`Tool::Fio`] (fio 3.42 built for a generic CPU, say) instead of fio 3.33.
    pub fn fio(&mut self, fio: PathBuf) -> &mut Batch {
        self.fio = Some(fio);
        self
    }

    /// A shell command to run in the guest before the next runs (set a device up, reset zones).
    pub fn shell(&mut self, cmd: &str) -> &mut Batch {
        writeln!(self.lines, "{cmd}").unwrap();
        self
    }

    /// Runs `tool` with `args`, plus `--write_iolog` into the shared directory; `before` (a
    /// shell command, e.g. a zone reset) runs first.
    ///
    /// A run that fails with EINTR is made again (with `before`), up to three times: under the
    /// guest's 6.1 kernel the emulated NVMe drive now and then ends a passthrough command with
    /// EINTR, in fio as in fiox, more often when the host is busy. The retry is visible in the
    /// batch's standard error.
    pub fn run(&mut self, name: &str, tool: Tool, before: &str, args: &[&str]) -> &mut Batch {
        let line = self.command(name, tool, args);
        let base = self.dir.path().join(format!("{name}.{}", tool.tag()));
        let base = base.display();
        let before = if before.is_empty() { String::new() } else { format!("{before}; ") };
        writeln!(
            self.lines,
            "for try in 1 2 3; do {before}{line}; [ \"$(cat {base}.rc)\" != 0 ] && grep -qs 'Interrupted system call' {base}.out {base}.err || break; echo \"{name}: EINTR, again\" >&2; done"
        )
        .unwrap();
        self
    }

    /// Starts `tool` with `args` in the background (a server that the next runs talk to) and
    /// gives it `settle` seconds to get ready; [`Batch::wait`] waits for it to end.
    pub fn spawn(&mut self, name: &str, tool: Tool, args: &[&str], settle: f32) -> &mut Batch {
        let line = self.command(name, tool, args);
        writeln!(self.lines, "( {line} ) &\nsleep {settle}").unwrap();
        self
    }

    /// Waits for the runs started with [`Batch::spawn`].
    pub fn wait(&mut self) -> &mut Batch {
        writeln!(self.lines, "wait").unwrap();
        self
    }

    /// The shell line of one run: its output, exit status and I/O log go to the shared
    /// directory, and a line with the guest's uptime to the batch's standard error.
    fn command(&self, name: &str, tool: Tool, args: &[&str]) -> String {
        let bin = match tool {
            Tool::Fio => self.fio.clone().unwrap_or_else(crate::util::fio_bin),
            Tool::Fiox => crate::util::fiox_bin(),
        };
        let base = self.dir.path().join(format!("{name}.{}", tool.tag()));
        let base = base.display();
        let mut cmd = format!("{} --write_iolog={base}.iolog", quote(&bin.display().to_string()));
        for a in args {
            cmd.push(' ');
            cmd.push_str(&quote(a));
        }
        // A hung run must not hold the whole guest: each gets two minutes.
        format!(
            "timeout -k 5 120 {cmd} > {base}.out 2> {base}.err; echo $? > {base}.rc; echo \"$(cut -d' ' -f1 /proc/uptime) {name} {}\" >&2",
            tool.tag()
        )
    }

    /// Runs `cmd` in the guest and keeps its standard output as `what` of run `name` under
    /// `tool` (a zone report after the run, say), for [`Results::saved`].
    pub fn save(&mut self, name: &str, tool: Tool, what: &str, cmd: &str) -> &mut Batch {
        let file = self.dir.path().join(format!("{name}.{}.{what}", tool.tag()));
        writeln!(self.lines, "{cmd} > {} 2>&1", file.display()).unwrap();
        self
    }

    /// The same run under fio, then under fiox.
    pub fn both(&mut self, name: &str, before: &str, args: &[&str]) -> &mut Batch {
        self.run(name, Tool::Fio, before, args).run(name, Tool::Fiox, before, args)
    }

    /// Boots the guest, makes the runs, and returns what they left.
    pub fn boot(self) -> Results {
        let file = self.dir.path().join("batch.sh");
        std::fs::write(&file, &self.lines).unwrap();
        let o = Command::new(script())
            .args(["run", "-d", self.devices, "-t", "900", "-s"])
            .arg(self.dir.path())
            .args(["--", "sh"])
            .arg(&file)
            .output()
            .expect("cannot start scripts/vm/guest.sh");
        let guest = Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        };
        assert!(
            guest.code == 0 || guest.code == 1,
            "the guest failed ({}): {}\n{}",
            guest.code,
            guest.stdout,
            guest.stderr
        );
        Results { dir: self.dir, guest }
    }
}

/// What a batch's runs left.
pub struct Results {
    dir: tempfile::TempDir,
    /// The batch script's own output (the shell commands').
    pub guest: Out,
}

/// One I/O of an iolog: file, action, offset, length.
pub type LoggedIo = (String, String, u64, u64);

impl Results {
    /// A run's exit status, standard output and standard error.
    pub fn out(&self, name: &str, tool: Tool) -> Out {
        let base = self.dir.path().join(format!("{name}.{}", tool.tag())).display().to_string();
        let read = |ext: &str| std::fs::read_to_string(format!("{base}.{ext}")).unwrap_or_default();
        Out { code: read("rc").trim().parse().unwrap_or(-1), stdout: read("out"), stderr: read("err") }
    }

    /// What [`Batch::save`] kept for a run.
    pub fn saved(&self, name: &str, tool: Tool, what: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("{name}.{}.{what}", tool.tag()))).unwrap_or_default()
    }

    /// The I/Os a run logged (`write_iolog`), in the order it issued them.
    pub fn iolog(&self, name: &str, tool: Tool) -> Vec<LoggedIo> {
        let path = self.dir.path().join(format!("{name}.{}.iolog", tool.tag()));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        text.lines()
            .skip(1)
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 5)
                    .then(|| (f[1].to_string(), f[2].to_string(), f[3].parse().unwrap(), f[4].parse().unwrap()))
            })
            .collect()
    }

    /// The JSON report of a run that must have succeeded.
    pub fn json(&self, name: &str, tool: Tool) -> serde_json::Value {
        let out = self.out(name, tool);
        assert_eq!(out.code, 0, "{name}: {} failed: {}\n{}", tool.tag(), out.stdout, out.stderr);
        let text = &out.stdout[out.stdout.find('{').unwrap_or_else(|| panic!("{name}: no JSON: {}", out.stdout))..];
        serde_json::Deserializer::from_str(text).into_iter().next().expect("a JSON document").unwrap()
    }

    /// Per direction (read, write, trim): bytes and I/O count summed over a run's jobs, and
    /// the largest job error.
    pub fn totals(&self, name: &str, tool: Tool) -> ([u64; 3], [u64; 3], i64) {
        sum_jobs(&self.json(name, tool))
    }

    /// A run's exit status, job error, bytes and I/O counts per direction (summed over its
    /// jobs, whatever its exit status) and the `func=..., error=...` of its first job line with
    /// an error (fio names its source file and line there too, which is left out).
    pub fn outcome(&self, name: &str, tool: Tool) -> (i32, i64, [u64; 3], [u64; 3], Option<String>) {
        let out = self.out(name, tool);
        let at = if out.stdout.starts_with('{') { 0 } else { out.stdout.find("\n{").map_or(0, |i| i + 1) };
        let v: serde_json::Value = serde_json::Deserializer::from_str(&out.stdout[at..])
            .into_iter()
            .next()
            .and_then(Result::ok)
            .unwrap_or_else(|| panic!("{name}: {tool:?} printed no JSON: {}\n{}", out.stdout, out.stderr));
        let (bytes, ios, err) = sum_jobs(&v);
        let func = out.stdout.lines().find_map(|l| {
            let inner = l.split_once("): err=")?.1.split_once(" (")?.1;
            Some(inner[inner.find("func=")?..].split("): pid=").next()?.to_string())
        });
        (out.code, err, bytes, ios, func)
    }

    /// The lines a run printed about its errors (`fio: ...` or `fiox: ...`, standard error first,
    /// then standard output), made comparable: without the program's name, the pid, fio's source
    /// file and line, and trailing blanks.
    pub fn error_lines(&self, name: &str, tool: Tool) -> Vec<String> {
        let out = self.out(name, tool);
        let prefix = format!("{}: ", tool.tag());
        out.stderr
            .lines()
            .chain(out.stdout.lines())
            .filter_map(|l| l.strip_prefix(&prefix))
            .map(|l| {
                let mut l = l.trim_end().to_string();
                if let Some(rest) = l.strip_prefix("pid=") {
                    let rest = rest.split_once(", ").map_or("", |r| r.1);
                    l = format!("pid=N, {rest}");
                }
                if let (Some(a), Some(b)) = (l.find("/file:"), l.find(", func=")) {
                    l.replace_range(a..b, "");
                }
                l
            })
            .collect()
    }

    /// Asserts that fio and fiox ended `name` alike, failed or not: exit status, job error,
    /// bytes and I/O counts, the step the error names (`func=`) and, when `ordered`, the I/Os
    /// logged in order. For runs that print `--output-format=normal,json`. Returns the job error.
    pub fn same_outcome(&self, name: &str, ordered: bool) -> i64 {
        let (f, x) = (self.outcome(name, Tool::Fio), self.outcome(name, Tool::Fiox));
        assert_eq!(f, x, "{name}: exit status, error, bytes, I/Os, func= (fio, fiox)");
        if ordered {
            let ios = |t| self.iolog(name, t).into_iter().map(|(_, a, o, l)| (a, o, l)).collect::<Vec<_>>();
            assert_eq!(ios(Tool::Fio), ios(Tool::Fiox), "{name}: logged I/Os");
        }
        eprintln!("{name}: fio and fiox: {f:?}");
        f.1
    }

    /// Asserts that fio and fiox moved the same bytes in the same number of I/Os per
    /// direction without error, and issued the same I/Os (direction, offset, length): in the
    /// same order when `ordered`,
    /// else the same set. Returns the figures, for the test's report.
    pub fn same(&self, name: &str, ordered: bool) -> ([u64; 3], [u64; 3]) {
        let (fb, fi, fe) = self.totals(name, Tool::Fio);
        let (xb, xi, xe) = self.totals(name, Tool::Fiox);
        assert_eq!((fe, xe), (0, 0), "{name}: job errors fio {fe}, fiox {xe}");
        assert_eq!(fb, xb, "{name}: bytes (read, write, trim) fio {fb:?}, fiox {xb:?}");
        assert_eq!(fi, xi, "{name}: I/O counts (read, write, trim) fio {fi:?}, fiox {xi:?}");
        // Compared without the file's name, which is the same in both runs unless the test
        // gives each tool another node of the same device (/dev/nvme0n2 and /dev/ng0n2).
        let ios = |t| {
            // Syncs are left out: fio logs each with an offset (where the job stood), fiox
            // logs a bare `sync` line, which `iolog` skips.
            let mut v: Vec<(String, u64, u64)> = self
                .iolog(name, t)
                .into_iter()
                .filter(|(_, a, _, _)| a != "sync" && a != "datasync")
                .map(|(_, a, o, l)| (a, o, l))
                .collect();
            if !ordered {
                v.sort();
            }
            v
        };
        let (f, x) = (ios(Tool::Fio), ios(Tool::Fiox));
        assert!(!f.is_empty(), "{name}: fio logged no I/O");
        if let Some(i) = f.iter().zip(&x).position(|(a, b)| a != b) {
            panic!("{name}: I/O {i} differs: fio {:?}, fiox {:?}", f[i], x[i]);
        }
        assert_eq!(f.len(), x.len(), "{name}: logged I/Os fio {}, fiox {}", f.len(), x.len());
        eprintln!("{name}: fio and fiox: bytes {fb:?}, I/Os {fi:?}, {} logged I/Os alike", f.len());
        (fb, fi)
    }
}

/// Per direction (read, write, trim): bytes and I/O count summed over a report's jobs, and the
/// largest job error.
fn sum_jobs(v: &serde_json::Value) -> ([u64; 3], [u64; 3], i64) {
    let (mut bytes, mut ios, mut err) = ([0; 3], [0; 3], 0);
    for j in v["jobs"].as_array().expect("jobs") {
        for (d, dir) in ["read", "write", "trim"].iter().enumerate() {
            bytes[d] += j[dir]["io_bytes"].as_u64().unwrap_or(0);
            ios[d] += j[dir]["total_ios"].as_u64().unwrap_or(0);
        }
        err = err.max(j["error"].as_i64().unwrap_or(0));
    }
    (bytes, ios, err)
}
