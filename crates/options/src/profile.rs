//! fio's built-in profiles (`--profile=tiobench`, `--profile=act`): named workloads that add jobs
//! to the run. A profile is turned into ordinary sections here, so everything after this point
//! (resolving, planning, running, reporting) treats its jobs like any others.
//!
//! The jobs are the ones fio 3.33 builds (observed: `docs/fio-observed/profiles.md`): same names,
//! groups, options and option echo. Where fio 3.33 ignores a profile option or crashes on it, fiox
//! honours it; README's differences list says where.

use crate::argv::CommandLine;
use crate::error::{Error, Origin, Result};
use crate::jobfile::{raw_opt, JobFile, RawOpt, Section};
use crate::value::{self, Ctx};

/// A profile fiox can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// tiotest/tiobench: sequential and random writes then reads of four files, one group each.
    Tiobench,
    /// The Aerospike Certification Tool's load: paced small random reads under a paced stream of
    /// large writes, judged by the share of slow reads per hour.
    Act,
}

/// fio's ACT pass criteria: in every slice, at most this share (per mille) of reads may take
/// longer than this many microseconds.
pub const ACT_LIMITS: [(u64, u64); 3] = [(1_000, 50), (8_000, 10), (64_000, 1)];
/// One ACT slice (fio checks the criteria once an hour).
pub const ACT_SLICE_SECS: u64 = 3600;

/// The profile a command line asks for, if any. Only the command line selects one, as in fio:
/// `profile=` in a job file is accepted and does nothing there (fio 3.33 ignores it too).
pub fn requested(cl: &CommandLine) -> Result<Option<Profile>> {
    let Some(v) = cl.globals.profile.as_deref() else { return Ok(None) };
    Ok(Some(match v {
        "tiobench" => Profile::Tiobench,
        "act" => Profile::Act,
        _ => {
            return Err(Error::BadValue {
                option: "profile".into(),
                value: v.into(),
                origin: Origin::CommandLine,
                reason: "no such profile".into(),
                forms: "tiobench or act".into(),
            })
        }
    }))
}

/// The sections a profile adds, as a job file run after the command line's jobs (fio lists a
/// profile's jobs after the ones given with `--name`). The profile's own options are read from
/// the command line's sections, where fio takes them.
pub fn sections(profile: Profile, cl: &CommandLine, ctx: &Ctx) -> Result<JobFile> {
    let given = |name: &str| {
        cl.sections
            .iter()
            .flat_map(|s| &s.options)
            .rev()
            .find(|o| o.def.name == name)
            .map(|o| o.value.clone().unwrap_or_else(|| "1".into()))
    };
    let (name, sections) = match profile {
        Profile::Tiobench => ("tiobench", tiobench(&given, ctx)?),
        Profile::Act => ("act", act(&given)?),
    };
    Ok(JobFile { path: format!("<profile {name}>").into(), sections })
}

type Given<'a> = &'a dyn Fn(&str) -> Option<String>;

fn tiobench(given: Given<'_>, ctx: &Ctx) -> Result<Vec<Section>> {
    // fio 3.33 sizes the run at 4 KiB per MiB of memory (its `size` default, a count of MiB,
    // multiplied by 1024); it ignores every tiobench option given on the command line, which
    // fiox honours: `size` in MiB (a value with a unit is taken as written), `block`, `numruns`,
    // `dir`, `threads`.
    let size = match given("size") {
        Some(v) if v.bytes().all(|b| b.is_ascii_digit()) => number("size", &v)?.saturating_mul(1 << 20),
        Some(v) => value::parse_size(&v, ctx).map_err(|e| bad("size", &v, e))?,
        None => ctx.mb_memory.saturating_mul(4 * 1024),
    };
    let bs = match given("block") {
        Some(v) => value::parse_size(&v, ctx).map_err(|e| bad("block", &v, e))?,
        None => 4096,
    };
    let loops = given("numruns").map(|v| number("numruns", &v)).transpose()?.unwrap_or(1).max(1);
    let dir = given("dir").unwrap_or_else(|| "./".into());
    let threads = given("threads").map(|v| number("threads", &v)).transpose()?.unwrap_or(1).max(1);
    let global = [
        ("thread", None),
        ("size", Some(size.to_string())),
        ("buffered", Some("0".into())),
        ("bs", Some(bs.to_string())),
        ("loops", Some(loops.to_string())),
        ("directory", Some(dir)),
        ("numjobs", Some(threads.to_string())),
        ("runtime", Some("600".into())),
        ("overwrite", Some("1".into())),
        ("filename", Some(".fio.tio.1:.fio.tio.2:.fio.tio.3:.fio.tio.4".into())),
        ("ioengine", Some("sync".into())),
    ];
    let mut out = vec![section("global", &global)?];
    for (name, rw, fsync) in [
        ("seqwrite", "write", true),
        ("randwrite", "randwrite", true),
        ("seqread", "read", false),
        ("randread", "randread", false),
    ] {
        // Each phase is its own group, one after the other. fio echoes a profile job's `name`
        // like a command-line job's; bare flags (`stonewall`) are not echoed.
        let mut opts = vec![("name", Some(name.to_string())), ("stonewall", None), ("rw", Some(rw.to_string()))];
        if fsync {
            opts.push(("end_fsync", Some("1".into())));
        }
        out.push(section(name, &opts)?);
    }
    Ok(out)
}

