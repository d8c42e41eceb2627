//! From sections to jobs: applies `[global]` sections to the jobs after them, filters by
//! `--section`, resolves each job and numbers the reporting groups (`stonewall`, `new_group`).

use crate::argv::CommandLine;
use crate::error::{Error, Result};
use crate::jobfile::{JobFile, RawOpt, Section};
use crate::spec::JobSpec;
use crate::value::Ctx;

/// One job (before `numjobs` cloning), ready for the runner.
#[derive(Debug, Clone)]
pub struct Job {
    pub spec: JobSpec,
    pub groupid: u32,
    /// The job section's own options, as typed, for the JSON `job options` echo.
    pub own: Vec<RawOpt>,
}

/// Everything the user asked to run.
#[derive(Debug, Clone)]
pub struct JobSet {
    pub jobs: Vec<Job>,
    /// Options of the global sections, as typed, for the JSON `global options` echo.
    pub global_options: Vec<RawOpt>,
}

/// Builds the jobs: command-line sections first, then each job file in order. Options before the
/// first `--name` (and `--name=global` sections) are defaults for every job, job files included;
/// a file's `[global]` sections apply to the jobs after them in that file.
pub fn assemble(cl: &CommandLine, files: &[JobFile], ctx: &Ctx) -> Result<JobSet> {
    let mut global_options = Vec::new();
    let mut jobs = Vec::new();
    let mut cli_chain: Vec<RawOpt> = Vec::new();
    add_sections(&cl.sections, &mut cli_chain, &mut global_options, &mut jobs, &cl.globals.sections);
    for f in files {
        if !f.sections.iter().any(|s| !s.is_global()) {
            return Err(Error::Usage(format!(
                "job file '{}' defines no jobs (only [global] sections or nothing)",
                f.path.display()
            )));
        }
        let mut chain = cli_chain.clone();
        add_sections(&f.sections, &mut chain, &mut global_options, &mut jobs, &cl.globals.sections);
    }
    if jobs.is_empty() {
        return Err(Error::Usage(if cl.globals.sections.is_empty() {
            "no jobs defined: give a job file, or job options ending with --name=JOB".into()
        } else {
            format!("no job matches --section={}", cl.globals.sections.join(","))
        }));
    }
    let mut out = Vec::with_capacity(jobs.len());
    let mut groupid = 0u32;
    for (i, (section, options)) in jobs.into_iter().enumerate() {
        let spec = JobSpec::resolve(&section.name, &options, ctx)?;
        if i > 0 && (spec.stonewall || spec.new_group) {
            groupid += 1;
        }
        out.push(Job { spec, groupid, own: section.options.clone() });
    }
    Ok(JobSet { jobs: out, global_options })
}

