//! `exec_prerun` and `exec_postrun`: a shell command run before and after a job, its output
//! saved in `JOBNAME.prerun.txt` / `JOBNAME.postrun.txt` in the current directory, as in fio.
//!
//! Two deliberate differences, both documented in the README: the whole command's output goes to
//! the file (fio appends its redirection to the command, so only the last of `a; b` is
//! captured), and a failing command is an error that names it (fio skips the job silently after
//! a failing prerun and exits 0, and ignores a failing postrun).

use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// Which end of the job.
#[derive(Clone, Copy)]
pub enum When {
    Pre,
    Post,
}

impl When {
    fn word(self) -> &'static str {
        match self {
            When::Pre => "prerun",
            When::Post => "postrun",
        }
    }
}

/// Runs `command` for job `job`; `notice` gets fio's "Saving output" line (printed with the
/// normal output). An error names the command, its exit status and the output file.
pub fn run(job: &str, command: &str, when: When, notice: &dyn Fn(&str)) -> Result<()> {
    let file = format!("{job}.{}.txt", when.word());
    notice(&format!("{job} : Saving output of {} in {file}\n", when.word()));
    let out = std::fs::File::create(&file).with_context(|| format!("job '{job}': cannot create '{file}'"))?;
    let err = out.try_clone()?;
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .with_context(|| format!("job '{job}': cannot run exec_{} '{command}'", when.word()))?;
    if !status.success() {
        let how = match status.code() {
            Some(c) => format!("exit status {c}"),
            None => "a signal".to_string(),
        };
        bail!("job '{job}': exec_{} '{command}' failed with {how} (its output is in {file})", when.word());
    }
    Ok(())
}
