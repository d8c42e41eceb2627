//! `read_iolog`: the I/O of a recorded log or blktrace trace, replayed. [`load`] reads and
//! checks the trace while the run is planned (so a bad log is refused before any I/O) and turns
//! it into the job's files and a list of I/Os; the runner's `replay::Replay` hands them to the
//! worker in order, each at its time unless `replay_no_stall`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use fiox_engine::Ddir;
use fiox_options::iolog::{self, Action, Format};
use fiox_options::{JobSpec, ReplaySpec};

use crate::plan::io::NextIo;

/// A trace ready to replay: the files its I/O goes to, and the I/O.
#[derive(Debug)]
pub struct ReplayPlan {
    pub paths: Vec<PathBuf>,
    /// Each I/O with the time to wait after the previous one (already scaled; 0 under
    /// `replay_no_stall`).
    pub ios: Vec<(NextIo, u64)>,
}

impl ReplayPlan {
    /// Bytes and the largest I/O per direction (read, write, trim).
    pub fn totals(&self) -> ([u64; 3], [u64; 3]) {
        let (mut bytes, mut max) = ([0u64; 3], [0u64; 3]);
        for (io, _) in &self.ios {
            let d = io.ddir() as usize;
            if d < 3 {
                bytes[d] += io.len() as u64;
                max[d] = max[d].max(io.len() as u64);
            }
        }
        (bytes, max)
    }
}

/// Reads `read_iolog` (merging blktrace files into `merge_blktrace_file` first, when asked) and
/// plans its replay for job `spec`.
pub fn load(spec: &JobSpec, r: &ReplaySpec) -> Result<ReplayPlan> {
    let job = &spec.name;
    let read = |p: &str| std::fs::read(p).with_context(|| format!("job '{job}': cannot read read_iolog file '{p}'"));
    let (source, data) = match &r.merge_file {
        Some(out) => {
            let inputs = r.paths.iter().map(|p| read(p)).collect::<Result<Vec<_>>>()?;
            for (p, d) in r.paths.iter().zip(&inputs) {
                if !iolog::is_blktrace(d) {
                    bail!("job '{job}': merge_blktrace_file merges blktrace files, and '{p}' is not one");
                }
            }
            let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
            let merged = iolog::merge_blktrace(&refs, &r.merge_scalars, &r.merge_iters)
                .map_err(|(i, e)| anyhow::anyhow!("job '{job}': read_iolog file '{}': {e}", r.paths[i]))?;
            std::fs::write(out, &merged)
                .with_context(|| format!("job '{job}': cannot write merge_blktrace_file '{out}'"))?;
            (out.clone(), merged)
        }
        None => {
            let p = r.paths.first().context("read_iolog names no file")?;
            (p.clone(), read(p)?)
        }
    };
    let trace = iolog::parse(&data).map_err(|e| anyhow::anyhow!("job '{job}': read_iolog file '{source}', {e}"))?;
    // Where each of the trace's files goes: the redirect, the named file, or for a blktrace
    // device the /dev node of its major:minor.
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut target = Vec::with_capacity(trace.files.len());
    for f in &trace.files {
        let path = match (&r.redirect, trace.format) {
            (Some(p), _) => PathBuf::from(p),
            (None, Format::Blktrace) => device_node(&f.name).with_context(|| {
                format!("job '{job}': read_iolog file '{source}' traced device {} , which this machine does not have (set replay_redirect)", f.name)
            })?,
            (None, _) => PathBuf::from(&f.name),
        };
        if !path.exists() {
            // fio creates a missing file empty and its reads then fail; refusing is clearer.
            bail!(
                "job '{job}': read_iolog file '{source}' line {}: '{}' does not exist (fiox replays only onto existing files; see replay_redirect)",
                f.line,
                path.display()
            );
        }
        let i = match paths.iter().position(|p| p == &path) {
            Some(i) => i,
            None => {
                paths.push(path);
                paths.len() - 1
            }
        };
        target.push(i);
    }
    let blk = trace.format == Format::Blktrace;
    let mut ios = Vec::with_capacity(trace.entries.len());
    // A skipped entry's wait is kept, so that the next I/O still starts at its time.
    let mut carried = 0u64;
    for e in &trace.entries {
        let ddir = match e.action {
            Action::Read => Ddir::Read,
            Action::Write => Ddir::Write,
            Action::Trim => Ddir::Trim,
            Action::Sync => Ddir::Sync,
            Action::DataSync => Ddir::DataSync,
        };
        let wait = carried.saturating_add(e.delay_ns);
        // replay_skip leaves out kinds of blktrace I/O only (fio 3.33 ignores it for iologs).
        let kind = match ddir {
            Ddir::Read => 0,
            Ddir::Write => 1,
            Ddir::Trim => 2,
            _ => 3,
        };
        if blk && r.skip[kind] {
            carried = wait;
            continue;
        }
        carried = 0;
        let mut offset = e.offset / r.scale;
        if r.align > 0 {
            offset &= !(r.align - 1);
        }
        let delay = if r.no_stall { 0 } else { wait.saturating_mul(100) / r.time_scale };
        let io = NextIo::new(ddir, target[e.file], offset, e.len as u32);
        ios.push((io, delay));
    }
    Ok(ReplayPlan { paths, ios })
}

/// The block device node of `major:minor`, from sysfs.
fn device_node(majmin: &str) -> Option<PathBuf> {
    let uevent = std::fs::read_to_string(format!("/sys/dev/block/{majmin}/uevent")).ok()?;
    let name = uevent.lines().find_map(|l| l.strip_prefix("DEVNAME="))?;
    Some(PathBuf::from("/dev").join(name))
}
