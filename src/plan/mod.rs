//! From resolved jobs to a runnable plan: one [`WorkerPlan`] per job clone (`numjobs`), with its
//! files named, sized and checked. Everything that needs to look at the file system (does the
//! file exist, how big is the device, is it mounted) happens here, before any I/O, so a bad job
//! is refused without having touched anything.

pub mod clock;
pub mod dedupe;
pub mod device;
pub mod io;
pub mod opendir;
pub mod replay;
pub mod sprandom;
pub mod verify;
pub mod zbd;

use std::collections::HashSet;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use fiox_engine::EngineInfo;
use fiox_options::{Ctx, Job, JobSet, JobSpec, SizeSpec};

/// The machine facts `$pagesize`, `$ncpus` and `$mb_memory` stand for.
pub fn machine_ctx() -> Ctx {
    let (pagesize, ncpus, mb_memory) = fiox_engine::sys::machine();
    Ctx { kb_base: 1024, pagesize, ncpus, mb_memory }
}

/// A fast 64-bit mixer (the SplitMix64 finaliser): what everything random in a plan and a run is
/// derived from (file sizes in a range, dedupe members' seeds, the runner's RNG and its random-offset
/// permutation's round function).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One file of one worker.
#[derive(Debug, Clone)]
pub struct FilePlan {
    pub path: PathBuf,
    pub block_device: bool,
    /// Size the file must have; files smaller than this are laid out first. 0 for devices.
    pub layout_size: u64,
    /// Start and length of the I/O region within the file.
    pub region_start: u64,
    pub region_len: u64,
    /// Where the file ends for the job's I/O: the larger of its size before the run and its
    /// region's end (to which it is laid out), a device's capacity. A sequential block that
    /// starts in the region is issued whole when it ends before this, as fio issues it
    /// (`docs/fio-observed/seq-room.md`). The region's end where the engine has no file.
    pub file_end: u64,
}

/// One worker thread: a job clone.
#[derive(Debug, Clone)]
pub struct WorkerPlan {
    pub spec: Arc<JobSpec>,
    pub engine: &'static EngineInfo,
    /// Index of the job (before cloning) in the job list.
    pub job_index: usize,
    pub clone: u32,
    pub groupid: u32,
    pub files: Vec<FilePlan>,
    /// Bytes to transfer per loop, all directions together.
    pub io_bytes: u64,
    /// 1-based position among all job clones of the run (fio's log file numbering).
    pub number: usize,
    /// The clock its latencies are measured with (`clocksource`).
    pub clock: crate::plan::clock::Source,
    /// `read_iolog`: the trace the job replays instead of generating I/O.
    pub replay: Option<Arc<crate::plan::replay::ReplayPlan>>,
    /// The dedupe working set it draws from (`dedupe_mode=working_set`), perhaps shared.
    pub dedupe_set: Option<crate::plan::dedupe::WorkingSet>,
    /// Its files do not exist yet and have no size, but an earlier phase of the run writes
    /// them: they are sized by [`size_deferred`] when its phase starts, as fio does.
    pub deferred: bool,
    /// What `$clientuid` stands for in its file names (see [`build_for_client`]), kept for
    /// naming deferred files when their phase starts.
    pub client_uid: Arc<str>,
}

/// The most jobs (clones included) one run may have: fio 3.33's limit, measured.
pub const MAX_JOBS: u64 = 4088;

/// The engines fio 3.33 flags as synchronous, which print [`SYNC_DEPTH_NOTE`] for an iodepth
/// above 1 (observed one by one; fio's net, cpuio, sg and e4defrag do not).
const FIO_SYNC_ENGINES: &[&str] = &[
    "sync",
    "psync",
    "vsync",
    "pvsync",
    "pvsync2",
    "mmap",
    "splice",
    "falloc",
    "ftruncate",
    "filecreate",
    "filestat",
    "filedelete",
    // fio 3.33 flags libiscsi synchronous, prints the note, and then keeps iodepth commands
    // in flight all the same.
    "libiscsi",
];

/// fio 3.33's note, word for word ("iodepth >= 1" is its wording for a depth above 1).
const SYNC_DEPTH_NOTE: &str =
    "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1";

/// The whole run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub jobs: Vec<Job>,
    pub workers: Vec<WorkerPlan>,
    pub global_options: Vec<fiox_options::jobfile::RawOpt>,
    pub had_global_section: bool,
    /// Lines fio prints before the job header ("fio: opendir added N files").
    pub notes: Vec<String>,
    /// fio's warnings about a job ("verification read phase will never start ..."): with the
    /// notes in normal output, on standard error under the other formats, whose output must
    /// stay parseable.
    pub warnings: Vec<String>,
    /// fiox's own warnings about what the jobs will measure (a read of an rbd image's
    /// never-written ranges), reported with the run manifest's warnings.
    pub fiox_warnings: Vec<String>,
    /// Notes fio's job threads print as they start (the iodepth cap of a synchronous engine):
    /// on standard output after "Starting N processes", and before the report under the other
    /// formats, one per clone, as fio 3.33 prints them.
    pub started_notes: Vec<String>,
    /// What each Ceph worker's cluster looked like before the run (by worker index), for the
    /// run manifest, which looks again after it.
    pub ceph_before: Vec<(usize, Box<fiox_engine::ceph_facts::Facts>)>,
}

