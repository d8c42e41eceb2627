//! Job description, time, targets, processes and units.

use crate::choices::{ExitWhat, Fallocate, FileService, LockMode};
use crate::error::Result;
use crate::host;
use crate::spec::{Arg, JobSpec, FILE_SERVICE_FORMS};
use crate::table::{Category as C, Choice, Kind as K, OptDef as O, Pieces, TimeUnit};

const INT0: K = K::Int { min: 0, max: i64::MAX };
const INT1: K = K::Int { min: 1, max: i64::MAX };

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(super) static DEFS: &[O] = &[
    O::new("name", K::Str, C::Description, "Name of the job; on the command line it starts a new job ('global' starts a global section)"),
    O::new("description", K::Str, C::Description, "Free text describing the job, printed in the report").to(|s, v| Ok(s.description = v.written())),
    O::new("wait_for", K::Str, C::Process, "Start only after the named job has finished").to(|s, v| Ok(s.wait_for = v.written().map(|w| w.trim().to_string()))),
    O::new("stonewall", K::Flag, C::Process, "Wait for all earlier jobs to finish before starting; also starts a new reporting group").alias(&["wait_for_previous"]).to(|s, v| Ok(s.stonewall = v.flag())),
    O::new("new_group", K::Flag, C::Process, "Start a new reporting group without waiting for earlier jobs").to(|s, v| Ok(s.new_group = v.flag())),
    O::new("numjobs", INT1, C::Process, "Number of clones of this job, each a separate worker doing the same workload").def("1").to(|s, v| Ok(s.numjobs = v.u32()?)),
    O::new("thread", K::Flag, C::Process, "Run jobs as threads instead of processes (fiox always uses threads; this changes what is printed)").to(|s, v| Ok(s.thread = v.flag())),
    O::new("group_reporting", K::Flag, C::Measurement, "Report a reporting group as one job instead of each job separately").to(|s, v| Ok(s.group_reporting = v.flag())),
    O::new("exitall", K::Flag, C::Process, "Stop all jobs when one job finishes").to(|s, v| Ok(s.exitall = v.flag())),
    O::new("exitall_on_error", K::Flag, C::Process, "Stop all jobs when one job stops on an error").to(|s, v| Ok(s.exitall_on_error = v.flag())),
    O::new("exit_what", K::Choice(EXIT_WHAT), C::Process, "What exitall and exitall_on_error stop").def("group").to(|s, v| Ok(s.exit_what = v.typed(ExitWhat::from_word))),
    O::new("cpus_allowed", K::Str, C::Process, "CPUs the job may run on, as a list like 0-3,6").to(cpus_allowed),
    O::new("cpus_allowed_policy", K::Choice(CPU_POLICY), C::Process, "How cpus_allowed is shared between the clones of a job").def("shared").to(|s, v| Ok(s.cpus_split = v.choice() == "split")),
    O::new("cpumask", K::Int { min: 0, max: i64::MAX }, C::Process, "CPUs the job may run on, as a bit mask (bit N: CPU N); cpus_allowed takes a list"),
    O::new("nice", K::Int { min: -20, max: 19 }, C::Process, "Scheduling niceness of the job").def("0").to(|s, v| Ok(s.nice = v.int() as i32)),
    O::new("prio", K::Int { min: 0, max: 7 }, C::Process, "I/O priority level within the class (0 is highest)"),
    O::new("prioclass", K::Int { min: 0, max: 3 }, C::Process, "I/O priority class (1 realtime, 2 best effort, 3 idle)"),
    O::new("priohint", K::Int { min: 0, max: 1023 }, C::Process, "I/O priority hint, such as a command duration limit index (fio 3.42; best effort class unless prioclass says otherwise)").def("0").to(|s, v| Ok(s.priohint = v.u32()?)),
    O::new("lockmem", K::Size, C::Buffers, "Lock this much memory per job, to test with less RAM available").def("0").first_piece().to(|s, v| Ok(s.lockmem = v.size())),
    O::new("runtime", K::Time { unit: TimeUnit::Sec }, C::Time, "Stop the job after this long (seconds unless a unit is given)").alias(&["timeout"]).def("0").first_piece().to(|s, v| Ok(s.runtime_us = v.time())),
    O::new("time_based", K::Flag, C::Time, "Keep running for the whole runtime, repeating the workload as needed").to(|s, v| Ok(s.time_based = v.flag())),
    O::new("ramp_time", K::Time { unit: TimeUnit::Sec }, C::Time, "Run this long before counting statistics").def("0").first_piece().to(|s, v| Ok(s.ramp_time_us = v.time())),
    O::new("ramp_size", K::Size, C::Time, "Do this many bytes of I/O before counting statistics (fio 3.42; with group_reporting, the group's bytes together)").def("0").to(|s, v| Ok(s.ramp_size = v.size())),
    O::new("job_start_clock_id", K::Int { min: i32::MIN as i64, max: i32::MAX as i64 }, C::Time, "clock_gettime clock whose reading at the job's start the JSON report shows as job_start (fio 3.42; 0: CLOCK_REALTIME, in ms)").def("0").to(|s, v| Ok(s.job_start_clock = (!v.is_default()).then(|| v.int() as i32))),
    O::new("startdelay", K::Time { unit: TimeUnit::Sec }, C::Time, "Wait this long before starting the job").def("0").pieces(Pieces::Range).to(|s, v| Ok(s.startdelay_us = v.range())),
    O::new("hang_timeout", K::Time { unit: TimeUnit::Sec }, C::Time, "fiox: a job is hung when none of its I/O completes for this long; its in-flight I/O is then reported as dropped (after a stop request: at most 5 s)").def("300").to(|s, v| Ok(s.hang_timeout_us = v.time())),
    O::new("loops", INT1, C::Time, "Repeat the job's workload this many times").def("1").to(|s, v| Ok(s.loops = v.u32()?)),
    O::new("number_ios", INT0, C::IoSize, "Stop after this many I/Os (0: no limit)").def("0").first_piece().to(|s, v| Ok(s.number_ios = v.u64())),
    O::new("filename", K::Str, C::Target, "File or device to use; several separated by ':'").to(|s, v| Ok(s.filename = v.written())),
    O::new("opendir", K::Str, C::Target, "Add every regular file under this directory (recursively) to the job's files"),
    O::new("filetype", K::Choice(FILETYPE), C::Target, "Take every file of the job to be of this type instead of asking stat(2) (fio 3.42; fiox checks each file anyway)").def("none").to(|s, v| Ok(s.filetype = v.choice())),
    O::new("lockfile", K::Choice(LOCKFILE), C::Target, "Lock each file around each I/O, among the jobs sharing it").def("none").to(|s, v| Ok(s.lockfile = v.typed(LockMode::from_word))),
    O::new("directory", K::Str, C::Target, "Directory in which to create the job's files").to(|s, v| Ok(s.directory = v.written())),
    O::new("filename_format", K::Str, C::Target, "Pattern for generated file names ($jobname.$jobnum.$filenum)").def("$jobname.$jobnum.$filenum").to(|s, v| Ok(s.filename_format = v.text())),
    O::new("nrfiles", INT1, C::Target, "Number of files per job").alias(&["nr_files"]).def("1").to(|s, v| Ok(s.nrfiles = v.u32()?)),
    O::new("openfiles", INT0, C::Target, "How many of the job's files are used at a time (0: all); the next one is taken in when one is done").def("0").to(|s, v| Ok(s.openfiles = v.u32()?)),
    O::new("file_service_type", K::Str, C::Target, "How the next file is chosen: roundrobin[:N], sequential, random[:N], zipf:θ, pareto:h, normal:σ (gauss)").def("roundrobin").to(|s, v| Ok(s.file_service = v.custom(FileService::parse, FILE_SERVICE_FORMS)?)),
    O::new("size", K::SizeOrPct, C::IoSize, "Total size of the job's I/O region (split across its files), or a percentage of the file or device").pieces(Pieces::ScaledByPct).to(|s, v| Ok(s.size = Some(v.size_spec()))),
    O::new("filesize", K::Range, C::IoSize, "Size of each file (a range picks a random size per file)")
        // A range from 0 is ignored, as fio ignores it (see value.rs); 0 alone is refused, as
        // fio refuses it.
        .to(|s, v| {
            let (lo, hi) = v.range();
            if hi == 0 {
                let zero = |_: &str| Err::<(), _>("a file size of 0 is out of range (at least 1)".to_string());
                return v.custom(zero, "a size or a size range low-high (4k, 1k-8k)");
            }
            Ok(s.filesize = Some((lo, hi)).filter(|&(lo, _)| lo > 0).or(s.filesize))
        }),
    O::new("io_size", K::SizeOrPct, C::IoSize, "Bytes to transfer, if different from size").alias(&["io_limit"]).last_piece().to(|s, v| Ok(s.io_size = Some(v.size_spec()))),
    O::new("offset", K::SizeOrPct, C::IoSize, "Start of the I/O region within each file").def("0").alias(&["fileoffset"]).pieces(Pieces::PctSticks).to(|s, v| Ok(s.offset = v.size_spec())),
    O::new("offset_increment", K::SizeOrPct, C::IoSize, "Added to offset for each further clone of the job").def("0").last_piece().to(|s, v| Ok(s.offset_increment = v.size_spec())),
    O::new("fill_device", K::Bool, C::IoSize, "Write until the file system is full (ENOSPC ends the job, not as an error); without size=, the size is the free space").alias(&["fill_fs"]).def("0").to(|s, v| Ok(s.fill_device = v.flag())),
    O::new("create_on_open", K::Bool, C::Target, "Create files only when the job opens them for I/O").def("0").to(|s, v| Ok(s.create_on_open = v.flag())),
    O::new("flow", K::Int { min: i64::MIN + 1, max: i64::MAX }, C::Process, "Weight of the job's I/O among the jobs of its flow_id (8 beside 1: eight I/Os to one)").def("0").to(|s, v| Ok(s.flow = v.int())),
    O::new("flow_id", INT0, C::Process, "Group of jobs whose I/O flow keeps in proportion").def("0").to(|s, v| Ok(s.flow_id = v.u64())),
    O::new("flow_sleep", INT0, C::Process, "Microseconds a job ahead of its flow group waits before checking again (0: the shortest sleep)").def("0").to(|s, v| Ok(s.flow_sleep_us = v.u64())),
    O::new("exec_prerun", K::Str, C::Process, "Shell command run before the job (output in JOBNAME.prerun.txt)").to(|s, v| Ok(s.exec_prerun = v.written())),
    O::new("exec_postrun", K::Str, C::Process, "Shell command run after the job (output in JOBNAME.postrun.txt)").to(|s, v| Ok(s.exec_postrun = v.written())),
    O::new("pre_read", K::Bool, C::Target, "Read the job's region into the page cache before the job starts (not counted)").def("0").to(|s, v| Ok(s.pre_read = v.flag())),
    O::new("allow_file_create", K::Bool, C::Target, "Let the job create or extend its files (0: they must exist, large enough)").def("1").to(|s, v| Ok(s.allow_file_create = v.flag())),
    O::new("create_only", K::Bool, C::Target, "Lay the files out, then end the job without I/O").def("0").to(|s, v| Ok(s.create_only = v.flag())),
    O::new("create_serialize", K::Bool, C::Target, "Lay out the jobs' files one job after another (0: each job lays out its own, in parallel)").def("1").to(|s, v| Ok(s.create_serialize = v.flag())),
    O::new("create_fsync", K::Bool, C::Target, "fsync a file after writing its layout").def("1").to(|s, v| Ok(s.create_fsync = v.flag())),
    O::new("file_append", K::Bool, C::Target, "Start each file's region at its current end").def("0").to(|s, v| Ok(s.file_append = v.flag())),
    O::new("unique_filename", K::Bool, C::Target, "Prefix generated file names with the client's name in client/server runs (no effect locally)").def("1").to(|s, v| Ok(s.unique_filename = v.flag())),
    O::new("offset_align", K::Size, C::IoSize, "Round a percentage offset up to this (0: to the block size)").def("0").to(|s, v| Ok(s.offset_align = v.size())),
    O::new("overwrite", K::Bool, C::Target, "Lay out write targets fully before writing").def("0").to(|s, v| Ok(s.overwrite = v.flag())),
    O::new("fallocate", K::Choice(FALLOCATE), C::Target, "How to preallocate files when laying them out").def("native").to(|s, v| Ok(s.fallocate = v.typed(Fallocate::from_word))),
    O::new("unlink", K::Bool, C::Target, "Delete the job's files when it is done").def("0").to(|s, v| Ok(s.unlink = v.flag())),
    O::new("unlink_each_loop", K::Bool, C::Target, "Delete the job's files after each loop (only files fiox created)").def("0").to(|s, v| Ok(s.unlink_each_loop = v.flag())),
    O::new("invalidate", K::Bool, C::Target, "Drop the page cache of the files before the run").def("1").to(|s, v| Ok(s.invalidate = v.flag())),
    O::new("allow_mounted_write", K::Bool, C::Target, "Allow writes to a block device that holds a mounted or recognisable file system").def("0").to(|s, v| Ok(s.allow_mounted_write = v.flag())),
    O::new("readonly", K::Flag, C::Target, "Refuse to write (safety check)").to(|s, v| Ok(s.readonly = v.flag())),
    O::new("kb_base", K::Choice(KB_BASE), C::Units, "Base of size suffixes: 1024 (k=1024, KiB=1000) or 1000 (k=1000, KiB=1024)").def("1024").to(|s, v| Ok(s.kb_base = v.choice().parse().expect("kb_base choices are numbers"))),
    O::new("unit_base", K::Choice(UNIT_BASE), C::Units, "Report bandwidth in bytes (8, or 0 for automatic) or bits (1)").def("0").to(|s, v| Ok(s.unit_base = v.choice().parse().expect("unit_base choices are numbers"))),
];