fn add_sections<'a>(
    sections: &'a [Section],
    chain: &mut Vec<RawOpt>,
    globals: &mut Vec<RawOpt>,
    jobs: &mut Vec<(&'a Section, Vec<RawOpt>)>,
    only: &[String],
) {
    for s in sections {
        if s.is_global() {
            chain.extend(s.options.iter().cloned().map(|o| RawOpt { global: true, ..o }));
            globals.extend(s.options.iter().cloned());
        } else if only.is_empty() || only.contains(&s.name) {
            let mut opts = chain.clone();
            opts.extend(s.options.iter().cloned());
            jobs.push((s, opts));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{argv, jobfile};
    use std::path::Path;

    fn set(text: &str, args: &[&str]) -> Result<JobSet> {
        let f = jobfile::parse_text(text, Path::new("t.fio"), &|_| None)?;
        let cl = argv::parse(args.iter().copied())?;
        assemble(&cl, &[f], &Ctx::default())
    }

    #[test]
    fn globals_apply_to_later_jobs_only() {
        let s = set("[global]\nbs=8k\nsize=1m\n[a]\n[global]\nbs=16k\n[b]\nrw=write\n", &[]).unwrap();
        assert_eq!(s.jobs[0].spec.bs, [8192; 3]);
        assert_eq!(s.jobs[1].spec.bs, [16384; 3]);
        assert_eq!(s.jobs[1].spec.rw.name(), "write");
    }

    #[test]
    fn groups_from_stonewall_and_new_group() {
        let s = set("[global]\nsize=1m\n[a]\n[b]\nstonewall\n[c]\n[d]\nnew_group\n", &[]).unwrap();
        let g: Vec<u32> = s.jobs.iter().map(|j| j.groupid).collect();
        assert_eq!(g, [0, 1, 1, 2]);
    }

    #[test]
    fn section_filter_and_cli_defaults() {
        let s = set("[a]\nsize=1m\n[b]\nsize=2m\n", &["--section=b", "--bs=8k"]).unwrap();
        assert_eq!(s.jobs.len(), 1);
        assert_eq!(s.jobs[0].spec.name, "b");
        assert_eq!(s.jobs[0].spec.bs, [8192; 3]);
    }

    #[test]
    fn bad_input_is_refused() {
        let e = set("[a]\nsize=1m\nbs=k4\n", &[]).unwrap_err().to_string();
        assert!(e.contains("bad value 'k4' for option 'bs' (t.fio, line 3)"), "{e}");
        let e = set("[a]\nrw=read\n", &[]).unwrap_err().to_string();
        assert!(e.contains("no target size"), "{e}");
        let e = set("[global]\nbs=4k\n", &[]).unwrap_err().to_string();
        assert!(e.contains("defines no jobs"), "{e}");
        let e = set("[a]\nsize=1m\nfixedbufs=1\n", &[]).unwrap_err().to_string();
        assert!(e.contains("belongs to ioengine io_uring"), "{e}");
        // From [global], another engine's option is left alone in a job of a different engine
        // (fio's examples/e4defrag2.fio).
        assert!(set("[global]\nioengine=io_uring\nfixedbufs=1\n[a]\nioengine=libaio\nsize=1m\n", &[]).is_ok());
        // Only the command line selects a profile, as in fio; in a job file it does nothing.
        assert_eq!(set("[a]\nsize=1m\nprofile=act\n", &[]).unwrap().jobs.len(), 1);
        assert!(set("[a]\nsize=1m\nverify=0\n", &[]).is_ok());
        let e = set("[a]\nsize=1m\nverify=pattern\n", &[]).unwrap_err().to_string();
        assert!(e.contains("verify=pattern needs verify_pattern"), "{e}");
    }

    #[test]
    fn random_distributions() {
        use crate::spec::RandomDist;
        let d = |v: &str| {
            set(&format!("[a]\nsize=1m\nrandom_distribution={v}\n"), &[])
                .map(|s| s.jobs[0].spec.random_distribution.clone())
        };
        assert_eq!(d("zipf:1.2").unwrap(), RandomDist::Zipf(1.2, None));
        assert_eq!(d("zipf").unwrap(), RandomDist::Zipf(1.1, None));
        assert_eq!(d("pareto:0.3").unwrap(), RandomDist::Pareto(0.3, None));
        assert_eq!(d("normal:10").unwrap(), RandomDist::Normal(10.0, None));
        assert_eq!(
            d("zoned:60/10:30/20:8/30:2/40").unwrap(),
            RandomDist::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (8.0, 30.0), (2.0, 40.0)])
        );
        assert_eq!(
            d("zoned_abs:60/20m:40/100m").unwrap(),
            RandomDist::ZonedAbs(vec![(60.0, 20 << 20), (40.0, 100 << 20)])
        );
        assert!(d("zipf:1").unwrap_err().to_string().contains("zipf theta 1 must not be 1"));
        assert!(d("zoned:60/10:30/20").unwrap_err().to_string().contains("add up to 90%"));
        // fio 3.33's examples/rand-zones.fio: an empty range is the rest of the region; ranges
        // may cover less than all of it, never more.
        assert_eq!(
            d("zoned:50/5:30/15:20/").unwrap(),
            RandomDist::Zoned(vec![(50.0, 5.0), (30.0, 15.0), (20.0, 80.0)])
        );
        assert_eq!(d("zoned:50/5:50/10").unwrap(), RandomDist::Zoned(vec![(50.0, 5.0), (50.0, 10.0)]));
        assert!(d("zoned:50/60:50/60").unwrap_err().to_string().contains("more than 100%"));
        // The center (fio 3.33 accepts 0 to 1, both included).
        assert_eq!(d("zipf:1.2:0.25").unwrap(), RandomDist::Zipf(1.2, Some(0.25)));
        assert_eq!(d("pareto:0.5:1").unwrap(), RandomDist::Pareto(0.5, Some(1.0)));
        assert_eq!(d("normal").unwrap(), RandomDist::Normal(0.0, None));
        assert!(d("normal:5:1.5").unwrap_err().to_string().contains("center 1.5 must be between 0 and 1"));
        assert!(d("normal:100").unwrap_err().to_string().contains("below 100"));
        assert!(d("pareto:1").unwrap_err().to_string().contains("between 0 and 1"));
        assert!(d("zipf:abc").unwrap_err().to_string().contains("'abc' is not a number"));
        assert!(d("bogus").unwrap_err().to_string().contains("'bogus' is not a distribution"));
    }

    #[test]
    fn sync_open_flags() {
        let s = set("[a]\nsize=1m\nsync=dsync\n[b]\nsize=1m\nsync=1\n[c]\nsize=1m\n", &[]).unwrap();
        let got: Vec<Option<bool>> = s.jobs.iter().map(|j| j.spec.open_sync).collect();
        assert_eq!(got, [Some(false), Some(true), None]);
    }

    #[test]
    fn kb_base_changes_sizes() {
        let s = set("[a]\nkb_base=1000\nsize=1m\nbs=4k\n", &[]).unwrap();
        assert_eq!(s.jobs[0].spec.bs, [4000; 3]);
        assert_eq!(s.jobs[0].spec.size, Some(crate::spec::SizeSpec::Bytes(1_000_000)));
    }
}