/// Plans checked jobs: one worker per clone, with its files named and sized and its I/O size.
/// Refuses what cannot run (a `wait_for` naming no earlier job, more clones than `--max-jobs`,
/// writes under `--readonly`, an engine fiox lacks, files or regions too small) before any I/O.
pub fn build(set: JobSet, readonly: bool, max_jobs: Option<u64>) -> Result<Plan> {
    build_for_client(set, readonly, max_jobs, "")
}

/// The rules fio checks when it sets a job up rather than when it parses it, so that
/// `--parse-only` passes them as fio's does and a run stops on them before any I/O; and the
/// notes fio prints as it sets jobs up (what sprandom chose).
fn init_rules(set: &JobSet) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    for (i, job) in set.jobs.iter().enumerate() {
        let spec = &job.spec;
        if let Some(target) = &spec.wait_for {
            // The job waited for must come earlier, or the two would wait for each other.
            if !set.jobs[..i].iter().any(|j| &j.spec.name == target) {
                bail!(
                    "job '{}': wait_for={target} names no earlier job (jobs can only wait for jobs defined before them)",
                    spec.name
                );
            }
        }
        crate::plan::sprandom::rules(spec)?;
        notes.extend(crate::plan::sprandom::notes(spec));
        // fio 3.42's rule, in its words.
        if spec.log_issue_time && (spec.write_lat_log.is_none() || !spec.log_offset) {
            bail!("job '{}': log_issue_time option requires write_lat_log and log_offset options", spec.name);
        }
    }
    Ok(notes)
}

/// [`build`] for a multi-host server: `client_uid` is what `$clientuid` stands for, the
/// address the coordinator reached the server at (fio's server gives `127.0.0.1` on
/// loopback, seen in both `$clientuid` and the `unique_filename` prefix); a local run has
/// none, as in fio. A parameter, not process state, so that sessions cannot see each other's.
pub fn build_for_client(set: JobSet, readonly: bool, max_jobs: Option<u64>, client_uid: &str) -> Result<Plan> {
    let uid: Arc<str> = Arc::from(client_uid);
    let mut notes = init_rules(&set)?;
    let total: u64 = set.jobs.iter().map(|j| j.spec.numjobs as u64).sum();
    if total > MAX_JOBS {
        // fio 3.33 refuses the same runs ("maximum number of jobs reached"), so no job file
        // written for fio has more; refusing before starting beats starting them slowly.
        bail!("{total} jobs (counting numjobs clones) exceed the maximum of {MAX_JOBS}, fio's limit");
    }
    if let Some(max) = max_jobs.filter(|&m| total > m) {
        bail!("{total} jobs (counting numjobs clones) exceed --max-jobs={max}");
    }
    let mut workers = Vec::new();
    let mut warnings = Vec::new();
    // Files written by the phases before the current one, and by the current one so far: a
    // later phase may read a file an earlier phase creates (fio's surface-scan example).
    let mut written_before: HashSet<PathBuf> = HashSet::new();
    let mut written_now: HashSet<PathBuf> = HashSet::new();
    let mut fiox_warnings = Vec::new();
    let mut started_notes = Vec::new();
    let mut ceph_before = Vec::new();
    for (job_index, job) in set.jobs.iter().enumerate() {
        if job.spec.stonewall {
            written_before.extend(written_now.drain());
        }
        // A replay is read and checked once per job (its clones replay the same trace); the
        // job then does the trace's directions with buffers as large as its largest I/O.
        let replay = match &job.spec.replay {
            Some(r) => Some(Arc::new(crate::plan::replay::load(&job.spec, r)?)),
            None => None,
        };
        let spec = Arc::new(match &replay {
            Some(rp) => replay_spec(&job.spec, rp),
            None => job.spec.clone(),
        });
        // opendir's files, found once per job and shared by its clones. fio counts the job's
        // whole file list so far in its note, filename= entries included.
        let mut listed = spec.filename.as_deref().map(split_filenames).unwrap_or_default();
        for dir in &spec.opendir {
            listed.extend(crate::plan::opendir::files_under(dir).with_context(|| format!("job '{}'", spec.name))?);
            notes.push(format!("fio: opendir added {} files", listed.len()));
        }
        // With no file found at all, fio falls back to the generated names (measured: an
        // empty opendir with size= runs on j.0.0; without size= it fails for want of one).
        let listed = (!spec.opendir.is_empty() && !listed.is_empty()).then_some(listed);
        let engine = fiox_engine::find(spec.ioengine).with_context(|| {
            format!(
                "job '{}': ioengine '{}' is not supported yet by fiox (available: {})",
                spec.name,
                spec.ioengine,
                fiox_engine::names().join(", ")
            )
        })?;
        if let Some(check) = engine.preflight {
            check(&spec).map_err(|e| anyhow::anyhow!("job '{}': {e}", spec.name))?;
        }
        if spec.pre_read && (engine.diskless || engine.metadata) {
            bail!("job '{}': pre_read=1, but ioengine={} reads no file contents", spec.name, spec.ioengine);
        }
        warnings.extend(crate::plan::verify::preflight(&spec)?);
        if readonly && (spec.rw.writes() || spec.rw.trims()) {
            bail!("job '{}': rw={} writes, but --readonly was given", spec.name, spec.rw.name());
        }
        for _ in 0..spec.numjobs {
            if spec.iodepth > 1 && FIO_SYNC_ENGINES.contains(&spec.ioengine) {
                started_notes.push(SYNC_DEPTH_NOTE.to_string());
            }
        }
        for clone in 0..spec.numjobs {
            let local = replay.is_none() && !engine.no_io && engine.remote.is_none() && !engine.diskless;
            let deferred = local && listed.is_none() && later_file(&spec, clone, &uid, &written_before);
            let mut files = match &replay {
                _ if deferred => Vec::new(),
                Some(rp) if !engine.diskless => replay_files(&spec, rp)?,
                _ if engine.no_io => no_io_files(&spec),
                _ if engine.remote.is_some() => {
                    let (files, unwritten, facts) = remote_files(&spec, clone, &uid, engine, listed.as_deref())?;
                    // One warning per job, not per clone.
                    if clone == 0 {
                        fiox_warnings.extend(unwritten);
                    }
                    if let Some(f) = facts {
                        ceph_before.push((workers.len(), f));
                    }
                    files
                }
                _ if engine.diskless => diskless_files(&spec, clone, &uid)?,
                _ => plan_files(&spec, clone, &uid, engine, listed.as_deref())?,
            };
            if local && (spec.rw.writes() || spec.rw.trims()) {
                written_now.extend(files.iter().map(|f| f.path.clone()));
            }
            if spec.zones.mode == fiox_options::ZoneMode::Zbd {
                crate::plan::zbd::plan(&spec, &mut files, engine, &mut started_notes)?;
            }
            // fio 3.42 refuses FDP where it cannot fetch the device's reclaim unit handles.
            if let Some(f) = files.first() {
                if let Some(why) = spec.placement.fdp_refusal(&f.path.display().to_string(), engine.name) {
                    anyhow::bail!("{why}");
                }
            }
            let number = workers.len() + 1;
            let clock = crate::plan::clock::Source::choose(spec.clocksource)
                .map_err(|e| anyhow::anyhow!("job '{}': {e}", spec.name))?;
            let mut w = WorkerPlan {
                number,
                clock,
                spec: spec.clone(),
                engine,
                job_index,
                clone,
                groupid: job.groupid,
                files,
                io_bytes: 0,
                replay: replay.clone(),
                dedupe_set: None,
                deferred,
                client_uid: uid.clone(),
            };
            if !deferred {
                w.io_bytes = io_bytes(&w)?;
            }
            workers.push(w);
        }
    }
    // Working sets are planned across workers: dedupe_global ones share one.
    let sets = crate::plan::dedupe::plan_sets(&workers);
    for (w, set) in workers.iter_mut().zip(sets) {
        w.dedupe_set = set;
    }
    let had_global_section = !set.global_options.is_empty();
    Ok(Plan {
        jobs: set.jobs,
        workers,
        global_options: set.global_options,
        had_global_section,
        notes,
        warnings,
        fiox_warnings,
        started_notes,
        ceph_before,
    })
}