fn cpus_allowed(s: &mut JobSpec, v: &Arg<'_>) -> Result<()> {
    let list = v.text();
    s.cpus_allowed = host::cpu_list(&list).map_err(|e| v.err(format!("cpus_allowed={list}: {e}")))?;
    Ok(())
}

static FILETYPE: &[Choice] = &[
    Choice { word: "none", help: "" },
    Choice { word: "file", help: "" },
    Choice { word: "block", help: "" },
    Choice { word: "char", help: "" },
];

static LOCKFILE: &[Choice] = &[
    Choice { word: "none", help: "No file locking" },
    Choice { word: "exclusive", help: "One I/O at a time to the file, across jobs" },
    Choice { word: "readwrite", help: "Many reads or one write at a time to the file, across jobs" },
];

static EXIT_WHAT: &[Choice] = &[
    Choice { word: "group", help: "The jobs running now (later stonewall groups still run)" },
    Choice { word: "stonewall", help: "The jobs running now, then go on with the next stonewall group" },
    Choice { word: "all", help: "Everything: later groups do not run" },
];

static CPU_POLICY: &[Choice] = &[
    Choice { word: "shared", help: "All clones share the whole set" },
    Choice { word: "split", help: "Each clone gets one CPU of the set" },
];

static FALLOCATE: &[Choice] = &[
    Choice { word: "none", help: "Do not preallocate" },
    Choice { word: "native", help: "Preallocate with fallocate, falling back to none" },
    Choice { word: "posix", help: "Preallocate with posix_fallocate" },
    Choice { word: "keep", help: "fallocate with FALLOC_FL_KEEP_SIZE" },
    Choice { word: "truncate", help: "Extend with ftruncate" },
    Choice { word: "0", help: "Same as none" },
    Choice { word: "1", help: "Same as posix" },
];