fn act(given: Given<'_>) -> Result<Vec<Section>> {
    let devices = given("device-names").unwrap_or_default();
    let devices: Vec<&str> = devices.split(':').filter(|d| !d.is_empty()).collect();
    if devices.is_empty() {
        return Err(Error::Usage("--profile=act: set the I/O target(s) with --device-names=DEV[:DEV...]".into()));
    }
    let load = given("load").map(|v| number("load", &v)).transpose()?.unwrap_or(1);
    let threads = given("threads-per-queue").map(|v| number("threads-per-queue", &v)).transpose()?.unwrap_or(8);
    let blocks = given("read-req-num-512-blocks").map(|v| number("read-req-num-512-blocks", &v)).transpose()?;
    let read_bs = blocks.unwrap_or(3).saturating_mul(512);
    // fio's help says KiB, but fio 3.33 uses the number as bytes (its default 131072 is ACT's
    // 128 KiB block); a value that is not a whole number of sectors makes fio 3.33 crash.
    let raw_write = given("large-block-op-kbytes").unwrap_or_else(|| "131072".into());
    let write_bs = number("large-block-op-kbytes", &raw_write)?;
    for (opt, v) in [("load", load), ("threads-per-queue", threads), ("read-req-num-512-blocks", read_bs)] {
        if v == 0 {
            return Err(bad(opt, "0", "must be at least 1".into()));
        }
    }
    if write_bs == 0 || write_bs % 512 != 0 {
        return Err(bad(
            "large-block-op-kbytes",
            &raw_write,
            "the write size is taken in bytes, as fio 3.33 does (default 131072 = 128 KiB), and must be a multiple of 512".into(),
        ));
    }
    let duration = match given("test-duration") {
        Some(v) => {
            value::parse_time(&v, crate::table::TimeUnit::Sec).map_err(|e| bad("test-duration", &v, e))? / 1_000_000
        }
        None => 24 * 3600,
    }
    .max(1);
    let prep = given("prep").is_some_and(|v| v != "0");
    // ACT's 1x load is 2000 reads and 1000 "write units" (of the read size) per second and
    // device; the writes go in large blocks, so their rate is rounded up to whole blocks.
    let read_iops = load.saturating_mul(2000).div_ceil(threads);
    let write_iops = load.saturating_mul(1000).saturating_mul(read_bs).div_ceil(write_bs).max(1);
    let mut out = Vec::new();
    if prep {
        // ACT's prep phase fills each device once before the test, so reads hit written data.
        let global = [("direct", Some("1".to_string())), ("ioengine", Some("sync".into())), ("thread", None)];
        out.push(section("global", &global)?);
        for d in &devices {
            let name = format!("act-prep-{d}");
            let opts = [
                ("name", Some(name.clone())),
                ("filename", Some(d.to_string())),
                ("rw", Some("write".into())),
                ("bs", Some("1m".into())),
            ];
            out.push(section(&name, &opts)?);
        }
    }
    let global = [
        ("direct", Some("1".to_string())),
        ("ioengine", Some("sync".into())),
        ("random_generator", Some("lfsr".into())),
        ("group_reporting", Some("1".into())),
        ("thread", None),
        ("runtime", Some(format!("{duration}s"))),
        ("time_based", Some("1".into())),
    ];
    out.push(section("global", &global)?);
    for (i, d) in devices.iter().enumerate() {
        let read = format!("act-read-{d}");
        let mut opts = vec![("name", Some(read.clone()))];
        if i == 0 && prep {
            opts.push(("stonewall", None));
        }
        opts.extend([
            ("filename", Some(d.to_string())),
            ("rw", Some("randread".into())),
            ("bs", Some(read_bs.to_string())),
            ("rate_iops", Some(read_iops.to_string())),
            ("numjobs", Some(threads.to_string())),
        ]);
        out.push(section(&read, &opts)?);
        let write = format!("act-write-{d}");
        let opts = [
            ("name", Some(write.clone())),
            ("filename", Some(d.to_string())),
            ("rw", Some("randwrite".into())),
            ("rate_iops", Some(write_iops.to_string())),
            ("bs", Some(write_bs.to_string())),
        ];
        out.push(section(&write, &opts)?);
    }
    Ok(out)
}