/// The size= that sizes files: fio reads `size=0` as no size at all, so an existing file or
/// device is used whole (checked against fio 3.33 on an 8 MiB file).
fn given_size(spec: &JobSpec) -> Option<SizeSpec> {
    spec.size.filter(|s| *s != SizeSpec::Bytes(0))
}

/// Whether a clone's files are all missing, unsized and written by an earlier phase, so that
/// they can only be sized when its own phase starts.
fn later_file(spec: &JobSpec, clone: u32, uid: &str, written_before: &HashSet<PathBuf>) -> bool {
    if given_size(spec).is_some() || spec.filesize.is_some() || spec.fill_device || written_before.is_empty() {
        return false;
    }
    let dirs: Vec<String> = spec.directory.as_deref().map(split_filenames).unwrap_or_default();
    let names: Vec<String> = match &spec.filename {
        Some(list) => split_filenames(list),
        None => (0..spec.nrfiles).map(|n| generated_name(spec, clone, n, uid)).collect(),
    };
    !names.is_empty()
        && names.iter().enumerate().all(|(i, name)| {
            let path = match dirs.get(i % dirs.len().max(1)) {
                Some(d) if Path::new(name).is_relative() => Path::new(d).join(name),
                _ => PathBuf::from(name),
            };
            !path.exists() && written_before.contains(&path)
        })
}

/// Sizes a deferred worker's files now that the phases before it have run (and created them).
pub fn size_deferred(w: &mut WorkerPlan) -> Result<()> {
    w.files = plan_files(&w.spec, w.clone, &w.client_uid, w.engine, None)?;
    w.io_bytes = io_bytes(w)?;
    w.deferred = false;
    Ok(())
}

/// The io_size the job gives, if any (fio reads `io_size=0` as none).
pub fn explicit_io_size(spec: &JobSpec) -> Option<SizeSpec> {
    spec.io_size.filter(|s| *s != SizeSpec::Bytes(0))
}

