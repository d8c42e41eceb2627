//! `fiox s3 bench` on several hosts (`--client`): what the multi-host wing asks of the bench.
//! The coordinator [`claim`]s the bucket (checked, or made, once, before any host starts) and
//! gives each host its command line with a prefix of its own (`PREFIX/hN`, so no two hosts'
//! objects can share a name); each server [`prepare`]s its share (the objects it reads,
//! uploaded before the start barrier) and [`Share::run`]s it at the barrier, answering with a
//! fio report (a job per operation, its histogram whole) that the coordinator merges bucket
//! by bucket into All clients. Each host deletes only its own objects; the bucket goes at the
//! end if the coordinator made it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Result};

use super::args::{self, Opts};
use super::{cleanup, client::Client, endpoints, measure, prepare as upload, report, shared, Shared};

/// The coordinator's hold on the bucket for the run.
pub struct Claim {
    opts: Opts,
    /// The command line after `bench`, without the hosts.
    args: Vec<String>,
    created: bool,
}

/// Parses the bench's flags (`args`: after `bench`, `--client`s removed) and checks or makes
/// the bucket, as a local bench does.
pub fn claim(args: &[String]) -> Result<Claim> {
    let opts = args::parse(args)?;
    if opts.repeat.is_some() || opts.live.is_some() || opts.metrics.is_some() {
        bail!("s3 bench: --repeat-until, --live and --metrics do not apply with --client yet");
    }
    let mut c = Client::new(&endpoints(&opts)[0], Duration::from_secs(15));
    let created = super::bucket(&mut c, &opts)?;
    Ok(Claim { opts, args: args.to_vec(), created })
}

impl Claim {
    /// Host `i`'s command line (after `s3`): the bench under `PREFIX/hI`, in the bucket the
    /// claim checked (`--use-existing`: the other hosts' objects are there too).
    pub fn host_args(&self, i: usize) -> Vec<String> {
        let mut a = vec!["bench".to_string()];
        a.extend(self.args.iter().cloned());
        a.push(format!("--prefix={}/h{i}", self.opts.prefix));
        a.push("--use-existing".into());
        a
    }

    pub fn json(&self) -> bool {
        self.opts.json
    }

    /// Removes the bucket if the claim made it (every host removed its objects already).
    pub fn release(&self) {
        if self.created && !self.opts.noclear {
            let mut c = Client::new(&endpoints(&self.opts)[0], Duration::from_secs(15));
            let path = format!("/{}", self.opts.bucket);
            match c.call("DELETE", &path, &[], &[], true) {
                Ok(d) if (200..300).contains(&d.status) => {}
                Ok(d) => eprintln!(
                    "fiox: s3 bench: cannot remove bucket '{}': {}",
                    self.opts.bucket,
                    super::client::describe(d.status, &d.body)
                ),
                Err(e) => eprintln!("fiox: s3 bench: cannot remove bucket '{}': {e}", self.opts.bucket),
            }
        }
    }
}

/// One host's share, its objects uploaded; they (and what the run makes) are removed when it
/// is dropped, whether it ran or not.
pub struct Share {
    sh: Arc<Shared>,
}

/// A server's part: `args` as [`Claim::host_args`] made them.
pub fn prepare(args: &[String]) -> Result<Share> {
    if args.first().map(String::as_str) != Some("bench") {
        bail!("s3: expected 'bench'");
    }
    let opts = args::parse(&args[1..])?;
    let sh = shared(&opts, false);
    let share = Share { sh };
    if !matches!(opts.mode.as_str(), "put" | "multipart") {
        upload(&share.sh, opts.objects)?;
    }
    Ok(share)
}

impl Share {
    /// Measures for `--duration` (or until `stop`), then removes this host's objects; the
    /// report is fio's model, a job per operation (its group the operation's, so the
    /// coordinator's per-group merges are per operation).
    pub fn run(&self, stop: &AtomicBool) -> Result<fiox_report::RunReport> {
        let done = AtomicBool::new(false);
        let result = std::thread::scope(|s| {
            s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    if stop.load(Ordering::Relaxed) {
                        self.sh.stop.store(true, Ordering::Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
            let r = measure(&self.sh, None, true);
            done.store(true, Ordering::Relaxed);
            r
        });
        let (stats, elapsed) = result?;
        let first_error = self.sh.first_error.lock().unwrap().clone();
        let r = report::Run {
            opts: &self.sh.opts,
            elapsed,
            first_error: first_error.as_deref(),
            behind: self.sh.behind.load(Ordering::Relaxed),
            repeat: None,
        };
        Ok(report::run_report(&r, &stats))
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        if !self.sh.opts.noclear {
            let _ = cleanup(&self.sh, false);
        }
    }
}
