//! The base job of a sweep: its command line and job files as parsed, and each point made from
//! it by appending the axis values to every job section (so they override the job's own
//! values, as the seed's `sed` edits did), checked without any I/O.

use std::path::Path;

use anyhow::{bail, Context, Result};
use fiox_options::argv::{self, CommandLine, Format};
use fiox_options::jobfile::{self, JobFile, RawOpt, Section};
use fiox_options::{Ctx, Origin};
use serde_json::{json, Value};

use crate::lab::axis::Axis;
use crate::lab::points::describe;

/// The base job: its command line and job files as parsed, ready to take axis values.
pub(crate) struct Base {
    /// The arguments as given, which (with the job files' content) identify the base job.
    pub args: Vec<String>,
    cl: CommandLine,
    files: Vec<JobFile>,
    texts: Vec<String>,
    /// Global switches handed on to every point's run.
    pub passthrough: Vec<String>,
    readonly: bool,
    max_jobs: Option<u64>,
    ctx: Ctx,
}

/// A point, checked and ready to run: its arguments and the job files to write first.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub args: Vec<String>,
    pub files: Vec<(String, String)>,
}

impl Base {
    pub fn new(args: &[String], ctx: &Ctx) -> Result<Base> {
        let cl = argv::parse(args.to_vec())?;
        let g = &cl.globals;
        let refuse = |what: &str| -> Result<()> {
            bail!("sweep: {what} cannot be used with sweep (each point writes a JSON+ report into the --out folder)")
        };
        if g.output.is_some() {
            refuse("--output (use --out DIR for the results folder)")?;
        }
        if g.formats != [Format::Normal] {
            refuse("--output-format/--minimal")?;
        }
        if g.status_interval.is_some() || g.interval_delta || g.json_lines || g.terse_header {
            refuse("--status-interval, --status-interval-delta, --json-lines or --terse-header")?;
        }
        if g.parse_only || g.showcmd || g.cmdhelp.is_some() || g.enghelp.is_some() || g.version || g.help {
            refuse("--parse-only, --showcmd, --cmdhelp, --enghelp, --version or --help")?;
        }
        let mut passthrough: Vec<String> = g.sections.iter().map(|s| format!("--section={s}")).collect();
        if g.readonly {
            passthrough.push("--readonly".into());
        }
        if let Some(m) = g.max_jobs {
            passthrough.push(format!("--max-jobs={m}"));
        }
        if g.warnings_fatal {
            passthrough.push("--warnings-fatal".into());
        }
        let env = |v: &str| std::env::var(v).ok();
        let mut files = Vec::new();
        let mut texts = Vec::new();
        for p in &cl.job_files {
            if p == Path::new("-") {
                bail!("sweep: a job file on standard input cannot be swept; give it as a file");
            }
            files.push(jobfile::read(p, &env)?);
            texts.push(std::fs::read_to_string(p).unwrap_or_default());
        }
        if cl.job_files.is_empty() && !cl.sections.iter().any(|s| !s.is_global()) {
            bail!("sweep: no base job: give a job file, or job options ending with --name=JOB");
        }
        Ok(Base {
            args: args.to_vec(),
            readonly: g.readonly,
            max_jobs: g.max_jobs,
            cl,
            files,
            texts,
            passthrough,
            ctx: ctx.clone(),
        })
    }

    /// What identifies the job files' content, so a resumed sweep can tell they changed.
    pub fn fingerprint(&self) -> Value {
        let fnv = |s: &str| s.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
        self.cl
            .job_files
            .iter()
            .zip(&self.texts)
            .map(|(p, t)| json!({"path": p.display().to_string(), "fnv64": format!("{:016x}", fnv(t))}))
            .collect()
    }