/// The bytes a worker moves per loop, after checking its regions hold a block.
fn io_bytes(w: &WorkerPlan) -> Result<u64> {
    let (spec, files, replay) = (&w.spec, &w.files, &w.replay);
    let region: u64 = files.iter().map(|f| f.region_len).sum();
    let min_bs = *spec.bs.iter().min().expect("three directions");
    // A uniform random job with its block map ends its pass when every whole block of every
    // file is done, as fio's does: with several files whose sizes are not whole blocks, the
    // bytes left over in each add up to blocks that do not exist.
    let mapped = spec.rw.is_random()
        && !spec.norandommap
        && matches!(spec.random_distribution, fiox_options::RandomDist::Random);
    let whole: u64 = files.iter().map(|f| f.region_len / min_bs * min_bs).sum();
    // sprandom writes the physical size at most, whatever io_size says (as in fio 3.42); fio
    // refuses its impossible layouts when the job starts, before any I/O.
    if spec.sprandom.on {
        let len = files.first().map_or(0, |f| f.region_len);
        let layout =
            crate::plan::sprandom::Layout::new(spec, len).map_err(|e| anyhow::anyhow!("job '{}': {e}", spec.name))?;
        return Ok(layout.physical_blocks * layout.bs);
    }
    // A replay moves what its trace holds; size and io_size do not apply (as in fio).
    let io_bytes = match (replay, explicit_io_size(spec)) {
        (Some(rp), _) => rp.totals().0.iter().sum(),
        (None, Some(SizeSpec::Bytes(b))) => b,
        (None, Some(SizeSpec::Percent(p))) => (region as f64 * p / 100.0) as u64,
        // With filesize=, size= is only how much to move, up to the regions' bytes (fio 3.33:
        // filesize=12k size=8k nrfiles=3 writes 8 KiB; size=24k writes 24 KiB of the 36).
        (None, None) if mapped && whole > 0 => filesize_capped(spec, whole),
        (None, None) => filesize_capped(spec, region),
    };
    // A size a percentage scaled (`size=20%:4k`): fio checks the size it scaled against the
    // block size, and the scaled size holding no whole block moves nothing (observed).
    if let Some(base) = spec.size_scaled_from.filter(|_| replay.is_none() && explicit_io_size(spec).is_none()) {
        if base < min_bs {
            bail!("job '{}': the size ({base} bytes) is smaller than the block size ({min_bs} bytes)", spec.name);
        }
        if io_bytes < min_bs {
            return Ok(0);
        }
    }
    // An io_size below the block size moves one whole block, as in fio (see `EndRules::fit`);
    // a size below it is refused, as fio refuses it.
    if io_bytes < min_bs && !spec.time_based && replay.is_none() && explicit_io_size(spec).is_none() {
        bail!("job '{}': the I/O size ({io_bytes} bytes) is smaller than the block size ({min_bs} bytes)", spec.name);
    }
    // A region must hold the smallest block only: larger blocks shrink to fit it, as fio's do
    // (size=6k with bsrange=4k-8k moves one 4k block).
    let smallest = crate::plan::io::min_block(spec);
    if let Some(f) = files.iter().find(|f| f.region_len < smallest && replay.is_none()) {
        bail!(
            "job '{}': the I/O region of '{}' ({} bytes) is smaller than the block size",
            spec.name,
            f.path.display(),
            f.region_len
        );
    }
    Ok(io_bytes)
}

/// The bytes a pass over `region` bytes moves: all of them, or fewer when filesize= sizes the
/// files and size= asks for fewer.
fn filesize_capped(spec: &JobSpec, region: u64) -> u64 {
    match (spec.filesize, given_size(spec)) {
        (Some(_), Some(SizeSpec::Bytes(b))) => b.min(region),
        _ => region,
    }
}

/// The no-I/O engines (cpuio, exec) have no file and no size: their jobs end on time. fio
/// gives them a huge internal file; so does fiox, so that no size check refuses them.
fn no_io_files(spec: &JobSpec) -> Vec<FilePlan> {
    vec![FilePlan {
        path: PathBuf::from(format!("{}.0.0", spec.name)),
        block_device: false,
        layout_size: 0,
        region_start: 0,
        region_len: 1 << 60,
        file_end: 1 << 60,
    }]
}

/// A replayed job's options as the runner needs them: the directions the trace does and, per
/// direction, its largest I/O as the block size (which sizes the buffers).
fn replay_spec(spec: &JobSpec, rp: &crate::plan::replay::ReplayPlan) -> JobSpec {
    use fiox_options::RwMode;
    let (bytes, max) = rp.totals();
    let mut s = spec.clone();
    let dirs = (max[0] > 0 || bytes[0] > 0, max[1] > 0, max[2] > 0);
    s.rw = match dirs {
        (true, true, _) => RwMode::ReadWrite,
        (false, true, _) => RwMode::Write,
        (false, false, true) => RwMode::Trim,
        _ => RwMode::Read,
    };
    s.rw_modifier = 0;
    for (d, &m) in max.iter().enumerate() {
        if m > 0 {
            s.bs[d] = m;
        }
        s.bsrange[d] = None;
        s.bssplit[d].clear();
    }
    s
}

/// The files a trace replays onto, whole: they must exist (checked when the trace was read);
/// nothing is laid out.
fn replay_files(spec: &JobSpec, rp: &crate::plan::replay::ReplayPlan) -> Result<Vec<FilePlan>> {
    let mut out = Vec::new();
    for path in &rp.paths {
        let meta = std::fs::metadata(path)
            .with_context(|| format!("job '{}': cannot replay onto '{}'", spec.name, path.display()))?;
        let block_device = meta.file_type().is_block_device();
        let len = if block_device { crate::plan::device::size(path)? } else { meta.len() };
        let writes = rp
            .ios
            .iter()
            .any(|(io, _)| rp.paths.get(io.file()) == Some(path) && !matches!(io.ddir(), fiox_engine::Ddir::Read));
        if block_device && writes && !spec.allow_mounted_write {
            crate::plan::device::check_writable(path, &spec.name)?;
        }
        out.push(FilePlan {
            path: path.clone(),
            block_device,
            layout_size: 0,
            region_start: 0,
            region_len: len,
            file_end: len,
        });
    }
    Ok(out)
}

