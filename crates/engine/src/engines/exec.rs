//! `exec`: runs a program for the job's runtime. The program starts with the job's first "I/O" (its output
//! in JOBNAME.stdout and JOBNAME.stderr in the current directory with `std_redirect=1`); every
//! "I/O" after that is a 50 ms wait followed by a 50 ms pause, about ten a second, counted as
//! reads of no bytes as fio reports them. When the runtime is over, the program gets SIGTERM,
//! `grace_time` seconds, then SIGKILL; that last step counts as one more I/O, as in fio. The
//! program's exit status does not matter.
//!
//! `arguments` is split on spaces (no quoting, as in fio); in each word `%r` becomes the
//! runtime in whole seconds and `%n` the job's name. fio 3.33 never reaps the program; fiox
//! does, after SIGKILL. A program that is not an executable file fails the job before it starts
//! (fio's child process aborts instead and the job reports success).

use std::fs::File;
use std::io;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::{EngineInfo, IoEngine, IoUnit, QueueStatus, Setup};

/// The length of each wait, and of each pause after it.
const TICK: Duration = Duration::from_millis(50);

#[derive(Default)]
pub struct Exec {
    /// The program, until the first "I/O" starts it.
    cmd: Option<Command>,
    child: Option<Child>,
    grace: Duration,
    banner: String,
}

fn preflight(spec: &fiox_options::JobSpec) -> Result<(), String> {
    let Some(program) = spec.engine.exec.program.as_deref().filter(|p| !p.is_empty()) else {
        return Err("ioengine exec needs program= (the program to run)".to_string());
    };
    if !runnable(program) {
        return Err(format!("ioengine exec: program={program} is not an executable file (nor one on PATH)"));
    }
    Ok(())
}

/// Whether `program` names an executable file, directly or (without a '/') on PATH, as
/// execvp looks it up.
fn runnable(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let ok =
        |p: &std::path::Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.contains('/') {
        return ok(program.as_ref());
    }
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|d| ok(&d.join(program))))
}

/// `arguments` split into words, with `%r` and `%n` replaced.
fn words(arguments: &str, runtime_s: u64, name: &str) -> Vec<String> {
    arguments
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(|w| w.replace("%r", &runtime_s.to_string()).replace("%n", name))
        .collect()
}

impl IoEngine for Exec {
    fn init(&mut self, setup: &Setup<'_>) -> io::Result<()> {
        let o = &setup.opts.exec;
        let program = o
            .program
            .as_deref()
            .filter(|p| !p.is_empty())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "ioengine exec needs program="))?;
        let name = setup.job_name;
        let args = o.arguments.as_deref().map(|a| words(a, setup.runtime_us / 1_000_000, name));
        let raw_args = o.arguments.as_deref().unwrap_or("(null)");
        let shown_args = args.as_ref().map_or_else(|| "(null)".to_string(), |a| a.join(" "));
        let mut cmd = Command::new(program);
        cmd.args(args.unwrap_or_default()).stdin(Stdio::null());
        self.banner = format!("{name} : program={program}, arguments={raw_args}\n");
        if o.std_redirect {
            let (out, err) = (format!("{name}.stdout"), format!("{name}.stderr"));
            let open = |p: &str| {
                File::create(p).map_err(|e| io::Error::new(e.kind(), format!("ioengine exec: cannot create {p}: {e}")))
            };
            cmd.stdout(open(&out)?).stderr(open(&err)?);
            self.banner += &format!("{name} : Saving output of {program} {shown_args} : stdout={out} stderr={err}\n");
        } else {
            self.banner += &format!("{name} : Running {program} {shown_args}\n");
        }
        self.cmd = Some(cmd);
        self.grace = Duration::from_secs(o.grace_time as u64);
        Ok(())
    }

    fn queue(&mut self, _index: u32, _io: &IoUnit) -> io::Result<QueueStatus> {
        // The first "I/O" starts the program; the others wait.
        match self.cmd.take() {
            Some(mut cmd) => {
                let child = cmd.spawn().map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("ioengine exec: cannot run {}: {e}", cmd.get_program().to_string_lossy()),
                    )
                })?;
                self.child = Some(child);
            }
            None => std::thread::sleep(TICK),
        }
        Ok(QueueStatus::Completed(0))
    }

    fn think_ns(&self) -> u64 {
        TICK.as_nanos() as u64
    }

    fn banner(&self) -> Option<String> {
        Some(self.banner.clone())
    }

    fn finish(&mut self) -> bool {
        let Some(mut child) = self.child.take() else { return false };
        let pid = child.id();
        let _ = crate::sys::send_signal(pid, libc::SIGTERM);
        std::thread::sleep(self.grace);
        let _ = child.kill();
        let _ = child.wait();
        true
    }
}

impl Drop for Exec {
    fn drop(&mut self) {
        // A job that ended early (an error, a signal) still stops its program.
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub const INFO: EngineInfo = EngineInfo {
    diskless: true,
    no_io: true,
    preflight: Some(preflight),
    ..EngineInfo::base("exec", || Box::<Exec>::default())
};

#[cfg(test)]
mod tests {
    #[test]
    fn arguments_are_split_on_spaces_and_substituted() {
        let w = super::words("a  %r \"q r\"  %n%n %r%r", 1, "e");
        assert_eq!(w, ["a", "1", "\"q", "r\"", "ee", "11"]);
    }
}