    /// The base with each axis's value appended to every job section, checked (options, values,
    /// cross-option rules, files) without doing any I/O.
    pub fn prepare(&self, axes: &[Axis], values: &[String]) -> Result<Prepared> {
        let add = |s: &mut Section| {
            if s.is_global() {
                return;
            }
            for (a, v) in axes.iter().zip(values) {
                s.options.push(RawOpt {
                    def: a.def,
                    typed: a.typed.clone(),
                    value: Some(v.clone()),
                    origin: Origin::CommandLine,
                    global: false,
                });
            }
        };
        let mut cl = self.cl.clone();
        cl.sections.iter_mut().for_each(add);
        let mut files = self.files.clone();
        for f in &mut files {
            f.sections.iter_mut().for_each(add);
        }
        let point = || describe(axes, values);
        let set = fiox_options::assemble(&cl, &files, &self.ctx).with_context(|| format!("sweep point {}", point()))?;
        crate::plan::build(set, self.readonly, self.max_jobs).with_context(|| format!("sweep point {}", point()))?;
        let mut args = self.passthrough.clone();
        for s in &cl.sections {
            for o in &s.options {
                args.push(match &o.value {
                    Some(v) => format!("--{}={v}", o.typed),
                    None => format!("--{}", o.typed),
                });
            }
        }
        let mut texts = Vec::new();
        for f in &files {
            let text = render_job_file(f);
            // The file must read back as exactly these sections (a value holding '#', ';' or
            // '${' would not).
            let back = jobfile::parse_text(&text, &f.path, &|_| None).with_context(|| {
                format!("sweep point {}: cannot write '{}' back as a job file", point(), f.path.display())
            })?;
            let same = back.sections.len() == f.sections.len()
                && back.sections.iter().zip(&f.sections).all(|(a, b)| {
                    a.name == b.name
                        && a.options.len() == b.options.len()
                        && a.options.iter().zip(&b.options).all(|(x, y)| x.typed == y.typed && x.value == y.value)
                });
            if !same {
                bail!(
                    "sweep point {}: '{}' holds a value fiox cannot write back into a job file (a '#', ';' or '${{' in a value)",
                    point(),
                    f.path.display()
                );
            }
            texts.push(text);
        }
        Ok(Prepared { args, files: texts.into_iter().enumerate().map(|(i, t)| (format!("{i}"), t)).collect() })
    }
}

/// A parsed job file as text: sections and options as typed, environment variables and
/// includes already expanded.
fn render_job_file(f: &JobFile) -> String {
    let mut s = format!("; written by fiox sweep from {}\n", f.path.display());
    for sec in &f.sections {
        s.push_str(&format!("[{}]\n", sec.name));
        for o in &sec.options {
            match &o.value {
                Some(v) => s.push_str(&format!("{}={v}\n", o.typed)),
                None => s.push_str(&format!("{}\n", o.typed)),
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::axis;

    fn ctx() -> Ctx {
        Ctx { kb_base: 1024, pagesize: 4096, ncpus: 2, mb_memory: 1024 }
    }

    #[test]
    fn axis_values_override_job_sections() {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("j.fio");
        std::fs::write(&job, "[global]\nioengine=null\nsize=1m\nbs=4k\n[a]\nbs=8k # own value\n[b]\nrw=randread\n")
            .unwrap();
        let base = Base::new(&[job.display().to_string()], &ctx()).unwrap();
        let bs = axis::parse("bs=64k,1m", &ctx()).unwrap();
        let p = base.prepare(std::slice::from_ref(&bs), &["64k".to_string()]).unwrap();
        let text = &p.files[0].1;
        assert!(text.contains("[a]\nbs=8k\nbs=64k\n[b]\nrw=randread\nbs=64k\n"), "{text}");
        assert!(!text.contains("[global]\nioengine=null\nsize=1m\nbs=4k\nbs=64k"), "{text}");
        // A bad combination is refused before anything runs.
        let nj = axis::parse("iodepth=2", &ctx()).unwrap();
        let base = Base::new(&["--name=j".into(), "--ioengine=null".into()], &ctx()).unwrap();
        let e = base.prepare(&[nj], &["2".into()]).unwrap_err();
        assert!(format!("{e:#}").contains("sweep point iodepth=2"), "{e:#}");
        assert!(format!("{e:#}").contains("no target size"), "{e:#}");
    }
}