/// The null engine needs no file, only a region size to generate offsets in. Its files are
/// named as local files are (`filename=`, `directory=`, fio's generated names), which is what
/// fio 3.33 logs for them (`write_iolog`: `d/j.0.0 add`), though nothing is opened.
fn diskless_files(spec: &JobSpec, clone: u32, uid: &str) -> Result<Vec<FilePlan>> {
    let size = match (spec.size, spec.filesize) {
        (Some(SizeSpec::Bytes(b)), _) => b,
        (_, Some((lo, _))) => lo * spec.nrfiles as u64,
        _ => bail!("job '{}': ioengine={} needs size= (there is no file to take it from)", spec.name, spec.ioengine),
    };
    let paths = file_paths(spec, clone, uid, None)?;
    let per = size / paths.len() as u64;
    Ok(paths
        .into_iter()
        .map(|path| FilePlan {
            path,
            block_device: false,
            layout_size: 0,
            region_start: 0,
            region_len: per,
            file_end: per,
        })
        .collect())
}

/// `offset` and `offset_increment` in bytes for a file of `real` bytes (0 for a file not made
/// yet): a percentage is of the file's real size, rounded up to `offset_align` or to the
/// smallest block size, as in fio; a byte count is taken as given.
fn offset_and_increment(spec: &JobSpec, real: u64) -> (u64, u64) {
    let align = if spec.offset_align > 0 { spec.offset_align } else { crate::plan::io::min_block_size(spec) };
    let of_file = |p: f64| ((real as f64 * p / 100.0) as u64).div_ceil(align.max(1)) * align.max(1);
    let bytes = |s: SizeSpec| match s {
        SizeSpec::Bytes(b) => b,
        SizeSpec::Percent(p) => of_file(p),
    };
    (bytes(spec.offset), bytes(spec.offset_increment))
}

/// What the planner learnt about a Ceph job's cluster (for the run manifest).
type CephFacts = Box<fiox_engine::ceph_facts::Facts>;

/// The files of an engine whose files are on a server (rbd: the image; rados: objects). The
/// names are made as for local files (`filename=` with `directory=`, or fio's generated
/// names); the engine says which it uses and how large those that exist are. Regions follow
/// fio's rules (`offset`, `offset_increment`, `size` shared among the files): on an image the
/// region is `size` bytes from the offset, and one past the image's end is refused (fio would
/// lay out a local file named after it); an object is `size / nrfiles` bytes and the region
/// runs from the offset to its end (a file on an NFS export: `size / nrfiles` from the offset).
fn remote_files(
    spec: &JobSpec,
    clone: u32,
    uid: &str,
    engine: &EngineInfo,
    listed: Option<&[String]>,
) -> Result<(Vec<FilePlan>, Vec<String>, Option<CephFacts>)> {
    let remote = engine.remote.expect("a remote engine");
    let dirs: Vec<String> = spec.directory.as_deref().map(split_filenames).unwrap_or_default();
    let names: Vec<String> = match (listed, &spec.filename) {
        (Some(listed), _) => listed.to_vec(),
        (None, Some(list)) => split_filenames(list),
        (None, None) => (0..spec.nrfiles).map(|n| generated_name(spec, clone, n, uid)).collect(),
    };
    let names: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| match dirs.get(i % dirs.len().max(1)) {
            Some(d) if !n.starts_with('/') => format!("{}/{n}", d.trim_end_matches('/')),
            _ => n.clone(),
        })
        .collect();
    let files = remote(spec, clone, &names).map_err(|e| anyhow::anyhow!("job '{}': {e}", spec.name))?;
    let mut unwritten = Vec::new();
    let nfiles = files.len().max(1) as u64;
    let mut out = Vec::new();
    let mut facts = None;
    for mut f in files {
        facts = facts.or(f.facts.take());
        let real = f.size.unwrap_or(0);
        let (offset, inc) = offset_and_increment(spec, real);
        let region_start = offset + inc * clone as u64;
        let given = match (spec.filesize, given_size(spec)) {
            (Some((lo, _)), _) => Some(lo),
            (None, Some(SizeSpec::Bytes(b))) => Some(b / nfiles),
            (None, Some(SizeSpec::Percent(p))) => Some((real as f64 * p / 100.0) as u64),
            (None, None) => None,
        };
        let region_len = match (f.size, given) {
            (Some(size), _) if region_start >= size => bail!(
                "job '{}': offset {region_start} leaves no room in {} '{}' ({size} bytes)",
                spec.name,
                spec.ioengine,
                f.name
            ),
            // fio's nbd job does nothing there and succeeds; fiox says why instead.
            (Some(size), Some(len)) if region_start + len > size && spec.ioengine == "nbd" => bail!(
                "job '{}': size {len} from offset {region_start} exceeds the nbd export ({size} bytes)",
                spec.name
            ),
            // fio's libiscsi job and fio 3.42's libblkio job stop at the device's end, as on a block device.
            (Some(size), Some(len)) if region_start + len > size && matches!(spec.ioengine, "libiscsi" | "libblkio") => size - region_start,
            (Some(size), Some(len)) if region_start + len > size => bail!(
                "job '{}': size {len} from offset {region_start} exceeds the {} image ({size} bytes); fiox does not create a local file instead (fio would)",
                spec.name,
                spec.ioengine
            ),
            (Some(_), Some(len)) => len,
            (Some(size), None) => size - region_start,
            // A file on an NFS export is a file: its region is `size / nrfiles` bytes from the
            // offset, and it grows to hold them, as fio's nfs engine writes it.
            (None, Some(len)) if spec.ioengine == "nfs" => len,
            // An object is `size / nrfiles` long and the region runs from the offset to its
            // end, as fio sizes a diskless engine's files.
            (None, Some(len)) if region_start >= len => bail!(
                "job '{}': offset {region_start} leaves no room in object '{}' ({len} bytes: size / nrfiles)",
                spec.name,
                f.name
            ),
            (None, Some(len)) => len - region_start,
            (None, None) => bail!("job '{}': ioengine={} needs size= (the objects' total size)", spec.name, spec.ioengine),
        };
        if region_len == 0 {
            bail!("job '{}': the I/O region of '{}' is empty", spec.name, f.name);
        }
        // A RADOS object cannot grow past the OSDs' osd_max_object_size (128 MiB unless the
        // cluster raised it): writes beyond fail with EFBIG, which fio 3.33 counts as done.
        const OSD_MAX_OBJECT_SIZE: u64 = 128 << 20;
        if spec.ioengine == "rados" && spec.rw.writes() && region_start + region_len > OSD_MAX_OBJECT_SIZE {
            unwritten.push(format!(
                "job '{}': object '{}' would reach {} MiB (size / nrfiles); OSDs refuse writes past osd_max_object_size (128 MiB by default) with EFBIG: raise nrfiles",
                spec.name,
                f.name,
                (region_start + region_len) >> 20
            ));
        }
        if let Some(written) = &f.written {
            let end = region_start + region_len;
            let covered: u64 = written.iter().map(|&(o, l)| (o + l).min(end).saturating_sub(o.max(region_start))).sum();
            let share = 1.0 - covered as f64 / region_len as f64;
            if share > 0.0 {
                unwritten.push(format!(
                    "job '{}': {:.0}% of the read range of {} '{}' was never written: reads there return zeros without disk I/O (write it first)",
                    spec.name,
                    (share * 100.0).ceil(),
                    spec.ioengine,
                    spec.engine.ceph.rbdname.as_deref().unwrap_or(&f.name)
                ));
            }
        }
        out.push(FilePlan {
            path: PathBuf::from(f.name),
            block_device: false,
            layout_size: 0,
            region_start,
            region_len,
            file_end: region_start + region_len,
        });
    }
    Ok((out, unwritten, facts))
}