fn section(name: &str, opts: &[(&str, Option<String>)]) -> Result<Section> {
    let options: Vec<RawOpt> =
        opts.iter().map(|(k, v)| raw_opt(k, v.clone(), Origin::CommandLine)).collect::<Result<_>>()?;
    Ok(Section { name: name.into(), options, origin: Origin::CommandLine })
}

fn number(option: &str, v: &str) -> Result<u64> {
    v.trim().parse().map_err(|_| bad(option, v, "not a whole number".into()))
}

fn bad(option: &str, value: &str, reason: String) -> Error {
    Error::BadValue {
        option: option.into(),
        value: value.into(),
        origin: Origin::CommandLine,
        reason,
        forms: crate::table::lookup(option).map(|d| d.forms()).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{argv, assemble};

    fn run(args: &[&str], mb_memory: u64) -> Result<crate::JobSet> {
        let cl = argv::parse(args.iter().copied())?;
        let ctx = Ctx { mb_memory, ..Ctx::default() };
        let p = requested(&cl)?.expect("a profile");
        let file = sections(p, &cl, &ctx)?;
        assemble(&cl, &[file], &ctx)
    }

    #[test]
    fn tiobench_jobs_as_fio_builds_them() {
        // 24105 MiB of memory: fio 3.33's size on the machine where it was observed.
        let set = run(&["--profile=tiobench"], 24105).unwrap();
        let names: Vec<(&str, u32)> = set.jobs.iter().map(|j| (j.spec.name.as_str(), j.groupid)).collect();
        assert_eq!(names, [("seqwrite", 0), ("randwrite", 1), ("seqread", 2), ("randread", 3)]);
        let size = set.global_options.iter().find(|o| o.def.name == "size").unwrap();
        assert_eq!(size.value.as_deref(), Some("98734080"));
        let set = run(&["--profile=tiobench", "--size=16", "--block=8k", "--threads=2", "--numruns=3"], 24105).unwrap();
        let j = &set.jobs[0].spec;
        assert_eq!(j.numjobs, 2);
        assert_eq!(j.loops, 3);
    }

    #[test]
    fn act_needs_devices_and_sane_sizes() {
        let e = run(&["--profile=act"], 1024).unwrap_err().to_string();
        assert!(e.contains("--device-names"), "{e}");
        let e = run(&["--profile=act", "--device-names=/x", "--large-block-op-kbytes=100"], 1024).unwrap_err();
        assert!(e.to_string().contains("large-block-op-kbytes"), "{e}");
        let e = run(&["--profile=nope", "--name=x"], 1024).unwrap_err().to_string();
        assert!(e.contains("tiobench or act"), "{e}");
        let set = run(&["--profile=act", "--device-names=/a:/b", "--load=2", "--threads-per-queue=2"], 1024).unwrap();
        let names: Vec<&str> = set.jobs.iter().map(|j| j.spec.name.as_str()).collect();
        assert_eq!(names, ["act-read-/a", "act-write-/a", "act-read-/b", "act-write-/b"]);
        assert!(set.jobs.iter().all(|j| j.groupid == 0));
    }
}