static KB_BASE: &[Choice] = &[
    Choice { word: "1024", help: "k means 1024 (KiB means 1000)" },
    Choice { word: "1000", help: "k means 1000 (KiB means 1024)" },
];

static UNIT_BASE: &[Choice] = &[
    Choice { word: "0", help: "Automatic (bytes)" },
    Choice { word: "8", help: "Report in bits" },
    Choice { word: "1", help: "Report in bytes" },
];

#[cfg(test)]
mod tests {
    use crate::choices::{ExitWhat, Fallocate, FileService, LockMode};
    use crate::spec::bind::check::lands;
    use crate::SizeSpec;

    /// Each row lands in its field, and a row's default is what a job gets without it.
    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("description=hello", |s| s.description.as_deref() == Some("hello")),
            ("wait_for=a", |s| s.wait_for.as_deref() == Some("a")),
            ("stonewall new_group", |s| s.stonewall && s.new_group),
            ("numjobs=3", |s| s.numjobs == 3),
            ("thread group_reporting exitall exitall_on_error", |s| {
                s.thread && s.group_reporting && s.exitall && s.exitall_on_error
            }),
            ("exit_what=all", |s| s.exit_what == ExitWhat::All),
            ("cpus_allowed_policy=split", |s| s.cpus_split),
            ("nice=5", |s| s.nice == 5),
            ("lockmem=1m", |s| s.lockmem == 1 << 20),
            ("runtime=2 time_based", |s| s.runtime_us == 2_000_000 && s.time_based),
            ("ramp_time=1 startdelay=3 hang_timeout=7", |s| {
                s.ramp_time_us == 1_000_000
                    && s.startdelay_us == (3_000_000, 3_000_000)
                    && s.hang_timeout_us == 7_000_000
            }),
            ("loops=4 number_ios=9", |s| s.loops == 4 && s.number_ios == 9),
            ("filename=/tmp/x directory=/tmp", |s| {
                s.filename.as_deref() == Some("/tmp/x") && s.directory.as_deref() == Some("/tmp")
            }),
            ("lockfile=exclusive", |s| s.lockfile == LockMode::Exclusive),
            ("filename_format=f.$filenum nrfiles=2 openfiles=1", |s| {
                s.filename_format == "f.$filenum" && s.nrfiles == 2 && s.openfiles == 1
            }),
            ("file_service_type=sequential", |s| s.file_service == FileService::Sequential),
            ("filesize=0-2k", |s| s.filesize.is_none()),
            ("filesize=1k-2k io_size=50%", |s| {
                s.filesize == Some((1024, 2048)) && s.io_size == Some(SizeSpec::Percent(50.0))
            }),
            ("offset=4k offset_increment=8k offset_align=512", |s| {
                s.offset == SizeSpec::Bytes(4096)
                    && s.offset_increment == SizeSpec::Bytes(8192)
                    && s.offset_align == 512
            }),
            ("fill_device=1 create_on_open=1 pre_read=1", |s| s.fill_device && s.create_on_open && s.pre_read),
            ("flow=8 flow_id=2 flow_sleep=100", |s| s.flow == 8 && s.flow_id == 2 && s.flow_sleep_us == 100),
            ("exec_prerun=true exec_postrun=false", |s| {
                s.exec_prerun.as_deref() == Some("true") && s.exec_postrun.as_deref() == Some("false")
            }),
            ("allow_file_create=0 create_only=1 create_serialize=0 create_fsync=0", |s| {
                !s.allow_file_create && s.create_only && !s.create_serialize && !s.create_fsync
            }),
            ("file_append=1 unique_filename=0 overwrite=1", |s| s.file_append && !s.unique_filename && s.overwrite),
            ("fallocate=keep", |s| s.fallocate == Fallocate::Keep),
            ("unlink=1 unlink_each_loop=1 invalidate=0", |s| s.unlink && s.unlink_each_loop && !s.invalidate),
            ("allow_mounted_write=1", |s| s.allow_mounted_write),
            ("kb_base=1000 size=1k", |s| s.kb_base == 1000 && s.size == Some(SizeSpec::Bytes(1000))),
            ("unit_base=1", |s| s.unit_base == 1),
            // The rows' defaults.
            ("", |s| {
                s.numjobs == 1
                    && s.loops == 1
                    && s.nrfiles == 1
                    && s.filename_format == "$jobname.$jobnum.$filenum"
                    && s.file_service == FileService::RoundRobin(1)
                    && s.hang_timeout_us == 300_000_000
                    && s.exit_what == ExitWhat::Group
                    && s.fallocate == Fallocate::Native
                    && s.allow_file_create
                    && s.create_serialize
                    && s.create_fsync
                    && s.unique_filename
                    && s.invalidate
                    && s.kb_base == 1024
            }),
        ]);
    }
}