/// Splits `filename` on ':' (fio's separator; `\:` keeps a literal colon).
pub(crate) fn split_filenames(list: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = list.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().expect("never empty").push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("never empty").push(c),
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// A generated file's name: `filename_format` with fio's keywords replaced. On a multi-host
/// server with `unique_filename` (the default) a name under `directory=` is prefixed with the
/// client uid, so hosts sharing a directory (NFS, Ceph) do not collide, as fio does
/// (observed: `127.0.0.1.u.0.0`).
fn generated_name(spec: &JobSpec, clone: u32, file: u32, uid: &str) -> String {
    let name = file_name(&spec.filename_format, &spec.name, clone, file, uid);
    if spec.unique_filename && !uid.is_empty() && spec.directory.is_some() {
        format!("{uid}.{name}")
    } else {
        name
    }
}

fn file_name(format: &str, job: &str, clone: u32, file: u32, uid: &str) -> String {
    format
        .replace("$jobname", job)
        .replace("$jobnum", &clone.to_string())
        .replace("$filenum", &file.to_string())
        .replace("$clientuid", uid)
}

/// Plans one clone's files: `listed` (filename= and opendir='s files) when opendir is set,
/// otherwise filename= or the generated names. Each file is looked at (what is there now),
/// sized, given its region, and checked, all before any I/O.
fn plan_files(
    spec: &JobSpec,
    clone: u32,
    uid: &str,
    engine: &EngineInfo,
    listed: Option<&[String]>,
) -> Result<Vec<FilePlan>> {
    let paths = file_paths(spec, clone, uid, listed)?;
    if paths.len() >= crate::plan::io::NextIo::MAX_FILES {
        bail!(
            "job '{}': {} files exceed the maximum of {} per job",
            spec.name,
            paths.len(),
            crate::plan::io::NextIo::MAX_FILES - 1
        );
    }
    let nfiles = paths.len() as u64;
    let mut out = Vec::new();
    for (i, path) in paths.into_iter().enumerate() {
        let found = Found::look(spec, engine, &path)?;
        let file_size = file_size(spec, FileSlot { clone, index: i as u64, of: nfiles }, &path, &found)?;
        let (region_start, region_len) = region(spec, clone, &path, &found, file_size)?;
        let layout_size = if found.block_device { 0 } else { region_start + region_len };
        if !spec.allow_file_create && !found.block_device && !engine.creates_files {
            may_create(spec, &path, found.existing, layout_size)?;
        }
        check_alignment(spec, &path, &found, region_start)?;
        if found.block_device && (spec.rw.writes() || spec.rw.trims()) && !spec.allow_mounted_write {
            // A character device writes to the block device it stands for: check that one.
            match found.char_device {
                Some(_) => {
                    if let Some(disk) = crate::plan::device::block_device_of(&path) {
                        crate::plan::device::check_writable(&disk, &spec.name)?;
                    }
                }
                None => crate::plan::device::check_writable(&path, &spec.name)?,
            }
        }
        // A file larger than the region (or a device) has room past it; where fiox lays the
        // file out, it ends with the region.
        let file_end = match found.existing {
            // unlink_each_loop: the next loop lays the file out anew.
            Some(size) if !engine.diskless && !engine.network && !engine.metadata && !spec.unlink_each_loop => {
                size.max(region_start + region_len)
            }
            _ => region_start + region_len,
        };
        out.push(FilePlan { path, block_device: found.block_device, layout_size, region_start, region_len, file_end });
    }
    Ok(out)
}

/// The clone's file paths: the names (listed, filename='s, or generated) placed in
/// directory='s directories in turn.
fn file_paths(spec: &JobSpec, clone: u32, uid: &str, listed: Option<&[String]>) -> Result<Vec<PathBuf>> {
    let dirs: Vec<String> = spec.directory.as_deref().map(split_filenames).unwrap_or_default();
    let names: Vec<String> = match (listed, &spec.filename) {
        (Some(listed), _) => listed.to_vec(),
        (None, Some(list)) => split_filenames(list),
        (None, None) => (0..spec.nrfiles).map(|n| generated_name(spec, clone, n, uid)).collect(),
    };
    if names.is_empty() {
        bail!("job '{}': filename is empty", spec.name);
    }
    Ok(names
        .iter()
        .enumerate()
        .map(|(i, name)| match dirs.get(i % dirs.len().max(1)) {
            Some(d) if Path::new(name).is_relative() => Path::new(d).join(name),
            _ => PathBuf::from(name),
        })
        .collect())
}

/// What a file's path holds before the run.
struct Found {
    /// Its size now (a device's capacity); `None`: nothing there yet.
    existing: Option<u64>,
    /// A block device, or a character device planned as one.
    block_device: bool,
    /// A character device the engine drives itself: its size and logical block size.
    char_device: Option<(u64, u64)>,
}

impl Found {
    fn look(spec: &JobSpec, engine: &EngineInfo, path: &Path) -> Result<Found> {
        let meta = std::fs::metadata(path).ok();
        if meta.is_none() {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
                bail!("job '{}': directory '{}' does not exist", spec.name, dir.display());
            }
        }
        // A character device the engine drives itself (io_uring_cmd's /dev/ngXnY, sg's
        // /dev/sgN) is sized by the engine and otherwise planned as a block device is.
        let char_device = match (&meta, engine.device_size) {
            (Some(m), Some(size)) if m.file_type().is_char_device() => {
                Some(size(path).map_err(|e| anyhow::anyhow!("job '{}': ioengine {}: {e}", spec.name, spec.ioengine))?)
            }
            _ => None,
        };
        // Any other character device a plain engine opens (/dev/full, /dev/zero) is planned
        // as a device of `size=` bytes, as fio runs it; writing one that may hold data needs
        // the consent a block device does.
        let plain_char = char_device.is_none()
            && !matches!(spec.ioengine, "sg" | "dev-dax" | "mtd")
            && meta.as_ref().is_some_and(|m| m.file_type().is_char_device());
        if plain_char {
            let Some(SizeSpec::Bytes(size)) = given_size(spec) else {
                bail!("job '{}': '{}' is a character device: size= is needed", spec.name, path.display());
            };
            let dataless = ["/dev/null", "/dev/zero", "/dev/full"].iter().any(|d| path == Path::new(d));
            if (spec.rw.writes() || spec.rw.trims()) && !dataless && !spec.allow_mounted_write {
                bail!(
                    "job '{}': refusing to write to character device '{}'; set allow_mounted_write=1 to write anyway",
                    spec.name,
                    path.display()
                );
            }
            return Ok(Found { existing: Some(size), block_device: true, char_device: Some((size, 512)) });
        }
        let block_device = char_device.is_some() || meta.as_ref().is_some_and(|m| m.file_type().is_block_device());
        let existing = match &meta {
            Some(_) if char_device.is_some() => char_device.map(|(bytes, _)| bytes),
            Some(_) if block_device => Some(crate::plan::device::size(path)?),
            Some(m) if m.is_file() => Some(m.len()),
            Some(_) => bail!("job '{}': '{}' is neither a regular file nor a block device", spec.name, path.display()),
            None => None,
        };
        Ok(Found { existing, block_device, char_device })
    }
}

/// Which file of which clone is being sized: file `index` of `of`, of clone `clone`.
#[derive(Clone, Copy)]
struct FileSlot {
    clone: u32,
    index: u64,
    of: u64,
}

/// A file's size: filesize= (a range picked per clone and file), size= shared among the
/// files (or a percentage of what is there), fill_device's free space, or what is there.
fn file_size(spec: &JobSpec, slot: FileSlot, path: &Path, found: &Found) -> Result<u64> {
    let existing = found.existing;
    let size = match (spec.filesize, given_size(spec)) {
        (Some((lo, hi)), _) => {
            lo + if hi > lo { mix64(slot.clone as u64 * 131 + slot.index) % (hi - lo + 1) } else { 0 }
        }
        // fio takes whole blocks of a percentage (20% of 1 MiB reads 51 4k blocks, though the
        // file has room for a 52nd; `size=20%:64k` reads 12 KiB).
        (None, Some(SizeSpec::Bytes(b))) if spec.size_scaled_from.is_some() => whole_blocks(spec, b / slot.of),
        (None, Some(SizeSpec::Bytes(b))) => b / slot.of,
        (None, Some(SizeSpec::Percent(p))) => match existing {
            Some(e) => whole_blocks(spec, (e as f64 * p / 100.0) as u64),
            None => bail!("job '{}': size={p}% of '{}', which does not exist", spec.name, path.display()),
        },
        (None, None) if spec.fill_device && !found.block_device => fill_size(spec, path, existing, slot.of)?,
        (None, None) => match existing {
            Some(e) => e,
            None => bail!(
                "job '{}': '{}' does not exist and no size= was given; set size= to have fiox create it",
                spec.name,
                path.display()
            ),
        },
    };
    if found.block_device {
        let dev = existing.expect("a block device has a size");
        if size > dev {
            bail!("job '{}': size {size} is larger than device '{}' ({dev} bytes)", spec.name, path.display());
        }
    }
    Ok(size)
}

/// `bytes` down to whole smallest blocks, when they hold one.
fn whole_blocks(spec: &JobSpec, bytes: u64) -> u64 {
    let bs = crate::plan::io::min_block(spec);
    if bytes >= bs {
        bytes / bs * bs
    } else {
        bytes
    }
}

/// fill_device without a size: what the file has plus the file system's free space, shared
/// among the job's `nfiles` files. A writing job gets fio's "really large" size, so that it
/// ends on ENOSPC (counted as an I/O, as fio counts it) and not at a size computed before the
/// run: all the free space per file, plus one block.
fn fill_size(spec: &JobSpec, path: &Path, existing: Option<u64>, nfiles: u64) -> Result<u64> {
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    };
    let free = fiox_engine::sys::free_space(&dir).with_context(|| {
        format!("job '{}': fill_device: cannot read the free space of '{}'", spec.name, dir.display())
    })?;
    Ok(match spec.rw.writes() {
        true => existing.unwrap_or(0) + free + crate::plan::io::max_block(spec),
        false => existing.unwrap_or(0) + free / nfiles,
    })
}

/// The clone's I/O region in the file: its start and length.
fn region(spec: &JobSpec, clone: u32, path: &Path, found: &Found, file_size: u64) -> Result<(u64, u64)> {
    let (existing, block_device) = (found.existing, found.block_device);
    let (offset, inc) = offset_and_increment(spec, existing.unwrap_or(0));
    // file_append: the region starts where the file ends now (offset= is not used).
    let region_start = match existing {
        Some(end) if spec.file_append && !block_device => end,
        _ if spec.file_append && !block_device => 0,
        _ => offset + inc * clone as u64,
    };
    // The region is `size` bytes from the offset. A regular file is laid out to cover it
    // (fio makes it offset + size long); a device must already be that large. Without a
    // size, an existing file or device is used from the offset to its end.
    let sized = given_size(spec).is_some() || spec.filesize.is_some() || (spec.fill_device && !block_device);
    let region_len = if block_device || !sized {
        file_size.min(existing.unwrap_or(0).saturating_sub(region_start))
    } else if spec.filesize.is_some() && !spec.file_append {
        // filesize= is the file's size, offset= included: the region runs from the offset to
        // the file's end (fio 3.33 lays a 12 KiB file out for filesize=12k offset=4k and
        // writes 8 KiB of it).
        if region_start >= file_size {
            bail!(
                "job '{}': offset {region_start} leaves no room in '{}' (filesize {file_size} bytes)",
                spec.name,
                path.display()
            );
        }
        file_size - region_start
    } else {
        file_size
    };
    if region_len == 0 {
        let file_end = region_start + region_len;
        bail!("job '{}': offset {region_start} leaves no room in '{}' ({file_end} bytes)", spec.name, path.display());
    }
    Ok((region_start, region_len))
}

/// allow_file_create=0: the file must be there, and long enough for the `layout_size` the
/// job needs.
fn may_create(spec: &JobSpec, path: &Path, existing: Option<u64>, layout_size: u64) -> Result<()> {
    // fio deletes a file that is too short before it refuses; fiox leaves it alone.
    match existing {
        None => bail!(
            "job '{}': '{}' does not exist, and allow_file_create=0 forbids creating it",
            spec.name,
            path.display()
        ),
        Some(len) if len < layout_size => bail!(
            "job '{}': '{}' is {len} bytes, the job needs {layout_size}, and allow_file_create=0 forbids extending it",
            spec.name,
            path.display()
        ),
        Some(_) => Ok(()),
    }
}

/// Sizes and offsets in whole logical blocks where the device needs them: always for a
/// character device the engine drives, under direct=1 for a block device.
fn check_alignment(spec: &JobSpec, path: &Path, found: &Found, region_start: u64) -> Result<()> {
    let misaligned = |lbs: u64| {
        let mut values = crate::plan::io::block_sizes(spec);
        values.push(region_start);
        values.into_iter().find(|&v| v % lbs != 0)
    };
    if let Some((_, lbs)) = found.char_device {
        // Passthrough commands address whole logical blocks; a character device has no
        // page cache, and cannot be opened with O_DIRECT (fio fails the open with EINVAL).
        if spec.direct {
            bail!(
                "job '{}': direct=1: '{}' is a character device, which cannot be opened with O_DIRECT (ioengine {} bypasses the page cache anyway)",
                spec.name,
                path.display(),
                spec.ioengine
            );
        }
        if let Some(bad) = misaligned(lbs) {
            bail!(
                "job '{}': {bad} is not a multiple of the logical block size of '{}' ({lbs} bytes), which ioengine {} needs",
                spec.name,
                path.display(),
                spec.ioengine
            );
        }
    } else if found.block_device && spec.direct {
        // O_DIRECT needs sizes and offsets in whole logical blocks; say so now rather than
        // fail every I/O with EINVAL.
        let lbs = crate::plan::device::logical_block_size(path)?;
        if let Some(bad) = misaligned(lbs) {
            bail!(
                "job '{}': {bad} is not a multiple of the logical block size of '{}' ({lbs} bytes), which direct=1 needs",
                spec.name,
                path.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filename_lists() {
        assert_eq!(split_filenames("/a:/b"), vec!["/a", "/b"]);
        assert_eq!(split_filenames("c\\:x:/d"), vec!["c:x", "/d"]);
        assert!(split_filenames("").is_empty());
    }
}
